import CBaseline
import Foundation

/// Monotonic nanoseconds.
public func now() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}

/// Heap memory in use, sampled while a workload runs, to report its peak growth.
///
/// Resident size cannot show it: malloc keeps freed pages, so a warmed-up process grows
/// into memory it already holds. Bytes in use (glibc's `mallinfo2`, heap and mmap'd blocks,
/// SQLite's own allocations included) can. Elsewhere, nil.
public enum PeakMemory {
    public static func growth(during body: () throws -> Void) rethrows -> Int? {
        let base = Int(cb_heap_in_use())
        guard base >= 0 else {
            try body()
            return nil
        }
        let peak = Peak(base)
        let stop = Flag()
        let sampler = Thread {
            while !stop.isSet {
                peak.record(Int(cb_heap_in_use()))
                usleep(200)
            }
        }
        sampler.start()
        try body()
        peak.record(Int(cb_heap_in_use()))
        stop.set()
        while !sampler.isFinished { usleep(100) }
        return max(0, peak.value - base)
    }

    private final class Peak: @unchecked Sendable {
        // @unchecked: guarded by `lock`.
        private let lock = NSLock()
        private var highest: Int
        init(_ value: Int) { highest = value }
        var value: Int { lock.withLock { highest } }
        func record(_ bytes: Int) { lock.withLock { highest = max(highest, bytes) } }
    }
}
