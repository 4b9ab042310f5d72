import Foundation

/// The three ways every operation runs — synchronous, completion handler, `async` — all
/// built on the same two primitives: a read on a pooled reader, and a write as a barrier
/// on the writer inside a transaction.
extension ModelStore {
    private var id: ObjectIdentifier { ObjectIdentifier(self) }

    // MARK: Synchronous

    /// Runs `body` as a read. Called from inside this store's own work it runs inline on
    /// that work's connection, so it sees that work's uncommitted writes and cannot deadlock.
    func read<T>(_ body: (Session) throws -> T) throws -> T {
        do {
            if let context = SessionContext.current(for: id) {
                if context.isMigrating { throw Self.callInsideMigration() }
                // After a call that ended the block's transaction, reads fail too.
                try context.link.connection.requireOpenTransaction()
                let session = Session(store: self, link: context.link, role: context.isWriter ? .writer : .pinnedReader)
                // On a server, a failed statement ends the whole transaction; a savepoint
                // keeps a failed read (which the caller may catch) from taking the block's
                // other work with it, as SQLite's statement-level rollback does.
                let connection = context.link.connection
                if connection.capabilities.failedStatementAbortsTransaction, connection.isInTransaction {
                    return try connection.withSavepoint { try body(session) }
                }
                return try body(session)
            }
            try refuseInsideBlock()
            // A live query's fetch notes the tables it reads (see `observe`).
            let recorder = TableRecorder.current
            // No task to cancel it: only a time limit stops it.
            let interruption = try readInterruption(.read)
            do {
                // A live query's fetch runs after the commit it answers: it reads the latest
                // committed snapshot without queueing, so writes never wait for observers.
                if readsSkipBarriers || (recorder != nil && isFileStore) {
                    return try runRead(body, recorder: recorder, interruption: interruption)
                }
                return try queue.sync { try runRead(body, recorder: recorder, interruption: interruption) }
            } catch is NeedsWriter {
                // A table needs extending first, an index rebuilding or the SQL writes: only the
                // writer may do that. It runs to its end, without the read's time limit or
                // cancellation: what it writes commits, and must never be reported as stopped
                // (nor a rebuild stopped by every limited read, and never finished).
                return try queue.sync(flags: .barrier) { try runWriteRetrying(body, recorder: recorder) }
            }
        } catch {
            throw attributed(error)
        }
    }

    /// Runs `body` as a write: a barrier, in a transaction that any thrown error rolls back.
    /// Called from inside this store's write work it runs inline, as a savepoint.
    func write<T>(isolation: WriteIsolation = .serializable, _ body: (Session) throws -> T) throws -> T {
        do {
            if let context = SessionContext.current(for: id) {
                if context.isMigrating { throw Self.callInsideMigration() }
                guard context.isWriter else { throw Self.writeInsideRead() }
                let link = context.link
                do {
                    return try link.connection.inTransaction { try body(Session(store: self, link: link, role: .writer)) }
                } catch {
                    link.discardPending()
                    throw error
                }
            }
            try refuseInsideBlock()
            let recorder = TableRecorder.current
            return try queue.sync(flags: .barrier) { try runWriteRetrying(body, isolation: isolation, recorder: recorder) }
        } catch {
            throw attributed(error)
        }
    }

    /// How many times a write the server rolled back for a conflict runs again.
    static let conflictRetries = 12

    /// Runs `body` as a write transaction on the writer — the one runner every call form
    /// (synchronous, completion handler, `async`) and every block goes through — and runs it
    /// again, as a whole, when a server rolled it back to break a deadlock (40P01) or could not
    /// serialize it with another connection's transaction (40001). On SQLite nothing conflicts
    /// (one writer at a time): it runs once. Between attempts it waits a random, growing while
    /// (full jitter), so two stores that conflicted do not meet again at once.
    ///
    /// `interruption` stops it when its task is cancelled (an `async` call), or — for a read
    /// handed to the writer — past its time limit; then nothing of it commits, and it does not
    /// run again.
    ///
    /// It gives up — throwing the conflict as `.busy` — after `conflictRetries` attempts once
    /// the store's busy timeout has passed since the first conflict: under heavy contention a fixed
    /// count alone ran out in well under a second.
    func runWriteRetrying<T>(
        _ body: (Session) throws -> T, isolation: WriteIsolation = .serializable, recorder: TableRecorder? = nil,
        interruption: Interruption? = nil
    ) throws -> T {
        var attempt = 0
        var deadline: Date?
        while true {
            do {
                return try runWrite(body, isolation: isolation, recorder: recorder, interruption: interruption)
            } catch let error as ModelStoreError
                where error.isRetryableConflict && interruption?.stopNow() == nil
                && (attempt < Self.conflictRetries
                    || Date() < (deadline ?? Date.distantPast))
            {
                if deadline == nil { deadline = Date(timeIntervalSinceNow: configuration.busyTimeout) }
                attempt += 1
                Thread.sleep(forTimeInterval: Double.random(in: 0...min(0.2, 0.002 * Double(1 << min(attempt, 10)))))
            }
        }
    }

