import Foundation
import ModelStoreCSQLite
import Testing
@testable import ModelStore

private struct Clipping: StoredModel, Equatable {
    var id: Int64
    var title: String
    var body: String?
    static let primaryKey = ["id"]
    static let searchable: [SearchableText<Clipping>] = [.text(\.title, weight: 2), .text(\.body)]
}

/// What another program does to the file: drops some of the index's triggers, then changes
/// rows the dropped triggers would have indexed.
enum SearchIndexChange: String, CaseIterable, CustomTestStringConvertible {
    case insert, update, delete, all

    var testDescription: String { rawValue }

    var droppedTriggers: [String] {
        switch self {
        case .insert: ["Clipping_fts_ai"]
        case .update: ["Clipping_fts_au"]
        case .delete: ["Clipping_fts_ad"]
        case .all: ["Clipping_fts_ai", "Clipping_fts_au", "Clipping_fts_ad"]
        }
    }

    /// The SQL for round `round` (each round uses words of its own).
    func sql(round: Int) -> String {
        let drops = droppedTriggers.map { "DROP TRIGGER IF EXISTS \($0);" }.joined(separator: " ")
        // The rowid of a deleted row comes back for a new one: a stale index would find the
        // new row by the old one's words.
        let insert = "INSERT INTO Clipping (id, title) VALUES (\(100 + round), 'fresh\(round)');"
        let update = "UPDATE Clipping SET title = 'renewed\(round)' WHERE id = 1;"
        let delete = "DELETE FROM Clipping WHERE id = 2; INSERT INTO Clipping (id, title, body) VALUES (2, 'stand\(round)', NULL);"
        switch self {
        case .insert: return drops + insert
        case .update: return drops + update
        case .delete: return drops + delete
        case .all: return drops + insert + update + delete
        }
    }

    /// What a correct index finds after round `round`: word → keys.
    func expected(round: Int) -> [(String, [Int64])] {
        var found: [(String, [Int64])] = []
        if self == .insert || self == .all { found.append(("fresh\(round)", [Int64(100 + round)])) }
        if self == .update || self == .all {
            found += [("renewed\(round)", [1]), (round == 0 ? "alpha" : "renewed\(round - 1)", [])]
        }
        if self == .delete || self == .all {
            found += [("stand\(round)", [2]), (round == 0 ? "gone" : "stand\(round - 1)", [])]
        }
        return found
    }
}

// SQLite-only: full-text search (FTS5) throws .unsupported on PostgreSQL, and the index is changed with raw SQLite SQL.
/// Another program drops (some of) a full-text index's triggers and changes rows: a store
/// already open notices the changed schema before its next read, as a new store would, and
/// never answers from an index that lags its table — whichever connection reads, in every
/// call form, in read blocks and on read-only stores too.
@Suite("Reliability: a full-text index changed behind the store's back")
struct SearchIndexBehindTheBackTests {
    private let test: TestStore
    private var store: ModelStore { test.store }
    private var path: String { store.path! }

    init() throws {
        test = try TestStore(.file)
        _ = try Clipping.save(
            [
                Clipping(id: 1, title: "alpha", body: "first words"), Clipping(id: 2, title: "beta", body: "gone soon"),
                Clipping(id: 3, title: "gamma", body: "stays"),
            ], in: test.store)
        // Every reader has checked the table and its index once.
        let store = test.store
        onThreads(8) { _ in _ = try? Clipping.search("alpha", in: store) }
    }

    /// Runs SQL as another program: a bare connection of its own.
    private func otherProgram(_ sql: String) throws {
        let connection = try Connection(location: path, flags: SQLITE_OPEN_READWRITE, busyTimeout: 5)
        defer { connection.close() }
        try connection.execute(sql)
    }

