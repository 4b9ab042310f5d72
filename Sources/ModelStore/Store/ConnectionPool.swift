import CSQLite
import Foundation

/// The store's connections: one writer, and up to `maximumReaders` readers made on demand.
///
/// With WAL, readers on their own connections run beside each other and beside the writer.
/// The store's queue decides who runs when; the pool only hands out connections.
final class ConnectionPool: @unchecked Sendable {
    // @unchecked: every stored var below is read and written only while `condition` is locked.
    enum Location: Sendable {
        case file(String)
        /// A shared-cache in-memory database, so reader connections see the writer's data.
        case memory(String)
    }

    let location: Location
    private let busyTimeout: TimeInterval
    private let maximumReaders: Int
    private let createsDirectory: Bool
    private let condition = NSCondition()
    private var writerLink: PooledConnection?
    private var idleReaders: [PooledConnection] = []
    private var readerCount = 0
    private var trace: (@Sendable (String) -> Void)?
    private var traceGeneration = 0

    init(location: Location, busyTimeout: TimeInterval, maximumReaders: Int, createsDirectory: Bool) {
        self.location = location
        self.busyTimeout = busyTimeout
        self.maximumReaders = max(1, maximumReaders)
        self.createsDirectory = createsDirectory
    }

    /// A description of where the store lives, for messages.
    var locationDescription: String {
        switch location {
        case .file(let path): return path
        case .memory: return ":memory:"
        }
    }

    // MARK: Writer

    /// Opens the writer now, so a bad path fails at the store's creation.
    func open() throws {
        _ = try writer()
    }

    /// The writer connection; only barrier blocks of the store's queue use it.
    func writer() throws -> PooledConnection {
        condition.lock()
        defer { condition.unlock() }
        let link = try openedWriter()
        applyTrace(to: link)
        return link
    }

    private func openedWriter() throws -> PooledConnection {
        if let writerLink { return writerLink }
        let path = try preparedPath()
        if case .file = location { try Self.checkHeader(ofExistingFileAt: path) }
        let connection = try Connection(location: path, flags: flags(reader: false), busyTimeout: busyTimeout)
        try configureWriter(connection)
        let link = PooledConnection(connection)
        writerLink = link
        return link
    }

    private func configureWriter(_ connection: Connection) throws {
        do {
            // Reading the journal mode reads the file header: a file that is not a database
            // fails here, before anything is written to it.
            _ = try connection.scalar("PRAGMA journal_mode = WAL")
            try connection.execute("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON")
        } catch var error as ModelStoreError {
            error.message += " Path: \(locationDescription)"
            throw error
        }
        if sqlite3_db_readonly(connection.handle, "main") == 1 {
            throw ModelStoreError(
                .readOnly, "The store at \(locationDescription) can only be read: the file or its directory is read-only.",
                suggestion: "Open a store at a writable location.")
        }
    }

    /// Refuses a file that cannot be an intact database before SQLite opens it, so a damaged
    /// file gets an error naming the damage and is left exactly as it was (no WAL or shared
    /// memory file beside it). SQLite would refuse these files too, but only at first use.
    static func checkHeader(ofExistingFileAt path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { return }
        defer { try? handle.close() }
        let size = (try? handle.seekToEnd()) ?? 0
        guard size > 0 else { return }  // a new, empty store
        try? handle.seek(toOffset: 0)
        let header = [UInt8]((try? handle.read(upToCount: 100)) ?? Data())
        let magic = Array("SQLite format 3\0".utf8)
        guard header.count == 100, header.starts(with: magic) else {
            throw ModelStoreError(
                .notADatabase,
                header.starts(with: magic.prefix(header.count)) && header.count < 100
                    ? "The file at \(path) is \(size) bytes long, too short to be an SQLite database: it was probably truncated."
                    : "The file at \(path) is not an SQLite database.",
                suggestion: "Open a store at another path, or restore the file from a backup. ModelStore has not modified it.")
        }
        func number(at offset: Int, _ width: Int) -> UInt64 {
            header[offset..<(offset + width)].reduce(0) { $0 << 8 | UInt64($1) }
        }
        let pageSize = number(at: 16, 2) == 1 ? 65536 : number(at: 16, 2)
        let pageCount = number(at: 28, 4)
        // SQLite trusts the header's page count only when the change counter matches the
        // version-valid-for number; a WAL or hot journal beside the file may legitimately hold
        // pages the file does not have yet.
        let countIsValid = pageCount > 0 && number(at: 24, 4) == number(at: 92, 4)
        let manager = FileManager.default
        let journaled = manager.fileExists(atPath: path + "-wal") || manager.fileExists(atPath: path + "-journal")
        if countIsValid, !journaled, size < pageCount * pageSize {
            throw ModelStoreError(
                .corrupt,
                "The database file at \(path) is \(size) bytes long, but its header says it holds \(pageCount) pages of \(pageSize) bytes: it was truncated.",
                suggestion: "Restore the file from a backup or copy it again. ModelStore has not modified it.")
        }
    }