    static func callInsideMigration() -> ModelStoreError {
        ModelStoreError(
            .reentrancy, "A migration step called the store it migrates, which cannot be used until its steps have run.",
            suggestion: "Do a step's work through the MigrationContext it is given (execute, rows, transform, rebuild).")
    }

    static func writeInsideRead() -> ModelStoreError {
        ModelStoreError(
            .reentrancy, "A write was called inside a read block; read blocks cannot write.",
            suggestion: "Use store.transaction { } for work that writes.")
    }

    /// Runs `body` as a read on a pooled reader; `interruption` (a cancelled task, a time
    /// limit) stops it, and a call cancelled while it waits for a reader never takes one.
    func runRead<T>(_ body: (Session) throws -> T, recorder: TableRecorder? = nil, interruption: Interruption? = nil) throws -> T {
        try pool.withReader(interruption: interruption) { link in
            link.forgetTablesIfSchemaChanged(in: self)
            link.recorder = recorder
            defer {
                link.recorder = nil
                link.dropStandIns()
            }
            return try SessionContext.with(store: id, link: link, isWriter: false) {
                try link.connection.running(interruption) { try body(Session(store: self, link: link, role: .reader)) }
            }
        }
    }

    private func runWrite<T>(
        _ body: (Session) throws -> T, isolation: WriteIsolation, recorder: TableRecorder? = nil, interruption: Interruption? = nil
    ) throws -> T {
        if case .memory = pool.location { streams.waitForStoppedProducers(timeout: configuration.busyTimeout) }
        let link = try pool.writer()
        link.recorder = recorder
        defer { link.recorder = nil }
        // Observation: the transaction records its row changes when anything is observed
        // (and clears triggers left from observers that are gone); they are published only
        // once it has committed.
        let (observing, generation) = changeTracker.state
        // (Only where triggers record changes: observation is refused elsewhere.)
        let recording = (observing || !link.watchedTables.isEmpty) && link.connection.capabilities.observesChanges
        // A backend's change feed records every connection's changes itself: the writer only
        // names its transaction, and has the feed publish right after the commit.
        let feed = observing ? changeTracker.activeFeed : nil
        var ownTransaction: String?
        var changes: CommittedChanges?
        return try SessionContext.with(store: id, link: link, isWriter: true) {
            do {
                let result = try link.exclusively {
                    pool.applyWriterTrace(to: link)
                    // (Around the transaction: a stopped write still rolls back, and one
                    // stopped before its COMMIT commits nothing.)
                    return try link.connection.running(interruption) {
                        try link.connection.inTransaction(isolation: isolation) {
                            try link.noticeSchemaChanges(in: self)
                            // (After the schema check, which forgets triggers a change may have dropped.)
                            if recording, generation != link.watchGeneration || !link.absentWatchedTables.isEmpty {
                                try link.watch(changeTracker)
                            }
                            let result = try body(Session(store: self, link: link, role: .writer))
                            try link.recordOwnSchemaChanges()
                            if recording {
                                var collected = try link.collectChanges()
                                // DDL in this transaction (raw SQL dropping and making a table)
                                // may have dropped triggers: which rows changed is unknown, and
                                // the triggers are made again by the next write.
                                if try link.schemaChangedInTransaction() {
                                    collected.isUnknown = true
                                    link.resetWatches()
                                }
                                if observing { changes = collected }
                            }
                            link.createdTables = []
                            if let feed, case .text(let name)? = try link.connection.scalar(feed.transactionSQL) {
                                ownTransaction = name
                                // Noted before the commit: the feed may read the commit first.
                                if let recorder { changeTracker.expectOwn(name, origin: recorder) }
                            }
                            return result
                        }
                    }
                }
                link.commitPending(to: self)
                // (A transaction that wrote nothing has nothing for the feed to read.)
                if let feed, let ownTransaction {
                    feed.catchUp()
                    if recorder != nil { changeTracker.forgetOwn(ownTransaction) }
                }
                // Without observers at its start, a transaction records nothing; one that
                // began before the first observer came still reaches it (as unknown changes) —
                // except through a feed, which records every transaction whenever it began.
                changeTracker.publish(changes ?? CommittedChanges(generation: changeTracker.hasFeed ? -1 : generation), origin: recorder)
                purgeHistoryIfDue()
                return result
            } catch {
                link.discardPending()
                link.createdTables = []
                // The trigger DDL of a rolled-back transaction went with it, the earlier
                // triggers did not: start again from none.
                if recording { link.resetWatches() }
                // A feed learns that triggers this transaction made went with it.
                if let feed {
                    if let ownTransaction { changeTracker.forgetOwn(ownTransaction) }
                    feed.catchUp()
                }
                throw error
            }
        }
    }

