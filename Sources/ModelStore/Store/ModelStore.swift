import Foundation

/// A store of models: one SQLite database, its connections, and the queue that orders work.
///
/// Reads run side by side on a concurrent `DispatchQueue`, each on a pooled read
/// connection; writes run as barriers on the one writer connection, each in a transaction.
/// So a read submitted after a write — even an asynchronous write still in flight — sees
/// that write. A `ModelStore` is `Sendable`: share one per database across your program.
///
/// ```swift
/// let store = try ModelStore(path: "snacks.sqlite")
/// ModelStore.default = store           // what `Snack.find(key:)` and `snack.save()` use
/// try Snack(snackId: 1, name: "Pocky").save(in: store)   // or name a store explicitly
/// ```
public final class ModelStore: Sendable {
    // Checked by the compiler: every stored property is immutable and Sendable. The shared
    // state lives in `Locked` boxes, the pool and `InFlight` (each explains its own lock).

    /// Tuning for a store. The defaults suit most programs.
    public struct Configuration: Sendable {
        /// How long a write waits for a lock held by another process before failing with
        /// `.busy`. Default: 5 seconds.
        public var busyTimeout: TimeInterval
        /// How many read connections may run at once. Default: 4.
        public var maximumReaders: Int
        /// Whether reads wait for writes submitted before them. Default:
        /// `.afterEarlierWrites`.
        public var readOrdering: ReadOrdering
        /// Whether the store only reads: it never creates, changes or checkpoints the file,
        /// and every write throws `.readOnly`. Default: false. A store whose file or location
        /// cannot be written (read-only media, permissions) opens read-only by itself.
        /// In-memory stores ignore it: they start empty, so there is nothing to read.
        public var readOnly: Bool
        /// Versioned migration steps, oldest first, that run once each when the store opens
        /// (see `MigrationStep`). Default: none.
        public var migrations: [MigrationStep]
        /// Whether the store copies its file (SQLite's online backup) before it runs pending
        /// migration steps, to `<path>.before-<position>-<name>` of the first step to run; a failed step's error
        /// names the copy. Default: false. In-memory stores have nothing to copy.
        public var backsUpBeforeMigrating: Bool
        /// How long opening waits for another process that is running the same file's
        /// migration steps before failing with `.busy`. Default: 600 seconds.
        public var migrationWaitLimit: TimeInterval
        /// How often, while anything is observed, the store checks whether another
        /// connection (another process, or another store on the same file) committed:
        /// observers hear of such a commit within about this long. Default: 0.05 seconds.
        public var externalChangePollInterval: TimeInterval
        /// How long, in seconds, a read may run before it is stopped with `.timedOut`: every
        /// read — finds, queries, aggregates, searches, raw SQL, read blocks, and streams and
        /// `forEach` (counting the time spent reading, not the time the loop holds the rows).
        /// A read past it stops the statement it runs within a millisecond or so and hands its
        /// connection back to the store at once. `withReadTimeLimit(_:_:)` sets another limit
        /// (or none) for the calls inside it. Default: nil, no limit.
        ///
        /// ```swift
        /// // A search box: no search may hold a reader for more than two seconds.
        /// let store = try ModelStore(path: path, configuration: .init(readTimeLimit: 2))
        /// ```
        ///
        /// The limit counts from when the read starts running on its connection: waiting for
        /// earlier writes or a free reader is not counted. Writes have no time limit: a write
        /// or transaction runs to its commit (or fails for its own reasons); an `async` one
        /// stops when its task is cancelled. On PostgreSQL the server's `statement_timeout`
        /// enforces it for each statement. A value that is not a positive number of seconds
        /// makes reads throw `.invalidQuery`; `.infinity` is no limit.
        public var readTimeLimit: TimeInterval?
        /// How long, in seconds, the durable history keeps a change (`StoredModel.keepsHistory`):
        /// after a write commits, the store purges older ones on its writer between
        /// transactions, as `purgeHistory(olderThan:)` does — when a tenth of this (an hour at
        /// most) has passed since its last purge. A purge that fails (a busy server) is tried
        /// again when the next one is due; no call fails for it. A consumer further behind is refused
        /// with `.historyPurged`. Default: nil, changes are kept until
        /// `purgeHistory(olderThan:)`; a value that is not a positive number of seconds purges
        /// nothing.
        ///
        /// ```swift
        /// let store = try ModelStore(path: path, configuration: .init(historyRetention: 30 * 24 * 3600))
        /// ```
        public var historyRetention: TimeInterval?

