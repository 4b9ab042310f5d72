// W1–W9 on a PostgreSQL server: hand-written postgres-nio, ModelStore (and Fluent, with
// MODELSTORE_BENCH_FLUENT_POSTGRES=1 when the package was resolved with it), in one run, on
// the same server; each run in a fresh schema; results cross-checked; medians and ratios.
//
//   export MODELSTORE_POSTGRES_URL="$(scripts/postgres-cluster.sh start /tmp/pg)"
//   swift run -c release --package-path Benchmarks postgres-bench [--rows N] [--reps K]
//   (profiling one part: [--only W3,W4] [--contender modelstore])
import BenchCore
import Foundation
import ModelStore

func note(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

let (rows, reps, onlyWorkloads, onlyContender) = benchArguments("postgres-bench", rows: 20_000, reps: 3)
guard let url = ProcessInfo.processInfo.environment["MODELSTORE_POSTGRES_URL"], !url.isEmpty else {
    note("Set MODELSTORE_POSTGRES_URL (export MODELSTORE_POSTGRES_URL=\"$(scripts/postgres-cluster.sh start /tmp/pg)\").")
    exit(2)
}
let server = try Server(url: url)
var contenders: [any ServerContender] = [NIOContender(), ModelStoreServerContender()]
#if FLUENT_POSTGRES
    contenders.append(FluentServerContender())
#endif
note("Generating \(rows) rows…")
let data = Dataset(rows: rows)
let workloads: [Workload] = [.w1, .w1r, .w2, .w3, .w4, .w5, .w6, .w7, .w8, .w9].filter {
    onlyWorkloads?.contains($0.rawValue.uppercased()) ?? true
}
var mismatches: [String] = []
let names: [String] = contenders.map { "\($0.name) median (min–max)" }
let ratioHeads: String = contenders.count > 2 ? " MS÷nio | MS÷Fluent |" : " MS÷nio |"
let dashes: String = String(repeating: "---|", count: contenders.count + (contenders.count > 2 ? 2 : 1))
var lines: [String] = ["| workload | " + names.joined(separator: " | ") + " |" + ratioHeads, "|---|" + dashes]
for workload in workloads {
    var medians: [Double?] = []
    var cells: [String] = []
    var reference: Checksum?
    for contender in contenders {
        guard contender.supports(workload), onlyContender.map({ contender.name.lowercased().hasPrefix($0) }) ?? true else {
            medians.append(nil)
            cells.append("—")
            continue
        }
        var times: [Double] = []
        for rep in 0..<reps {
            let schema = "bench_\(contender.name.lowercased().filter(\.isLetter))_\(workload.rawValue.lowercased())_\(rep)"
            let run = try contender.prepare(workload, data: data, server: server, schema: schema)
            let start = now()
            try run.timed()
            times.append(Double(now() - start) / 1e9)
            let checksum = try run.verify()
            if let reference, checksum != reference {
                mismatches.append("\(workload.rawValue): \(contender.name) produced \(checksum), expected \(reference)")
            }
            if reference == nil { reference = checksum }
            for store in openStores { try? store.close() }
            openStores = []
            server.drop(schema)
        }
        times.sort()
        let median = times[times.count / 2]
        medians.append(median)
        cells.append(String(format: "%.4f (%.4f–%.4f)", median, times.first!, times.last!))
        note("\(workload.rawValue) \(contender.name): \(String(format: "%.4f", median)) s")
    }
    func ratio(_ index: Int) -> String {
        guard let ours = medians[1], index < medians.count, let theirs = medians[index] else { return "—" }
        return String(format: "%.2f×", ours / theirs)
    }
    lines.append(
        "| \(workload.rawValue) \(workload.title) | " + cells.joined(separator: " | ") + " | \(ratio(0))"
            + (contenders.count > 2 ? " | \(ratio(2))" : "") + " |")
}
server.closeAll()
print("PostgreSQL benchmark, \(rows) rows, median of \(reps) runs, seconds")
print(lines.joined(separator: "\n"))
if !mismatches.isEmpty {
    note("Results differ between contenders:\n" + mismatches.joined(separator: "\n"))
    exit(1)
}
