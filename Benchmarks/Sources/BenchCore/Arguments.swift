import Foundation

/// `--rows N` and `--reps K` from the command line, the two options most benchmarks take;
/// anything else prints the usage line and exits.
public func rowsAndReps(_ program: String, rows: Int, reps: Int) -> (rows: Int, reps: Int) {
    let options = benchArguments(program, rows: rows, reps: reps, filters: false)
    return (options.rows, options.reps)
}

/// `--rows N`, `--reps K` and, for profiling one part of a run, `--only W3,W4` (workloads by
/// name) and `--contender NAME`; anything else prints the usage line and exits.
public func benchArguments(_ program: String, rows: Int, reps: Int, filters: Bool = true) -> (
    rows: Int, reps: Int, only: Set<String>?, contender: String?
) {
    var rows = rows
    var reps = reps
    var only: Set<String>?
    var contender: String?
    var arguments = CommandLine.arguments.dropFirst()
    while let flag = arguments.popFirst() {
        switch flag {
        case "--rows": rows = Int(arguments.popFirst() ?? "") ?? rows
        case "--reps": reps = Int(arguments.popFirst() ?? "") ?? reps
        case "--only" where filters:
            only = Set((arguments.popFirst() ?? "").split(separator: ",").map { $0.uppercased() })
        case "--contender" where filters: contender = arguments.popFirst()?.lowercased()
        default:
            print("usage: \(program) [--rows N] [--reps K]" + (filters ? " [--only W3,W4] [--contender NAME]" : ""))
            exit(2)
        }
    }
    return (rows, reps, only, contender)
}
