#include "CBaseline.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <math.h>
#include <stdio.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct cb_db {
    sqlite3 *handle;
};

cb_db *cb_open(const char *path) {
    cb_db *db = calloc(1, sizeof(cb_db));
    if (sqlite3_open_v2(path, &db->handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        return db;
    }
    sqlite3_busy_timeout(db->handle, 5000);
    sqlite3_exec(db->handle, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON", NULL, NULL, NULL);
    return db;
}

void cb_close(cb_db *db) {
    sqlite3_close_v2(db->handle);
    free(db);
}

int cb_exec(cb_db *db, const char *sql) {
    return sqlite3_exec(db->handle, sql, NULL, NULL, NULL);
}

const char *cb_error(cb_db *db) {
    return sqlite3_errmsg(db->handle);
}

/// Text of materialized rows, kept in one growing buffer: one allocation for all of a
/// result's strings instead of one per string. Rows hold offsets, which stay valid when the
/// buffer grows.
typedef struct {
    char *bytes;
    size_t used, capacity;
} cb_arena;

static int64_t arena_copy(cb_arena *arena, sqlite3_stmt *statement, int column) {
    const unsigned char *text = sqlite3_column_text(statement, column);
    if (!text) return -1;
    size_t length = (size_t)sqlite3_column_bytes(statement, column) + 1;
    if (arena->used + length > arena->capacity) {
        size_t capacity = arena->capacity ? arena->capacity : 4096;
        while (arena->used + length > capacity) capacity *= 2;
        arena->bytes = realloc(arena->bytes, capacity);
        arena->capacity = capacity;
    }
    memcpy(arena->bytes + arena->used, text, length);
    int64_t offset = (int64_t)arena->used;
    arena->used += length;
    return offset;
}

static const char *arena_text(const cb_arena *arena, int64_t offset) {
    return offset < 0 ? NULL : arena->bytes + offset;
}

/// A row as a result set materializes it: numbers, and its strings in the result's arena.
typedef struct {
    int64_t id;
    int64_t name;   // offset in the arena, -1 for NULL
    double price;
    int64_t quantity;
    double created_at;
    int64_t note;   // offset in the arena, -1 for NULL
} cb_row;

static void read_row(sqlite3_stmt *statement, cb_row *row, cb_arena *arena) {
    row->id = sqlite3_column_int64(statement, 0);
    row->name = arena_copy(arena, statement, 1);
    row->price = sqlite3_column_double(statement, 2);
    row->quantity = sqlite3_column_int64(statement, 3);
    row->created_at = sqlite3_column_double(statement, 4);
    row->note = arena_copy(arena, statement, 5);
}

static void add(cb_sum *sum, int64_t key, const char *text, double price) {
    sum->count += 1;
    sum->keys += key;
    sum->text += text ? (int64_t)strlen(text) : 0;
    sum->cents += (int64_t)llround(price * 100);
}

/// Uses one row where it stands, without copying: what a careful C program does with a
/// row it consumes before stepping again.
static void use_row_in_place(sqlite3_stmt *statement, cb_sum *sum) {
    int64_t id = sqlite3_column_int64(statement, 0);
    const char *name = (const char *)sqlite3_column_text(statement, 1);
    double price = sqlite3_column_double(statement, 2);
    volatile int64_t quantity = sqlite3_column_int64(statement, 3);
    volatile double created_at = sqlite3_column_double(statement, 4);
    volatile const unsigned char *note = sqlite3_column_text(statement, 5);
    (void)quantity; (void)created_at; (void)note;
    if (sum) add(sum, id, name, price);
}

static int bind_item(sqlite3_stmt *statement, const cb_item *item) {
    sqlite3_bind_int64(statement, 1, item->id);
    sqlite3_bind_text(statement, 2, item->name, -1, SQLITE_STATIC);
    sqlite3_bind_double(statement, 3, item->price);
    sqlite3_bind_int64(statement, 4, item->quantity);
    sqlite3_bind_double(statement, 5, item->created_at);
    if (item->note) sqlite3_bind_text(statement, 6, item->note, -1, SQLITE_STATIC);
    else sqlite3_bind_null(statement, 6);
    return 0;
}

static int write_items(cb_db *db, const char *sql, const cb_item *items, int count) {
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db->handle, sql, -1, &statement, NULL) != SQLITE_OK) return 1;
    sqlite3_exec(db->handle, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    for (int i = 0; i < count; i++) {
        bind_item(statement, &items[i]);
        if (sqlite3_step(statement) != SQLITE_DONE) {
            sqlite3_finalize(statement);
            sqlite3_exec(db->handle, "ROLLBACK", NULL, NULL, NULL);
            return 1;
        }
        sqlite3_reset(statement);
    }
    sqlite3_finalize(statement);
    return sqlite3_exec(db->handle, "COMMIT", NULL, NULL, NULL);
}

int cb_insert_items(cb_db *db, const cb_item *items, int count) {
    return write_items(db,
        "INSERT INTO item (id, name, price, quantity, createdAt, note) VALUES (?, ?, ?, ?, ?, ?)", items, count);
}

int cb_upsert_items(cb_db *db, const cb_item *items, int count) {
    return write_items(db,
        "INSERT INTO item (id, name, price, quantity, createdAt, note) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (id) DO UPDATE SET name = excluded.name, price = excluded.price, quantity = excluded.quantity, "
        "createdAt = excluded.createdAt, note = excluded.note", items, count);
}

/* A re-import that knows rows may be unchanged: the WHERE skips rewriting them. */
int cb_reimport_items(cb_db *db, const cb_item *items, int count) {
    return write_items(db,
        "INSERT INTO item (id, name, price, quantity, createdAt, note) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (id) DO UPDATE SET name = excluded.name, price = excluded.price, quantity = excluded.quantity, "
        "createdAt = excluded.createdAt, note = excluded.note "
        "WHERE name IS NOT excluded.name OR price IS NOT excluded.price OR quantity IS NOT excluded.quantity "
        "OR createdAt IS NOT excluded.createdAt OR note IS NOT excluded.note", items, count);
}

/* W12: the batch matched by name (indexed), not by key: the lookup a careful C program
   would write, then an update of the record found or an insert, in one transaction. */
int cb_upsert_items_by_name(cb_db *db, const cb_item *items, int count) {
    sqlite3_stmt *find, *update, *insert;
    if (sqlite3_prepare_v2(db->handle, "SELECT id FROM item WHERE name = ?", -1, &find, NULL) != SQLITE_OK) return 1;
    if (sqlite3_prepare_v2(db->handle,
            "UPDATE item SET name = ?2, price = ?3, quantity = ?4, createdAt = ?5, note = ?6 WHERE id = ?1", -1, &update,
            NULL) != SQLITE_OK) return 1;
    if (sqlite3_prepare_v2(db->handle,
            "INSERT INTO item (id, name, price, quantity, createdAt, note) VALUES (?, ?, ?, ?, ?, ?)", -1, &insert,
            NULL) != SQLITE_OK) return 1;
    sqlite3_exec(db->handle, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    int rc = 0;
    for (int i = 0; i < count && rc == 0; i++) {
        sqlite3_bind_text(find, 1, items[i].name, -1, SQLITE_STATIC);
        sqlite3_stmt *write = insert;
        cb_item item = items[i];
        if (sqlite3_step(find) == SQLITE_ROW) {
            item.id = sqlite3_column_int64(find, 0);
            write = update;
        }
        sqlite3_reset(find);
        bind_item(write, &item);
        if (sqlite3_step(write) != SQLITE_DONE) rc = 1;
        sqlite3_reset(write);
    }
    sqlite3_finalize(find);
    sqlite3_finalize(update);
    sqlite3_finalize(insert);
    sqlite3_exec(db->handle, rc == 0 ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

static const char *item_columns = "id, name, price, quantity, createdAt, note";

int cb_fetch_all(cb_db *db, cb_sum *sum) {
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT %s FROM item ORDER BY id", item_columns);
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db->handle, sql, -1, &statement, NULL) != SQLITE_OK) return 1;
    int capacity = 1024, count = 0;
    cb_row *rows = malloc(sizeof(cb_row) * (size_t)capacity);
    cb_arena arena = {0};
    while (sqlite3_step(statement) == SQLITE_ROW) {
        if (count == capacity) {
            capacity *= 2;
            rows = realloc(rows, sizeof(cb_row) * (size_t)capacity);
        }
        read_row(statement, &rows[count++], &arena);
    }
    sqlite3_finalize(statement);
    for (int i = 0; i < count; i++) add(sum, rows[i].id, arena_text(&arena, rows[i].name), rows[i].price);
    free(arena.bytes);
    free(rows);
    return 0;
}

/// Steps through every item in key order, using each row in place: the streaming benchmark's
/// floor (nothing is kept, so memory does not grow with the table).
int cb_stream_items(cb_db *db, cb_sum *sum) {
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT %s FROM item ORDER BY id", item_columns);
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db->handle, sql, -1, &statement, NULL) != SQLITE_OK) return 1;
    int rc;
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW) use_row_in_place(statement, sum);
    sqlite3_finalize(statement);
    return rc == SQLITE_DONE ? 0 : 1;
}

