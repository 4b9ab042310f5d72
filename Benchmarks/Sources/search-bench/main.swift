// Full-text search, ModelStore next to hand-written SQLite C and GRDB 7 in the same run:
//  - load: N documents (100,000 by default) saved in one transaction, each indexed by FTS5
//    triggers as it is written;
//  - search: a fixed list of queries (words, prefixes, AND, phrases), each ranked by bm25
//    with LIMIT 20, reading every hit's row, its rank and a snippet of both text columns;
//  - search + condition: the same with `year >= 2010`.
//
//   swift run -c release --package-path Benchmarks search-bench [--rows N] [--reps K]
import BenchCore
import CBaseline
import Foundation
import GRDB
import ModelStore

struct Doc: StoredModel, Codable, FetchableRecord, PersistableRecord {
    var id: Int64
    var title: String
    var body: String
    var year: Int64
    static let primaryKey = ["id"]
    static let databaseTableName = "Doc"
    static let searchable: [SearchableText<Doc>] = [.text(\.title), .text(\.body)]
}

/// What GRDB reads per hit: the row, the rank and the two snippets.
struct Hit: Decodable, FetchableRecord {
    var id: Int64
    var title: String
    var body: String
    var year: Int64
    var rank: Double
    var titleSnippet: String
    var bodySnippet: String
}

let (rows, reps) = rowsAndReps("search-bench", rows: 100_000, reps: 5)

