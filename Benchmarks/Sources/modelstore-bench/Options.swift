import BenchCore

/// Command-line options: `--rows N`, `--reps N`, `--only W1,W3`, `--json`.
struct Options {
    var rows = 100_000
    var reps = 10
    var only: [Workload] = Workload.allCases
    var json = false
    /// Run one contender only (for profiling); cross-checks need all three and are skipped.
    var contender: String?

    static let usage = """
        usage: modelstore-bench [--rows N] [--reps N] [--only W1,W2,…] [--json]
          --rows N     models per table workload (default 100000)
          --reps N     repetitions of each workload per contender, interleaved (default 10)
          --only LIST  run only these workloads
          --json       print results as JSON instead of a table
          --contender NAME  run only C, GRDB or ModelStore (for profiling; no table, no checks)
        """

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--rows": rows = try Self.number(rest.popFirst(), for: argument, minimum: 20)
            case "--reps": reps = try Self.number(rest.popFirst(), for: argument, minimum: 1)
            case "--only":
                guard let list = rest.popFirst() else { throw UsageError("--only needs a list such as W1,W3") }
                only = try list.split(separator: ",").map { name in
                    guard let workload = Workload.allCases.first(where: { $0.rawValue.uppercased() == name.uppercased() }) else {
                        throw UsageError("unknown workload \(name)")
                    }
                    return workload
                }
            case "--json": json = true
            case "--contender": contender = rest.popFirst()
            case "--help", "-h": throw UsageError(nil)
            default: throw UsageError("unknown option \(argument)")
            }
        }
    }

    private static func number(_ text: String?, for option: String, minimum: Int) throws -> Int {
        guard let text, let value = Int(text), value >= minimum else {
            throw UsageError("\(option) needs a whole number of at least \(minimum)")
        }
        return value
    }
}

struct UsageError: Error {
    let message: String?
    init(_ message: String?) { self.message = message }
}