int cb_fetch_by_keys(cb_db *db, const int64_t *keys, int count, int in_one_transaction, cb_sum *sum) {
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT %s FROM item WHERE id = ?", item_columns);
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db->handle, sql, -1, &statement, NULL) != SQLITE_OK) return 1;
    if (in_one_transaction) sqlite3_exec(db->handle, "BEGIN", NULL, NULL, NULL);
    for (int i = 0; i < count; i++) {
        sqlite3_bind_int64(statement, 1, keys[i]);
        if (sqlite3_step(statement) == SQLITE_ROW) use_row_in_place(statement, sum);
        sqlite3_reset(statement);
    }
    if (in_one_transaction) sqlite3_exec(db->handle, "COMMIT", NULL, NULL, NULL);
    sqlite3_finalize(statement);
    return 0;
}

int cb_pages(cb_db *db, const double *thresholds, int count, int limit, int offset, cb_sum *sum) {
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT %s FROM item WHERE price > ? ORDER BY price, id LIMIT ? OFFSET ?", item_columns);
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db->handle, sql, -1, &statement, NULL) != SQLITE_OK) return 1;
    cb_row *rows = malloc(sizeof(cb_row) * (size_t)limit);
    cb_arena arena = {0};
    for (int i = 0; i < count; i++) {
        sqlite3_bind_double(statement, 1, thresholds[i]);
        sqlite3_bind_int(statement, 2, limit);
        sqlite3_bind_int(statement, 3, offset);
        int n = 0;
        arena.used = 0;  // each page is a result of its own; the buffer is reused
        while (sqlite3_step(statement) == SQLITE_ROW && n < limit) read_row(statement, &rows[n++], &arena);
        sqlite3_reset(statement);
        for (int j = 0; j < n; j++) add(sum, rows[j].id, arena_text(&arena, rows[j].name), rows[j].price);
    }
    free(arena.bytes);
    free(rows);
    sqlite3_finalize(statement);
    return 0;
}

