// Runs the workloads against hand-written SQLite C, GRDB and ModelStore in one process,
// checks that all three produced the same result, and prints medians and ratios.
import BenchCore
import CContender
import Foundation
import GRDBContender
import ModelStoreContender

#if FLUENT
    import FluentContender
#endif

let options: Options
do {
    options = try Options(Array(CommandLine.arguments.dropFirst()))
} catch let error as UsageError {
    if let message = error.message { FileHandle.standardError.write(Data("error: \(message)\n".utf8)) }
    print(Options.usage)
    exit(error.message == nil ? 0 : 2)
}

func note(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

note("Generating \(options.rows) rows…")
let data = Dataset(rows: options.rows)
var all: [any Contender] = [CContender(), GRDBContender(), ModelStoreContender()]
#if FLUENT
    all.append(FluentContender())
#endif
if let only = options.contender {
    // Profiling: run one contender's workloads and report raw medians only.
    guard let contender = all.first(where: { $0.name.lowercased() == only.lowercased() }) else {
        note("unknown contender \(only)")
        exit(2)
    }
    var solo = try Harness(contenders: [contender], data: Dataset(rows: options.rows), reps: options.reps)
    for workload in options.only {
        let samples = try solo.run(workload) { note($0) }
        print("\(workload.rawValue) \(contender.name): median \(samples[0].median)")
    }
    solo.cleanUp()
    exit(0)
}
let contenders = all
var harness = try Harness(contenders: contenders, data: data, reps: options.reps)
defer { harness.cleanUp() }

var results: [WorkloadResult] = []
for workload in options.only {
    let samples = try harness.run(workload) { note($0) }
    results.append(Report.result(workload, samples, names: contenders.map(\.name)))
}

if options.json {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    print(String(decoding: try encoder.encode(results), as: UTF8.self))
} else {
    print(Report.table(results, rows: options.rows, reps: options.reps))
}

if !harness.mismatches.isEmpty {
    note("\nCROSS-CHECK FAILED — a contender produced a different result:")
    for mismatch in harness.mismatches { note("  " + mismatch) }
    harness.cleanUp()
    exit(1)
}
