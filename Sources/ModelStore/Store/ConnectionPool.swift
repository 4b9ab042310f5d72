import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The store's connections: one writer, and up to `maximumReaders` readers made on demand.
///
/// With WAL, readers on their own connections run beside each other and beside the writer.
/// The store's queue decides who runs when; the pool only hands out connections.
///
/// The pool never opens a file descriptor of its own on the database: on POSIX, closing any
/// descriptor of a file drops every lock the process holds on it, so another store on the
/// same path would silently lose its locks. Everything it needs from the file goes through
/// SQLite's own handle, and `stat(2)` by path.
final class ConnectionPool: @unchecked Sendable {
    // @unchecked: every stored var below is read and written only while `condition` is locked.
    enum Location: Sendable {
        case file(String)
        /// A shared-cache in-memory database, so reader connections see the writer's data.
        case memory(String)
        /// No database: the implicit default store when it is switched off. Every call
        /// throws the error.
        case unavailable(ModelStoreError)
        /// A database server, reached through a driver's connections (ModelStorePostgres).
        case remote(any RemoteOpener)
    }

    let location: Location
    private let busyTimeout: TimeInterval
    private let maximumReaders: Int
    private let createsDirectory: Bool
    private let requestedReadOnly: Bool
    private let condition = NSCondition()
    private var isPrepared = false
    /// Whether the store opened without connecting (a server's store that may start before
    /// its server): it connects, and migrates, at its first call that reaches the server.
    var opensWithoutServer = false
    private var writerLink: PooledConnection?
    private var idleReaders: [PooledConnection] = []
    private var readerCount = 0
    private var checkedOut = 0
    private var trace: (@Sendable (String) -> Void)?
    private var traceGeneration = 0
    /// Whether the store only reads: asked for, or its file or location cannot be written.
    private var readOnly = false
    /// Readers open the file as an immutable URI: a WAL database on read-only media with no
    /// `-shm` beside it cannot be opened any other way, and on such media nothing can change it.
    private var readersUseImmutableURI = false
    private var closed = false
    /// The file's device and inode when the store opened it, to notice it being replaced.
    private var identity: FileIdentity?
    /// A read-only store's connection for the change poll (see `writerDataVersion`).
    private var pollLink: PooledConnection?
    /// What runs once when the writer opens (see `MigrationRunner`).
    private let migrations: Migrations
    /// The thread running the migration steps, while it runs them.
    private var migratingThread: ObjectIdentifier?
    /// The store that owns the pool, set once it exists: its calls from inside a migration
    /// step are refused (see `SessionContext.isMigrating`).
    private var owner: ObjectIdentifier?

    func adopt(owner: ObjectIdentifier) {
        condition.lock()
        self.owner = owner
        condition.unlock()
    }

    struct Migrations: Sendable {
        var steps: [MigrationStep] = []
        var backsUp = false
        var waitLimit: TimeInterval = 600
    }

    init(
        location: Location, busyTimeout: TimeInterval, maximumReaders: Int, createsDirectory: Bool, readOnly: Bool,
        migrations: Migrations = Migrations()
    ) {
        self.location = location
        self.busyTimeout = busyTimeout
        self.maximumReaders = max(1, maximumReaders)
        self.createsDirectory = createsDirectory
        self.requestedReadOnly = readOnly
        self.migrations = migrations
    }

    deinit {
        closeConnections()
    }

    /// A description of where the store lives, for messages.
    var locationDescription: String {
        switch location {
        case .file(let path): return path
        case .memory: return ":memory:"
        case .unavailable: return "(no store)"
        case .remote(let opener): return opener.description
        }
    }

    /// Whether `close()` has run.
    var isClosed: Bool {
        condition.lock()
        defer { condition.unlock() }
        return closed
    }

    /// Whether writes are refused: asked for, or the file or its location cannot be written.
    var isReadOnly: Bool {
        condition.lock()
        defer { condition.unlock() }
        return readOnly
    }

    // MARK: Opening

    /// Opens the file now, so a bad path fails at the store's creation.
    func open() throws {
        condition.lock()
        defer { condition.unlock() }
        try prepare()
    }

