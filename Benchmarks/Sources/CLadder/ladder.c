#include "CLadder.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct cl_db {
    sqlite3 *handle;
    sqlite3_stmt *read_orders;
};

cl_db *cl_open(const char *path, int read_only) {
    cl_db *db = calloc(1, sizeof(cl_db));
    int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    if (sqlite3_open_v2(path, &db->handle, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) return db;
    sqlite3_busy_timeout(db->handle, 5000);
    if (!read_only) sqlite3_exec(db->handle, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
    return db;
}

void cl_close(cl_db *db) {
    sqlite3_finalize(db->read_orders);
    sqlite3_close_v2(db->handle);
    free(db);
}

int cl_exec(cl_db *db, const char *sql) { return sqlite3_exec(db->handle, sql, NULL, NULL, NULL); }

const char *cl_error(cl_db *db) { return sqlite3_errmsg(db->handle); }

/// Text of materialized rows in one growing buffer; rows hold offsets (-1 for NULL).
typedef struct {
    char *bytes;
    size_t used, capacity;
} arena;

static int64_t copy_text(arena *buffer, sqlite3_stmt *statement, int column) {
    const unsigned char *text = sqlite3_column_text(statement, column);
    if (!text) return -1;
    size_t length = (size_t)sqlite3_column_bytes(statement, column) + 1;
    if (buffer->used + length > buffer->capacity) {
        size_t capacity = buffer->capacity ? buffer->capacity : 65536;
        while (buffer->used + length > capacity) capacity *= 2;
        buffer->bytes = realloc(buffer->bytes, capacity);
        buffer->capacity = capacity;
    }
    memcpy(buffer->bytes + buffer->used, text, length);
    int64_t offset = (int64_t)buffer->used;
    buffer->used += length;
    return offset;
}

static int64_t text_length(const arena *buffer, int64_t offset) {
    return offset < 0 ? 0 : (int64_t)strlen(buffer->bytes + offset);
}

/// A text column's share of an Orders checksum: (length + 1) × its place, 0 for NULL.
static int64_t weighted(const arena *buffer, int64_t offset, int64_t place) {
    return offset < 0 ? 0 : (text_length(buffer, offset) + 1) * place;
}

// MARK: Orders

typedef struct {
    int64_t id;
    int64_t customer_id;
    int64_t employee_id;
    int has_employee_id;
    int64_t order_date, required_date, shipped_date;
    int64_t ship_via;
    int has_ship_via;
    double freight;
    int has_freight;
    int64_t ship_name, ship_address, ship_city, ship_region, ship_postal_code, ship_country;
} order_row;

static void add_order(cl_sum *sum, const arena *buffer, const order_row *row) {
    sum->count += 1;
    sum->keys += row->id + 2 * (row->has_employee_id ? row->employee_id : -1) + 3 * (row->has_ship_via ? row->ship_via : -1);
    sum->text += weighted(buffer, row->customer_id, 1) + weighted(buffer, row->order_date, 2)
        + weighted(buffer, row->required_date, 3) + weighted(buffer, row->shipped_date, 4)
        + weighted(buffer, row->ship_name, 5) + weighted(buffer, row->ship_address, 6)
        + weighted(buffer, row->ship_city, 7) + weighted(buffer, row->ship_region, 8)
        + weighted(buffer, row->ship_postal_code, 9) + weighted(buffer, row->ship_country, 10);
    sum->cents += row->has_freight ? (int64_t)llround(row->freight * 100) : -1;
}

int cl_read_orders(cl_db *db, cl_sum *sum) {
    if (!db->read_orders) {
        const char *sql = "SELECT id, customerID, employeeID, orderDate, requiredDate, shippedDate, shipVia, freight, "
                          "shipName, shipAddress, shipCity, shipRegion, shipPostalCode, shipCountry FROM orders";
        if (sqlite3_prepare_v3(db->handle, sql, -1, SQLITE_PREPARE_PERSISTENT, &db->read_orders, NULL) != SQLITE_OK) return 1;
    }
    sqlite3_stmt *statement = db->read_orders;
    int capacity = 1024, count = 0;
    order_row *rows = malloc(sizeof(order_row) * (size_t)capacity);
    arena buffer = {0};
    int rc;
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW) {
        if (count == capacity) {
            capacity *= 2;
            rows = realloc(rows, sizeof(order_row) * (size_t)capacity);
        }
        order_row *row = &rows[count++];
        row->id = sqlite3_column_int64(statement, 0);
        row->customer_id = copy_text(&buffer, statement, 1);
        row->has_employee_id = sqlite3_column_type(statement, 2) != SQLITE_NULL;
        row->employee_id = sqlite3_column_int64(statement, 2);
        row->order_date = copy_text(&buffer, statement, 3);
        row->required_date = copy_text(&buffer, statement, 4);
        row->shipped_date = copy_text(&buffer, statement, 5);
        row->has_ship_via = sqlite3_column_type(statement, 6) != SQLITE_NULL;
        row->ship_via = sqlite3_column_int64(statement, 6);
        row->has_freight = sqlite3_column_type(statement, 7) != SQLITE_NULL;
        row->freight = sqlite3_column_double(statement, 7);
        row->ship_name = copy_text(&buffer, statement, 8);
        row->ship_address = copy_text(&buffer, statement, 9);
        row->ship_city = copy_text(&buffer, statement, 10);
        row->ship_region = copy_text(&buffer, statement, 11);
        row->ship_postal_code = copy_text(&buffer, statement, 12);
        row->ship_country = copy_text(&buffer, statement, 13);
    }
    sqlite3_reset(statement);
    for (int i = 0; i < count; i++) add_order(sum, &buffer, &rows[i]);
    free(buffer.bytes);
    free(rows);
    return rc == SQLITE_DONE ? 0 : 1;
}

// MARK: Users

int cl_create_users(cl_db *db, const uint8_t *ids, const char *const *first_names, const char *const *surnames,
                    const int64_t *ages, int count) {
    if (sqlite3_exec(db->handle,
                     "CREATE TABLE IF NOT EXISTS user (id BLOB PRIMARY KEY NOT NULL, firstName TEXT NOT NULL, "
                     "surname TEXT NOT NULL, age INTEGER NOT NULL);"
                     "CREATE INDEX IF NOT EXISTS user_firstName ON user (firstName)",
                     NULL, NULL, NULL) != SQLITE_OK)
        return 1;
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db->handle, "INSERT INTO user (id, firstName, surname, age) VALUES (?, ?, ?, ?)", -1,
                           &statement, NULL) != SQLITE_OK)
        return 1;
    sqlite3_exec(db->handle, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    for (int i = 0; i < count; i++) {
        sqlite3_bind_blob(statement, 1, ids + 16 * (size_t)i, 16, SQLITE_STATIC);
        sqlite3_bind_text(statement, 2, first_names[i], -1, SQLITE_STATIC);
        sqlite3_bind_text(statement, 3, surnames[i], -1, SQLITE_STATIC);
        sqlite3_bind_int64(statement, 4, ages[i]);
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

typedef struct {
    uint8_t id[16];
    int64_t first_name, surname;
    int64_t age;
} user_row;

int cl_fetch_users_named(cl_db *db, const char *first_name, cl_sum *sum) {
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db->handle, "SELECT id, firstName, surname, age FROM user WHERE firstName = ? ORDER BY age",
                           -1, &statement, NULL) != SQLITE_OK)
        return 1;
    sqlite3_bind_text(statement, 1, first_name, -1, SQLITE_STATIC);
    int capacity = 256, count = 0;
    user_row *rows = malloc(sizeof(user_row) * (size_t)capacity);
    arena buffer = {0};
    int rc;
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW) {
        if (count == capacity) {
            capacity *= 2;
            rows = realloc(rows, sizeof(user_row) * (size_t)capacity);
        }
        user_row *row = &rows[count++];
        const void *id = sqlite3_column_blob(statement, 0);
        if (id && sqlite3_column_bytes(statement, 0) == 16) memcpy(row->id, id, 16);
        row->first_name = copy_text(&buffer, statement, 1);
        row->surname = copy_text(&buffer, statement, 2);
        row->age = sqlite3_column_int64(statement, 3);
    }
    sqlite3_finalize(statement);
    for (int i = 0; i < count; i++) {
        sum->count += 1;
        sum->keys += rows[i].age * (i + 1);
        sum->text += text_length(&buffer, rows[i].first_name) + text_length(&buffer, rows[i].surname);
        uint64_t words[2];
        memcpy(words, rows[i].id, 16);
        sum->cents += (int64_t)(words[0] + words[1]);
    }
    free(buffer.bytes);
    free(rows);
    return rc == SQLITE_DONE ? 0 : 1;
}