        /// Creates a configuration.
        public init(
            busyTimeout: TimeInterval = 5, maximumReaders: Int = 4, readOrdering: ReadOrdering = .afterEarlierWrites,
            readOnly: Bool = false, migrations: [MigrationStep] = [], backsUpBeforeMigrating: Bool = false,
            migrationWaitLimit: TimeInterval = 600, externalChangePollInterval: TimeInterval = 0.05,
            readTimeLimit: TimeInterval? = nil, historyRetention: TimeInterval? = nil
        ) {
            self.busyTimeout = busyTimeout
            self.maximumReaders = maximumReaders
            self.readOrdering = readOrdering
            self.readOnly = readOnly
            self.migrations = migrations
            self.backsUpBeforeMigrating = backsUpBeforeMigrating
            self.migrationWaitLimit = migrationWaitLimit
            self.externalChangePollInterval = externalChangePollInterval
            self.readTimeLimit = readTimeLimit
            self.historyRetention = historyRetention
        }
    }

    /// What a read sees of writes still in flight.
    public enum ReadOrdering: Sendable {
        /// A read waits for every write submitted before it, and sees it — even an
        /// asynchronous write still in flight. Reads still run side by side with each other.
        case afterEarlierWrites
        /// A read never waits for writes: it sees what was committed when it starts (a WAL
        /// snapshot on SQLite, the server's snapshot on PostgreSQL), so a long import never
        /// stalls it. A write submitted before it but not yet committed is not seen. In-memory
        /// stores always order reads after writes.
        case latestCommitted
    }

    /// The database file's path, or nil for an in-memory store.
    public let path: String?
    /// The configuration the store was opened with.
    public let configuration: Configuration

    /// Orders the store's work: reads side by side, writes as barriers (see `StoreQueue`).
    let queue: StoreQueue
    let pool: ConnectionPool
    /// Whether reads bypass the queue's barriers (`ReadOrdering.latestCommitted` on a file or
    /// a server).
    let readsSkipBarriers: Bool
    /// Whether the store is a file (WAL: readers never block the writer).
    let isFileStore: Bool
    /// Whether the store is on a database server (ModelStorePostgres), not SQLite.
    var cannotObserve: Bool {
        if case .remote(let opener) = pool.location { return !opener.dialect.capabilities.observesChanges && !changeTracker.hasFeed }
        return false
    }

    /// Makes the backend's change feed record `tables` (nothing where SQLite's temp triggers
    /// record changes); true when it began recording one just now, so what changed in it
    /// before is unknown.
    ///
    /// - Throws: `ModelStoreError` when the feed cannot record them.
    func recordChanges(of tables: [ObservedTable]) throws -> Bool {
        guard changeTracker.hasFeed, !tables.isEmpty, let (feed, openedNow) = try changeTracker.openFeed() else { return false }
        var execute: ((String) throws -> Void)?
        // Inside this store's write transaction, the record is made in it: made on the feed's
        // connection it would wait for a lock that very transaction holds.
        if let context = SessionContext.current(for: ObjectIdentifier(self)), context.isWriter {
            let connection = context.link.connection
            execute = { try connection.execute($0) }
        }
        // A feed opened just now: what committed between the caller's fetch and its opening
        // is in no record it reads.
        return try feed.record(tables, execute: execute) || openedNow
    }

