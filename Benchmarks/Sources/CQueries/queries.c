#include "CQueries.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct cq_db {
    sqlite3 *handle;
};

cq_db *cq_open(const char *path) {
    cq_db *db = calloc(1, sizeof(cq_db));
    if (sqlite3_open_v2(path, &db->handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) return db;
    sqlite3_exec(db->handle, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
    return db;
}

void cq_close(cq_db *db) {
    sqlite3_close_v2(db->handle);
    free(db);
}

const char *cq_error(cq_db *db) { return sqlite3_errmsg(db->handle); }

typedef struct {
    int64_t id;
    char *name;
    double number;
    int64_t link;
} cq_record;

static int64_t text_sum(const unsigned char *text) {
    int64_t sum = 0;
    if (text) for (; *text; text++) sum += *text;
    return sum;
}

int cq_records_text(cq_db *db, const char *sql, const char *text, cq_sum *sum) {
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db->handle, sql, -1, &statement, NULL) != SQLITE_OK) return 1;
    sqlite3_bind_text(statement, 1, text, -1, SQLITE_STATIC);
    size_t capacity = 1024, count = 0;
    cq_record *records = malloc(capacity * sizeof(cq_record));
    int rc;
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW) {
        if (count == capacity) records = realloc(records, (capacity *= 2) * sizeof(cq_record));
        cq_record *record = &records[count++];
        record->id = sqlite3_column_int64(statement, 0);
        const unsigned char *name = sqlite3_column_text(statement, 1);
        record->name = name ? strdup((const char *)name) : NULL;
        record->number = sqlite3_column_double(statement, 2);
        record->link = sqlite3_column_int64(statement, 3);
    }
    sqlite3_finalize(statement);
    for (size_t i = 0; i < count; i++) {
        sum->checksum += records[i].id + records[i].link + (int64_t)records[i].number + text_sum((const unsigned char *)records[i].name);
        free(records[i].name);
    }
    sum->rows += (int64_t)count;
    free(records);
    return rc == SQLITE_DONE ? 0 : 1;
}

typedef struct {
    int64_t id;
    char *name;
    char *text;
} cq_named;

int cq_records_real(cq_db *db, const char *sql, double value, cq_sum *sum) {
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db->handle, sql, -1, &statement, NULL) != SQLITE_OK) return 1;
    sqlite3_bind_double(statement, 1, value);
    size_t capacity = 256, count = 0;
    cq_named *records = malloc(capacity * sizeof(cq_named));
    int rc;
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW) {
        if (count == capacity) records = realloc(records, (capacity *= 2) * sizeof(cq_named));
        cq_named *record = &records[count++];
        record->id = sqlite3_column_int64(statement, 0);
        const unsigned char *name = sqlite3_column_text(statement, 1);
        record->name = name ? strdup((const char *)name) : NULL;
        const unsigned char *text = sqlite3_column_text(statement, 2);
        record->text = text ? strdup((const char *)text) : NULL;
    }
    sqlite3_finalize(statement);
    for (size_t i = 0; i < count; i++) {
        sum->checksum += records[i].id + text_sum((const unsigned char *)records[i].name) + text_sum((const unsigned char *)records[i].text);
        free(records[i].name);
        free(records[i].text);
    }
    sum->rows += (int64_t)count;
    free(records);
    return rc == SQLITE_DONE ? 0 : 1;
}

int cq_count_text(cq_db *db, const char *sql, const char *text, int64_t *count) {
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db->handle, sql, -1, &statement, NULL) != SQLITE_OK) return 1;
    sqlite3_bind_text(statement, 1, text, -1, SQLITE_STATIC);
    int rc = sqlite3_step(statement);
    if (rc == SQLITE_ROW) *count = sqlite3_column_int64(statement, 0);
    sqlite3_finalize(statement);
    return rc == SQLITE_ROW ? 0 : 1;
}

typedef struct {
    char *key;
    int64_t count;
    double average;
    double maximum;
} cq_group;

int cq_groups(cq_db *db, const char *sql, int64_t minimum, cq_sum *sum) {
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db->handle, sql, -1, &statement, NULL) != SQLITE_OK) return 1;
    sqlite3_bind_int64(statement, 1, minimum);
    size_t capacity = 64, count = 0;
    cq_group *groups = malloc(capacity * sizeof(cq_group));
    int rc;
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW) {
        if (count == capacity) groups = realloc(groups, (capacity *= 2) * sizeof(cq_group));
        cq_group *group = &groups[count++];
        const unsigned char *key = sqlite3_column_text(statement, 0);
        group->key = key ? strdup((const char *)key) : NULL;
        group->count = sqlite3_column_int64(statement, 1);
        group->average = sqlite3_column_double(statement, 2);
        group->maximum = sqlite3_column_double(statement, 3);
    }
    sqlite3_finalize(statement);
    for (size_t i = 0; i < count; i++) {
        sum->checksum += groups[i].count + (int64_t)groups[i].maximum + text_sum((const unsigned char *)groups[i].key);
        free(groups[i].key);
    }
    sum->rows += (int64_t)count;
    free(groups);
    return rc == SQLITE_DONE ? 0 : 1;
}
