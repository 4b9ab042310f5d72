import Foundation

/// A value guarded by a lock; the only way to reach it is through `withLock`.
///
/// Used for the little shared state ModelStore has: schema caches, the default store, the
/// completion queue. Modelled on swift-nio's `NIOLockedValueBox`.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only read or written while `lock` is held.
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
