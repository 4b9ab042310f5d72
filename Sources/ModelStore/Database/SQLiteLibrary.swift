import ModelStoreCSQLite
import Foundation

/// SQLite's open flags by name, so that no layer above `Database/` needs the C module.
struct OpenFlags: OptionSet {
    let rawValue: Int32

    static let readOnly = OpenFlags(rawValue: SQLITE_OPEN_READONLY)
    static let readWrite = OpenFlags(rawValue: SQLITE_OPEN_READWRITE)
    static let create = OpenFlags(rawValue: SQLITE_OPEN_CREATE)
    static let uri = OpenFlags(rawValue: SQLITE_OPEN_URI)
    static let noMutex = OpenFlags(rawValue: SQLITE_OPEN_NOMUTEX)
    static let sharedCache = OpenFlags(rawValue: SQLITE_OPEN_SHAREDCACHE)
}

/// SQLite's result codes and checkpoint modes that layers above `Database/` compare with.
enum SQLiteCode {
    static let ok = SQLITE_OK
    static let busy = SQLITE_BUSY
    static let checkpointPassive = SQLITE_CHECKPOINT_PASSIVE
    static let checkpointFull = SQLITE_CHECKPOINT_FULL
    static let checkpointRestart = SQLITE_CHECKPOINT_RESTART
    static let checkpointTruncate = SQLITE_CHECKPOINT_TRUNCATE
}

/// What the SQLite library ModelStore runs on is and has.
enum SQLiteLibrary {
    /// Its version, for messages (`3.45.1`).
    static var version: String { String(cString: sqlite3_libversion()) }

    /// Whether it has FTS5, found out once per process by creating an FTS5 table in a private
    /// in-memory database (more telling than a compile option: FTS5 may also be built in, or
    /// missing, in ways the option list does not show).
    static let hasFTS5: Bool = {
        var db: OpaquePointer?
        guard sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            sqlite3_close_v2(db)
            return false
        }
        defer { sqlite3_close_v2(db) }
        return sqlite3_exec(db, "CREATE VIRTUAL TABLE probe USING fts5(text)", nil, nil, nil) == SQLITE_OK
    }()
}

extension Connection {
    /// Opens a SQLite database with named flags.
    convenience init(location: String, open flags: OpenFlags, busyTimeout: TimeInterval) throws {
        try self.init(location: location, flags: flags.rawValue, busyTimeout: busyTimeout)
    }

    /// Whether SQLite opened the main database for reading only (the file or its medium
    /// cannot be written).
    var isReadOnlyFile: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// Whether the main schema has a table `name`, through SQLite's C API: it runs no
    /// statement, so a store's trace and statement counts do not change.
    func hasTable(_ name: String) -> Bool {
        sqlite3_table_column_metadata(handle, "main", name, nil, nil, nil, nil, nil, nil) == SQLITE_OK
    }

    /// SQLite's message for the connection's last error.
    var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }
}

/// SQLite's storage classes by name, for the row decoder above `Database/`.
enum StorageClass {
    static let null = SQLITE_NULL
    static let integer = SQLITE_INTEGER
    static let float = SQLITE_FLOAT
    static let text = SQLITE_TEXT
    static let blob = SQLITE_BLOB
}
