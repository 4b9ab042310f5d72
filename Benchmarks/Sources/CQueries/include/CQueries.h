#ifndef CQUERIES_H
#define CQUERIES_H

#include <stdint.h>

/// Hand-written SQLite C for the query benchmark: each function prepares its statement,
/// binds, steps and materializes every row into C structs (freed after a checksum), as a
/// careful C programmer would.
typedef struct cq_db cq_db;

typedef struct {
    int64_t rows;
    int64_t checksum;
} cq_sum;

cq_db *cq_open(const char *path);
void cq_close(cq_db *db);
const char *cq_error(cq_db *db);

/// Records of (id INTEGER, name TEXT, number REAL, link INTEGER) from `sql`, binding one text.
int cq_records_text(cq_db *db, const char *sql, const char *text, cq_sum *sum);
/// Records of (id INTEGER, name TEXT, text TEXT) from `sql`, binding one real.
int cq_records_real(cq_db *db, const char *sql, double value, cq_sum *sum);
/// One integer from `sql`, binding one text.
int cq_count_text(cq_db *db, const char *sql, const char *text, int64_t *count);
/// Groups of (text, count INTEGER, average REAL, max REAL) from `sql`, binding one integer.
int cq_groups(cq_db *db, const char *sql, int64_t minimum, cq_sum *sum);

#endif
