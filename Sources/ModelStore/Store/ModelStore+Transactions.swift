import Foundation

extension ModelStore {
    /// Runs `body` as one transaction: every call on this store inside it runs inline, and
    /// either all of their changes are committed or — when `body` throws — none are.
    ///
    /// ```swift
    /// try store.transaction {
    ///     try Snack(snackId: 1, name: "Pocky").save(in: store)
    ///     try Snack.delete(key: 2, in: store)
    /// }
    /// ```
    ///
    /// Transactions nest: one started inside another becomes a savepoint.
    ///
    /// On a PostgreSQL store the block is one SERIALIZABLE transaction, so a block that reads,
    /// computes and writes never loses another process's update. When the server cannot
    /// order it with another connection's work (`40001`) or breaks a deadlock (`40P01`), the
    /// store rolls it back and runs `body` again — at least 12 times, and for as long as the
    /// store's `busyTimeout` — before throwing `.busy`:
    /// keep effects outside the store out of `body`, or make them safe to repeat. On SQLite
    /// `body` runs once.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws (after rolling back), or `ModelStoreError` when the
    ///   transaction cannot begin or commit.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        let holdsCompletionQueue = SessionContext.current(for: ObjectIdentifier(self)) == nil && isOnCompletionQueue
        // On a server the block may run more than once (see the doc comment): the store runs
        // it again when the server could not serialize it with another connection's work.
        return try write { _ in try withBlockMarker(holdsCompletionQueue: holdsCompletionQueue, body) }
    }

    /// Runs `body` as one transaction later; `completion` gets its result on
    /// `completionQueue`. Reads submitted after this call see the transaction's changes.
    /// On a PostgreSQL store `body` may run more than once, as for `transaction(_:)`.
    /// - Throws: What `body` throws (a transaction then rolls back), or `ModelStoreError` when the block
    ///   cannot begin or end (`.busy`, `.readOnly`, `.closed`, `.reentrancy` from a task started inside
    ///   another block of this store).
    public func transaction<T: Sendable>(
        _ body: @escaping @Sendable () throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let deliver = completionQueue
        if SessionContext.current(for: ObjectIdentifier(self)) != nil {
            // Inside this store's own work: join it, as the synchronous form does.
            let result = Result { try transaction(body) }
            deliverInline(result, on: deliver, to: completion)
            return
        }
        submitWrite({ _ in try self.withBlockMarker(body) }) { result in deliver.async { completion(result) } }
    }

    /// Runs `body` as one transaction without blocking the calling task. On a PostgreSQL
    /// store `body` may run more than once, as for `transaction(_:)`.
    ///
    /// Cancelling the task before the transaction commits stops the statement it runs and
    /// rolls the whole transaction back: it throws `.cancelled`, and nothing of it is written.
    /// A transaction that committed returns normally. (A transaction has no time limit.)
    ///
    /// ```swift
    /// let task = Task { try await store.transaction { try importEverything() } }
    /// task.cancel()   // the import stops; the store is as it was before it
    /// ```
    /// - Throws: What `body` throws (a transaction then rolls back), or `ModelStoreError` when the block
    ///   cannot begin or end (`.busy`, `.readOnly`, `.closed`, `.reentrancy` from a task started inside
    ///   another block of this store), `.cancelled` when its task was cancelled before it committed.
    public func transaction<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await write(as: .transaction) { _ in try self.withBlockMarker(body) }
    }

    /// Runs `body` as a read block: every read on this store inside it sees one consistent
    /// snapshot, even while writes commit elsewhere. Writing inside it throws `.reentrancy`.
    ///
    /// ```swift
    /// let (snacks, count) = try store.read {
    ///     (try Snack.findAll(in: store), try Snack.count(in: store))
    /// }
    /// ```
    ///
    /// The read time limit (`Configuration.readTimeLimit`, `withReadTimeLimit(_:_:)`) bounds
    /// the whole block, its own code included; the reads inside run under it.
    /// - Throws: What `body` throws (a transaction then rolls back), or `ModelStoreError` when the block
    ///   cannot begin or end (`.busy`, `.readOnly`, `.closed`, `.reentrancy` from a task started inside
    ///   another block of this store), `.timedOut` past its time limit.
    public func read<T>(_ body: () throws -> T) throws -> T {
        try readBlock(body)
    }

    /// Runs `body` as a read block later; `completion` gets its result on `completionQueue`.
    ///
    /// ```swift
    /// store.read({ try Snack.count(in: store) }) { result in print(result) }
    /// ```
    /// - Throws: What `body` throws (a transaction then rolls back), or `ModelStoreError` when the block
    ///   cannot begin or end (`.busy`, `.readOnly`, `.closed`, `.reentrancy` from a task started inside
    ///   another block of this store).
    public func read<T: Sendable>(
        _ body: @escaping @Sendable () throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let deliver = completionQueue
        if SessionContext.current(for: ObjectIdentifier(self)) != nil {
            // Inside this store's own work: join it, as the synchronous form does.
            let result = Result { try readBlock(body) }
            deliverInline(result, on: deliver, to: completion)
            return
        }
        // The time limit in force here, now; nothing cancels a completion-form call.
        let interruption: Interruption?
        do {
            interruption = try readInterruption(.readBlock)
        } catch {
            deliver.async { completion(.failure(error)) }
            return
        }
        inFlight.begin()
        queue.async(ordered: !readsSkipBarriers) {
            let result = Result { try self.runReadBlock(body, interruption: interruption) }
            deliver.async { completion(result) }
            self.inFlight.end()
        }
    }

    /// Runs `body` as a read block without blocking the calling task. Cancelling the task
    /// stops the statement the block runs: the block throws `.cancelled` and its connection
    /// goes back to the store at once.
    ///
    /// ```swift
    /// let report = Task { try await store.read { try makeReport(store) } }
    /// report.cancel()
    /// ```
    /// - Throws: What `body` throws (a transaction then rolls back), or `ModelStoreError` when the block
    ///   cannot begin or end (`.busy`, `.readOnly`, `.closed`, `.reentrancy` from a task started inside
    ///   another block of this store), `.cancelled` when its task was cancelled, `.timedOut` past its
    ///   time limit.
    public func read<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try refuseInsideBlock()
        let interruption = Interruption(.readBlock, limit: try readTimeLimit())
        return try await interruptibly(interruption) { deliver in
            inFlight.begin()
            queue.async(ordered: !readsSkipBarriers) {
                if interruption.claim() {
                    deliver(Result { try self.runReadBlock(body, interruption: interruption) })
                }
                self.inFlight.end()
            }
        }
    }
}
