import ModelStoreCSQLite
import Foundation

/// The statements that must run outside any transaction: `VACUUM`, `VACUUM INTO` and WAL
/// checkpoints. The store runs them on its writer between transactions (see
/// `ModelStore+Maintenance.swift`); raw SQL cannot (`RawSQLGuard`).
extension Connection {
    /// Gives back the space deleted records left: SQLite rebuilds the file; a server vacuums
    /// the tables of the store's schema (`SQLDialect.vacuumTablesSQL`).
    func vacuum() throws {
        guard let tablesSQL = dialect.vacuumTablesSQL else {
            return try makeStatement("VACUUM").execute()
        }
        let list = try makeStatement(tablesSQL)
        var tables: [String] = []
        try list.forEachRow { tables.append(list.string(at: 0)) }
        guard !tables.isEmpty else { return }
        try makeStatement("VACUUM " + tables.joined(separator: ", ")).execute()
    }

    /// Writes a compacted copy of the database to a new file at `path` (`VACUUM INTO`): one
    /// snapshot, every transaction committed before it.
    func vacuum(into path: String) throws {
        try makeStatement("VACUUM INTO ?").execute([.text(path)])
    }

    /// Folds the write-ahead log into the database file (`sqlite3_wal_checkpoint_v2`); `mode`
    /// is `SQLITE_CHECKPOINT_PASSIVE` … `TRUNCATE`. Returns SQLite's result code (`SQLITE_BUSY`
    /// when a reader or writer kept a full, restart or truncate checkpoint waiting past the
    /// busy timeout), the frames in the log and those in the file; both are -1 when the
    /// database has no log (in memory).
    func checkpoint(mode: Int32) -> (resultCode: Int32, logFrames: Int, checkpointedFrames: Int) {
        var log: Int32 = -1
        var done: Int32 = -1
        let rc = sqlite3_wal_checkpoint_v2(handle, "main", mode, &log, &done)
        return (rc, Int(log), Int(done))
    }

    /// `.unsupported` naming `call`, which this backend has no meaning for.
    func unsupported(_ call: String, _ reason: String) -> ModelStoreError {
        ModelStoreError(
            .unsupported, "\(call) is SQLite's alone: \(reason); the store at \(location) is on \(dialect.name). Nothing was changed.",
            suggestion: "Use the server's own tools for it, or a SQLite store.")
    }
}
