import Foundation

/// A shared counter read on every read of the store: a plain lock around an `Int`, not the
/// generic `Locked`, whose unspecialized calls would look up generic metadata each time.
final class Counter: @unchecked Sendable {
    // @unchecked: `value` is only read or written while `lock` is held.
    private let lock = NSLock()
    private var value = 0

    /// The current count.
    var current: Int {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    /// Adds one and returns the new count, in one step (two callers never get the same).
    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }

    /// Adds one.
    func increment() {
        lock.lock()
        value += 1
        lock.unlock()
    }
}
