// Times migrating a store of N records (1,000,000 by default) through ModelStore — a declared
// rename, a rebuild step (new key, a column's type) and a transform step (a Swift closure per
// record) — next to the same work written as plain SQL, or as C, in the same run.
//
//   swift run -c release --package-path Benchmarks migration-bench [--rows N] [--reps K]
import CBaseline
import Foundation
import ModelStore

struct ItemV1: StoredModel {
    var id: Int64
    var name: String
    var cost: Double?
    var qty: Int64
    static let primaryKey = ["id"]
    static let tableName = "Item"
    static let indexes: [TableIndex<ItemV1>] = [.on(\.name)]
}

/// The rename: the table is now Product, `cost` is `price`.
struct Product: StoredModel {
    var id: Int64
    var name: String
    var price: Double?
    var qty: Int64
    static let primaryKey = ["id"]
    static let indexes: [TableIndex<Product>] = [.on(\.name)]
    static let formerNames: [FormerName<Product>] = [.table(from: "Item"), .property(\.price, from: "cost")]
}

/// The rebuild: keyed by a code, the cost in whole cents.
struct ItemByCode: StoredModel {
    var code: String
    var id: Int64
    var name: String
    var costCents: Int64?
    var qty: Int64
    static let primaryKey = ["code"]
    static let tableName = "Item"
    static let indexes: [TableIndex<ItemByCode>] = [.on(\.name)]
}

/// The transform's result: the cost in whole cents, computed in Swift.
struct ItemInCents: StoredModel {
    var id: Int64
    var name: String
    var costCents: Int64?
    var qty: Int64
    static let primaryKey = ["id"]
    static let tableName = "Item"
    static let indexes: [TableIndex<ItemInCents>] = [.on(\.name)]
}

let (rows, reps): (Int, Int) = {
    var rows = 1_000_000
    var reps = 3
    var arguments = CommandLine.arguments.dropFirst()
    while let flag = arguments.popFirst() {
        switch flag {
        case "--rows": rows = Int(arguments.popFirst() ?? "") ?? rows
        case "--reps": reps = Int(arguments.popFirst() ?? "") ?? reps
        default:
            print("usage: migration-bench [--rows N] [--reps K]")
            exit(2)
        }
    }
    return (rows, reps)
}()