    private func triggers() throws -> [String] {
        let connection = try Connection(location: path, flags: SQLITE_OPEN_READONLY, busyTimeout: 5)
        defer { connection.close() }
        let statement = try connection.makeStatement("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
        var names: [String] = []
        try statement.forEachRow { names.append(statement.string(at: 0)) }
        return names
    }

    private static func keys(_ results: [SearchResult<Clipping>]) -> [Int64] { results.map(\.model.id).sorted() }

    /// Every synchronous way to ask the index, each after a change of its own.
    @Test(arguments: SearchIndexChange.allCases)
    func aStoreAlreadyOpenFindsRowsChangedAfterTriggersWereDropped(change: SearchIndexChange) throws {
        let asks: [(String, (String) throws -> [Int64])] = [
            ("search", { try Self.keys(Clipping.search(.words($0), in: store)) }),
            ("findAll matches", { try Clipping.findAll(where: .matches(.words($0)), in: store).map(\.id).sorted() }),
            ("count matches", { word in Array(repeating: 0, count: try Clipping.count(where: .matches(.words(word)), in: store)) }),
            (
                "forEach",
                { word in
                    var found: [Int64] = []
                    try Clipping.filter(.matches(.words(word))).forEach(in: store) { found.append($0.id) }
                    return found.sorted()
                }
            ),
            ("read block", { word in try store.read { try Self.keys(Clipping.search(.words(word), in: store)) } }),
            ("transaction", { word in try store.transaction { try Self.keys(Clipping.search(.words(word), in: store)) } }),
        ]
        for (round, (form, ask)) in asks.enumerated() {
            try otherProgram(change.sql(round: round))
            for (word, keys) in change.expected(round: round) {
                let found = try ask(word)
                if form == "count matches" {
                    #expect(found.count == keys.count, "\(form) of '\(word)' after \(change) in round \(round)")
                } else {
                    #expect(found == keys, "\(form) of '\(word)' after \(change) in round \(round)")
                }
            }
        }
        // The writable store repaired the file's index for good.
        #expect(try triggers() == ["Clipping_fts_ad", "Clipping_fts_ai", "Clipping_fts_au"])
        expectIndexIntact(store, "Clipping_fts")
    }

    @Test(arguments: SearchIndexChange.allCases)
    func everyAsyncFormFindsRowsChangedAfterTriggersWereDropped(change: SearchIndexChange) async throws {
        let store = self.store
        try otherProgram(change.sql(round: 0))
        for (word, keys) in change.expected(round: 0) {
            #expect(try await Self.keys(Clipping.search(.words(word), in: store)) == keys, "async search of '\(word)'")
        }
        try otherProgram(change.sql(round: 1))
        for (word, keys) in change.expected(round: 1) {
            let result = await withCheckedContinuation { continuation in
                Clipping.search(.words(word), in: store) { continuation.resume(returning: $0) }
            }
            #expect(try Self.keys(result.get()) == keys, "completion search of '\(word)'")
        }
        try otherProgram(change.sql(round: 2))
        for (word, keys) in change.expected(round: 2) {
            var found: [Int64] = []
            for try await clipping in Clipping.filter(.matches(.words(word))).stream(in: store) { found.append(clipping.id) }
            #expect(found.sorted() == keys, "stream of '\(word)'")
        }
        try otherProgram(change.sql(round: 3))
        for (word, keys) in change.expected(round: 3) {
            #expect(
                try await Clipping.findAll(where: .matches(.words(word)), in: store).map(\.id).sorted() == keys,
                "async findAll of '\(word)'")
        }
    }

    /// Readers and the writer at once: every reader connection had checked the table, and
    /// each must notice on its own.
    @Test func everyReaderConnectionNoticesAtOnce() throws {
        try otherProgram(SearchIndexChange.all.sql(round: 0))
        let wrong = Locked<[String]>([])
        onThreads(16) { index in
            do {
                let found = try Self.keys(Clipping.search(.words(index % 2 == 0 ? "fresh0" : "stand0"), in: store))
                if found != [index % 2 == 0 ? 100 : 2] { wrong.withLock { $0.append("search \(index) found \(found)") } }
            } catch {
                wrong.withLock { $0.append("search \(index) failed: \(error)") }
            }
        }
        #expect(wrong.current.isEmpty, "\(wrong.current)")
    }

    /// A store that cannot write answers from a copy of the index made from the rows for
    /// that read, and leaves the file as it is.
    @Test(arguments: SearchIndexChange.allCases)
    func aReadOnlyStoreFindsRowsChangedAfterTriggersWereDroppedAndWritesNothing(change: SearchIndexChange) async throws {
        let reader = try ModelStore(path: path, configuration: .init(readOnly: true))
        defer { try? reader.close() }
        #expect(try synchronously { try Self.keys(Clipping.search("alpha", in: reader)) } == [1])
        for round in 0..<3 {
            try otherProgram(change.sql(round: round))
            for (word, keys) in change.expected(round: round) {
                let found: [Int64]
                switch round {
                case 0: found = try synchronously { try Self.keys(Clipping.search(.words(word), in: reader)) }
                case 1:
                    found = try synchronously {
                        try reader.read { try Clipping.findAll(where: .matches(.words(word)), in: reader).map(\.id).sorted() }
                    }
                default: found = try await Self.keys(Clipping.search(.words(word), in: reader))
                }
                #expect(found == keys, "read-only search of '\(word)' after \(change) in round \(round)")
            }
        }
        #expect(try triggers().count == 3 - change.droppedTriggers.count, "the read-only store wrote to the file")
        // A read-only store opened on the file as it is now answers the same.
        let late = try ModelStore(path: path, configuration: .init(readOnly: true))
        defer { try? late.close() }
        for (word, keys) in change.expected(round: 2) {
            let found = try synchronously { try Self.keys(Clipping.search(.words(word), in: late)) }
            #expect(found == keys, "a new read-only store's search of '\(word)'")
        }
    }

    /// A schema change that leaves the index whole (another program adds a table) is noticed
    /// too, but costs no rebuild of the index.
    @Test func anUnrelatedSchemaChangeDoesNotRebuildTheIndex() throws {
        try otherProgram("CREATE TABLE unrelated (x); INSERT INTO Clipping (id, title) VALUES (50, 'indexed')")
        test.resetSQL()
        #expect(try Self.keys(Clipping.search("indexed", in: store)) == [50])
        #expect(!test.sql.contains { $0.contains("'rebuild'") }, "\(test.sql)")
    }
}
