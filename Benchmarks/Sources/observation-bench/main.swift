// Observation costs, ModelStore next to GRDB's ValueObservation in the same run:
//  - writer throughput: single-record save transactions with 0, 10 and 100 live queries, on
//    a table the writes never touch ("unrelated") and on the written table ("related");
//  - delivery latency: from a commit's return to the observer's handler, on a small query;
//  - the durable history's cost: the same writes of a model that keeps history, against the
//    model that does not, and reading the changes back (`--history` runs only this part).
//
//   swift run -c release --package-path Benchmarks observation-bench [--saves N] [--reps K] [--history]
import Foundation
import GRDB
import ModelStore

struct Entry: StoredModel, Codable, FetchableRecord, PersistableRecord {
    var id: Int64
    var name: String
    var amount: Double
    static let primaryKey = ["id"]
    static let databaseTableName = "Entry"
}

/// `Entry`, keeping history (in files of its own).
struct KeptEntry: StoredModel {
    var id: Int64
    var name: String
    var amount: Double
    static let primaryKey = ["id"]
    static let tableName = "Entry"
    static let keepsHistory = true
}

struct Other: StoredModel, Codable, FetchableRecord, PersistableRecord {
    var id: Int64
    var name: String
    static let primaryKey = ["id"]
    static let databaseTableName = "Other"
}

let (saves, reps, historyOnly): (Int, Int, Bool) = {
    var saves = 2000
    var reps = 5
    var historyOnly = false
    var arguments = CommandLine.arguments.dropFirst()
    while let flag = arguments.popFirst() {
        switch flag {
        case "--saves": saves = Int(arguments.popFirst() ?? "") ?? saves
        case "--reps": reps = Int(arguments.popFirst() ?? "") ?? reps
        case "--history": historyOnly = true
        default:
            print("usage: observation-bench [--saves N] [--reps K] [--history]")
            exit(2)
        }
    }
    return (saves, reps, historyOnly)
}()