func note(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("migration-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let base = directory.appendingPathComponent("base.sqlite").path

// The version-1 file: the table as ModelStore makes it, filled by SQL (the setup is not timed).
note("Writing \(rows) records…")
do {
    let store = try ModelStore(path: base)
    try ItemV1(id: 0, name: "item 0", cost: nil, qty: 0).save(in: store)
    try store.close()
    let db = cb_open(base)
    defer { cb_close(db) }
    let fill = """
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
        INSERT INTO Item (id, name, cost, qty) SELECT i, 'item ' || i, CASE WHEN i % 10 = 0 THEN NULL ELSE i * 0.01 END, i % 100 FROM n;
        PRAGMA wal_checkpoint(TRUNCATE);
        """
    guard cb_exec(db, fill) == 0 else { fatalError(String(cString: cb_error(db))) }
}

/// Copies the base file, runs `work` on the copy, and returns the median of `reps` timings.
func time(_ label: String, _ work: (String) throws -> Void, check: (String) throws -> Void) throws -> Double {
    var samples: [Double] = []
    for rep in 0..<reps {
        let path = directory.appendingPathComponent("\(label)-\(rep).sqlite").path
        try FileManager.default.copyItem(atPath: base, toPath: path)
        let start = DispatchTime.now().uptimeNanoseconds
        try work(path)
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        try check(path)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
    return samples.sorted()[samples.count / 2]
}

func plainSQL(_ sql: String) -> (String) throws -> Void {
    { path in
        let db = cb_open(path)
        defer { cb_close(db) }
        guard cb_exec(db, sql) == 0 else { throw ModelStoreError(.sqlite, String(cString: cb_error(db))) }
    }
}

var results: [(String, Double, Double)] = []

note("Rename…")
// Each contender's result is checked the same way, through ModelStore's models.
let renamed: (String) throws -> Void = { path in
    let store = try ModelStore(path: path)
    guard try Product.find(key: 7, in: store)?.price == 0.07, try Product.count(in: store) == rows + 1 else {
        fatalError("rename lost data")
    }
    try store.close()
}
let renameModelStore = try time(
    "rename-ms",
    { path in
        let store = try ModelStore(path: path)
        // The first write using the model renames the table and the column.
        try store.transaction { _ = try Product.find(key: 1, in: store) }
        try store.close()
    }, check: renamed)
let renameSQL = try time(
    "rename-sql",
    plainSQL(
        "BEGIN IMMEDIATE; ALTER TABLE Item RENAME TO Product; ALTER TABLE Product RENAME COLUMN cost TO price; DROP INDEX index_Item_name; CREATE INDEX index_Product_name ON Product (name); COMMIT"
    ), check: renamed)
results.append(("declared rename (table and column)", renameModelStore, renameSQL))

note("Rebuild…")
let rebuildStep = MigrationStep("key by code") { step in
    try step.rebuild(
        ItemByCode.self, values: ["code": "'item-' || id", "costCents": "CAST(round(cost * 100) AS INTEGER)"], dropping: ["cost"])
}
let rebuilt: (String) throws -> Void = { path in
    let store = try ModelStore(path: path)
    guard try ItemByCode.find(key: "item-7", in: store)?.costCents == 7, try ItemByCode.count(in: store) == rows + 1 else {
        fatalError("rebuild lost data")
    }
    try store.close()
}
let rebuildModelStore = try time(
    "rebuild-ms",
    { path in
        try ModelStore(path: path, configuration: .init(migrations: [rebuildStep])).close()
    }, check: rebuilt)
let rebuildSQL = try time(
    "rebuild-sql",
    plainSQL(
        """
        PRAGMA foreign_keys = OFF; BEGIN IMMEDIATE;
        CREATE TABLE item_new (code TEXT NOT NULL, id INTEGER NOT NULL, name TEXT NOT NULL, costCents INTEGER, qty INTEGER NOT NULL, PRIMARY KEY (code));
        INSERT INTO item_new (code, id, name, costCents, qty) SELECT 'item-' || id, id, name, CAST(round(cost * 100) AS INTEGER), qty FROM Item;
        DROP TABLE Item; ALTER TABLE item_new RENAME TO Item; CREATE INDEX index_Item_name ON Item (name);
        PRAGMA foreign_key_check; COMMIT; PRAGMA foreign_keys = ON
        """), check: rebuilt)
results.append(("rebuild step (new key, REAL → INTEGER)", rebuildModelStore, rebuildSQL))

note("Transform…")
let transformStep = MigrationStep("cents") { step in
    try step.transform(ItemV1.self, to: ItemInCents.self) { old in
        ItemInCents(id: old.id, name: old.name, costCents: old.cost.map { Int64(($0 * 100).rounded()) }, qty: old.qty)
    }
}
let transformed: (String) throws -> Void = { path in
    let store = try ModelStore(path: path)
    guard try ItemInCents.find(key: 7, in: store)?.costCents == 7, try ItemInCents.count(in: store) == rows + 1 else {
        fatalError("transform lost data")
    }
    try store.close()
}
let transformModelStore = try time(
    "transform-ms",
    { path in
        try ModelStore(path: path, configuration: .init(migrations: [transformStep])).close()
    }, check: transformed)
let transformC = try time(
    "transform-c",
    { path in
        let db = cb_open(path)
        defer { cb_close(db) }
        guard cb_transform_items(db) == 0 else { throw ModelStoreError(.sqlite, String(cString: cb_error(db))) }
    }, check: transformed)
results.append(("transform step (Swift closure per record; C loop)", transformModelStore, transformC))

print("Migrating \(rows) records, median of \(reps) (ms; each run on a fresh copy, opening included):")
print("| migration | ModelStore | plain SQL / C | ratio |")
print("|---|---:|---:|---:|")
for (label, store, baseline) in results {
    print(
        "| \(label) | \(String(format: "%.1f", store)) | \(String(format: "%.1f", baseline)) | \(String(format: "%.2f", store / baseline)) |"
    )
}
