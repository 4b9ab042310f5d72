#ifndef CLADDER_H
#define CLADDER_H

#include <stdint.h>

// The C floor of ladder-bench: the two published ladders (Lighter's Northwind "Orders" read and
// the 1,000,000-users workload of the SwiftData/Realm comparison) in hand-written SQLite C, the
// least work a careful C programmer would do: prepared statements with bound parameters, one
// transaction per write, result sets materialized into arrays of structs whose strings share
// one growing buffer.

typedef struct cl_db cl_db;

/// A summary of a result that a wrong answer would change (the Swift side's `Checksum`).
typedef struct {
    int64_t count;
    int64_t keys;
    int64_t text;
    int64_t cents;
} cl_sum;

/// Opens a file read-write (creating it), in WAL mode with `synchronous = NORMAL`, or read-only.
cl_db *cl_open(const char *path, int read_only);
void cl_close(cl_db *db);
int cl_exec(cl_db *db, const char *sql);
const char *cl_error(cl_db *db);

/// Reads every row of the `orders` table (14 columns) into an array of structs, adds them to
/// `sum` and frees them: one read of the Orders ladder.
int cl_read_orders(cl_db *db, cl_sum *sum);

/// Inserts `count` users in one transaction: `ids` holds 16 bytes per user (stored as a BLOB).
int cl_create_users(cl_db *db, const uint8_t *ids, const char *const *first_names, const char *const *surnames,
                    const int64_t *ages, int count);
/// Fetches the users with `first_name`, ordered by age, into an array of structs; adds them to
/// `sum` as the Swift side's `checksum(ordered: true)` does (ages weighted by place, keys' bytes).
int cl_fetch_users_named(cl_db *db, const char *first_name, cl_sum *sum);
/// How many users have `first_name` (every user for NULL), or -1.
int64_t cl_count_users(cl_db *db, const char *first_name);
/// Renames every user with `from` to `to` in one transaction; returns how many, or -1.
int64_t cl_rename_users(cl_db *db, const char *from, const char *to);
/// Deletes every user in one transaction.
int cl_delete_users(cl_db *db);
/// The size of the database in bytes (page count × page size) after a checkpoint.
int64_t cl_database_bytes(cl_db *db);

#endif
