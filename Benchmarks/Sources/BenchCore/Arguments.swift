import Foundation

/// `--rows N` and `--reps K` from the command line, the two options most benchmarks take;
/// anything else prints the usage line and exits.
public func rowsAndReps(_ program: String, rows: Int, reps: Int) -> (rows: Int, reps: Int) {
    var rows = rows
    var reps = reps
    var arguments = CommandLine.arguments.dropFirst()
    while let flag = arguments.popFirst() {
        switch flag {
        case "--rows": rows = Int(arguments.popFirst() ?? "") ?? rows
        case "--reps": reps = Int(arguments.popFirst() ?? "") ?? reps
        default:
            print("usage: \(program) [--rows N] [--reps K]")
            exit(2)
        }
    }
    return (rows, reps)
}
