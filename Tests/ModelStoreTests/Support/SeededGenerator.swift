import Foundation

/// A small, fast random generator with a seed, so a failing randomized test can be rerun
/// exactly (SplitMix64).
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The seed a randomized test uses: `variable` from the environment when set (to replay a
    /// failure), else a fresh one that the test prints with any failure.
    static func seed(from variable: String) -> UInt64 {
        if let text = ProcessInfo.processInfo.environment[variable], let seed = UInt64(text) { return seed }
        return UInt64.random(in: 0...UInt64(UInt32.max))
    }

    /// A count from the environment, for longer runs than CI's.
    static func count(from variable: String, default value: Int) -> Int {
        ProcessInfo.processInfo.environment[variable].flatMap(Int.init) ?? value
    }
}