/// A parent with its children, as the two-query loads build them.
typedef struct {
    int64_t id;
    int64_t name;          // offset in the arena
    int64_t *child_ids;
    int64_t *child_names;  // offsets in the arena
    int children, capacity;
} cb_parent;

static int load_parents(cb_db *db, const char *parents_sql, const char *children_sql, cb_sum *sum) {
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db->handle, "BEGIN", -1, &statement, NULL) != SQLITE_OK) return 1;
    sqlite3_step(statement);
    sqlite3_finalize(statement);
    if (sqlite3_prepare_v2(db->handle, parents_sql, -1, &statement, NULL) != SQLITE_OK) return 1;
    int capacity = 256, count = 0;
    cb_parent *parents = malloc(sizeof(cb_parent) * (size_t)capacity);
    cb_arena arena = {0};
    while (sqlite3_step(statement) == SQLITE_ROW) {
        if (count == capacity) {
            capacity *= 2;
            parents = realloc(parents, sizeof(cb_parent) * (size_t)capacity);
        }
        cb_parent *parent = &parents[count++];
        parent->id = sqlite3_column_int64(statement, 0);
        parent->name = arena_copy(&arena, statement, 1);
        parent->children = 0;
        parent->capacity = 0;
        parent->child_ids = NULL;
        parent->child_names = NULL;
    }
    sqlite3_finalize(statement);
    // Parents are sorted by id and children by parent id: one merge pass links them.
    if (sqlite3_prepare_v2(db->handle, children_sql, -1, &statement, NULL) != SQLITE_OK) return 1;
    int p = 0;
    while (sqlite3_step(statement) == SQLITE_ROW) {
        int64_t parent_id = sqlite3_column_int64(statement, 0);
        while (p < count && parents[p].id < parent_id) p++;
        if (p == count || parents[p].id != parent_id) continue;
        cb_parent *parent = &parents[p];
        if (parent->children == parent->capacity) {
            parent->capacity = parent->capacity ? parent->capacity * 2 : 16;
            parent->child_ids = realloc(parent->child_ids, sizeof(int64_t) * (size_t)parent->capacity);
            parent->child_names = realloc(parent->child_names, sizeof(int64_t) * (size_t)parent->capacity);
        }
        parent->child_ids[parent->children] = sqlite3_column_int64(statement, 1);
        parent->child_names[parent->children] = arena_copy(&arena, statement, 2);
        parent->children++;
    }
    sqlite3_finalize(statement);
    sqlite3_exec(db->handle, "COMMIT", NULL, NULL, NULL);
    for (int i = 0; i < count; i++) {
        add(sum, parents[i].id, arena_text(&arena, parents[i].name), 0);
        for (int j = 0; j < parents[i].children; j++) add(sum, parents[i].child_ids[j], arena_text(&arena, parents[i].child_names[j]), 0);
        free(parents[i].child_ids);
        free(parents[i].child_names);
    }
    free(arena.bytes);
    free(parents);
    return 0;
}

