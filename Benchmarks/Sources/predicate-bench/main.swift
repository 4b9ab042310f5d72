// W5's filtered, sorted pages written three ways, in one run on one file: with typed
// conditions (the baseline), as Foundation's `#Predicate` with a typed ordering, and as a
// `#Predicate` with a `SortDescriptor`. The goal is the predicate forms within 5% of the typed
// one: translation is cached per predicate shape, so a loop of predicates that differ only in
// their captured values translates once.
//
// Repetitions alternate the three forms so drift (CPU frequency, caches) hits each alike.
//
//   swift run -c release --package-path Benchmarks predicate-bench [--rows N] [--reps K]
import BenchCore
import Foundation
import ModelStore

struct Item: StoredModel {
    var id: Int64
    var name: String
    var price: Double
    var quantity: Int64
    var createdAt: Double
    var note: String?
    static let primaryKey = ["id"]
    static let tableName = "item"
    static let indexes: [TableIndex<Item>] = [.on(\.price)]
}

let (rows, reps) = rowsAndReps("predicate-bench", rows: 100_000, reps: 11)

func note(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("predicate-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let data = Dataset(rows: rows)
let store = try ModelStore(path: directory.appendingPathComponent("items.sqlite").path)
note("Writing \(rows) items…")
try Item.save(
    data.items.map { Item(id: $0.id, name: $0.name, price: $0.price, quantity: $0.quantity, createdAt: $0.createdAt, note: $0.note) },
    in: store)

/// One pass of W5: a page of 50 after skipping 100, for each of 1,000 thresholds.
func pages(_ page: (Double) throws -> [Item]) rethrows -> Int64 {
    var check: Int64 = 0
    for threshold in data.thresholds {
        for item in try page(threshold) { check &+= item.id }
    }
    return check
}

let forms: [(name: String, run: () throws -> Int64)] = [
    (
        "typed condition",
        {
            try pages { threshold in
                try Item.filter(\.price > threshold).order(.ascending(\.price)).limit(50, offset: 100).findAll(in: store)
            }
        }
    ),
    (
        "#Predicate",
        {
            try pages { threshold in
                try Item.filter(#Predicate { $0.price > threshold }).order(.ascending(\.price)).limit(50, offset: 100)
                    .findAll(in: store)
            }
        }
    ),
    (
        "#Predicate + SortDescriptor",
        {
            try pages { threshold in
                try Item.filter(#Predicate { $0.price > threshold }).order([SortDescriptor(\Item.price)]).limit(50, offset: 100)
                    .findAll(in: store)
            }
        }
    ),
]

var samples = Array(repeating: [Double](), count: forms.count)
var checks = Array(repeating: Int64(0), count: forms.count)
for (index, form) in forms.enumerated() { checks[index] = try form.run() }  // warm up
for _ in 0..<reps {
    for (index, form) in forms.enumerated() {
        let start = now()
        checks[index] = try form.run()
        samples[index].append(Double(now() - start) / 1e6)
    }
}
guard Set(checks).count == 1 else {
    note("CROSS-CHECK FAILED: the forms read different records: \(checks)")
    exit(1)
}
let medians = samples.map { $0.sorted()[$0.count / 2] }
print("W5, 1,000 filtered sorted pages over \(rows) items, median of \(reps):")
print("| form | median | ratio to typed | goal |")
print("|---|---|---|---|")
for (index, form) in forms.enumerated() {
    let ratio = medians[index] / medians[0]
    let goal = index == 0 ? "baseline" : (ratio <= 1.05 ? "≤ 1.05: met" : "≤ 1.05: missed")
    print("| \(form.name) | \(String(format: "%.1f", medians[index])) ms | \(String(format: "%.3f", ratio)) | \(goal) |")
}
