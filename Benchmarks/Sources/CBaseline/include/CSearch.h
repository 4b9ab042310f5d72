#ifndef CSEARCH_H
#define CSEARCH_H

#include <stdint.h>

// Full-text search in hand-written SQLite C, for search-bench: a table of documents with an
// external-content FTS5 index kept in sync by triggers (sqlite.org/fts5.html), and a ranked
// search (bm25, LIMIT) that reads each hit's row, rank and a snippet of both text columns
// into one reused buffer, as a careful C programmer would.

typedef struct cs_db cs_db;

cs_db *cs_open(const char *path);
void cs_close(cs_db *db);
/// Creates the table, index and triggers, and inserts `count` documents in one transaction
/// with one prepared statement. Returns 0 on success.
int cs_load(cs_db *db, int64_t count, const char *const *titles, const char *const *bodies, const int64_t *years);
/// Runs one ranked search (limit rows), with `min_year` < 0 meaning no condition. Returns
/// the number of hits, or -1 on error; adds the hits' ids to *checksum.
int64_t cs_search(cs_db *db, const char *query, int limit, int64_t min_year, int64_t *checksum);

#endif
