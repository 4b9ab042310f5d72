#if PostgreSQL
    import Dispatch
    import Foundation
    import ModelStore
    import NIOCore

    /// Waits on the calling thread — one of the store's dispatch threads, never an event loop or
    /// the cooperative pool — for postgres-nio's answer, with nothing left to wait forever on.
    ///
    /// `EventLoopFuture.wait()` waits only for the future. A connection that the server
    /// terminated in the middle of a statement was seen to leave that future unanswered, and
    /// the store's writer with it, so every later call queued behind it for good. Here the wait
    /// is also woken by the connection's close (and answers `.connectionLost` when postgres-nio
    /// does not fail the statement by itself soon after), and may have a time limit.
    enum Wait {
        /// How long after the connection closed the statement's own failure is awaited, and how
        /// far past a server-side time limit the client waits before it gives the connection up.
        static let grace: TimeInterval = 2

        /// Why a wait ended without postgres-nio's answer.
        enum Failure: Error, CustomStringConvertible {
            /// The connection closed and the statement was never answered.
            case closed
            /// No answer within the limit; the connection is abandoned.
            case noAnswer(TimeInterval)

            var description: String {
                switch self {
                case .closed: return "the connection closed before the server answered"
                case .noAnswer(let limit): return "no answer from the server within \(limit) s"
                }
            }
        }

        /// The value `future` succeeds with, or its error; a `Failure` when `wakeup` says the
        /// connection closed and no answer came, or when `limit` passes.
        static func `for`<Value: Sendable>(_ future: EventLoopFuture<Value>, wakeup: Wakeup?, limit: TimeInterval?) throws -> Value {
            let answer = Answer<Value>()
            future.whenComplete { answer.set($0) }
            wakeup?.watch(answer.semaphore)
            defer { wakeup?.watch(nil) }
            let start = DispatchTime.now()
            var closedAt: DispatchTime?
            while true {
                _ = answer.semaphore.wait(timeout: .now() + .milliseconds(200))
                if let result = answer.result { return try result.get() }
                let now = DispatchTime.now()
                if let wakeup, wakeup.isClosed {
                    let since = closedAt ?? now
                    closedAt = since
                    if now >= since + grace { throw Failure.closed }
                }
                if let limit, now >= start + limit { throw Failure.noAnswer(limit) }
            }
        }
    }

    /// A future's result, handed from an event loop to the waiting thread.
    final class Answer<Value: Sendable>: @unchecked Sendable {
        // @unchecked: `stored` is read and written only while `lock` is held.
        private let lock = NSLock()
        private var stored: Result<Value, any Error>?
        let semaphore = DispatchSemaphore(value: 0)

        var result: Result<Value, any Error>? {
            lock.withLock { stored }
        }

        func set(_ result: Result<Value, any Error>) {
            lock.withLock { stored = result }
            semaphore.signal()
        }
    }

    /// One per connection: its close wakes whichever statement is waiting on it.
    final class Wakeup: @unchecked Sendable {
        // @unchecked: both vars are read and written only while `lock` is held.
        private let lock = NSLock()
        private var closedNow = false
        private var waiting: DispatchSemaphore?

        var isClosed: Bool {
            lock.withLock { closedNow }
        }

        /// The connection closed (registered once on its `closeFuture`).
        func closed() {
            let waiting = lock.withLock {
                closedNow = true
                return self.waiting
            }
            waiting?.signal()
        }

        /// The semaphore of the wait in progress, or nil when none.
        func watch(_ semaphore: DispatchSemaphore?) {
            let wake = lock.withLock {
                waiting = semaphore
                return closedNow && semaphore != nil
            }
            if wake { semaphore?.signal() }
        }
    }

    extension Double {
        func clamped(to range: ClosedRange<Double>) -> Double {
            Swift.min(Swift.max(self, range.lowerBound), range.upperBound)
        }
    }
#endif