    /// The error observation gives where the backend cannot record changes: it needs
    /// SQLite's triggers calling Swift, or a backend's change feed.
    func observationUnsupported() -> ModelStoreError {
        var backend = "another database"
        if case .remote(let opener) = pool.location { backend = opener.dialect.name }
        return ModelStoreError(
            .unsupported,
            "Observing changes (observe, changes(of:)) is SQLite's alone for now; the store at \(pool.locationDescription) is on \(backend).",
            suggestion: "Poll with a query, or observe a SQLite store.")
    }
    /// Tables this store has created or checked, by model type.
    let registry = Locked<[ObjectIdentifier: TableDescription]>([:])
    /// Every table this store has found complete at least once. Never cleared: when the
    /// schema changes behind its back, their columns must still be there (see
    /// `requireStillPresent`), and errors from SQL are attributed to their models.
    let knownTables = Locked<[ObjectIdentifier: TableDescription]>([:])
    /// Work submitted and not finished, which `close()` waits for.
    let inFlight = InFlight()
    /// When the store last purged its history for `Configuration.historyRetention`.
    let lastHistoryPurge = Locked(Date.distantPast)
    /// Derived table and index names, checked for collisions between declarations.
    let schemaNames = Locked(SchemaNames())
    /// Live queries and change streams, and what the writer records for them.
    let changeTracker: ChangeTracker
    /// Streams of query results running now, which `close()` ends first (see `ModelStore+Streaming.swift`).
    let streams = StreamRegistry()
    /// Raised when raw SQL changes the schema, so readers forget the tables they checked.
    let schemaEpoch = Counter()
    /// Made at first use, never while opening: a queue marked with `setSpecific` hands its
    /// marker's release to a dispatch worker thread when it goes, and a process out of file
    /// descriptors cannot start libdispatch's event loop for that thread (it aborts). A store
    /// whose opening failed therefore must release no such queue.
    private let completionQueueBox = Locked<DispatchQueue?>(nil)
    /// Marks `completionQueue`, so a block started on it knows that handlers sent there would
    /// wait for the block.
    let completionKey = DispatchSpecificKey<Bool>()

    /// Opens (creating if needed) the store at `path`.
    ///
    /// The file is opened and checked at once, so a path that is not a database, a
    /// directory, or a read-only location fails here with a clear error.
    ///
    /// - Parameters:
    ///   - path: The database file. `~` is expanded; the directory must exist.
    ///   - configuration: Busy timeout and reader count.
    /// Pending migration steps (`Configuration.migrations`) run here, before the store can
    /// be used. From now on, calls that name no store use `ModelStore.default` only if the
    /// program sets it: otherwise they throw `.noStore` (see `default`).
    ///
    /// - Throws: `ModelStoreError` with code `.cannotOpen`, `.notADatabase`, `.readOnly`,
    ///   `.corrupt`, `.busy`, or `.migrationFailed` naming the step that failed (rolled back).
    public convenience init(path: String, configuration: Configuration = Configuration()) throws {
        let expanded = (path as NSString).expandingTildeInPath
        self.init(location: .file(expanded), path: expanded, configuration: configuration, createsDirectory: false)
        try pool.open()
        ModelStore.noteOpenedByProgram(as: "ModelStore(path: \"\(path)\")")
    }

    /// Opens (creating if needed) the store at a file URL.
    /// - Throws: `ModelStoreError` as `init(path:configuration:)` does, and `.cannotOpen`
    ///   for a URL that is not a file URL.
    public convenience init(url: URL, configuration: Configuration = Configuration()) throws {
        guard url.isFileURL else {
            throw ModelStoreError(.cannotOpen, "\(url) is not a file URL; a store lives in a local file.")
        }
        try self.init(path: url.path, configuration: configuration)
    }

