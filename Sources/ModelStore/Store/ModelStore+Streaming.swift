import Foundation

/// Streaming reads: a read that hands its rows on while it steps, and raw SQL's effect on
/// what the store knows of its tables.
extension ModelStore {
    /// Runs `body` as a read on a pooled reader *outside* the store's queue, after the writes
    /// submitted before it. A read running on the queue would hold back every write submitted
    /// after it (each waits, as a barrier, for earlier reads); a stream may run for minutes,
    /// and in WAL mode its snapshot never blocks the writer, so it must not sit on the queue.
    ///
    /// Inside this store's block on this thread it joins the block, as every read does.
    /// `prepare` runs on the writer first when a table the read uses needs DDL a reader
    /// cannot do (a column the model gained).
    ///
    /// `interruption` stops it (a stream's: its task, its time limit); without one, the read
    /// time limit in force here does. `body` gets the one that applies, nil inside a block
    /// (the block's applies), to keep the time the caller holds rows out of the limit.
    func streamingRead<T>(
        prepare: @escaping @Sendable (Session) throws -> Void, interruption: Interruption? = nil,
        _ body: (Session, Interruption?) throws -> T
    ) throws -> T {
        do {
            if let context = SessionContext.current(for: ObjectIdentifier(self)) {
                if context.isMigrating { throw Self.callInsideMigration() }
                try context.link.connection.requireOpenTransaction()
                return try body(Session(store: self, link: context.link, role: context.isWriter ? .writer : .pinnedReader), nil)
            }
            try refuseInsideBlock()
            let interruption = try interruption ?? readInterruption(.read)
            // An empty block: returns once every write submitted before it has committed.
            if !readsSkipBarriers { queue.sync {} }
            do {
                return try runRead({ try body($0, interruption) }, interruption: interruption)
            } catch is NeedsWriter {
                try write { try prepare($0) }
                do {
                    return try runRead({ try body($0, interruption) }, interruption: interruption)
                } catch is NeedsWriter {
                    // Tables are ready: what still needs the writer is a statement that writes.
                    throw ModelStoreError(
                        .invalidQuery, "A stream only reads, but its SQL writes.",
                        suggestion: "Run statements that write with store.execute or store.findAll, which run on the writer.")
                }
            }
        } catch {
            throw attributed(error)
        }
    }

    /// Whether a call made here would have to wait for one of this store's blocks: on the
    /// block's own thread, or in a task started inside it.
    var isInsideBlock: Bool {
        SessionContext.current(for: ObjectIdentifier(self)) != nil
            || BlockMarker.current?.isActive(for: ObjectIdentifier(self)) == true
    }
}

extension PooledConnection {
    /// Raw SQL on this (writer) connection created, dropped or altered something: the tables
    /// checked so far may no longer be what was checked. Everything is checked again —
    /// on this connection now, on readers at their next read (`schemaEpoch`), and by the
    /// writer's next transaction (the schema version it recorded is now stale). A table the
    /// SQL dropped is no longer one the store must find again: the next write makes it anew.
    func forgetTablesAfterRawSchemaChange(in store: ModelStore, dropped: [String]) {
        tables = [:]
        pending = [:]
        rawSchemaChanged = true
        store.registry.withLock { $0 = [:] }
        if !dropped.isEmpty {
            let names = Set(dropped.map { $0.lowercased() })
            store.knownTables.withLock { known in known = known.filter { !names.contains($0.value.tableName.lowercased()) } }
        }
        store.schemaEpoch.increment()
    }

    /// A reader forgets the tables it checked when raw SQL changed the schema since.
    func forgetTablesIfSchemaChanged(in store: ModelStore) {
        let epoch = store.schemaEpoch.current
        guard epoch != schemaEpoch else { return }
        tables = [:]
        schemaEpoch = epoch
    }
}

