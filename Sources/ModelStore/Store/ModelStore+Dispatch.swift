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
        if let context = SessionContext.current(for: id) {
            return try body(Session(store: self, link: context.link, role: context.isWriter ? .writer : .pinnedReader))
        }
        do {
            if readsSkipBarriers { return try runRead(body) }
            return try queue.sync { try runRead(body) }
        } catch is NeedsWriter {
            // A table needs creating first: only the writer may do that.
            return try queue.sync(flags: .barrier) { try runWrite(body) }
        }
    }

    /// Runs `body` as a write: a barrier, in a transaction that any thrown error rolls back.
    /// Called from inside this store's write work it runs inline, as a savepoint.
    func write<T>(_ body: (Session) throws -> T) throws -> T {
        if let context = SessionContext.current(for: id) {
            guard context.isWriter else { throw Self.writeInsideRead() }
            let link = context.link
            do {
                return try link.connection.inTransaction { try body(Session(store: self, link: link, role: .writer)) }
            } catch {
                link.discardPending()
                throw error
            }
        }
        return try queue.sync(flags: .barrier) { try runWrite(body) }
    }

    static func writeInsideRead() -> ModelStoreError {
        ModelStoreError(
            .reentrancy, "A write was called inside a read block; read blocks cannot write.",
            suggestion: "Use store.transaction { } for work that writes.")
    }

    private func runRead<T>(_ body: (Session) throws -> T) throws -> T {
        try pool.withReader { link in
            try SessionContext.with(store: id, link: link, isWriter: false) {
                try body(Session(store: self, link: link, role: .reader))
            }
        }
    }

    private func runWrite<T>(_ body: (Session) throws -> T) throws -> T {
        let link = try pool.writer()
        return try SessionContext.with(store: id, link: link, isWriter: true) {
            do {
                let result = try link.connection.inTransaction {
                    try body(Session(store: self, link: link, role: .writer))
                }
                link.commitPending(to: self)
                return result
            } catch {
                link.discardPending()
                throw error
            }
        }
    }

    // MARK: Completion handlers

    /// Runs `body` as a read later; `completion` receives the result on `completionQueue`.
    func read<T: Sendable>(
        _ body: @escaping @Sendable (Session) throws -> T,
        completion: @escaping @Sendable (Result<T, ModelStoreError>) -> Void
    ) {
        let deliver = completionQueue
        submitRead(body) { result in deliver.async { completion(result.mapError { ModelStoreError.wrapping($0) }) } }
    }

    /// Runs `body` as a write later; `completion` receives the result on `completionQueue`.
    /// Reads submitted after this call see the write, even before `completion` runs.
    func write<T: Sendable>(
        _ body: @escaping @Sendable (Session) throws -> T,
        completion: @escaping @Sendable (Result<T, ModelStoreError>) -> Void
    ) {
        let deliver = completionQueue
        submitWrite(body) { result in deliver.async { completion(result.mapError { ModelStoreError.wrapping($0) }) } }
    }

    // MARK: async

    /// Runs `body` as a read without blocking the calling task.
    func read<T: Sendable>(_ body: @escaping @Sendable (Session) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            submitRead(body) { continuation.resume(with: $0) }
        }
    }

    /// Runs `body` as a write without blocking the calling task.
    func write<T: Sendable>(_ body: @escaping @Sendable (Session) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            submitWrite(body) { continuation.resume(with: $0) }
        }
    }

    // MARK: Submission

    func submitRead<T: Sendable>(
        _ body: @escaping @Sendable (Session) throws -> T,
        then finish: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        (readsSkipBarriers ? DispatchQueue.global() : queue).async {
            do {
                finish(.success(try self.runRead(body)))
            } catch is NeedsWriter {
                self.queue.async(flags: .barrier) { finish(Result { try self.runWrite(body) }) }
            } catch {
                finish(.failure(error))
            }
        }
    }

    func submitWrite<T: Sendable>(
        _ body: @escaping @Sendable (Session) throws -> T,
        then finish: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        queue.async(flags: .barrier) {
            finish(Result { try self.runWrite(body) })
        }
    }

    // MARK: The user's own blocks

    /// Runs `body` on a reader inside a read transaction (one consistent snapshot).
    func readBlock<T>(_ body: () throws -> T) throws -> T {
        if SessionContext.current(for: id) != nil { return try body() }
        if readsSkipBarriers { return try runReadBlock(body) }
        return try queue.sync { try runReadBlock(body) }
    }

    /// `readBlock` for code already running on the queue (never `queue.sync` from there: a
    /// barrier submitted meanwhile would wait for us while we wait for it).
    func runReadBlock<T>(_ body: () throws -> T) throws -> T {
        try pool.withReader { link in
            try SessionContext.with(store: id, link: link, isWriter: false) {
                try link.connection.inReadTransaction { try body() }
            }
        }
    }
}