int cb_load_teams(cb_db *db, cb_sum *sum) {
    return load_parents(db, "SELECT id, name FROM team ORDER BY id",
                        "SELECT team_id, id, name FROM player WHERE team_id IS NOT NULL ORDER BY team_id, id", sum);
}

int cb_load_workers(cb_db *db, const char *join_sql, cb_sum *sum) {
    return load_parents(db, "SELECT id, name FROM worker ORDER BY id", join_sql, sum);
}

int cb_delete_cheaper(cb_db *db, double price) {
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db->handle, "DELETE FROM item WHERE price < ?", -1, &statement, NULL) != SQLITE_OK) return 1;
    sqlite3_bind_double(statement, 1, price);
    int rc = sqlite3_step(statement) == SQLITE_DONE ? 0 : 1;
    sqlite3_finalize(statement);
    return rc;
}

int cb_insert_graphs(cb_db *db, const int64_t *team_ids, const char *const *team_names, int teams,
                     const int64_t *player_ids, const char *const *player_names, int players_per_team) {
    sqlite3_stmt *team, *player;
    if (sqlite3_prepare_v2(db->handle, "INSERT INTO team (id, name) VALUES (?, ?)", -1, &team, NULL) != SQLITE_OK) return 1;
    if (sqlite3_prepare_v2(db->handle, "INSERT INTO player (id, name, team_id) VALUES (?, ?, ?)", -1, &player, NULL) != SQLITE_OK) return 1;
    sqlite3_exec(db->handle, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    int rc = 0;
    for (int t = 0; t < teams && rc == 0; t++) {
        sqlite3_bind_int64(team, 1, team_ids[t]);
        sqlite3_bind_text(team, 2, team_names[t], -1, SQLITE_STATIC);
        if (sqlite3_step(team) != SQLITE_DONE) rc = 1;
        sqlite3_reset(team);
        for (int p = 0; p < players_per_team && rc == 0; p++) {
            int index = t * players_per_team + p;
            sqlite3_bind_int64(player, 1, player_ids[index]);
            sqlite3_bind_text(player, 2, player_names[index], -1, SQLITE_STATIC);
            sqlite3_bind_int64(player, 3, team_ids[t]);
            if (sqlite3_step(player) != SQLITE_DONE) rc = 1;
            sqlite3_reset(player);
        }
    }
    sqlite3_finalize(team);
    sqlite3_finalize(player);
    sqlite3_exec(db->handle, rc == 0 ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

int64_t cb_read_until(cb_db *db, const int64_t *keys, int count, const volatile int *stop) {
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT %s FROM item WHERE id = ?", item_columns);
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db->handle, sql, -1, &statement, NULL) != SQLITE_OK) return 0;
    int64_t fetches = 0;
    while (!__atomic_load_n(stop, __ATOMIC_ACQUIRE)) {
        sqlite3_bind_int64(statement, 1, keys[fetches % count]);
        if (sqlite3_step(statement) == SQLITE_ROW) use_row_in_place(statement, NULL);
        sqlite3_reset(statement);
        fetches++;
    }
    sqlite3_finalize(statement);
    return fetches;
}

void cb_checksum(const char *path, const char *sql, int64_t *out) {
    sqlite3 *handle;
    out[0] = out[1] = out[2] = out[3] = -1;
    if (sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) return;
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(handle, sql, -1, &statement, NULL) == SQLITE_OK && sqlite3_step(statement) == SQLITE_ROW) {
        for (int i = 0; i < 4; i++) out[i] = sqlite3_column_int64(statement, i);
    }
    sqlite3_finalize(statement);
    sqlite3_close_v2(handle);
}