    // MARK: Completion handlers

    /// Runs `body` as a read later; `completion` receives the result on `completionQueue`.
    ///
    /// Called from inside this store's own work (a transaction or read block on this thread),
    /// it runs at once, inline, exactly as the synchronous form would, and `completion` is
    /// then called on `completionQueue`: waiting for it inside the block cannot deadlock.
    func read<T: Sendable>(
        _ body: @escaping @Sendable (Session) throws -> T,
        completion: @escaping @Sendable (Result<T, ModelStoreError>) -> Void
    ) {
        let deliver = completionQueue
        if SessionContext.current(for: id) != nil {
            let result = Result<T, any Error> { try read(body) }.mapError { ModelStoreError.wrapping($0) }
            deliverInline(result, on: deliver, to: completion)
            return
        }
        // The time limit in force here, now; nothing cancels a completion-form call.
        let interruption: Interruption?
        do {
            interruption = try readInterruption(.read)
        } catch {
            deliver.async { completion(.failure(ModelStoreError.wrapping(error))) }
            return
        }
        submitRead(body, interruption: interruption) { result in
            deliver.async { completion(result.mapError { ModelStoreError.wrapping($0) }) }
        }
    }

    /// Runs `body` as a write later; `completion` receives the result on `completionQueue`.
    /// Reads submitted after this call see the write, even before `completion` runs.
    ///
    /// Called from inside this store's transaction it joins that transaction, as the
    /// synchronous form does (it rolls back with it), and `completion` is called at once on
    /// `completionQueue`; inside a read block it fails with `.reentrancy`.
    func write<T: Sendable>(
        isolation: WriteIsolation = .serializable, _ body: @escaping @Sendable (Session) throws -> T,
        completion: @escaping @Sendable (Result<T, ModelStoreError>) -> Void
    ) {
        let deliver = completionQueue
        if SessionContext.current(for: id) != nil {
            let result = Result<T, any Error> { try write(body) }.mapError { ModelStoreError.wrapping($0) }
            deliverInline(result, on: deliver, to: completion)
            return
        }
        submitWrite(body, isolation: isolation) { result in deliver.async { completion(result.mapError { ModelStoreError.wrapping($0) }) } }
    }

    // MARK: async

    /// Runs `body` as a read without blocking the calling task. Cancelling the task stops
    /// it (`.cancelled`), as its time limit does (`.timedOut`).
    func read<T: Sendable>(_ body: @escaping @Sendable (Session) throws -> T) async throws -> T {
        try refuseInsideBlock()
        let interruption = Interruption(.read, limit: try readTimeLimit())
        return try await interruptibly(interruption) { deliver in submitRead(body, interruption: interruption, then: deliver) }
    }

    /// Runs `body` as a write without blocking the calling task. Cancelling the task before
    /// the write commits rolls it back entirely (`.cancelled`); one that committed returns.
    func write<T: Sendable>(isolation: WriteIsolation = .serializable, _ body: @escaping @Sendable (Session) throws -> T) async throws
        -> T
    {
        try await write(as: .write, isolation: isolation, body)
    }

    /// `write(_:)` for a call of `kind` (a transaction block), as its messages name it.
    func write<T: Sendable>(
        as kind: Interruption.Kind, isolation: WriteIsolation = .serializable, _ body: @escaping @Sendable (Session) throws -> T
    ) async throws -> T {
        try refuseInsideBlock()
        let interruption = Interruption(kind, limit: nil)
        return try await interruptibly(interruption) { deliver in
            submitWrite(body, isolation: isolation, interruption: interruption, then: deliver)
        }
    }

