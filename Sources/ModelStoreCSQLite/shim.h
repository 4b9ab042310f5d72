#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H

#include <sqlite3.h>
#include <time.h>

// SQLITE_TRANSIENT is a macro over a cast that Swift cannot import; these helpers make
// SQLite copy the bytes it is given, so Swift may free them as soon as the call returns.
static inline int csqlite_bind_text(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}

static inline int csqlite_bind_blob(sqlite3_stmt *statement, int index, const void *bytes, int length) {
    return sqlite3_bind_blob(statement, index, bytes, length, SQLITE_TRANSIENT);
}

// sqlite3_db_config is variadic, which Swift cannot call. Switching off double-quoted string
// literals makes a quoted identifier that names no column an error instead of a string: a
// column renamed behind the store's back must never be read as its own name. Returns 0 when
// the SQLite in use predates the option (3.29).
static inline int csqlite_disable_double_quoted_strings(sqlite3 *db) {
#if defined(SQLITE_DBCONFIG_DQS_DML) && defined(SQLITE_DBCONFIG_DQS_DDL)
    if (sqlite3_libversion_number() < 3029000) return 0;
    int dml = -1, ddl = -1;
    sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, &dml);
    sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 0, &ddl);
    return dml == 0 && ddl == 0;
#else
    return 0;
#endif
}

// Reads the start of the main database file and its size through SQLite's own file handle.
// Opening a second descriptor on the file and closing it would drop every POSIX lock the
// process holds on it ("How To Corrupt An SQLite Database File", 2.2); SQLite's handle is
// shared and never closed under a lock. Returns SQLITE_OK, or an SQLite error code.
static inline int csqlite_read_file_start(sqlite3 *db, void *buffer, int count, sqlite3_int64 *size) {
    sqlite3_file *file = 0;
    int rc = sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file);
    if (rc != SQLITE_OK) return rc;
    if (file == 0 || file->pMethods == 0) return SQLITE_CANTOPEN;
    rc = file->pMethods->xFileSize(file, size);
    if (rc != SQLITE_OK) return rc;
    if (*size <= 0) return SQLITE_OK;
    rc = file->pMethods->xRead(file, buffer, count, 0);
    return rc == SQLITE_IOERR_SHORT_READ ? SQLITE_OK : rc;
}

// What may stop the call a connection runs (see Interruption.swift). `cancelled` is set from
// any thread, so it is only touched through the two functions below; the other fields belong
// to the thread running the call, which is the one SQLite calls the progress handler on.
typedef struct {
    int cancelled;        // 1 once the call's task was cancelled (atomic)
    int paused;           // > 0 while the connection runs its own BEGIN, COMMIT or ROLLBACK
    int stopped;          // why the handler stopped a statement: 0 not, 1 cancelled, 2 time limit
    long long deadline;   // csqlite_monotonic_nanoseconds() past which it stops; 0: no limit
} csqlite_interruption;

static inline long long csqlite_monotonic_nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000LL + (long long)now.tv_nsec;
}

static inline void csqlite_interruption_cancel(csqlite_interruption *state) {
    __atomic_store_n(&state->cancelled, 1, __ATOMIC_RELEASE);
}

static inline int csqlite_interruption_is_cancelled(csqlite_interruption *state) {
    return __atomic_load_n(&state->cancelled, __ATOMIC_ACQUIRE);
}

// SQLite's progress handler: non-zero makes the running statement fail with SQLITE_INTERRUPT.
// It runs every few thousand virtual-machine instructions, so it must cost next to nothing:
// one atomic load, and a clock read only when the call has a time limit.
static inline int csqlite_interruption_progress(void *context) {
    csqlite_interruption *state = (csqlite_interruption *)context;
    if (state->paused > 0) return 0;
    if (__atomic_load_n(&state->cancelled, __ATOMIC_RELAXED)) {
        state->stopped = 1;
        return 1;
    }
    if (state->deadline != 0 && csqlite_monotonic_nanoseconds() >= state->deadline) {
        state->stopped = 2;
        return 1;
    }
    return 0;
}

// Installs the handler for `state` (every `instructions` instructions), or removes it (NULL).
static inline void csqlite_set_interruption(sqlite3 *db, csqlite_interruption *state, int instructions) {
    if (state) {
        sqlite3_progress_handler(db, instructions, csqlite_interruption_progress, state);
    } else {
        sqlite3_progress_handler(db, 0, 0, 0);
    }
}

#endif
