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

/// W10's procedure for the Swift contenders, in one place so they measure the same thing:
/// two readers call `fetch` with a running count until `write`, run on the calling thread,
/// returns. Returns how many fetches the readers completed; rethrows the write's error.
public func fetchesWhileWriting(_ write: () throws -> Void, fetch: @escaping @Sendable (Int) -> Void) throws -> Int {
    let stop = Flag()
    let fetches = Tally()
    let group = DispatchGroup()
    for _ in 0..<2 {
        DispatchQueue.global().async(group: group) {
            var done = 0
            while !stop.isSet {
                fetch(done)
                done += 1
            }
            fetches.add(done)
        }
    }
    let result = Result { try write() }
    stop.set()
    group.wait()
    try result.get()
    return fetches.value
}
