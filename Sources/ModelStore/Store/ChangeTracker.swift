import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Something that wants to hear about committed changes. Called on the writer's thread right
/// after each commit, in commit order: it must only hand the work on, never block.
protocol ChangeObserver: AnyObject, Sendable {
    /// `origin`: the live-query fetch that made the commit, if one did (it does not re-run
    /// itself for its own writes).
    func receive(_ changes: CommittedChanges, origin: TableRecorder?)
    /// The store closed: end with `error` where the consumer can hear it (a live query
    /// throws it, a handler receives it), finish, and let go of the store.
    func storeClosed(_ error: ModelStoreError)
}

/// The store's observers and the tables they watch. The writer asks it, at the start of each
/// write transaction, which tables need triggers (`PooledConnection.watch`), and hands it
/// each committed transaction's changes; a timer polls `PRAGMA data_version` for commits of
/// other connections while anything is observed.
final class ChangeTracker: @unchecked Sendable {
    // @unchecked: every stored var is read and written only while `lock` is held
    // (`seenVersion` while `pollLock` is).
    private let lock = NSLock()
    /// Each observer, its tables, and the generation from which the writer records them: a
    /// transaction that began earlier reaches it as unknown changes.
    private var observers: [ObjectIdentifier: (observer: any ChangeObserver, tables: [ObservedTable], since: Int)] = [:]
    /// The largest `since`: an empty commit that began at or after it concerns no observer.
    private var latestSince = 0
    private(set) var generation = 0
    private var watched: [String: ObservedTable] = [:]
    /// Whether anything is observed: the writer records changes only then.
    private var active = false
    /// Write transactions published so far (a live query compares it around a fetch).
    private var commits = 0

