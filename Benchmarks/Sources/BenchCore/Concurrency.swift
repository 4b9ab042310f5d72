import Foundation

/// A count several threads add to.
public final class Tally: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var count = 0

    public init() {}
    public var value: Int { lock.withLock { count } }
    public func add(_ amount: Int) { lock.withLock { count += amount } }
    public func reset() { lock.withLock { count = 0 } }
}

/// A flag one thread sets and others poll.
public final class Flag: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var raised = false

    public init() {}
    public var isSet: Bool { lock.withLock { raised } }
    public func set() { lock.withLock { raised = true } }
}
