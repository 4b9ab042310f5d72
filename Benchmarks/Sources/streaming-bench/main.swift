// Streaming a large table: the time and the peak memory growth of iterating every record
// without holding them — ModelStore's `Query.forEach` and `Query.stream` (the README's
// calls), next to a hand-written C `sqlite3_step` loop and GRDB's `Record.fetchCursor`.
//
//   swift run -c release --package-path Benchmarks streaming-bench [--rows N] [--reps K]
//
// Each measurement runs in a child process of its own (this executable, `--child NAME`), so
// one contender's memory high-water mark never hides another's: the child reads its peak
// resident size (VmHWM) after opening the database and reading one row, iterates, and
// reports the growth, with the growth of heap bytes in use (sampled) and the time.
import BenchCore
import CBaseline
import Foundation
import GRDB
import ModelStore

struct Item: StoredModel, Codable, FetchableRecord, PersistableRecord {
    var id: Int64
    var name: String
    var price: Double
    var quantity: Int64
    var createdAt: Double
    var note: String?
    static let primaryKey = ["id"]
    static let tableName = "item"
    static let databaseTableName = "item"
}

var rows = 1_000_000
var reps = 3
var child: String?
var path: String?
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    switch flag {
    case "--rows": rows = Int(arguments.popFirst() ?? "") ?? rows
    case "--reps": reps = Int(arguments.popFirst() ?? "") ?? reps
    case "--child": child = arguments.popFirst()
    case "--path": path = arguments.popFirst()
    default:
        print("usage: streaming-bench [--rows N] [--reps K]")
        exit(2)
    }
}

func note(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

/// The process's peak resident size in KiB (Linux's VmHWM), or 0 where unknown.
func peakResidentKiB() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
    return 0
}

// MARK: Child: one measurement

/// Iterates every record with `contender`; prints `milliseconds hwmGrowthKiB heapGrowthBytes checksum`.
func measure(_ contender: String, path: String) async throws {
    var sum = Checksum()
    var iterate: () async throws -> Void
    switch contender {
    case "C":
        let db = cb_open(path)
        var first = cb_sum()
        _ = cb_fetch_by_keys(db, [1], 1, 0, &first)
        iterate = {
            var total = cb_sum()
            guard cb_stream_items(db, &total) == 0 else { throw CocoaError(.fileReadUnknown) }
            sum.count = Int(total.count)
            sum.keys = total.keys
            sum.text = total.text
            sum.cents = total.cents
        }
    case "GRDB":
        let queue = try DatabaseQueue(path: path)
        _ = try await queue.read { try Item.fetchOne($0, key: 1) }
        iterate = {
            try await queue.read { db in
                var local = Checksum()
                let cursor = try Item.order(Column("id")).fetchCursor(db)
                while let item = try cursor.next() { local.add(key: item.id, text: item.name, price: item.price) }
                return local
            }.apply { sum = $0 }
        }
    case "ModelStore forEach":
        let store = try ModelStore(path: path)
        _ = try await Item.find(key: 1, in: store)
        iterate = {
            // The synchronous form, from a synchronous closure.
            sum = try {
                var local = Checksum()
                try Item.all().forEach(in: store) { item in local.add(key: item.id, text: item.name, price: item.price) }
                return local
            }()
        }
    case "ModelStore stream":
        let store = try ModelStore(path: path)
        _ = try await Item.find(key: 1, in: store)
        iterate = {
            var local = Checksum()
            for try await item in Item.all().stream(in: store) { local.add(key: item.id, text: item.name, price: item.price) }
            sum = local
        }
    default:
        note("unknown contender \(contender)")
        exit(2)
    }
    let baseline = peakResidentKiB()
    let heapBase = Int(cb_heap_in_use())
    let heapPeak = HeapPeak(heapBase)
    let sampler = Thread {
        while !heapPeak.stopped {
            heapPeak.record(Int(cb_heap_in_use()))
            usleep(500)
        }
    }
    sampler.start()
    let start = now()
    try await iterate()
    let elapsed = Double(now() - start) / 1e6
    heapPeak.stop()
    let growth = peakResidentKiB() - baseline
    print(String(format: "%.1f %d %d %@", elapsed, growth, max(0, heapPeak.value - heapBase), sum.description))
}

final class HeapPeak: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var highest: Int
    private var ended = false
    init(_ value: Int) { highest = value }
    var value: Int { lock.withLock { highest } }
    var stopped: Bool { lock.withLock { ended } }
    func record(_ bytes: Int) { lock.withLock { highest = max(highest, bytes) } }
    func stop() { lock.withLock { ended = true } }
}

extension Checksum {
    func apply(_ body: (Checksum) -> Void) { body(self) }
}

if let child, let path {
    try await measure(child, path: path)
    exit(0)
}

// MARK: Parent: the file, then each contender in turn

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("streaming-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let file = directory.appendingPathComponent("items.sqlite").path

do {
    note("writing \(rows) items…")
    let store = try ModelStore(path: file)
    try Item(id: 0, name: "", price: 0, quantity: 0, createdAt: 0).save(in: store)
    try store.execute(
        """
        WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM n WHERE value < \(rows))
        INSERT OR REPLACE INTO \(table: Item.self) (id, name, price, quantity, createdAt, note)
        SELECT value, 'item-' || value, (value * 7919 % 100000) / 100.0, value % 1000, 700000000.0 + value,
               CASE WHEN value % 3 = 0 THEN NULL ELSE 'note ' || (value % 10000) END FROM n
        """)
    try store.execute("DELETE FROM item WHERE id = 0")
    try store.close()
}

let contenders = ["C", "GRDB", "ModelStore forEach", "ModelStore stream"]
var results: [String: [(ms: Double, hwm: Int, heap: Int)]] = [:]
var checksums: [String: String] = [:]
for rep in 1...reps {
    for contender in contenders {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--child", contender, "--path", file]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let line = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let fields = line.split(separator: " ", maxSplits: 3).map(String.init)
        guard process.terminationStatus == 0, fields.count == 4, let ms = Double(fields[0]), let hwm = Int(fields[1]),
            let heap = Int(fields[2])
        else {
            note("\(contender) failed: \(line)")
            exit(1)
        }
        results[contender, default: []].append((ms, hwm, heap))
        checksums[contender] = fields[3]
        note("rep \(rep) \(contender): \(line)")
    }
}

func median<T: Comparable>(_ values: [T]) -> T { values.sorted()[values.count / 2] }
let reference = median(results["C"]!.map(\.ms))
print("Streaming \(rows) records (median of \(reps) runs, each in its own process)")
print("contender             time ms   × C    peak RSS growth   heap peak growth")
for contender in contenders {
    let samples = results[contender]!
    let ms = median(samples.map(\.ms))
    print(
        contender.padding(toLength: 20, withPad: " ", startingAt: 0)
            + String(
                format: "%9.0f  %5.2f  %12.1f MB  %14.1f MB", ms, ms / reference, Double(median(samples.map(\.hwm))) / 1024,
                Double(median(samples.map(\.heap))) / 1_048_576))
}
let agree = Set(checksums.values).count == 1
print("checksums \(agree ? "agree" : "DIFFER"): \(checksums["C"] ?? "")")
if !agree { exit(1) }
