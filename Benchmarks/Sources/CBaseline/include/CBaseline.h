#ifndef CBASELINE_H
#define CBASELINE_H

#include <stdint.h>
#include "CSearch.h"   // search-bench's FTS5 workload

// Hand-written SQLite C for every workload: the floor the other contenders are measured
// against, doing the least work a careful C programmer would. One prepared statement reused
// with bound parameters, one transaction per write. A workload that returns a result set
// (fetch all, pages, loads) materializes it into an array of structs whose strings share one
// growing buffer (no allocation per string); a lookup whose row is used at once reads it in
// place, copying nothing. Reads run in autocommit (each statement its own transaction) unless
// the workload says "in one read block", where one BEGIN … COMMIT surrounds them all.

typedef struct cb_db cb_db;

typedef struct {
    int64_t id;
    const char *name;
    double price;
    int64_t quantity;
    double created_at;
    const char *note;   // NULL for none
} cb_item;

typedef struct {
    int64_t count;
    int64_t keys;
    int64_t text;
    int64_t cents;
} cb_sum;

cb_db *cb_open(const char *path);
void cb_close(cb_db *db);
int cb_exec(cb_db *db, const char *sql);
const char *cb_error(cb_db *db);
/// The migration benchmark's row-by-row transform of Item (cost → whole cents), in C.
int cb_transform_items(cb_db *db);

int cb_insert_items(cb_db *db, const cb_item *items, int count);
int cb_upsert_items(cb_db *db, const cb_item *items, int count);
int cb_reimport_items(cb_db *db, const cb_item *items, int count);
int cb_fetch_all(cb_db *db, cb_sum *sum);
/// Steps through every item in key order, using each row in place (the streaming benchmark).
int cb_stream_items(cb_db *db, cb_sum *sum);
int cb_fetch_by_keys(cb_db *db, const int64_t *keys, int count, int in_one_transaction, cb_sum *sum);
int cb_upsert_items_by_name(cb_db *db, const cb_item *items, int count);
int cb_pages(cb_db *db, const double *thresholds, int count, int limit, int offset, cb_sum *sum);
int cb_load_teams(cb_db *db, cb_sum *sum);
int cb_load_workers(cb_db *db, const char *join_sql, cb_sum *sum);
int cb_delete_cheaper(cb_db *db, double price);
int cb_insert_graphs(cb_db *db, const int64_t *team_ids, const char *const *team_names, int teams,
                     const int64_t *player_ids, const char *const *player_names, int players_per_team);
/// Fetches items by key until `*stop` becomes nonzero; returns how many fetches ran.
int64_t cb_read_until(cb_db *db, const int64_t *keys, int count, const volatile int *stop);

/// Heap bytes in use (glibc's mallinfo2: heap and mmap'd blocks), or -1 where unknown.
int64_t cb_heap_in_use(void);

/// Sets the readers' stop flag with release ordering.
static inline void cb_store_release(int *flag, int value) { __atomic_store_n(flag, value, __ATOMIC_RELEASE); }

/// (count, sum of keys, sum of text lengths, sum of cents) from `sql`, on a connection of its own.
void cb_checksum(const char *path, const char *sql, int64_t *out);

#endif