extension ModelStore {
    /// Starts a stream's producer: a thread of its own that reads with `streamingRead` and
    /// hands what `produce` sends to the returned channel, which the consumer drains.
    ///
    /// Cancelling the consumer's task, or closing the store, stops the statement the producer
    /// runs at once (`interruption`); the time limit in force where the stream starts counts
    /// the time the producer reads, not the time it waits for the consumer.
    func startStream<Row: Sendable>(
        prepare: @escaping @Sendable (Session) throws -> Void,
        produce: @escaping @Sendable (Session, _ send: ([Row]) -> Bool) throws -> Void
    ) -> ChunkChannel<Row> {
        let interruption: Interruption
        do {
            interruption = Interruption(.stream, limit: try readTimeLimit())
        } catch {
            let channel = ChunkChannel<Row>(interruption: Interruption(.stream, limit: nil))
            channel.finish(throwing: ModelStoreError.wrapping(error))
            return channel
        }
        let channel = ChunkChannel<Row>(interruption: interruption)
        streams.add(channel)
        // A thread, not the queue (a read there holds back later writes) nor the cooperative
        // pool (the producer blocks while the consumer is behind).
        let thread = Thread { [self] in
            let result = Result {
                try streamingRead(prepare: prepare, interruption: interruption) { session, _ in
                    try produce(session) { chunk in interruption.excludingFromLimit { channel.send(chunk) } }
                }
            }
            streams.remove(channel)
            switch result {
            case .success: channel.finish()
            case .failure(let error): channel.finish(throwing: ModelStoreError.wrapping(error))
            }
        }
        thread.name = "ModelStore stream"
        thread.start()
        return channel
    }

    static func streamInsideBlock() -> ModelStoreError {
        ModelStoreError(
            .reentrancy,
            "A stream was iterated inside a block (transaction or read) of its store; its rows come from another connection, which would wait for the block.",
            suggestion: "Inside a block use forEach, which joins the block, or iterate the stream after the block returns.")
    }
}

/// The streams a store runs, so `close()` can end them: a producer waiting for its consumer
/// holds a reader, which `close()` would otherwise wait for forever.
final class StreamRegistry: Sendable {
    private let channels = Locked<[ObjectIdentifier: any CancellableChannel]>([:])

    func add(_ channel: any CancellableChannel) {
        channels.withLock { $0[ObjectIdentifier(channel)] = channel }
    }

    func remove(_ channel: any CancellableChannel) {
        _ = channels.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// Waits, at most `timeout`, until no stream whose consumer stopped still has a producer
    /// unwinding. An in-memory store's database has table locks, not WAL: a write made right
    /// after breaking out of a stream would otherwise meet the stream's statement, not yet
    /// reset, and fail at once (SQLite's busy timeout does not apply to table locks).
    func waitForStoppedProducers(timeout: TimeInterval) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while channels.withLock({ $0.values.contains { $0.isCancelled } }), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.001)
        }
    }

    /// Ends every stream because the store closed: each producer stops at its next chunk and
    /// returns its reader, and each consumer gets the rows already handed over, then `error`
    /// — never the normal end, which would read as "no more rows".
    func closeAll(throwing error: ModelStoreError) {
        for channel in channels.withLock({ Array($0.values) }) { channel.close(throwing: error) }
    }
}

protocol CancellableChannel: AnyObject, Sendable {
    var isCancelled: Bool { get }
    func cancel()
    func close(throwing error: any Error)
}

/// Hands chunks of rows from a producer thread to an async consumer, at most `capacity`
/// chunks ahead: the producer blocks (a thread of its own, never the store's queue or the
/// cooperative pool) until the consumer takes one, so memory stays bounded however slowly
/// it reads. Cancelling — the consumer's task was cancelled, it stopped iterating, or the
/// store closes — wakes the producer, which stops stepping and returns its reader.
final class ChunkChannel<Element: Sendable>: CancellableChannel, @unchecked Sendable {
    // @unchecked: every var is read and written only while `condition` is locked.
    private let condition = NSCondition()
    private var chunks: [[Element]] = []
    private var finished = false
    private var failure: (any Error)?
    private var cancelled = false
    private var waiting: CheckedContinuation<[Element]?, any Error>?
    private let capacity: Int
    /// Stops the producer's statement when the stream is cancelled or closed.
    let interruption: Interruption