    var commitCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return commits
    }

    /// Whether anything is observed, and the generation of the watched tables: what the
    /// writer asks once per transaction.
    var state: (active: Bool, generation: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (active, generation)
    }

    // Other connections' commits: the writer's `PRAGMA data_version`, which changes only when
    // another connection commits, polled on a timer while anything is observed.
    private let pollInterval: TimeInterval
    /// Reads the writer's data version, or nil when the writer is not open.
    private let versionSource: @Sendable () -> Int64?
    private var timer: (any DispatchSourceTimer)?
    /// The data version after the last commit this store published.
    private var seenVersion: Int64?
    private let pollQueue = DispatchQueue(label: "ModelStore change poll")

    // A backend's change feed (a server's, see `ChangeFeed`), in place of the poll: opened
    // while anything is observed, closed when nothing is.
    private let feedOpener: ChangeFeedOpener?
    /// Held while the feed opens or closes (never while `lock` is wanted by the feed's thread).
    private let feedLock = NSLock()
    private var feed: (any ChangeFeed)?
    /// The writer's committed transactions the feed has not published yet, with the live
    /// query fetch that wrote each (it does not re-run itself for its own writes).
    private var origins: [String: TableRecorder] = [:]

    init(pollInterval: TimeInterval, versionSource: @escaping @Sendable () -> Int64?, feedOpener: ChangeFeedOpener? = nil) {
        self.pollInterval = pollInterval
        self.versionSource = versionSource
        self.feedOpener = feedOpener
    }

    /// Whether the backend records changes itself (a server's feed).
    var hasFeed: Bool { feedOpener != nil }

    /// The open feed, while anything is observed.
    var activeFeed: (any ChangeFeed)? {
        lock.lock()
        defer { lock.unlock() }
        return feed
    }

    /// The feed, opened if it is not yet (`openedNow`: what committed before it opened is not
    /// in its record); nil where the backend has none or nothing is observed any more.
    ///
    /// - Throws: `ModelStoreError` when it cannot be opened (the server is unreachable, or
    ///   refuses the log's tables).
    func openFeed() throws -> (feed: any ChangeFeed, openedNow: Bool)? {
        guard let feedOpener else { return nil }
        feedLock.lock()
        defer { feedLock.unlock() }
        if let open = activeFeed { return (open, false) }
        let opened = try feedOpener { [weak self] changes, transaction in self?.publishFromFeed(changes, transaction: transaction) }
        lock.lock()
        let wanted = !observers.isEmpty
        if wanted { feed = opened }
        lock.unlock()
        if !wanted { opened.close() }
        return wanted ? (opened, true) : nil
    }

    /// Notes the writer's transaction `transaction`, committed by `origin`'s fetch, before the
    /// feed publishes it.
    func expectOwn(_ transaction: String, origin: TableRecorder) {
        lock.lock()
        // A transaction whose writes the feed does not record is never published: forget
        // such leftovers rather than keep them.
        if origins.count > 1_000 { origins = [:] }
        origins[transaction] = origin
        lock.unlock()
    }

    /// Forgets the writer's transaction `transaction` once the feed has had its chance to
    /// publish it (it recorded nothing, or it rolled back).
    func forgetOwn(_ transaction: String) {
        lock.lock()
        origins[transaction] = nil
        lock.unlock()
    }

    private func publishFromFeed(_ changes: CommittedChanges, transaction: String) {
        lock.lock()
        let origin = origins.removeValue(forKey: transaction)
        lock.unlock()
        publish(changes, origin: origin)
    }

    /// Closes the feed once nothing is observed (called without `lock` held).
    private func closeFeedIfUnused() {
        feedLock.lock()
        lock.lock()
        let closing = observers.isEmpty ? feed : nil
        if closing != nil {
            feed = nil
            origins = [:]
        }
        lock.unlock()
        feedLock.unlock()
        closing?.close()
    }

    deinit {
        timer?.cancel()
    }

    // MARK: Observers

    func add(_ observer: any ChangeObserver, tables: [ObservedTable]) {
        lock.lock()
        // A transaction already running records nothing for the new observer: its commit
        // must reach it as unknown changes.
        generation += 1
        observers[ObjectIdentifier(observer)] = (observer, tables, generation)
        latestSince = generation
        recomputeWatched()
        startPollingIfNeeded()
        lock.unlock()
    }

    /// Changes the tables `observer` watches (a live query reads other tables now).
    func update(_ observer: any ChangeObserver, tables: [ObservedTable]) {
        lock.lock()
        if let entry = observers[ObjectIdentifier(observer)] {
            let before = generation
            observers[ObjectIdentifier(observer)] = (observer, tables, entry.since)
            recomputeWatched()
            if generation != before, Set(tables) != Set(entry.tables) {
                observers[ObjectIdentifier(observer)]?.since = generation
                latestSince = generation
            }
        }
        lock.unlock()
    }

    func remove(_ observer: any ChangeObserver) {
        lock.lock()
        observers[ObjectIdentifier(observer)] = nil
        recomputeWatched()
        if observers.isEmpty { stopPolling() }
        lock.unlock()
        closeFeedIfUnused()
    }

    var observerCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return observers.count
    }

    /// Removes every observer (the store closes): each is told nothing more.
    func removeAll() -> [any ChangeObserver] {
        lock.lock()
        let all = observers.values.map(\.observer)
        observers = [:]
        recomputeWatched()
        stopPolling()
        lock.unlock()
        closeFeedIfUnused()
        return all
    }

    private func recomputeWatched() {
        var tables: [String: ObservedTable] = [:]
        for entry in observers.values {
            for table in entry.tables {
                let key = table.name.lowercased()
                // Keys are recorded when any observer of the table wants them.
                if let existing = tables[key], existing.keyColumns.count >= table.keyColumns.count { continue }
                tables[key] = table
            }
        }
        if tables != watched {
            watched = tables
            generation += 1
        }
        active = !observers.isEmpty
    }

    /// The tables the writer must record, and the generation they belong to.
    func watchedTables() -> (generation: Int, tables: [ObservedTable]) {
        lock.lock()
        defer { lock.unlock() }
        return (generation, Array(watched.values))
    }

    // MARK: Publishing

    /// Hands a committed transaction's changes to every observer, in commit order (the
    /// writer calls this from its barrier, one transaction at a time).
    func publish(_ changes: CommittedChanges, origin: TableRecorder? = nil) {
        lock.lock()
        commits &+= 1
        // Most commits touch nothing observed: they cost this lock and nothing more.
        let late = changes.generation != -1 && changes.generation < latestSince
        guard !changes.isEmpty || late else { return lock.unlock() }
        let targets = observers.values.map { ($0.observer, $0.since) }
        lock.unlock()
        for (observer, since) in targets {
            // An observer whose tables the transaction's triggers may not have covered.
            if changes.generation != -1, changes.generation < since {
                observer.receive(
                    CommittedChanges(tables: changes.tables, rows: [:], isUnknown: true, generation: changes.generation), origin: origin)
            } else if !changes.isEmpty {
                observer.receive(changes, origin: origin)
            }
        }
    }

    // MARK: Other connections' commits

    private func startPollingIfNeeded() {
        // (A backend with a feed hears of other connections' commits from it.)
        guard timer == nil, !observers.isEmpty, feedOpener == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: pollQueue)
        timer.schedule(deadline: .now(), repeating: pollInterval, leeway: .milliseconds(5))
        timer.setEventHandler { [weak self] in self?.poll() }
        timer.resume()
        self.timer = timer
    }

    private func stopPolling() {
        timer?.cancel()
        timer = nil
        seenVersion = nil
    }

    /// Publishes an external change when the writer's data version moved since the last poll.
    private func poll() {
        guard let version = versionSource() else { return }
        lock.lock()
        let seen = seenVersion
        let polling = timer != nil
        if polling { seenVersion = version }
        lock.unlock()
        if polling, let seen, seen != version { publish(CommittedChanges(isUnknown: true)) }
    }
}