func note(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("observation-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}
func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e6 }

/// Milliseconds for `saves` single-record save transactions (median of `reps`), each rep on a
/// fresh file with `observers` observers set up by `observe`.
func throughputModelStore(observers: Int, related: Bool) throws -> Double {
    var samples: [Double] = []
    for rep in 0..<reps {
        let path = directory.appendingPathComponent("ms-\(observers)-\(related)-\(rep).sqlite").path
        let store = try ModelStore(path: path)
        try Other(id: 1, name: "o").save(in: store)
        try Entry(id: 0, name: "e", amount: 0).save(in: store)
        var tokens: [ObservationToken] = []
        let delivered = Counter()
        for index in 0..<observers {
            let threshold = Double(index)
            tokens.append(
                related
                    ? store.observe({ try Entry.filter(\.amount >= threshold).count(in: store) }) { _ in delivered.add() }
                    : store.observe({ try Other.count(in: store) }) { _ in delivered.add() })
        }
        if observers > 0 { while delivered.value < observers { usleep(100) } }
        let start = now()
        for id in 1...saves { try Entry(id: Int64(id), name: "entry \(id)", amount: Double(id)).save(in: store) }
        samples.append(now() - start)
        tokens.removeAll()
        try store.close()
    }
    return median(samples)
}

func throughputGRDB(observers: Int, related: Bool) throws -> Double {
    var samples: [Double] = []
    for rep in 0..<reps {
        let path = directory.appendingPathComponent("grdb-\(observers)-\(related)-\(rep).sqlite").path
        let pool = try DatabasePool(path: path)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE Entry (id INTEGER PRIMARY KEY, name TEXT NOT NULL, amount REAL NOT NULL)")
            try db.execute(sql: "CREATE TABLE Other (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
            try Other(id: 1, name: "o").insert(db)
            try Entry(id: 0, name: "e", amount: 0).insert(db)
        }
        var cancellables: [AnyDatabaseCancellable] = []
        let delivered = Counter()
        for index in 0..<observers {
            let threshold = Double(index)
            let observation =
                related
                ? ValueObservation.tracking { db in try Entry.filter(Column("amount") >= threshold).fetchCount(db) }
                : ValueObservation.tracking { db in try Other.fetchCount(db) }
            cancellables.append(
                observation.start(in: pool, scheduling: .async(onQueue: .global()), onError: { _ in }, onChange: { _ in delivered.add() }))
        }
        if observers > 0 { while delivered.value < observers { usleep(100) } }
        let start = now()
        for id in 1...saves { try pool.write { db in try Entry(id: Int64(id), name: "entry \(id)", amount: Double(id)).save(db) } }
        samples.append(now() - start)
        cancellables.removeAll()
    }
    return median(samples)
}

/// Milliseconds from a commit's return to the handler receiving the new count, per commit.
func latencyModelStore() throws -> [Double] {
    let store = try ModelStore(path: directory.appendingPathComponent("latency-ms.sqlite").path)
    try Entry(id: 0, name: "e", amount: 0).save(in: store)
    let arrived = Arrivals()
    let token = store.observe({ try Entry.count(in: store) }) { result in
        if case .success(let count) = result { arrived.record(count) }
    }
    _ = arrived.wait(for: 1)
    var latencies: [Double] = []
    for id in 1...300 {
        try Entry(id: Int64(id), name: "e", amount: 1).save(in: store)
        let committed = now()
        latencies.append(arrived.wait(for: id + 1) - committed)
    }
    token.cancel()
    try store.close()
    return latencies
}

func latencyGRDB() throws -> [Double] {
    let pool = try DatabasePool(path: directory.appendingPathComponent("latency-grdb.sqlite").path)
    try pool.write { db in
        try db.execute(sql: "CREATE TABLE Entry (id INTEGER PRIMARY KEY, name TEXT NOT NULL, amount REAL NOT NULL)")
        try Entry(id: 0, name: "e", amount: 0).insert(db)
    }
    let arrived = Arrivals()
    let cancellable = ValueObservation.tracking { db in try Entry.fetchCount(db) }
        .start(in: pool, scheduling: .async(onQueue: .global()), onError: { _ in }, onChange: { arrived.record($0) })
    _ = arrived.wait(for: 1)
    var latencies: [Double] = []
    for id in 1...300 {
        try pool.write { db in try Entry(id: Int64(id), name: "e", amount: 1).insert(db) }
        let committed = now()
        latencies.append(arrived.wait(for: id + 1) - committed)
    }
    cancellable.cancel()
    return latencies
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() {
        lock.lock()
        count += 1
        lock.unlock()
    }
    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}

/// When each count first arrived.
final class Arrivals: @unchecked Sendable {
    private let condition = NSCondition()
    private var times: [Int: Double] = [:]
    func record(_ count: Int) {
        let time = now()
        condition.lock()
        if times[count] == nil { times[count] = time }
        condition.broadcast()
        condition.unlock()
    }
    func wait(for count: Int) -> Double {
        condition.lock()
        defer { condition.unlock() }
        while times[count] == nil { condition.wait() }
        return times[count]!
    }
}

/// Milliseconds (median of `reps`, each on a fresh file) for a batch save of `batch` records
/// in one transaction and for `saves` single saves, of `type`; and for reading the batch's
/// changes back in pages of 1,000 when it keeps history.
func historyCost<M: StoredModel>(
    _ type: M.Type, batch: Int, _ make: @escaping (Int64) -> M
) throws -> (batch: Double, singles: Double, read: Double?) {
    var batches: [Double] = []
    var singles: [Double] = []
    var reads: [Double] = []
    for rep in 0..<reps {
        let path = directory.appendingPathComponent("history-\(M.keepsHistory)-\(rep).sqlite").path
        let store = try ModelStore(path: path)
        try make(0).save(in: store)
        let token = try store.historyToken()
        var start = now()
        _ = try M.save((1...Int64(batch)).map(make), in: store)
        batches.append(now() - start)
        start = now()
        for id in Int64(batch + 1)...Int64(batch + saves) { try make(id).save(in: store) }
        singles.append(now() - start)
        if M.keepsHistory {
            start = now()
            var next = token
            var read = 0
            while true {
                let page = try store.history(since: next)
                read += page.changes.count
                next = page.token
                if page.isComplete { break }
            }
            reads.append(now() - start)
            guard read == batch + saves else { fatalError("read \(read) changes of \(batch + saves)") }
        }
        try store.close()
    }
    return (median(batches), median(singles), reads.isEmpty ? nil : median(reads))
}

func measureHistory() throws {
    let batch = 20_000
    note("History…")
    let plain = try historyCost(Entry.self, batch: batch) { Entry(id: $0, name: "entry \($0)", amount: Double($0)) }
    let kept = try historyCost(KeptEntry.self, batch: batch) { KeptEntry(id: $0, name: "entry \($0)", amount: Double($0)) }
    print("History: \(batch) records saved in one batch, then \(saves) single saves, median of \(reps) (ms):")
    print("| | without history | keepsHistory | ratio |")
    print("|---|---:|---:|---:|")
    print(
        "| batch save | \(String(format: "%.1f", plain.batch)) | \(String(format: "%.1f", kept.batch)) | \(String(format: "%.2f", kept.batch / plain.batch)) |"
    )
    print(
        "| single saves | \(String(format: "%.1f", plain.singles)) | \(String(format: "%.1f", kept.singles)) | \(String(format: "%.2f", kept.singles / plain.singles)) |"
    )
    print("| reading the \(batch + saves) changes back, pages of 1,000 | | \(String(format: "%.1f", kept.read ?? 0)) | |")
}

if historyOnly {
    try measureHistory()
    exit(0)
}

var rows: [(String, Double, Double)] = []
for related in ProcessInfo.processInfo.environment["MODELSTORE_BENCH_UNRELATED_ONLY"] != nil ? [false] : [false, true] {
    let kind = related ? "related" : "unrelated"
    note("Throughput, \(kind)…")
    let baseStore = try throughputModelStore(observers: 0, related: related)
    let baseGRDB = try throughputGRDB(observers: 0, related: related)
    rows.append(("\(kind): 0 observers", baseStore, baseGRDB))
    for count in [10, 100] {
        rows.append(
            (
                "\(kind): \(count) observers", try throughputModelStore(observers: count, related: related),
                try throughputGRDB(observers: count, related: related)
            ))
    }
}
note("Latency…")
let storeLatency = try latencyModelStore()
let grdbLatency = try latencyGRDB()

print("Writer throughput: \(saves) single-record save transactions, median of \(reps) (ms; ratio to 0 observers of the same library):")
print("| observers | ModelStore | ×0 | GRDB | ×0 |")
print("|---|---:|---:|---:|---:|")
for (index, row) in rows.enumerated() {
    let base = rows[index / 3 * 3]
    print(
        "| \(row.0) | \(String(format: "%.1f", row.1)) | \(String(format: "%.3f", row.1 / base.1)) | \(String(format: "%.1f", row.2)) | \(String(format: "%.3f", row.2 / base.2)) |"
    )
}
print("")
print("Delivery latency, commit to handler, 300 commits (ms):")
print("| | median | p99 |")
print("|---|---:|---:|")
print("| ModelStore | \(String(format: "%.3f", median(storeLatency))) | \(String(format: "%.3f", percentile(storeLatency, 0.99))) |")
print(
    "| GRDB ValueObservation | \(String(format: "%.3f", median(grdbLatency))) | \(String(format: "%.3f", percentile(grdbLatency, 0.99))) |")
print("")
try measureHistory()
