import Foundation

/// A value guarded by a lock; the only way to reach it is through `withLock`.
///
/// Used for the little shared state ModelStore has: schema caches, the default store, the
/// completion queue. Modelled on swift-nio's `NIOLockedValueBox`: it is `Sendable` only when
/// its value is, so the compiler checks what crosses threads through it.
final class Locked<Value> {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A snapshot of the value, for reads that need nothing else under the lock.
    var current: Value {
        withLock { $0 }
    }
}

// @unchecked: `value` is only read or written while `lock` is held, and a `Sendable` value may
// be handed from the thread that stored it to the one that reads it.
extension Locked: @unchecked Sendable where Value: Sendable {}
