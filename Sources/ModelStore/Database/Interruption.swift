import ModelStoreCSQLite
import Foundation

/// What may stop one call while it runs: the cancellation of the task that awaits it, and a
/// time limit on how long it may run.
///
/// The store makes one for each call that can be stopped — an `async` call (its task may be
/// cancelled), or a read with a time limit — and the connection that runs the call carries
/// it for as long as the call runs (`Connection.running`). Calls that can be neither
/// cancelled nor timed out get none, and cost nothing.
///
/// - On SQLite, a progress handler (`csqlite_interruption_progress`) reads it every
///   `Connection.progressInterval` virtual-machine instructions and makes the running
///   statement fail with `SQLITE_INTERRUPT`; the connection then turns that failure into
///   `.cancelled` or `.timedOut`.
/// - On a server, `Connection` checks it before each statement, sets the server's statement
///   timeout from the time left (`SQLDialect.statementTimeout`), and hands it to a driver that
///   can stop a statement the server is running (`InterruptibleRemoteConnection`).
///
/// The connection's own transaction control (`BEGIN`, `COMMIT`, `ROLLBACK`, savepoints) is
/// never interrupted (`withoutInterrupting`): a call stopped half way must still end its
/// transaction, and a write either commits whole or rolls back whole.
package final class Interruption: @unchecked Sendable {
    // @unchecked: `state.cancelled` is read and written only through the shim's atomic
    // functions, from any thread. The other fields of `state`, and `startedAt`, belong to the
    // thread running the call (a call runs on one connection, on one thread, at a time).
    // `phase` and `actions` are Locked.

    /// What kind of call it is: what its messages call it, and whether finishing late fails it.
    enum Kind: String, Sendable {
        case read
        case readBlock = "read block"
        case stream
        case write
        case transaction

        /// A write commits or rolls back whole: once committed, it is never reported stopped.
        var writes: Bool { self == .write || self == .transaction }
    }

    /// A time limit, and what set it (for messages).
    struct TimeLimit: Sendable {
        var seconds: TimeInterval
        /// For example "the store's Configuration.readTimeLimit".
        var setBy: String
    }

    let kind: Kind
    let limit: TimeLimit?
    /// Read by the progress handler; allocated for the life of the interruption.
    let state: UnsafeMutablePointer<csqlite_interruption>
    /// When the call began running on a connection (monotonic nanoseconds), 0 before.
    private var startedAt: Int64 = 0

    /// Where the call is: waiting to run (queued, or waiting for a connection), running, or
    /// abandoned — cancelled while it waited, and already answered with `.cancelled`.
    private enum Phase { case waiting, running, abandoned }
    private let phase = Locked(Phase.waiting)
    /// Run once when the task is cancelled (wake a wait for a connection; a driver's cancel
    /// request), by token.
    private let actions = Locked<(next: Int, pending: [Int: @Sendable () -> Void])>((0, [:]))

    init(_ kind: Kind, limit: TimeLimit?) {
        self.kind = kind
        self.limit = limit
        state = .allocate(capacity: 1)
        state.initialize(to: csqlite_interruption(cancelled: 0, paused: 0, stopped: 0, deadline: 0))
    }

    deinit {
        state.deallocate()
    }

    // MARK: Any thread

    /// Whether the call's task was cancelled.
    package var isCancelled: Bool {
        csqlite_interruption_is_cancelled(state) != 0
    }

    /// Cancels the call: a statement running stops within a few thousand SQLite
    /// instructions, and the call throws `.cancelled`. Returns true when the call had not
    /// started yet, and never will: the caller answers it with `cancelledBeforeStart()`.
    @discardableResult
    func cancel() -> Bool {
        csqlite_interruption_cancel(state)
        let abandoned = phase.withLock { phase in
            guard phase == .waiting else { return false }
            phase = .abandoned
            return true
        }
        // Outside every lock: an action may take a lock of its own (the pool's).
        let pending = actions.withLock { actions in
            defer { actions.pending = [:] }
            return Array(actions.pending.values)
        }
        for action in pending { action() }
        return abandoned
    }

    /// Runs `action` when the call is cancelled (not at once when it already was: check
    /// `isCancelled` after registering). Returns a token for `forget`.
    package func whenCancelled(_ action: @escaping @Sendable () -> Void) -> Int {
        actions.withLock { actions in
            actions.next += 1
            actions.pending[actions.next] = action
            return actions.next
        }
    }

    /// Drops the action registered under `token`.
    package func forget(_ token: Int) {
        _ = actions.withLock { $0.pending.removeValue(forKey: token) }
    }

    /// Marks the call as starting; false when it was abandoned while it waited (it must not
    /// run: its caller already has its answer).
    func claim() -> Bool {
        phase.withLock { phase in
            guard phase != .abandoned else { return false }
            phase = .running
            return true
        }
    }

    // MARK: The thread running the call

    /// Starts the clock the time limit counts from, when the call first runs on a connection.
    func startClock() {
        guard startedAt == 0 else { return }
        startedAt = csqlite_monotonic_nanoseconds()
        if let limit {
            let nanoseconds = limit.seconds * 1e9
            state.pointee.deadline = nanoseconds >= 9e18 ? 0 : startedAt + max(1, Int64(nanoseconds))
        }
    }

    /// Seconds left before the time limit, nil without one.
    package var remainingSeconds: TimeInterval? {
        guard state.pointee.deadline != 0 else { return nil }
        return Double(state.pointee.deadline - csqlite_monotonic_nanoseconds()) / 1e9
    }

    private var deadlinePassed: Bool {
        state.pointee.deadline != 0 && csqlite_monotonic_nanoseconds() >= state.pointee.deadline
    }

    /// Runs `body` (the connection's own transaction control) without interrupting it.
    func withoutInterrupting<T>(_ body: () throws -> T) rethrows -> T {
        state.pointee.paused += 1
        defer { state.pointee.paused -= 1 }
        return try body()
    }

    /// Runs `body` — the time a stream's producer waits for its consumer, or a `forEach`
    /// body holds a row — outside the time limit: the limit counts the time spent reading.
    func excludingFromLimit<T>(_ body: () throws -> T) rethrows -> T {
        guard state.pointee.deadline != 0 else { return try body() }
        let start = csqlite_monotonic_nanoseconds()
        defer { state.pointee.deadline += csqlite_monotonic_nanoseconds() - start }
        return try body()
    }

    /// The error that stops the call now, if anything does: before a server statement, and
    /// before a write commits.
    func stopNow() -> ModelStoreError? {
        guard state.pointee.paused == 0 else { return nil }
        if isCancelled || state.pointee.stopped == 1 { return error(.cancelled) }
        if state.pointee.stopped == 2 || deadlinePassed { return error(.timedOut) }
        return nil
    }

    /// The error a call that ran to its end throws all the same: a read cancelled, or past
    /// its limit, returns nothing (its body may have caught the interruption and gone on with
    /// part of its rows). A write that committed is never reported stopped.
    func stopAtEnd() -> ModelStoreError? {
        kind.writes ? nil : stopNow()
    }

    /// `error`, thrown by the call, as what it is: the interruption's own error when the call
    /// was stopped (whatever the body made of the interruption), else `error` itself.
    func explain(_ error: any Error) -> any Error {
        if let failure = error as? ModelStoreError, failure.isInterruption { return error }
        let interrupted = (error as? ModelStoreError).map { [.cancelled, .timedOut].contains($0.code) } ?? false
        // (A cancelled call's error is its cancellation, whatever the statement failed with:
        // a server driver stops a statement by closing its connection.)
        guard state.pointee.stopped != 0 || interrupted || isCancelled else { return error }
        if state.pointee.stopped == 2 || (state.pointee.stopped == 0 && !isCancelled && deadlinePassed) {
            return self.error(.timedOut, underlying: error)
        }
        if state.pointee.stopped == 1 || isCancelled { return self.error(.cancelled, underlying: error) }
        return error
    }

    // MARK: Errors

    /// The error for a call cancelled before it ran anything.
    func cancelledBeforeStart() -> ModelStoreError {
        var error = ModelStoreError(
            .cancelled,
            "The \(kind.rawValue) was cancelled before it started: its task was cancelled while it waited for earlier work or a free connection (or before the call). Nothing ran.",
            suggestion: Self.cancelledSuggestion)
        error.isInterruption = true
        return error
    }

    static let cancelledSuggestion =
        "Expected when a task is cancelled: catch ModelStoreError.Code.cancelled to tell it from a failure."

    private func error(_ code: ModelStoreError.Code, underlying: (any Error)? = nil) -> ModelStoreError {
        let ran = startedAt == 0 ? 0 : Double(csqlite_monotonic_nanoseconds() - startedAt) / 1e9
        let elapsed = String(format: "%.2f s", ran)
        let outcome: String
        switch kind {
        case .read, .readBlock: outcome = "nothing was returned, and its connection went back to the store at once."
        case .stream: outcome = "no more rows are read, and its connection went back to the store at once."
        case .write, .transaction: outcome = "it was rolled back entirely: nothing of it was written."
        }
        var error: ModelStoreError
        if code == .timedOut, let limit {
            error = ModelStoreError(
                .timedOut,
                "The \(kind.rawValue) ran past its time limit of \(Self.seconds(limit.seconds)) (\(limit.setBy)) and was stopped after \(elapsed): \(outcome)",
                suggestion:
                    "Make it cheaper (a narrower condition, fewer search terms, a smaller limit or page), or give it more time: store.withReadTimeLimit(seconds) { … } sets the limit for the calls inside (nil lifts it)."
            )
        } else {
            error = ModelStoreError(
                .cancelled,
                "The \(kind.rawValue) was cancelled: its task was cancelled while it ran, and it stopped after \(elapsed); \(outcome)",
                suggestion: Self.cancelledSuggestion)
        }
        if let cause = underlying as? ModelStoreError {
            // What was running when it stopped: the statement, and the model when known.
            let origin = cause.underlying as? ModelStoreError ?? cause
            error.sql = cause.sql ?? origin.sql
            error.model = cause.model ?? origin.model
            error.sqliteCode = cause.sqliteCode ?? origin.sqliteCode
            error.sqliteMessage = cause.sqliteMessage ?? origin.sqliteMessage
            error.serverState = cause.serverState ?? origin.serverState
        }
        error.underlying = underlying
        error.isInterruption = true
        return error
    }

    private static func seconds(_ value: TimeInterval) -> String {
        value == value.rounded() && value < 1e15 ? "\(Int(value)) s" : "\(value) s"
    }
}

/// A server driver that can stop a statement the server is running (ModelStorePostgres).
///
/// Without it a server store still honours cancellation and time limits between statements,
/// and the server's statement timeout (`SQLDialect.statementTimeout`) bounds each statement;
/// with it, cancelling a task also stops the statement running at that moment.
///
/// The contract: `Connection` sets `interruption` before the first statement of a call that
/// can be stopped and back to nil after its last. While `run` waits for the server, the
/// driver registers `interruption.whenCancelled { … }` to send the server a cancel request
/// for that statement (PostgreSQL's CancelRequest on a new socket, with the backend's
/// process id and secret key), and `forget`s it once the statement answered. The statement
/// then fails with SQLSTATE 57014, which `ModelStoreError.server` maps to `.cancelled`, and
/// `Connection.running` reports as the call's cancellation.
package protocol InterruptibleRemoteConnection: RemoteConnection {
    /// The interruption of the call running on this connection, nil between calls.
    var interruption: Interruption? { get set }
    /// The time limit the connection puts on every statement itself, if any (a read's time
    /// limit is set on the server only when it is shorter).
    var statementTimeout: TimeInterval? { get }
}