    /// Opens the writer (or, read-only, the first reader) once; caller holds the lock.
    private func prepare() throws {
        if closed { throw Self.closedError(locationDescription) }
        guard !isPrepared else { return }
        // Migration steps run with the lock released (see `migrate`): another thread waits
        // for them; a step calling into its own store would wait for itself, so it is refused.
        while let thread = migratingThread {
            guard thread != ObjectIdentifier(Thread.current) else {
                throw ModelStoreError(
                    .reentrancy,
                    "A migration step of the store at \(locationDescription) called the store itself, which cannot be used until its steps have run.",
                    suggestion: "Do a step's work through the MigrationContext it is given (execute, transform, rebuild).")
            }
            condition.wait()
            if closed { throw Self.closedError(locationDescription) }
        }
        guard !isPrepared else { return }
        let path = try preparedPath()
        switch location {
        case .unavailable(let error):
            throw error
        case .remote(let opener):
            // A copy of the database is a file's; a server's steps roll back with their DDL.
            guard !migrations.backsUp || migrations.steps.isEmpty else {
                throw ModelStoreError(
                    .unsupported,
                    "backsUpBeforeMigrating copies a SQLite file; the store at \(opener.description) is on \(opener.dialect.name), whose data is not one file. Nothing was run.",
                    suggestion:
                        "Open it without backsUpBeforeMigrating: each step runs in a transaction with its DDL, so a failed step leaves the database as it was. For a copy, use the server's tools (pg_dump) before deploying."
                )
            }
            // A store opened without reaching its server is open: a server that cannot be
            // reached is a lost connection to it, not a wrong address.
            let settings = RemoteConnectionSettings(lockTimeout: busyTimeout, storeIsOpen: opensWithoutServer)
            var connection = try Connection(remote: opener.open(settings), dialect: opener.dialect)
            if try migrate(connection, backupPath: nil) {
                // A step's SQL may have changed the session (`SET search_path`, a role, a
                // timeout), which a server keeps past the transaction: the writer starts afresh.
                connection.close()
                connection = try Connection(remote: opener.open(settings), dialect: opener.dialect)
            }
            writerLink = PooledConnection(connection)
        case .memory:
            let connection = try Connection(location: path, open: flags(reader: false), busyTimeout: busyTimeout)
            try configureWriter(connection)
            try migrate(connection, backupPath: nil)
            writerLink = PooledConnection(connection)
        case .file:
            try Self.refuseReplacedFile(at: path)
            if requestedReadOnly {
                try openForReading(path)
            } else {
                let existed = FileManager.default.fileExists(atPath: path)
                let connection = try Connection(location: path, open: flags(reader: false), busyTimeout: busyTimeout)
                if !existed, createsDirectory {
                    // The default store is private: SQLite gives `-wal` and `-shm` the mode of
                    // the database file, so they follow.
                    chmod(path, 0o600)
                }
                try Self.checkHeader(of: connection, path: path)
                if existed, connection.isReadOnlyFile {
                    // SQLite fell back to reading: the file or its medium cannot be written.
                    try openForReading(path)
                } else if try configuredAsWriter(connection, fileExisted: existed) {
                    try migrate(connection, backupPath: path)
                    writerLink = PooledConnection(connection)
                    register(path)
                } else {
                    // The file can be written but its directory cannot (no `-wal` can be made).
                    try openForReading(path)
                }
            }
        }
        isPrepared = true
    }

    /// Configures `connection` as the writer; false when an existing file turns out to be
    /// readable only.
    private func configuredAsWriter(_ connection: Connection, fileExisted: Bool) throws -> Bool {
        do {
            try configureWriter(connection)
            return true
        } catch let error as ModelStoreError where fileExisted && [.readOnly, .cannotOpen].contains(error.code) {
            return false
        }
    }

