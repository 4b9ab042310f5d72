import Foundation
@testable import ModelStore

// Waiting for asynchronous deliveries (observers, handlers) in tests.

/// Values delivered to an observer or handler, collected for checking.
final class Collected<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `values` is Locked.
    let values = Locked<[Value]>([])
    func add(_ value: Value) { values.withLock { $0.append(value) } }
    var current: [Value] { values.current }
}

/// Waits until `condition` holds, for up to `seconds`, blocking the thread: for synchronous
/// tests that wait for handlers (which run on dispatch queues, not the concurrency pool).
func eventually(_ seconds: Double = 30, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: 0.005)
    }
    return try condition()
}

/// Waits until `condition` holds, for up to `seconds` of its own polling (one look every
/// 5 ms), without blocking a thread of the concurrency pool (tasks iterating observations
/// need one).
///
/// The bound counts looks, not the wall clock: on a 2-core machine the pool has two
/// threads, and long synchronous tests running beside this one (Swift Testing runs them on
/// the pool) were seen to hold both for a minute or more, during which neither this loop nor
/// the delivery it waits for can run. Counted so, such a stall does not fail the wait, and a
/// delivery that never comes still fails it after as many looks.
func eventually(_ seconds: Double = 30, _ condition: () throws -> Bool) async rethrows -> Bool {
    let looks = max(1, Int(seconds / 0.005))
    for _ in 0..<looks {
        if try condition() { return true }
        try? await Task.sleep(nanoseconds: 5_000_000)
    }
    return try condition()
}

/// Runs blocking work (waiting for processes or a restarting server) on a thread of its own,
/// so the tests running beside it keep the concurrency pool's few threads. Not the global
/// dispatch queue: on Linux its threads are the pool's. Expectations stay with the caller,
/// in the test's own task.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

// Tasks the tests start are `.high` priority: Swift Testing queues every test on the
// default-priority pool at once, and a default-priority task started later waits behind all
// of them for a thread — a task started inside a block once waited 60 s. A higher priority
// runs on a pool of its own (on Linux, another of libdispatch's root queues).

/// Runs `body(0)` … `body(count - 1)` each on a thread of its own and returns when all have
/// ended: `DispatchQueue.concurrentPerform` without the global queue. On Linux the global
/// queue's threads are the concurrency pool's, and tests blocking there (waiting for a
/// barrier, a lock, a server) held back every async test running beside them.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread.detachNewThread {
            body(index)
            group.leave()
        }
    }
    group.wait()
}

/// `DispatchQueue.global().async(group:)` on a thread of its own (see `onThreads`).
func onAThread(group: DispatchGroup? = nil, _ body: @escaping @Sendable () -> Void) {
    group?.enter()
    Thread.detachNewThread {
        body()
        group?.leave()
    }
}
