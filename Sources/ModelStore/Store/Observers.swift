import Foundation

/// A live query: runs its fetch at once, and again after each committed transaction that
/// wrote a table the last fetch read. Fetches never overlap, and commits that arrive during
/// one coalesce into a single re-run, so a burst of commits costs one or two fetches.
final class LiveObserver<Value: Sendable>: ChangeObserver, @unchecked Sendable {
    // @unchecked: the mutable state is read and written only while `lock` is held.
    private let lock = NSLock()
    private weak var store: ModelStore?
    private let fetch: @Sendable () throws -> Value
    private let isDuplicate: (@Sendable (Value, Value) -> Bool)?
    private let deliver: @Sendable (Result<Value, ModelStoreError>) -> Void
    private let finish: @Sendable () -> Void
    /// Lowercased tables the last fetch read; nil until the first fetch has run.
    private var tables: Set<String>?
    private var running = false
    private var dirty = false
    private var ended = false
    private var last: Value?
    /// The recorder of the fetch running now.
    private var fetching: TableRecorder?

    init(
        store: ModelStore, fetch: @escaping @Sendable () throws -> Value, isDuplicate: (@Sendable (Value, Value) -> Bool)?,
        deliver: @escaping @Sendable (Result<Value, ModelStoreError>) -> Void, finish: @escaping @Sendable () -> Void
    ) {
        self.store = store
        self.fetch = fetch
        self.isDuplicate = isDuplicate
        self.deliver = deliver
        self.finish = finish
    }

    func start() {
        if let store, store.cannotObserve {
            deliver(.failure(store.observationUnsupported()))
            lock.lock()
            ended = true
            lock.unlock()
            finish()
            return
        }
        store?.changeTracker.add(self, tables: [])
        schedule()
    }

    func receive(_ changes: CommittedChanges, origin: TableRecorder?) {
        lock.lock()
        // A fetch that writes does not re-run itself for its own commit (it would loop).
        let own = origin != nil && origin === fetching
        let relevant = !own && (changes.isUnknown || tables.map { !$0.isDisjoint(with: changes.tables) } ?? true)
        lock.unlock()
        if relevant { schedule() }
    }

    private func schedule() {
        lock.lock()
        guard !ended else { return lock.unlock() }
        if running {
            dirty = true
            return lock.unlock()
        }
        running = true
        lock.unlock()
        // On ModelStore's own threads, not the global queue: on Linux its threads are the
        // concurrency pool's, which stops growing while one of its threads is busy, and a
        // fetch that kept one busy (a count over a table another process kept growing) held
        // back every task waiting for a thread until it ended.
        WorkerThreads.shared.run { self.run() }
    }

    private func run() {
        while true {
            guard let store else { return end() }
            let recorder = TableRecorder()
            lock.lock()
            fetching = recorder
            lock.unlock()
            let before = store.changeTracker.commitCount
            var result = Result { try recorder.recording { try fetch() } }.mapError { ModelStoreError.wrapping($0) }
            var read = recorder.tables
            // Raw SQL whose tables the backend does not tell: every table of the store's schema.
            if case .success = result, recorder.readsAnyTable {
                do {
                    let known = Set(read.map { $0.name })
                    let all = try store.read { session in try MigrationRunner.userTables(on: session.connection) }
                    read += all.filter { !known.contains($0) }.map { ObservedTable(name: $0, keyColumns: []) }
                } catch {
                    result = .failure(ModelStoreError.wrapping(error))
                }
            }
            let readNames = Set(read.map { $0.name.lowercased() })
            // A failed fetch may have read nothing yet: it stays interested in everything.
            var began = false
            if case .success = result {
                store.changeTracker.update(self, tables: read)
                // A backend's feed records the tables from now on, for every connection.
                do { began = try store.recordChanges(of: read) } catch { result = .failure(ModelStoreError.wrapping(error)) }
            }
            // A commit between this fetch's snapshot and the moment the writer (or the feed)
            // records a table the fetch newly read may have gone unrecorded: fetch once more.
            lock.lock()
            let grew = tables.map { !readNames.isSubset(of: $0) } ?? true
            lock.unlock()
            if case .success = result, grew, store.changeTracker.commitCount != before || began {
                lock.lock()
                dirty = true
                lock.unlock()
            }
            lock.lock()
            fetching = nil
            if case .success = result { tables = readNames }
            var repeated = false
            if case .success(let value) = result, let isDuplicate, let last, isDuplicate(last, value) { repeated = true }
            if case .success(let value) = result { last = value }
            let stop = ended
            lock.unlock()
            if !stop, !repeated { deliver(result) }
            lock.lock()
            if dirty, !ended {
                dirty = false
                lock.unlock()
                continue
            }
            running = false
            lock.unlock()
            return
        }
    }