func note(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

// MARK: Data: pseudo-words with a skewed frequency, the same every run.

struct Generator {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    /// Skewed towards small indexes: common words are common.
    mutating func skewed(_ n: Int) -> Int { min(below(n), below(n), below(n)) }
}

var generator = Generator()
let syllables = ["ka", "lo", "mi", "ru", "te", "sa", "no", "vi", "de", "pa", "zu", "ri", "ma", "ko", "le", "tu"]
let vocabulary: [String] = (0..<4000).map { index in
    var word = ""
    var rest = index
    repeat {
        word += syllables[rest % syllables.count]
        rest /= syllables.count
    } while rest > 0
    return word + ["", "n", "s", "r"][index % 4]
}
func sentence(_ words: Int, _ generator: inout Generator) -> String {
    (0..<words).map { _ in vocabulary[generator.skewed(vocabulary.count)] }.joined(separator: " ")
}
let titles = (0..<rows).map { _ in sentence(3 + generator.below(4), &generator) }
let bodies = (0..<rows).map { _ in sentence(40 + generator.below(40), &generator) }
let years = (0..<rows).map { _ in Int64(1990 + generator.below(35)) }
let docs = (0..<rows).map { Doc(id: Int64($0 + 1), title: titles[$0], body: bodies[$0], year: years[$0]) }

/// Words, prefixes, AND of two words, phrases: common and rare.
let queries: [String] = (0..<200).map { index in
    let common = vocabulary[generator.below(40)]
    let middle = vocabulary[40 + generator.below(400)]
    let rare = vocabulary[440 + generator.below(2000)]
    switch index % 5 {
    case 0: return common
    case 1: return rare
    case 2: return String(middle.prefix(3)) + "*"
    case 3: return "\(common) \(middle)"
    default: return "\"\(common) \(vocabulary[generator.below(40)])\""
    }
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("search-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

struct Result {
    var load: Double = 0
    var search: Double = 0
    var filtered: Double = 0
    var checksum: Int64 = 0
    var filteredChecksum: Int64 = 0
}

// MARK: C

func runC() throws -> Result {
    var result = Result()
    var loads: [Double] = []
    var searches: [Double] = []
    var filtered: [Double] = []
    for rep in 0..<reps {
        let path = directory.appendingPathComponent("c-\(rep).sqlite").path
        guard let db = cs_open(path) else { throw CocoaError(.fileWriteUnknown) }
        defer { cs_close(db) }
        try withCStrings(titles) { titlePointers in
            try withCStrings(bodies) { bodyPointers in
                loads.append(
                    try seconds {
                        guard cs_load(db, Int64(rows), titlePointers, bodyPointers, years) == 0 else { throw CocoaError(.fileWriteUnknown) }
                    })
            }
        }
        var checksum: Int64 = 0
        searches.append(seconds { for query in queries { _ = cs_search(db, query, 20, -1, &checksum) } })
        result.checksum = checksum
        checksum = 0
        filtered.append(seconds { for query in queries { _ = cs_search(db, query, 20, 2010, &checksum) } })
        result.filteredChecksum = checksum
    }
    result.load = median(loads)
    result.search = median(searches)
    result.filtered = median(filtered)
    return result
}

/// Runs `body` with C strings that live as long as it runs.
func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) throws -> T) throws -> T {
    let pointers = strings.map { UnsafePointer(strdup($0)) }
    defer { for pointer in pointers { free(UnsafeMutablePointer(mutating: pointer)) } }
    return try pointers.withUnsafeBufferPointer { try body($0.baseAddress!) }
}

// MARK: ModelStore, with the calls the README teaches

func runModelStore() throws -> Result {
    var result = Result()
    var loads: [Double] = []
    var searches: [Double] = []
    var filtered: [Double] = []
    for rep in 0..<reps {
        let store = try ModelStore(path: directory.appendingPathComponent("modelstore-\(rep).sqlite").path)
        loads.append(try seconds { try Doc.save(docs, in: store) })
        var checksum: Int64 = 0
        searches.append(
            try seconds {
                for query in queries { checksum += try Doc.search(.query(query), limit: 20, in: store).reduce(0) { $0 + $1.model.id } }
            })
        result.checksum = checksum
        checksum = 0
        filtered.append(
            try seconds {
                for query in queries {
                    checksum += try Doc.search(.query(query), where: \.year >= 2010, limit: 20, in: store).reduce(0) { $0 + $1.model.id }
                }
            })
        result.filteredChecksum = checksum
        try store.close()
    }
    result.load = median(loads)
    result.search = median(searches)
    result.filtered = median(filtered)
    return result
}

// MARK: GRDB 7, with its FTS5 support

func runGRDB() throws -> Result {
    var result = Result()
    var loads: [Double] = []
    var searches: [Double] = []
    var filtered: [Double] = []
    let select =
        "SELECT Doc.id, Doc.title, Doc.body, Doc.year, doc_fts.rank AS rank, snippet(doc_fts, 0, '[', ']', '…', 12) AS titleSnippet,"
        + " snippet(doc_fts, 1, '[', ']', '…', 12) AS bodySnippet FROM doc_fts JOIN Doc ON Doc.id = doc_fts.rowid WHERE doc_fts MATCH ?"
    for rep in 0..<reps {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        let pool = try DatabasePool(path: directory.appendingPathComponent("grdb-\(rep).sqlite").path, configuration: configuration)
        try pool.write { db in
            try db.create(table: "Doc") { table in
                table.primaryKey("id", .integer)
                table.column("title", .text).notNull()
                table.column("body", .text).notNull()
                table.column("year", .integer).notNull()
            }
            try db.create(virtualTable: "doc_fts", using: FTS5()) { table in
                table.synchronize(withTable: "Doc")
                table.tokenizer = .unicode61(diacritics: .remove)
                table.column("title")
                table.column("body")
            }
        }
        loads.append(try seconds { try pool.write { db in for doc in docs { try doc.insert(db) } } })
        var checksum: Int64 = 0
        searches.append(
            try seconds {
                for query in queries {
                    let pattern = try FTS5Pattern(rawPattern: query)
                    let hits = try pool.read { db in
                        try Hit.fetchAll(db, sql: select + " ORDER BY doc_fts.rank LIMIT ?", arguments: [pattern, 20])
                    }
                    checksum += hits.reduce(0) { $0 + $1.id }
                }
            })
        result.checksum = checksum
        checksum = 0
        filtered.append(
            try seconds {
                for query in queries {
                    let pattern = try FTS5Pattern(rawPattern: query)
                    let hits = try pool.read { db in
                        try Hit.fetchAll(
                            db, sql: select + " AND Doc.year >= ? ORDER BY doc_fts.rank LIMIT ?", arguments: [pattern, 2010, 20])
                    }
                    checksum += hits.reduce(0) { $0 + $1.id }
                }
            })
        result.filteredChecksum = checksum
    }
    result.load = median(loads)
    result.search = median(searches)
    result.filtered = median(filtered)
    return result
}

note("search-bench: \(rows) documents, \(queries.count) queries, median of \(reps) runs")
note("C…")
let c = try runC()
note("GRDB…")
let grdb = try runGRDB()
note("ModelStore…")
let modelStore = try runModelStore()

func row(_ name: String, _ value: KeyPath<Result, Double>, per: Int) {
    func cell(_ result: Result) -> String {
        String(format: "%9.1f ms", result[keyPath: value] * 1000)
            + (per > 1 ? String(format: " (%6.1f µs each)", result[keyPath: value] * 1e6 / Double(per)) : "")
    }
    print(
        "| \(name) | \(cell(c)) | \(cell(grdb)) | \(cell(modelStore)) | \(String(format: "%.2f×", modelStore[keyPath: value] / c[keyPath: value])) | \(String(format: "%.2f×", modelStore[keyPath: value] / grdb[keyPath: value])) |"
    )
}
print("| workload | C | GRDB | ModelStore | ModelStore / C | ModelStore / GRDB |")
print("|---|---|---|---|---|---|")
row("load \(rows) documents, indexed", \.load, per: 1)
row("\(queries.count) ranked searches, limit 20", \.search, per: queries.count)
row("\(queries.count) ranked searches + condition", \.filtered, per: queries.count)
let agree =
    c.checksum == grdb.checksum && c.checksum == modelStore.checksum && c.filteredChecksum == grdb.filteredChecksum
    && c.filteredChecksum == modelStore.filteredChecksum
print(
    "hits agree: \(agree ? "yes" : "NO") (checksums C \(c.checksum)/\(c.filteredChecksum), GRDB \(grdb.checksum)/\(grdb.filteredChecksum), ModelStore \(modelStore.checksum)/\(modelStore.filteredChecksum))"
)
