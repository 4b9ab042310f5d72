import Foundation

/// The write-ahead log (`-wal`) and shared-memory file (`-shm`) beside a store's file, as the
/// store opened them.
///
/// While any connection has a WAL database open, SQLite keeps both files (only the last
/// connection to close deletes them), so the ones at the path stay the ones the store opened.
/// A cleanup tool that deletes them anyway leaves the store's connections on the deleted
/// files: its commits still there, but every new connection — another store, another process,
/// a new reader of this store — sees the database without them (or fails, SQLite's
/// `SQLITE_IOERR_SHORT_READ`). Like a replaced database file, that is noticed before a write
/// or a new connection, and said in words.
struct CompanionFiles: Sendable, Equatable {
    /// The directory-resolved path of the database (`ConnectionPool.key`).
    var key: String
    /// The paths, kept so the check before each write builds no string.
    var walPath: String
    var shmPath: String
    var wal: FileIdentity?
    var shm: FileIdentity?

    init(path: String) {
        key = ConnectionPool.key(path)
        walPath = path + "-wal"
        shmPath = path + "-shm"
        wal = FileIdentity(path: walPath)
        shm = FileIdentity(path: shmPath)
    }
}

extension ConnectionPool {
    /// The companions each open pool of this process noted, by pool.
    static let companionFiles = Locked<[ObjectIdentifier: CompanionFiles]>([:])

    /// Notes the `-wal` and `-shm` beside `path` once the store has opened its file. `writer`:
    /// its new writer, whose first read makes SQLite open both (a new database has neither
    /// until then); nothing else uses it yet.
    func noteCompanionFiles(of path: String, writer: Connection?) {
        _ = try? writer?.scalar("PRAGMA schema_version")
        let noted = CompanionFiles(path: path)
        guard noted.wal != nil || noted.shm != nil else { return }  // immutable reads on read-only media make none
        Self.companionFiles.withLock { $0[ObjectIdentifier(self)] = noted }
    }

    /// Forgets them when the store closes its connections.
    func forgetCompanionFiles() {
        _ = Self.companionFiles.withLock { $0.removeValue(forKey: ObjectIdentifier(self)) }
    }

    /// Throws `.fileReplaced` when the `-wal` or `-shm` this store opened is no longer the one
    /// at its path: before every write, and before a new reader opens.
    func checkCompanionFiles() throws {
        guard let noted = Self.companionFiles.withLock({ $0[ObjectIdentifier(self)] }) else { return }
        // Two stat(2) calls, about a microsecond each: the cost of noticing before every write.
        if noted.wal.map({ FileIdentity(path: noted.walPath) == $0 }) ?? true,
            noted.shm.map({ FileIdentity(path: noted.shmPath) == $0 }) ?? true
        {
            return
        }
        guard case .file(let path) = location else { return }
        try Self.refuseChanged(noted, at: path, opening: false)
    }

    /// Throws `.fileReplaced` when a store of this process has `path` open and its `-wal` or
    /// `-shm` was deleted or replaced: a store opened now would read the file without the
    /// commits the deleted log holds (see `refuseReplacedFile`).
    static func refuseChangedCompanions(at path: String) throws {
        let key = key(path)
        let held = companionFiles.withLock { $0.values.filter { $0.key == key } }
        for noted in held { try refuseChanged(noted, at: path, opening: true) }
    }

    private static func refuseChanged(_ noted: CompanionFiles, at path: String, opening: Bool) throws {
        for (suffix, identity, name) in [("-wal", noted.wal, "write-ahead log"), ("-shm", noted.shm, "shared-memory file")] {
            guard let identity else { continue }
            // The path as this store spells it (another store's may differ).
            let current = FileIdentity(path: path + suffix)
            guard current != identity else { continue }
            let happened = current == nil ? "deleted" : "replaced by another file"
            throw ModelStoreError(
                .fileReplaced,
                opening
                    ? "The \(name) \(path)\(suffix) of a store open in this process was \(happened) (a cleanup tool?); a store opened now would read the database without the commits that store still holds."
                    : "The store's \(name) \(path)\(suffix) was \(happened) while the store had it open (a cleanup tool?). The store still holds its commits, but other connections and processes see the database without them; nothing was written.",
                value: path + suffix,
                suggestion: opening
                    ? "Close the other store first (its close() folds what it holds into the database file), then open the path again."
                    : "Call close() on this store now: it folds the log it still holds into the database file, so nothing is lost. Then open the store again, and keep cleanup tools away from the -wal and -shm files of a database in use."
            )
        }
    }
}