    // MARK: Readers

    /// Runs `body` with a reader connection, waiting for one when all are busy.
    func withReader<T>(_ body: (PooledConnection) throws -> T) throws -> T {
        let link = try checkOutReader()
        defer { checkIn(link) }
        return try body(link)
    }

    private func checkOutReader() throws -> PooledConnection {
        condition.lock()
        defer { condition.unlock() }
        // The writer creates the file and sets WAL before any reader opens it.
        _ = try openedWriter()
        while true {
            if let link = idleReaders.popLast() {
                applyTrace(to: link)
                return link
            }
            if readerCount < maximumReaders {
                let connection = try Connection(
                    location: try preparedPath(), flags: flags(reader: true), busyTimeout: busyTimeout)
                // Readers never write: a bug that tried would fail instead of racing the writer.
                try connection.execute("PRAGMA query_only = 1")
                readerCount += 1
                let link = PooledConnection(connection)
                applyTrace(to: link)
                return link
            }
            condition.wait()
        }
    }

    private func checkIn(_ link: PooledConnection) {
        condition.lock()
        idleReaders.append(link)
        condition.signal()
        condition.unlock()
    }

    // MARK: Tracing

    /// Sets the trace handler; each connection picks it up the next time it is handed out.
    func setTrace(_ handler: (@Sendable (String) -> Void)?) {
        condition.lock()
        trace = handler
        traceGeneration += 1
        condition.unlock()
    }

    private func applyTrace(to link: PooledConnection) {
        guard link.traceGeneration != traceGeneration else { return }
        link.connection.setTrace(trace)
        link.traceGeneration = traceGeneration
    }

    // MARK: Opening

    private func flags(reader: Bool) -> Int32 {
        var flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX
        if !reader { flags |= SQLITE_OPEN_CREATE }
        if case .memory = location { flags |= SQLITE_OPEN_URI | SQLITE_OPEN_SHAREDCACHE | SQLITE_OPEN_CREATE }
        return flags
    }

    /// The path to open, checked so the common mistakes get a clear error, not SQLite's
    /// terse "unable to open database file".
    private func preparedPath() throws -> String {
        switch location {
        case .memory(let uri):
            return uri
        case .file(let path):
            let manager = FileManager.default
            let directory = (path as NSString).deletingLastPathComponent
            if createsDirectory, !directory.isEmpty {
                try? manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
            }
            var isDirectory: ObjCBool = false
            if manager.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                throw ModelStoreError(
                    .cannotOpen, "The store's path \(path) is a directory, not a database file.",
                    suggestion: "Pass the path of a file, for example \(path)/store.sqlite.")
            }
            if !directory.isEmpty, !manager.fileExists(atPath: directory) {
                throw ModelStoreError(
                    .cannotOpen, "The directory \(directory) of the store \(path) does not exist.",
                    suggestion: "Create the directory first.")
            }
            return path
        }
    }
}