int64_t cb_heap_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    return (int64_t)(info.uordblks + info.hblkhd);
#else
    return -1;
#endif
}

/// The migration benchmark's transform, as a careful C programmer writes it: SQLite's
/// table-rebuild procedure, with each row read, converted in C (cost in currency units →
/// whole cents) and inserted through one prepared statement.
int cb_transform_items(cb_db *db) {
    int rc = sqlite3_exec(db->handle,
        "PRAGMA foreign_keys = OFF; BEGIN IMMEDIATE;"
        "CREATE TABLE item_new (id INTEGER NOT NULL, name TEXT NOT NULL, costCents INTEGER, qty INTEGER NOT NULL, PRIMARY KEY (id))",
        NULL, NULL, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_stmt *select = NULL, *insert = NULL;
    rc = sqlite3_prepare_v2(db->handle, "SELECT id, name, cost, qty FROM Item", -1, &select, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db->handle, "INSERT INTO item_new (id, name, costCents, qty) VALUES (?, ?, ?, ?)", -1, &insert, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(select)) == SQLITE_ROW) {
        sqlite3_bind_int64(insert, 1, sqlite3_column_int64(select, 0));
        sqlite3_bind_text(insert, 2, (const char *)sqlite3_column_text(select, 1), sqlite3_column_bytes(select, 1), SQLITE_TRANSIENT);
        if (sqlite3_column_type(select, 2) == SQLITE_NULL) {
            sqlite3_bind_null(insert, 3);
        } else {
            sqlite3_bind_int64(insert, 3, llround(sqlite3_column_double(select, 2) * 100));
        }
        sqlite3_bind_int64(insert, 4, sqlite3_column_int64(select, 3));
        rc = sqlite3_step(insert) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db->handle);
        sqlite3_reset(insert);
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(select);
    sqlite3_finalize(insert);
    if (rc == SQLITE_OK) {
        rc = sqlite3_exec(db->handle,
            "DROP TABLE Item; ALTER TABLE item_new RENAME TO Item;"
            "CREATE INDEX index_Item_name ON Item (name); PRAGMA foreign_key_check; COMMIT; PRAGMA foreign_keys = ON",
            NULL, NULL, NULL);
    }
    if (rc != SQLITE_OK) sqlite3_exec(db->handle, "ROLLBACK; PRAGMA foreign_keys = ON", NULL, NULL, NULL);
    return rc;
}