    private func configureWriter(_ connection: Connection) throws {
        do {
            // Reading the journal mode reads the file header: a file that is not a database
            // fails here, before anything is written to it.
            _ = try connection.scalar("PRAGMA journal_mode = WAL")
            // Recursive triggers: the rows a REPLACE deletes fire delete triggers too, so
            // change streams see them (ModelStore's own writes use upserts, never REPLACE).
            try connection.execute("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA recursive_triggers = ON")
        } catch var error as ModelStoreError {
            error.message += " Path: \(locationDescription)"
            throw error
        }
        if connection.isReadOnlyFile {
            throw ModelStoreError(
                .readOnly, "The store at \(locationDescription) can only be read: the file or its directory is read-only.",
                suggestion: "Open a store at a writable location.")
        }
    }

    /// Runs the pending migration steps on the new writer, before any work can use it. A
    /// failure closes it: the store stays unopened, and the next call tries again.
    /// - Returns: whether a step's transaction ran on `connection`.
    @discardableResult
    private func migrate(_ connection: Connection, backupPath: String?) throws -> Bool {
        guard !migrations.steps.isEmpty else {
            // No step to run, but a file another version's steps migrated is still refused.
            do {
                return try MigrationRunner.run([], on: connection, backupPath: nil, waitLimit: 0)
            } catch {
                connection.close()
                throw error
            }
        }
        // The steps run without the pool's lock, which a step calling the store would
        // otherwise wait for forever: `prepare` refuses that call, and makes others wait.
        migratingThread = ObjectIdentifier(Thread.current)
        condition.unlock()
        let run = {
            try MigrationRunner.run(
                self.migrations.steps, on: connection, backupPath: self.migrations.backsUp ? backupPath : nil,
                waitLimit: max(self.migrations.waitLimit, self.busyTimeout))
        }
        let owner = self.owner
        let outcome = Result {
            guard let owner else { return try run() }
            return try SessionContext.with(store: owner, link: PooledConnection(connection), isWriter: true, isMigrating: true, run)
        }
        condition.lock()
        migratingThread = nil
        condition.broadcast()
        if case .failure(let error) = outcome {
            connection.close()
            throw error
        }
        // Closed while the steps ran: the new writer must not outlive the store.
        if closed {
            connection.close()
            throw Self.closedError(locationDescription)
        }
        return (try? outcome.get()) ?? false
    }

    /// A read-only store cannot run steps; it refuses a file that still needs some, whose
    /// schema its models would misread.
    private func refusePendingMigrations(_ connection: Connection) throws {
        // Also with no steps: a file another version's steps migrated is refused.
        try MigrationRunner.validate(migrations.steps)
        let pending = try MigrationRunner.pending(migrations.steps, applied: MigrationRunner.applied(on: connection))
        guard pending.isEmpty else {
            throw ModelStoreError(
                .readOnly,
                "The store at \(locationDescription) is read-only, but the file has not run migration steps \(pending.map { "'\($0.name)'" }.joined(separator: ", ")), which only a writable store can run.",
                suggestion: "Open the store writable once to migrate it.")
        }
    }

    /// Notes the file's identity, to notice it being replaced, in the process-wide registry.
    private func register(_ path: String) {
        identity = FileIdentity(path: path)
        if let identity { Self.openFiles.withLock { $0[Self.key(path), default: [:]][identity, default: 0] += 1 } }
        noteCompanionFiles(of: path, writer: writerLink?.connection)
    }

    /// Makes the store read-only and opens its first reader, checking the file can be read.
    private func openForReading(_ path: String) throws {
        readOnly = true
        func openChecked() throws -> PooledConnection {
            let link = try makeReader()
            try Self.checkHeader(of: link.connection, path: path)
            _ = try link.connection.scalar("PRAGMA schema_version")
            return link
        }
        let link: PooledConnection
        do {
            link = try openChecked()
        } catch let error as ModelStoreError
            where error.code == .cannotOpen && Self.isOnReadOnlyMedia(path)
            && !FileManager.default.fileExists(atPath: path + "-wal")
        {
            // A WAL database on read-only media needs a `-shm` it cannot create; with no
            // `-wal` beside it, the file alone holds every commit, and on such media nothing
            // can change it. Anywhere else (a directory another user owns, say) the file may
            // still change, so immutable reads would be wrong: the error stands.
            readersUseImmutableURI = true
            link = try openChecked()
        }
        do {
            try refusePendingMigrations(link.connection)
        } catch {
            link.connection.close()
            throw error
        }
        readerCount += 1
        idleReaders.append(link)
        register(path)
    }

