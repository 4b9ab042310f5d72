// W1 (insert a batch into an empty table) and W2 (upsert a batch, half of it stored) with a
// trivial validation and automatic timestamps, against the same model without them, in one
// run on fresh files, repetitions alternating. Goal: within 10%.
//
//   swift run -c release --package-path Benchmarks lifecycle-bench [--rows N] [--reps K]
import BenchCore
import Foundation
import ModelStore

/// W1/W2's item, as the README teaches it.
struct Plain: StoredModel {
    var id: Int64
    var name: String
    var price: Double
    var quantity: Int64
    var createdAt: Double
    var note: String?
    var stampedAt: Date?
    var changedAt: Date?
    static let primaryKey = ["id"]
    static let tableName = "item"
}

/// The same columns, with a validation and both timestamps.
struct Checked: StoredModel {
    var id: Int64
    var name: String
    var price: Double
    var quantity: Int64
    var createdAt: Double
    var note: String?
    var stampedAt: Date?
    var changedAt: Date?
    static let primaryKey = ["id"]
    static let tableName = "item"
    static let timestamps = Timestamps<Checked>(created: \.stampedAt, updated: \.changedAt)

    func validate() throws {
        guard price >= 0, !name.isEmpty else { throw ValidationError("must have a name and a price of at least 0") }
    }
}

let (rows, reps) = rowsAndReps("lifecycle-bench", rows: 100_000, reps: 9)

let data = Dataset(rows: rows)
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lifecycle-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

func plain(_ items: [ItemData]) -> [Plain] {
    items.map { Plain(id: $0.id, name: $0.name, price: $0.price, quantity: $0.quantity, createdAt: $0.createdAt, note: $0.note) }
}

func checked(_ items: [ItemData]) -> [Checked] {
    items.map { Checked(id: $0.id, name: $0.name, price: $0.price, quantity: $0.quantity, createdAt: $0.createdAt, note: $0.note) }
}

/// A store on a new file.
func freshStore() throws -> ModelStore {
    try ModelStore(path: directory.appendingPathComponent("items-\(UUID().uuidString).sqlite").path)
}

/// Milliseconds of `timed`, on a store `prepare` made.
func measure(_ prepare: (ModelStore) throws -> Void, _ timed: (ModelStore) throws -> Void) throws -> Double {
    let store = try freshStore()
    try prepare(store)
    let start = now()
    try timed(store)
    let elapsed = Double(now() - start) / 1e6
    try store.close()
    return elapsed
}

let plainItems = plain(data.items)
let checkedItems = checked(data.items)
let plainHalf = plain(Array(data.items.prefix(rows / 2)))
let checkedHalf = checked(Array(data.items.prefix(rows / 2)))
let plainUpserts = plain(data.upserts)
let checkedUpserts = checked(data.upserts)

// The work a program without the feature does by hand: the same two dates, set by the caller.
let stamp = Date()
let handItems = plainItems.map {
    var item = $0; item.stampedAt = stamp; item.changedAt = stamp; return item
}
let handUpserts = plainUpserts.map {
    var item = $0; item.stampedAt = stamp; item.changedAt = stamp; return item
}

let runs: [(name: String, run: () throws -> Double)] = [
    ("W1 plain", { try measure({ _ = try Plain.deleteAll(in: $0) }, { _ = try Plain.save(plainItems, in: $0) }) }),
    ("W1 validated + timestamps", { try measure({ _ = try Checked.deleteAll(in: $0) }, { _ = try Checked.save(checkedItems, in: $0) }) }),
    ("W2 plain", { try measure({ _ = try Plain.save(plainHalf, in: $0) }, { _ = try Plain.save(plainUpserts, in: $0) }) }),
    (
        "W2 validated + timestamps",
        { try measure({ _ = try Checked.save(checkedHalf, in: $0) }, { _ = try Checked.save(checkedUpserts, in: $0) }) }
    ),
    ("W1 dates set by hand", { try measure({ _ = try Plain.deleteAll(in: $0) }, { _ = try Plain.save(handItems, in: $0) }) }),
    ("W2 dates set by hand", { try measure({ _ = try Plain.save(plainHalf, in: $0) }, { _ = try Plain.save(handUpserts, in: $0) }) }),
]

var samples = Array(repeating: [Double](), count: runs.count)
for run in runs { _ = try run.run() }  // warm up
for _ in 0..<reps {
    for (index, run) in runs.enumerated() { samples[index].append(try run.run()) }
}
let medians = samples.map { $0.sorted()[$0.count / 2] }
print("W1 and W2 over \(rows) items, median of \(reps):")
print("| workload | plain | validated + timestamps | ratio | goal | dates set by hand | ratio to it |")
print("|---|---|---|---|---|---|---|")
for (plain, checked, hand, name) in [(0, 1, 4, "W1 insert a batch"), (2, 3, 5, "W2 upsert a batch, half stored")] {
    let ratio = medians[checked] / medians[plain]
    let ms = { String(format: "%.1f ms", medians[$0]) }
    print(
        "| \(name) | \(ms(plain)) | \(ms(checked)) | \(String(format: "%.3f", ratio)) | \(ratio <= 1.10 ? "≤ 1.10: met" : "≤ 1.10: missed") | \(ms(hand)) | \(String(format: "%.3f", medians[checked] / medians[hand])) |"
    )
}