/// Notes the tables a fetch reads, so a live query re-runs only when one of them changes.
final class TableRecorder: @unchecked Sendable {
    // @unchecked: `names` is guarded by `lock`; a fetch may read on several connections.
    private let lock = NSLock()
    private var names: [String: ObservedTable] = [:]

    func note(_ table: TableDescription) {
        lock.lock()
        if names[table.tableName.lowercased()] == nil {
            names[table.tableName.lowercased()] = ObservedTable(name: table.tableName, keyColumns: [])
            for join in table.joinTables where names[join.name.lowercased()] == nil {
                names[join.name.lowercased()] = ObservedTable(name: join.name, keyColumns: [])
            }
        }
        lock.unlock()
    }

    /// Notes a table by name: one that raw SQL read.
    func note(tableNamed name: String) {
        lock.lock()
        if names[name.lowercased()] == nil { names[name.lowercased()] = ObservedTable(name: name, keyColumns: []) }
        lock.unlock()
    }

    /// Noted a statement whose tables the backend does not tell (raw SQL on a server): the
    /// fetch may read any table.
    func noteUnknownTables() {
        lock.lock()
        readsUnknownTables = true
        lock.unlock()
    }

    private var readsUnknownTables = false

    /// Whether the fetch ran a statement whose tables are unknown.
    var readsAnyTable: Bool {
        lock.lock()
        defer { lock.unlock() }
        return readsUnknownTables
    }

    var tables: [ObservedTable] {
        lock.lock()
        defer { lock.unlock() }
        return Array(names.values)
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// The recorder of the fetch running on this thread, if any.
    static var current: TableRecorder? {
        pthread_getspecific(key).map { Unmanaged<TableRecorder>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Runs `body` with this recorder noting the tables every read on this thread uses.
    func recording<T>(_ body: () throws -> T) rethrows -> T {
        let previous = pthread_getspecific(Self.key)
        pthread_setspecific(Self.key, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(Self.key, previous) }
        return try withExtendedLifetime(self) { try body() }
    }
}