    // MARK: Writer

    /// The writer connection; only barrier blocks of the store's queue use it. Checks that
    /// the file at the store's path is still the one it opened.
    func writer() throws -> PooledConnection {
        condition.lock()
        defer { condition.unlock() }
        try prepare()
        guard let link = writerLink else {
            throw ModelStoreError(
                .readOnly,
                requestedReadOnly
                    ? "The store at \(locationDescription) was opened read-only; it cannot be written."
                    : "The store at \(locationDescription) can only be read: the file or its location is read-only.",
                suggestion: requestedReadOnly
                    ? "Open the store without readOnly to write." : "Copy the store to a writable location to change it.")
        }
        if let identity, case .file(let path) = location, FileIdentity(path: path) != identity {
            throw ModelStoreError(
                .fileReplaced,
                "The store's file \(path) was deleted, moved or replaced by another file while the store had it open; nothing was written, so the two databases are not mixed.",
                suggestion: "Close this store and open the file again (the new file), or put the original file back.")
        }
        try checkCompanionFiles()
        return link
    }

    /// The writer's data version for the change poll; nil until the writer is open, once
    /// closed, or while a transaction uses it (the next poll will see the same). Never opens
    /// the store.
    func writerDataVersion() -> Int64? {
        condition.lock()
        var link = closed ? nil : writerLink
        if link == nil, !closed, isPrepared, readOnly {
            // A read-only store has no writer: a reader of the poll's own watches the file.
            if pollLink == nil { pollLink = try? makeReader() }
            link = pollLink
        }
        condition.unlock()
        return link?.dataVersionUnlessBusy()
    }

    /// Gives the writer the current trace handler; the caller holds the writer exclusively
    /// (`PooledConnection.exclusively`), so the change poll never runs a statement meanwhile.
    func applyWriterTrace(to link: PooledConnection) {
        condition.lock()
        applyTrace(to: link)
        condition.unlock()
    }

    // MARK: Readers

    /// Runs `body` with a reader connection, waiting for one when all are busy. A call whose
    /// `interruption` is cancelled while it waits stops waiting, and takes none.
    func withReader<T>(interruption: Interruption? = nil, _ body: (PooledConnection) throws -> T) throws -> T {
        let link = try checkOutReader(interruption)
        defer { checkIn(link) }
        return try body(link)
    }

    private func checkOutReader(_ interruption: Interruption?) throws -> PooledConnection {
        condition.lock()
        defer { condition.unlock() }
        // The writer creates the file and sets WAL before any reader opens it.
        try prepare()
        var wake: Int?
        defer { if let wake { interruption?.forget(wake) } }
        while true {
            if closed { throw Self.closedError(locationDescription) }
            if let interruption, interruption.isCancelled { throw interruption.cancelledBeforeStart() }
            if let link = idleReaders.popLast() {
                applyTrace(to: link)
                checkedOut += 1
                return link
            }
            if readerCount < maximumReaders {
                let link = try makeReader()
                readerCount += 1
                applyTrace(to: link)
                checkedOut += 1
                return link
            }
            if let interruption, wake == nil {
                // Registered, then checked again before waiting (the loop's top).
                wake = interruption.whenCancelled { [condition] in
                    condition.lock()
                    condition.broadcast()
                    condition.unlock()
                }
                continue
            }
            condition.wait()
        }
    }

    private func makeReader() throws -> PooledConnection {
        if case .remote(let opener) = location {
            let settings = RemoteConnectionSettings(lockTimeout: busyTimeout, storeIsOpen: true)
            return PooledConnection(try Connection(remote: opener.open(settings), dialect: opener.dialect))
        }
        try checkCompanionFiles()
        var location = try preparedPath()
        var flags = flags(reader: true)
        if readersUseImmutableURI {
            location = "file:" + (location.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? location) + "?immutable=1"
            flags.insert(.uri)
        }
        let connection = try Connection(location: location, open: flags, busyTimeout: busyTimeout)
        // Readers never write: a bug that tried would fail instead of racing the writer.
        try connection.execute("PRAGMA query_only = 1")
        return PooledConnection(connection)
    }