    init(capacity: Int = 2, interruption: Interruption) {
        self.capacity = capacity
        self.interruption = interruption
    }

    var isCancelled: Bool {
        condition.lock()
        defer { condition.unlock() }
        return cancelled
    }

    // MARK: Producer

    /// Hands a chunk on, waiting while `capacity` chunks are waiting; false once cancelled.
    func send(_ chunk: [Element]) -> Bool {
        condition.lock()
        while chunks.count >= capacity, !cancelled, waiting == nil { condition.wait() }
        guard !cancelled else {
            condition.unlock()
            return false
        }
        if let waiting {
            self.waiting = nil
            condition.unlock()
            waiting.resume(returning: chunk)
            return true
        }
        chunks.append(chunk)
        condition.unlock()
        return true
    }

    /// No more chunks: the consumer ends after the ones waiting, or throws `error`.
    func finish(throwing error: (any Error)? = nil) {
        condition.lock()
        // A stream the store closed keeps its error; the producer's own end changes nothing.
        if finished, cancelled { return condition.unlock() }
        finished = true
        if failure == nil { failure = error }
        let waiting = self.waiting
        self.waiting = nil
        let failure = self.failure
        let chunks = self.chunks
        condition.unlock()
        guard let waiting else { return }
        // A consumer waits only when no chunk was waiting.
        precondition(chunks.isEmpty)
        if let failure { waiting.resume(throwing: failure) } else { waiting.resume(returning: nil) }
    }

    // MARK: Consumer

    /// The next chunk; nil at the end. Throws `.cancelled` once the consumer's task is
    /// cancelled: a loop that stopped early must not look like one that read every row.
    func next() async throws -> [Element]? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[Element]?, any Error>) in
                condition.lock()
                if !chunks.isEmpty {
                    let chunk = chunks.removeFirst()
                    condition.broadcast()
                    condition.unlock()
                    continuation.resume(returning: chunk)
                } else if finished, let failure {
                    // (Before `cancelled`: a store that closed under the stream set both, and
                    // the consumer must hear why it ended.)
                    self.failure = nil
                    condition.unlock()
                    continuation.resume(throwing: failure)
                } else if cancelled {
                    // (Before the normal end: the chunks cancelling dropped were rows too.)
                    condition.unlock()
                    continuation.resume(throwing: Self.cancelledError())
                } else if finished {
                    condition.unlock()
                    continuation.resume(returning: nil)
                } else {
                    waiting = continuation
                    // Wakes a producer that waits for room (it hands the chunk straight over).
                    condition.broadcast()
                    condition.unlock()
                }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Ends the stream with `error` (the store closed under it): the producer stops the
    /// statement it runs, or at its next chunk; the consumer gets the chunks already waiting,
    /// then `error`. Nothing changes once the producer has finished: its rows are complete.
    func close(throwing error: any Error) {
        condition.lock()
        guard !finished, !cancelled else { return condition.unlock() }
        finished = true
        cancelled = true
        failure = error
        let waiting = self.waiting
        self.waiting = nil
        condition.broadcast()
        condition.unlock()
        interruption.cancel()
        waiting?.resume(throwing: error)
    }

    /// Ends the stream (its task was cancelled, or its loop ended): the producer stops the
    /// statement it runs, or at its next chunk; a waiting consumer gets `.cancelled`.
    func cancel() {
        condition.lock()
        cancelled = true
        chunks = []
        let waiting = self.waiting
        self.waiting = nil
        condition.broadcast()
        condition.unlock()
        interruption.cancel()
        waiting?.resume(throwing: Self.cancelledError())
    }

    static func cancelledError() -> ModelStoreError {
        var error = ModelStoreError(
            .cancelled,
            "The stream was cancelled: its task was cancelled, so the rows after those already handed over were not read; its read stopped, and its connection went back to the store at once.",
            suggestion: Interruption.cancelledSuggestion)
        error.isInterruption = true
        return error
    }
}
