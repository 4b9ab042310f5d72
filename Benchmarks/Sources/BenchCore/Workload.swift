/// The workloads, each run by all three contenders on a fresh database file.
public enum Workload: String, CaseIterable, Sendable {
    case w1 = "W1", w1r = "W1r", w1d = "W1d", w2 = "W2", w3 = "W3", w3r = "W3r", w3d = "W3d", w4 = "W4", w4b = "W4b", w5 = "W5"
    case w6 = "W6", w7 = "W7", w8 = "W8", w8r = "W8r", w9 = "W9", w10 = "W10", w11 = "W11", w12 = "W12"

    public var title: String {
        switch self {
        case .w1: return "insert N new models"
        case .w1r: return "insert N new models, model declares a many-to-many"
        case .w1d: return "insert N new models, creation time a Date"
        case .w2: return "batch upsert N, half stored"
        case .w3: return "fetch all N"
        case .w3r: return "fetch all N, model declares a many-to-many"
        case .w3d: return "fetch all N, creation time a Date"
        case .w4: return "10,000 fetches by key, each its own read"
        case .w4b: return "10,000 fetches by key in one read block"
        case .w5: return "1,000 filtered sorted pages"
        case .w6: return "load teams with 20 players"
        case .w7: return "load workers with 10 snacks (m2m)"
        case .w8: return "delete where price < median"
        case .w8r: return "delete where price < median, model declares a many-to-many"
        case .w9: return "save teams+players as graphs"
        case .w10: return "2 readers by key + 1 batch writer"
        case .w11: return "re-import N unchanged models"
        case .w12: return "batch upsert N matched by name, half stored"
        }
    }

    /// ModelStore ÷ C must stay at or under this (nil: no goal against C).
    public var goal: Double? {
        switch self {
        case .w1: return 1.6
        // Its goal is against ModelStore's own W1 (≤ 1.1×: relationships a save does not hold
        // cost nothing), which the report prints.
        case .w1r: return nil
        // W1d and W3d: their goals are against ModelStore's own W1 and W3 (≤ 1.1×: a `Date`
        // costs what the `Double` it holds costs), which the report prints.
        case .w1d: return nil
        case .w2: return 1.6
        case .w3: return 2.0
        // Its goal is against ModelStore's own W3 (≤ 1.1×: relationships nobody asked for cost
        // nothing), which the report prints.
        case .w3r, .w3d: return nil
        case .w4: return 3.0
        case .w4b: return 2.5
        case .w5: return 1.5
        case .w6: return 3.0
        case .w7: return 2.0
        case .w8: return 1.1
        // Its goal is against ModelStore's own W8 (≤ 1.1×: a nullify that only drops join
        // rows costs the delete nothing), which the report prints.
        case .w8r: return nil
        case .w9: return 2.5
        case .w10: return nil
        case .w11: return 2.0
        // Its goal is against ModelStore's own W2 (≤ 2.5×), which the report prints.
        case .w12: return nil
        }
    }

    /// W10 reports a rate (fetches per second) rather than a time.
    public var isRate: Bool { self == .w10 }
}

/// One contender's setup for one workload: `timed` is measured, `verify` is not.
public struct PreparedRun {
    public let timed: () throws -> Void
    /// A checksum of the workload's result (read results, or the stored table afterwards).
    public let verify: () throws -> Checksum
    /// For rate workloads: how many operations `timed` completed.
    public let operations: () -> Int

    public init(timed: @escaping () throws -> Void, verify: @escaping () throws -> Checksum, operations: @escaping () -> Int = { 0 }) {
        self.timed = timed
        self.verify = verify
        self.operations = operations
    }
}

/// A way of running the workloads: hand-written C, GRDB, or ModelStore.
public protocol Contender {
    var name: String { get }
    /// Creates a fresh database at `path` with what the workload needs stored (not timed)
    /// and returns the run.
    func prepare(_ workload: Workload, data: Dataset, path: String) throws -> PreparedRun
    /// Whether the contender can express the workload with its own API (default: yes).
    func supports(_ workload: Workload) -> Bool
}

extension Contender {
    public func supports(_ workload: Workload) -> Bool { true }
}
