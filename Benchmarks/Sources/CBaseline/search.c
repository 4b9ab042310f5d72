#include "CSearch.h"
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct cs_db {
    sqlite3 *handle;
    sqlite3_stmt *search;
    sqlite3_stmt *filtered;
    // The hits of the last search: strings live in one growing buffer.
    char *buffer;
    size_t capacity;
};

typedef struct {
    int64_t id;
    size_t title, body, title_snippet, body_snippet;   // offsets into buffer
    int64_t year;
    double rank;
} cs_hit;

static cs_hit hits[64];

cs_db *cs_open(const char *path) {
    cs_db *db = calloc(1, sizeof(cs_db));
    if (sqlite3_open_v2(path, &db->handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        free(db);
        return NULL;
    }
    sqlite3_exec(db->handle, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
    db->capacity = 1 << 16;
    db->buffer = malloc(db->capacity);
    return db;
}

void cs_close(cs_db *db) {
    sqlite3_finalize(db->search);
    sqlite3_finalize(db->filtered);
    sqlite3_close_v2(db->handle);
    free(db->buffer);
    free(db);
}

int cs_load(cs_db *db, int64_t count, const char *const *titles, const char *const *bodies, const int64_t *years) {
    int rc = sqlite3_exec(db->handle,
        "CREATE TABLE doc (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL, year INTEGER NOT NULL);"
        "CREATE VIRTUAL TABLE doc_fts USING fts5(title, body, content='doc', content_rowid='id', tokenize='unicode61 remove_diacritics 2');"
        "CREATE TRIGGER doc_ai AFTER INSERT ON doc BEGIN INSERT INTO doc_fts(rowid, title, body) VALUES (new.id, new.title, new.body); END;"
        "CREATE TRIGGER doc_ad AFTER DELETE ON doc BEGIN INSERT INTO doc_fts(doc_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body); END;"
        "CREATE TRIGGER doc_au AFTER UPDATE ON doc BEGIN INSERT INTO doc_fts(doc_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);"
        " INSERT INTO doc_fts(rowid, title, body) VALUES (new.id, new.title, new.body); END;",
        NULL, NULL, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_stmt *insert;
    rc = sqlite3_prepare_v2(db->handle, "INSERT INTO doc (id, title, body, year) VALUES (?, ?, ?, ?)", -1, &insert, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_exec(db->handle, "BEGIN", NULL, NULL, NULL);
    for (int64_t i = 0; i < count; i++) {
        sqlite3_bind_int64(insert, 1, i + 1);
        sqlite3_bind_text(insert, 2, titles[i], -1, SQLITE_STATIC);
        sqlite3_bind_text(insert, 3, bodies[i], -1, SQLITE_STATIC);
        sqlite3_bind_int64(insert, 4, years[i]);
        rc = sqlite3_step(insert);
        sqlite3_reset(insert);
        if (rc != SQLITE_DONE) break;
    }
    sqlite3_finalize(insert);
    if (rc != SQLITE_DONE) {
        sqlite3_exec(db->handle, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    return sqlite3_exec(db->handle, "COMMIT", NULL, NULL, NULL);
}

static size_t keep(cs_db *db, size_t *used, const unsigned char *text, int bytes) {
    if (*used + (size_t)bytes + 1 > db->capacity) {
        while (*used + (size_t)bytes + 1 > db->capacity) db->capacity *= 2;
        db->buffer = realloc(db->buffer, db->capacity);
    }
    size_t offset = *used;
    if (bytes > 0) memcpy(db->buffer + offset, text, (size_t)bytes);
    db->buffer[offset + (size_t)bytes] = 0;
    *used += (size_t)bytes + 1;
    return offset;
}

int64_t cs_search(cs_db *db, const char *query, int limit, int64_t min_year, int64_t *checksum) {
    sqlite3_stmt **slot = min_year < 0 ? &db->search : &db->filtered;
    if (!*slot) {
        const char *sql = min_year < 0
            ? "SELECT doc.id, doc.title, doc.body, doc.year, doc_fts.rank, snippet(doc_fts, 0, '[', ']', '…', 12),"
              " snippet(doc_fts, 1, '[', ']', '…', 12) FROM doc_fts JOIN doc ON doc.id = doc_fts.rowid"
              " WHERE doc_fts MATCH ?1 ORDER BY doc_fts.rank LIMIT ?2"
            : "SELECT doc.id, doc.title, doc.body, doc.year, doc_fts.rank, snippet(doc_fts, 0, '[', ']', '…', 12),"
              " snippet(doc_fts, 1, '[', ']', '…', 12) FROM doc_fts JOIN doc ON doc.id = doc_fts.rowid"
              " WHERE doc_fts MATCH ?1 AND doc.year >= ?3 ORDER BY doc_fts.rank LIMIT ?2";
        if (sqlite3_prepare_v3(db->handle, sql, -1, SQLITE_PREPARE_PERSISTENT, slot, NULL) != SQLITE_OK) return -1;
    }
    sqlite3_stmt *statement = *slot;
    sqlite3_bind_text(statement, 1, query, -1, SQLITE_STATIC);
    sqlite3_bind_int(statement, 2, limit > 64 ? 64 : limit);
    if (min_year >= 0) sqlite3_bind_int64(statement, 3, min_year);
    int64_t count = 0;
    size_t used = 0;
    int rc;
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW) {
        cs_hit *hit = &hits[count++];
        hit->id = sqlite3_column_int64(statement, 0);
        hit->title = keep(db, &used, sqlite3_column_text(statement, 1), sqlite3_column_bytes(statement, 1));
        hit->body = keep(db, &used, sqlite3_column_text(statement, 2), sqlite3_column_bytes(statement, 2));
        hit->year = sqlite3_column_int64(statement, 3);
        hit->rank = sqlite3_column_double(statement, 4);
        hit->title_snippet = keep(db, &used, sqlite3_column_text(statement, 5), sqlite3_column_bytes(statement, 5));
        hit->body_snippet = keep(db, &used, sqlite3_column_text(statement, 6), sqlite3_column_bytes(statement, 6));
        *checksum += hit->id;
    }
    sqlite3_reset(statement);
    return rc == SQLITE_DONE ? count : -1;
}