int64_t cl_rename_users(cl_db *db, const char *from, const char *to) {
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db->handle, "UPDATE user SET firstName = ? WHERE firstName = ?", -1, &statement, NULL)
        != SQLITE_OK)
        return -1;
    sqlite3_bind_text(statement, 1, to, -1, SQLITE_STATIC);
    sqlite3_bind_text(statement, 2, from, -1, SQLITE_STATIC);
    int rc = sqlite3_step(statement);
    sqlite3_finalize(statement);
    return rc == SQLITE_DONE ? sqlite3_changes64(db->handle) : -1;
}

int64_t cl_count_users(cl_db *db, const char *first_name) {
    sqlite3_stmt *statement;
    const char *sql = first_name ? "SELECT count(*) FROM user WHERE firstName = ?" : "SELECT count(*) FROM user";
    if (sqlite3_prepare_v2(db->handle, sql, -1, &statement, NULL) != SQLITE_OK) return -1;
    if (first_name) sqlite3_bind_text(statement, 1, first_name, -1, SQLITE_STATIC);
    int64_t count = sqlite3_step(statement) == SQLITE_ROW ? sqlite3_column_int64(statement, 0) : -1;
    sqlite3_finalize(statement);
    return count;
}

int cl_delete_users(cl_db *db) { return sqlite3_exec(db->handle, "DELETE FROM user", NULL, NULL, NULL); }

int64_t cl_database_bytes(cl_db *db) {
    sqlite3_wal_checkpoint_v2(db->handle, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    int64_t pages = 0, size = 0;
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db->handle, "SELECT page_count, page_size FROM pragma_page_count, pragma_page_size", -1,
                           &statement, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(statement) == SQLITE_ROW) {
        pages = sqlite3_column_int64(statement, 0);
        size = sqlite3_column_int64(statement, 1);
    }
    sqlite3_finalize(statement);
    return pages * size;
}