    // MARK: Submission

    func submitRead<T: Sendable>(
        _ body: @escaping @Sendable (Session) throws -> T, interruption: Interruption? = nil,
        then deliver: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        // Counted until delivered, through a hand-off to the writer too: close() waits for it.
        inFlight.begin()
        // A live query's fetch may read in this form too: its tables are noted all the same.
        let recorder = TableRecorder.current
        let finish: @Sendable (Result<T, any Error>) -> Void = { result in
            deliver(result)
            self.inFlight.end()
        }
        queue.async(ordered: !readsSkipBarriers) {
            // Cancelled while it waited: already answered, it runs nothing.
            if let interruption, !interruption.claim() { return finish(.failure(interruption.cancelledBeforeStart())) }
            do {
                finish(.success(try self.runRead(body, recorder: recorder, interruption: interruption)))
            } catch is NeedsWriter {
                // (On the writer, to its end: see `read(_:)`.)
                self.queue.async(flags: .barrier) {
                    finish(
                        Result { try self.runWriteRetrying(body, recorder: recorder) }.mapError(self.attributed)
                    )
                }
            } catch {
                finish(.failure(self.attributed(error)))
            }
        }
    }

    func submitWrite<T: Sendable>(
        _ body: @escaping @Sendable (Session) throws -> T, isolation: WriteIsolation = .serializable, interruption: Interruption? = nil,
        then finish: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        inFlight.begin()
        queue.async(flags: .barrier) {
            // Cancelled while it waited: already answered, it writes nothing.
            if interruption?.claim() != false {
                finish(
                    Result { try self.runWriteRetrying(body, isolation: isolation, interruption: interruption) }.mapError(self.attributed))
            }
            self.inFlight.end()
        }
    }

    // MARK: The user's own blocks

    /// Runs `body` on a reader inside a read transaction (one consistent snapshot).
    func readBlock<T>(_ body: () throws -> T) throws -> T {
        if SessionContext.current(for: id) != nil { return try body() }
        try refuseInsideBlock()
        let holdsCompletionQueue = isOnCompletionQueue
        let recorder = TableRecorder.current
        let interruption = try readInterruption(.readBlock)
        if readsSkipBarriers || (recorder != nil && isFileStore) {
            return try runReadBlock(body, holdsCompletionQueue: holdsCompletionQueue, recorder: recorder, interruption: interruption)
        }
        return try queue.sync {
            try runReadBlock(body, holdsCompletionQueue: holdsCompletionQueue, recorder: recorder, interruption: interruption)
        }
    }

    /// `readBlock` for code already running on the queue (never `queue.sync` from there: a
    /// barrier submitted meanwhile would wait for us while we wait for it).
    func runReadBlock<T>(
        _ body: () throws -> T, holdsCompletionQueue: Bool = false, recorder: TableRecorder? = nil, interruption: Interruption? = nil
    ) throws -> T {
        try pool.withReader(interruption: interruption) { link in
            link.forgetTablesIfSchemaChanged(in: self)
            link.recorder = recorder
            defer {
                link.recorder = nil
                link.dropStandIns()
            }
            return try SessionContext.with(store: id, link: link, isWriter: false) {
                try link.connection.running(interruption) {
                    try link.connection.inReadTransaction { try withBlockMarker(holdsCompletionQueue: holdsCompletionQueue, body) }
                }
            }
        }
    }

    /// Names the model in a schema error raised below the engine, which knows only SQL, and in
    /// a stored value a statement could not read (JSON that is not JSON, or that the server's
    /// JSON functions cannot read).
    func attributed(_ error: any Error) -> any Error {
        guard var error = error as? ModelStoreError, error.model == nil,
            error.code == .schemaMismatch || ([.decodingFailed, .unsupported].contains(error.code) && error.sql != nil)
        else { return error }
        let tables = knownTables.withLock { Array($0.values) }
        var best: (offset: Int, table: TableDescription)?
        let sql = error.sql ?? ""
        for table in tables {
            guard let range = sql.range(of: table.quotedTable) else { continue }
            let offset = sql.distance(from: sql.startIndex, to: range.lowerBound)
            if best == nil || offset < best!.offset { best = (offset, table) }
        }
        if let table = best?.table {
            error.model = table.modelName
            error.message =
                "\(table.modelName): "
                + error.message.replacingOccurrences(of: "The stored table has", with: "The stored table \(table.tableName) has")
        }
        return error
    }
}