    private func checkIn(_ link: PooledConnection) {
        condition.lock()
        checkedOut -= 1
        if !closed { idleReaders.append(link) }
        condition.broadcast()
        condition.unlock()
    }

    // MARK: Closing

    /// Waits for readers in use, folds the WAL into the database file and closes every
    /// connection. Later calls throw `.closed`. Idempotent. Returns false when the WAL could
    /// not be folded in completely (another connection was reading an older snapshot): the
    /// file alone is then not yet complete.
    func close() -> Bool {
        condition.lock()
        closed = true
        while checkedOut > 0 { condition.wait() }
        condition.unlock()
        return closeConnections(waiting: true)
    }

    /// Closes every connection, writer last. `waiting`: a `TRUNCATE` checkpoint that waits up
    /// to the busy timeout for readers; otherwise a `PASSIVE` one that never waits (a store
    /// released on the main thread must not stall it). SQLite checkpoints again, and deletes
    /// the WAL, when the file's last connection anywhere closes.
    @discardableResult
    private func closeConnections(waiting: Bool = false) -> Bool {
        condition.lock()
        if let identity, case .file(let path) = location {
            Self.openFiles.withLock { files in
                let key = Self.key(path)
                files[key]?[identity]? -= 1
                if files[key]?[identity] == 0 { files[key]?[identity] = nil }
                if files[key]?.isEmpty == true { files[key] = nil }
            }
            self.identity = nil
        }
        forgetCompanionFiles()
        let readers = idleReaders
        let writer = writerLink
        let poll = pollLink
        idleReaders = []
        writerLink = nil
        pollLink = nil
        readerCount = 0
        condition.unlock()
        for reader in readers { reader.connection.close() }
        poll?.closeExclusively()
        var complete = true
        if let writer {
            if case .file = location {
                // (busy, frames in the log, frames folded in): complete when nothing was busy
                // and every frame is in the file (TRUNCATE leaves an empty log: 0, 0). Held
                // against the change poll, which may still be reading the data version.
                complete = writer.exclusively {
                    let statement = try? writer.connection.makeStatement("PRAGMA wal_checkpoint(\(waiting ? "TRUNCATE" : "PASSIVE"))")
                    guard let statement, (try? statement.step()) == true else { return false }
                    return statement.int64(at: 0) == 0 && statement.int64(at: 1) == statement.int64(at: 2)
                }
            }
            writer.closeExclusively()
        }
        return complete
    }

    static func closedError(_ location: String) -> ModelStoreError {
        ModelStoreError(
            .closed, "The store at \(location) was closed; it runs no more calls.",
            suggestion: "Open a new ModelStore on the same path to go on.")
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

    // MARK: Paths and flags

    private func flags(reader: Bool) -> OpenFlags {
        var flags: OpenFlags = [.noMutex, readOnly && reader ? .readOnly : .readWrite]
        if !reader { flags.insert(.create) }
        if case .memory = location { flags.formUnion([.uri, .sharedCache, .create]) }
        return flags
    }

    /// The path to open, checked so the common mistakes get a clear error, not SQLite's
    /// terse "unable to open database file".
    private func preparedPath() throws -> String {
        switch location {
        case .memory(let uri):
            return uri
        case .remote(let opener):
            return opener.description
        case .unavailable(let error):
            throw error
        case .file(let path):
            let manager = FileManager.default
            let directory = (path as NSString).deletingLastPathComponent
            if createsDirectory, !directory.isEmpty, !manager.fileExists(atPath: directory) {
                // The default store's folder is private: other users of the machine must not
                // read an application's data.
                try? manager.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
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
            if requestedReadOnly, !manager.fileExists(atPath: path) {
                throw ModelStoreError(
                    .cannotOpen, "The store \(path) does not exist, and a read-only store cannot create it.",
                    suggestion: "Check the path, or open it without readOnly to create it.")
            }
            return path
        }
    }
}
