import Foundation

/// Stopping calls: a time limit on reads, per store or per call, and the cancellation of the
/// task awaiting an `async` call (see `Interruption`).
extension ModelStore {
    /// Runs `body` with `seconds` as the time limit of every read it makes on this store, in
    /// every form — instead of `Configuration.readTimeLimit`, longer or shorter; nil lifts
    /// the limit. A read past it throws `.timedOut` and hands its connection back at once.
    ///
    /// ```swift
    /// // A search box: stop a search that takes more than half a second.
    /// let hits = try store.withReadTimeLimit(0.5) {
    ///     try Recipe.search(.words(field.text), in: store)
    /// }
    /// // An export that may take long on a store whose reads are limited to 2 s.
    /// try store.withReadTimeLimit(nil) { try Recipe.all().forEach(in: store) { write($0) } }
    /// ```
    ///
    /// The innermost scope wins. A completion-handler call takes the limit in force where it
    /// is made; a read inside a read block or transaction runs under the block's limit.
    /// Writes have no time limit.
    /// - Parameters:
    ///   - seconds: The limit, counted from when each read starts running on its connection;
    ///     nil for none.
    ///   - body: The work whose reads it limits.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws; `ModelStoreError` `.invalidQuery` when `seconds` is not
    ///   a positive number.
    public func withReadTimeLimit<T>(_ seconds: TimeInterval?, _ body: () throws -> T) throws -> T {
        try Self.checkLimit(seconds, setBy: "withReadTimeLimit")
        let scope = ReadTimeLimitScope(store: ObjectIdentifier(self), seconds: seconds, outer: ReadTimeLimitScope.current)
        return try ReadTimeLimitScope.$current.withValue(scope) { try body() }
    }

    /// `withReadTimeLimit(_:_:)` around `async` work: the limit holds for every read the
    /// calls inside make on this store, and for the tasks they start as child tasks.
    ///
    /// ```swift
    /// let hits = try await store.withReadTimeLimit(0.5) {
    ///     try await Recipe.search(.words(text), in: store)
    /// }
    /// ```
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws; `ModelStoreError` `.invalidQuery` when `seconds` is not
    ///   a positive number.
    public func withReadTimeLimit<T>(
        _ seconds: TimeInterval?, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
    ) async throws -> T {
        try Self.checkLimit(seconds, setBy: "withReadTimeLimit")
        let scope = ReadTimeLimitScope(store: ObjectIdentifier(self), seconds: seconds, outer: ReadTimeLimitScope.current)
        return try await ReadTimeLimitScope.$current.withValue(scope) { try await body() }
    }

    /// The time limit of a read made here: the innermost `withReadTimeLimit` for this store,
    /// else the configuration's.
    func readTimeLimit() throws -> Interruption.TimeLimit? {
        if let scope = ReadTimeLimitScope.current?.scope(for: ObjectIdentifier(self)) {
            return scope.seconds.map { Interruption.TimeLimit(seconds: $0, setBy: "set by withReadTimeLimit") }
        }
        guard let seconds = configuration.readTimeLimit else { return nil }
        try Self.checkLimit(seconds, setBy: "Configuration.readTimeLimit")
        return seconds == .infinity ? nil : Interruption.TimeLimit(seconds: seconds, setBy: "the store's Configuration.readTimeLimit")
    }

    private static func checkLimit(_ seconds: TimeInterval?, setBy name: String) throws {
        guard let seconds, !(seconds > 0) else { return }
        throw ModelStoreError(
            .invalidQuery, "A read time limit of \(seconds) seconds (\(name)) cannot be met: it must be a positive number of seconds.",
            value: String(seconds), suggestion: "Pass a positive number of seconds, or nil for no limit.")
    }

    /// What may stop a read of `kind` made here that no task can cancel (a synchronous or
    /// completion-handler call): its time limit. Nil without one: the read then pays nothing.
    func readInterruption(_ kind: Interruption.Kind) throws -> Interruption? {
        try readTimeLimit().map { Interruption(kind, limit: $0) }
    }

    /// Awaits the call that `submit` starts, cancelling `interruption` when the task is
    /// cancelled: a call still waiting to run (behind earlier writes, or for a connection) is
    /// answered `.cancelled` at once and never runs; a running one stops within a
    /// millisecond or so, and answers once its connection is back in the pool.
    func interruptibly<T: Sendable>(
        _ interruption: Interruption,
        _ submit: (_ deliver: @escaping @Sendable (Result<T, any Error>) -> Void) -> Void
    ) async throws -> T {
        if Task.isCancelled {
            interruption.cancel()
            throw interruption.cancelledBeforeStart()
        }
        let answer = OnceAnswer<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                // Already answered: the task was cancelled before the call was submitted.
                guard answer.wait(with: continuation) else { return }
                submit { answer.give($0) }
            }
        } onCancel: {
            if interruption.cancel() { answer.give(.failure(interruption.cancelledBeforeStart())) }
        }
    }
}

/// The innermost `withReadTimeLimit` scopes of the current task, one chain for all stores.
final class ReadTimeLimitScope: Sendable {
    @TaskLocal static var current: ReadTimeLimitScope?

    let store: ObjectIdentifier
    let seconds: TimeInterval?
    let outer: ReadTimeLimitScope?

    init(store: ObjectIdentifier, seconds: TimeInterval?, outer: ReadTimeLimitScope?) {
        self.store = store
        self.seconds = seconds
        self.outer = outer
    }

    /// The innermost scope set for `store`.
    func scope(for store: ObjectIdentifier) -> ReadTimeLimitScope? {
        var scope: ReadTimeLimitScope? = self
        while let candidate = scope {
            if candidate.store == store { return candidate }
            scope = candidate.outer
        }
        return nil
    }
}

/// Resumes a continuation exactly once, with whichever answer comes first: the call's own
/// result, or `.cancelled` for a call cancelled before it ran (which then never runs).
final class OnceAnswer<T: Sendable>: @unchecked Sendable {
    // @unchecked: `continuation` and `early` are read and written only while `lock` is held.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?
    private var early: Result<T, any Error>?
    private var answered = false

    /// Hands over the continuation; false (after resuming it) when the answer came first.
    func wait(with continuation: CheckedContinuation<T, any Error>) -> Bool {
        lock.lock()
        if let early {
            lock.unlock()
            continuation.resume(with: early)
            return false
        }
        self.continuation = continuation
        lock.unlock()
        return true
    }

    /// Answers, unless answered already.
    func give(_ result: Result<T, any Error>) {
        lock.lock()
        guard !answered else { return lock.unlock() }
        answered = true
        guard let continuation else {
            early = result
            return lock.unlock()
        }
        self.continuation = nil
        lock.unlock()
        continuation.resume(with: result)
    }
}