    /// A store that lives in memory and disappears with the `ModelStore`: for tests, caches
    /// and previews. It behaves as a file store does, reader connections included. Like
    /// opening a file, it ends the implicit default store for calls that name no store
    /// (see `default`).
    ///
    /// ```swift
    /// let cache = ModelStore.inMemory()
    /// try Snack(snackId: 1, name: "Pocky").save(in: cache)
    /// ```
    public static func inMemory(configuration: Configuration = Configuration()) -> ModelStore {
        let uri = "file:modelstore-\(UUID().uuidString)?mode=memory&cache=shared"
        let store = ModelStore(location: .memory(uri), path: nil, configuration: configuration, createsDirectory: false)
        noteOpenedByProgram(as: "ModelStore.inMemory()")
        return store
    }

    /// A store on a database server, whose connections `opener` makes (ModelStorePostgres's
    /// `ModelStore(postgres:)`). Connects at once, so a wrong address fails here — unless
    /// `connectsNow` is false: then it connects (and runs its migration steps) at its first
    /// call, and each call until the server answers throws `.connectionLost`.
    package convenience init(remote opener: any RemoteOpener, configuration: Configuration, connectsNow: Bool = true) throws {
        self.init(location: .remote(opener), path: nil, configuration: configuration, createsDirectory: false)
        pool.opensWithoutServer = !connectsNow
        if connectsNow { try pool.open() }
        ModelStore.noteOpenedByProgram(as: "a store on a database server")
    }

    /// A store that opens its file on first use (the default store), creating its directory.
    init(location: ConnectionPool.Location, path: String?, configuration: Configuration, createsDirectory: Bool) {
        self.path = path
        self.configuration = configuration
        self.pool = ConnectionPool(
            location: location, busyTimeout: configuration.busyTimeout,
            maximumReaders: configuration.maximumReaders, createsDirectory: createsDirectory,
            readOnly: configuration.readOnly && path != nil,
            migrations: .init(
                steps: configuration.migrations, backsUp: configuration.backsUpBeforeMigrating,
                waitLimit: configuration.migrationWaitLimit))
        self.queue = StoreQueue(asyncReaders: configuration.maximumReaders)
        let pool = self.pool
        let isFile: Bool
        if case .file = location { isFile = true } else { isFile = false }
        var feedOpener: ChangeFeedOpener?
        if case .remote(let opener) = location {
            feedOpener = opener.changeFeedOpener(
                RemoteConnectionSettings(lockTimeout: configuration.busyTimeout, storeIsOpen: true),
                tick: max(0.05, configuration.externalChangePollInterval * 10))
        }
        self.changeTracker = ChangeTracker(
            pollInterval: max(0.001, configuration.externalChangePollInterval),
            versionSource: { isFile ? pool.writerDataVersion() : nil }, feedOpener: feedOpener)
        // A shared-cache memory database locks whole tables, so its reads must not overlap
        // writes; a file's readers read a WAL snapshot, and a server's their own (MVCC).
        switch location {
        case .file, .remote: readsSkipBarriers = configuration.readOrdering == .latestCommitted
        default: readsSkipBarriers = false
        }
        if case .file = location { isFileStore = true } else { isFileStore = false }
        pool.adopt(owner: ObjectIdentifier(self))
    }

    /// Where completion handlers run. By default a serial queue of the store's own, which
    /// works in command-line tools that never run a main loop; an app may set `.main`.
    public var completionQueue: DispatchQueue {
        get {
            completionQueueBox.withLock { queue in
                if let queue { return queue }
                let made = DispatchQueue(label: "ModelStore completions \(path ?? "in-memory")")
                made.setSpecific(key: completionKey, value: true)
                queue = made
                return made
            }
        }
        set {
            completionQueueBox.withLock { queue in
                queue?.setSpecific(key: completionKey, value: nil)
                newValue.setSpecific(key: completionKey, value: true)
                queue = newValue
            }
        }
    }

    /// Receives the SQL text of every statement the store runs (values are never included,
    /// only `?` placeholders), or stops tracing when nil. Useful for debug logs and tests.
    ///
    /// ```swift
    /// store.setTrace { sql in print("SQL:", sql) }
    /// ```
    public func setTrace(_ handler: (@Sendable (String) -> Void)?) {
        pool.setTrace(handler)
    }