    /// Stops observing; nothing is delivered afterwards.
    func cancel() {
        lock.lock()
        let wasEnded = ended
        ended = true
        lock.unlock()
        guard !wasEnded else { return }
        store?.changeTracker.remove(self)
    }

    private func end() {
        cancel()
        finish()
    }

    func storeClosed(_ error: ModelStoreError) {
        lock.lock()
        let wasEnded = ended
        lock.unlock()
        // A live query ends with `.closed`, which its loop can tell from a normal end.
        if !wasEnded { deliver(.failure(error)) }
        end()
    }
}

/// A model's change stream: each committed transaction that wrote its table, as the keys
/// inserted, updated and deleted (net of the transaction: a record inserted and deleted in
/// it is neither).
final class StreamObserver: ChangeObserver, @unchecked Sendable {
    // @unchecked: `ended` and `store` are read and written only while `lock` is held.
    private let lock = NSLock()
    /// Held while the stream runs, as a live query's fetch holds it: a loop over a change
    /// stream keeps its store open (other processes' commits still arrive) until the loop
    /// ends, its task is cancelled, the token goes, or the store closes.
    private var store: ModelStore?
    let table: ObservedTable
    private let deliver: @Sendable (CommittedChanges.Net) -> Void
    private let finish: @Sendable () -> Void
    private var ended = false

    init(
        store: ModelStore, table: ObservedTable, deliver: @escaping @Sendable (CommittedChanges.Net) -> Void,
        finish: @escaping @Sendable () -> Void
    ) {
        self.store = store
        self.table = table
        self.deliver = deliver
        self.finish = finish
    }

    /// Starts the stream.
    ///
    /// - Throws: `ModelStoreError` when the backend's feed cannot record the table; the
    ///   stream is then ended.
    func start() throws {
        lock.lock()
        let store = self.store
        lock.unlock()
        store?.changeTracker.add(self, tables: [table])
        do {
            _ = try store?.recordChanges(of: [table])
        } catch {
            cancel()
            throw ModelStoreError.wrapping(error)
        }
    }

    func receive(_ changes: CommittedChanges, origin: TableRecorder?) {
        let name = table.name.lowercased()
        guard changes.isUnknown || changes.tables.contains(name) else { return }
        lock.lock()
        let stop = ended
        lock.unlock()
        guard !stop else { return }
        deliver(changes.isUnknown || changes.unknownTables.contains(name) ? .unknown : changes.net(of: name))
    }

    func cancel() {
        lock.lock()
        let wasEnded = ended
        ended = true
        let store = self.store
        self.store = nil
        lock.unlock()
        guard !wasEnded else { return }
        store?.changeTracker.remove(self)
    }

    func storeClosed(_ error: ModelStoreError) {
        cancel()
        finish()
    }
}

extension CommittedChanges {
    /// One table's changes, net of the transaction.
    struct Net: Sendable {
        var inserted: [[SQLValue]] = []
        var updated: [[SQLValue]] = []
        var deleted: [[SQLValue]] = []
        var isKnown = true

        static let unknown = Net(isKnown: false)
    }

    /// The net effect on each key of `table`, in the order keys first changed.
    func net(of table: String) -> Net {
        // Rows recorded without keys (a key longer than the triggers record): keys unknown.
        if (rows[table] ?? []).contains(where: { $0.key.isEmpty }) { return .unknown }
        enum State { case inserted, updated, deleted, vanished }
        var order: [[SQLValue]] = []
        var states: [[SQLValue]: State] = [:]
        for row in rows[table] ?? [] {
            let before = states[row.key]
            if before == nil { order.append(row.key) }
            switch (before, row.operation) {
            case (nil, .insert): states[row.key] = .inserted
            case (nil, .update): states[row.key] = .updated
            case (nil, .delete): states[row.key] = .deleted
            case (.inserted?, .delete): states[row.key] = .vanished  // never visible outside
            case (.inserted?, _): states[row.key] = .inserted
            case (.deleted?, .insert): states[row.key] = .updated  // replaced
            case (.vanished?, .insert): states[row.key] = .inserted
            case (_, .delete): states[row.key] = .deleted
            case (.vanished?, _): states[row.key] = .inserted
            case (_, _): states[row.key] = .updated
            }
        }
        var net = Net()
        for key in order {
            switch states[key] {
            case .inserted?: net.inserted.append(key)
            case .updated?: net.updated.append(key)
            case .deleted?: net.deleted.append(key)
            default: break
            }
        }
        return net
    }
}