    /// Whether the calling thread is running on `completionQueue` (a completion handler, or
    /// the main thread when the completion queue is `.main`).
    var isOnCompletionQueue: Bool {
        if DispatchQueue.getSpecific(key: completionKey) == true { return true }
        return Thread.isMainThread && completionQueue === DispatchQueue.main
    }

    /// Whether the store refuses writes: opened with `Configuration.readOnly`, or on a file
    /// or location that cannot be written (then reads still work). Opens the file if it is
    /// not open yet; false when it cannot be opened at all (calls then say why).
    public var isReadOnly: Bool {
        try? pool.open()
        return pool.isReadOnly
    }

    /// Whether `close()` has run: every later call throws `.closed`. A change stream, which
    /// cannot throw, ends when its store closes; this tells that end from a cancelled loop.
    ///
    /// ```swift
    /// for await change in store.changes(of: Snack.self) { apply(change) }
    /// if store.isClosed { print("the store closed") }
    /// ```
    public var isClosed: Bool {
        pool.isClosed
    }

    /// Finishes the work already submitted (in every call form), folds the write-ahead log
    /// into the database file (so the `.sqlite` file alone holds every commit and can be
    /// copied), and closes every connection. Later calls on the store throw `.closed`.
    /// Closing twice does nothing. A store also closes when its last reference goes away
    /// (then it never waits for other connections' readers).
    ///
    /// ```swift
    /// try store.close()
    /// try FileManager.default.copyItem(atPath: path, toPath: backup)   // complete
    /// ```
    /// - Throws: `ModelStoreError` `.reentrancy` when called from inside this store's own
    ///   work (a transaction or read block), which it would wait for; `.busy` when the store
    ///   closed but another connection (another store or process) kept reading an older
    ///   snapshot past the busy timeout, so part of the log is not in the file yet — it will
    ///   be when the last connection closes.
    public func close() throws {
        if SessionContext.current(for: ObjectIdentifier(self)) != nil || BlockMarker.current?.isActive(for: ObjectIdentifier(self)) == true
        {
            throw ModelStoreError(
                .reentrancy, "close() was called inside a block of the store it closes, which it would wait for.",
                suggestion: "Close the store after the block returns.")
        }
        // Observers end first: each live query and change stream finishes, and lets go of
        // the store.
        let closed = ConnectionPool.closedError(pool.locationDescription)
        for observer in changeTracker.removeAll() { observer.storeClosed(closed) }
        // A stream's producer holds a reader until its consumer takes the next rows: end it,
        // telling its consumer that the store closed (an export loop must not mistake it for
        // the last row).
        streams.closeAll(throwing: ConnectionPool.closedError(pool.locationDescription))
        inFlight.waitUntilIdle()
        let complete = queue.sync(flags: .barrier) { pool.close() }
        guard complete else {
            throw ModelStoreError(
                .busy,
                "The store at \(path ?? "in-memory") is closed, but another connection kept reading an older snapshot, so part of the write-ahead log is not in the database file yet; the file alone is not complete until that connection closes.",
                suggestion: "Close the other stores on the file (or end the other process's reads) before copying the file.")
        }
    }
}

/// Counts work submitted to a store and not finished yet (completion and `async` forms,
/// reads that skip the queue, a read handed to the writer), so `close()` can wait for it.
final class InFlight: @unchecked Sendable {
    // @unchecked: `count` is read and written only while `condition` is locked.
    private let condition = NSCondition()
    private var count = 0

    func begin() {
        condition.lock()
        count += 1
        condition.unlock()
    }

    func end() {
        condition.lock()
        count -= 1
        if count == 0 { condition.broadcast() }
        condition.unlock()
    }

    func waitUntilIdle() {
        condition.lock()
        while count > 0 { condition.wait() }
        condition.unlock()
    }
}

extension ModelStore: CustomStringConvertible {
    /// `ModelStore(path)` or `ModelStore(in-memory)`.
    public var description: String {
        "ModelStore(\(path ?? "in-memory"))"
    }
}
