import Foundation
import Testing
@testable import ModelStore

// Full-text search under schema change, behind-the-back edits, hostile input and concurrency.

private struct PlainMemo: StoredModel {
    var id: Int64
    var title: String
    var body: String?
    static let primaryKey = ["id"]
    static let tableName = "Memo"
}

private struct TitleMemo: StoredModel {
    var id: Int64
    var title: String
    var body: String?
    static let primaryKey = ["id"]
    static let tableName = "Memo"
    static let searchable: [SearchableText<TitleMemo>] = [.text(\.title)]
}

private struct FullMemo: StoredModel {
    var id: Int64
    var title: String
    var body: String?
    static let primaryKey = ["id"]
    static let tableName = "Memo"
    static let searchable: [SearchableText<FullMemo>] = [.text(\.title), .text(\.body)]
}

/// The old shape of a renamed model: table `Jotting`, text in `text`, keyed by a string (so
/// its rowids are not its keys, and a rebuild may renumber them).
private struct Jotting: StoredModel {
    var code: String
    var text: String?
    static let primaryKey = ["code"]
    static let searchable: [SearchableText<Jotting>] = [.text(\.text)]
}

private struct Journal: StoredModel {
    var code: String
    var body: String?
    static let primaryKey = ["code"]
    static let searchable: [SearchableText<Journal>] = [.text(\.body)]
    static let formerNames: [FormerName<Journal>] = [.table(from: "Jotting"), .property(\.body, from: "text")]
}

private struct WideJournal: StoredModel {
    var code: String
    var body: String?
    var extra: Int64?
    static let primaryKey = ["code"]
    static let tableName = "Journal"
    static let searchable: [SearchableText<WideJournal>] = [.text(\.body)]
}

private enum SearchMood: String, Codable { case calm, angry }

private struct BadDouble: StoredModel {
    var id: Int64
    var price: Double?
    static let primaryKey = ["id"]
    static let searchable: [SearchableText<BadDouble>] = [.column("price")]
}

private struct BadJSON: StoredModel {
    var id: Int64
    var tags: [String]
    static let primaryKey = ["id"]
    static let searchable: [SearchableText<BadJSON>] = [.column("tags")]
}

private struct BadEnum: StoredModel {
    var id: Int64
    var mood: SearchMood?
    static let primaryKey = ["id"]
    static let searchable: [SearchableText<BadEnum>] = [.column("mood")]
}

private struct BadUnknown: StoredModel {
    var id: Int64
    var name: String
    static let primaryKey = ["id"]
    static let searchable: [SearchableText<BadUnknown>] = [.column("nmae")]
}

private struct BadTwice: StoredModel {
    var id: Int64
    var name: String
    static let primaryKey = ["id"]
    static let searchable: [SearchableText<BadTwice>] = [.text(\.name), .text(\.name, weight: 2)]
}

private struct BadWeight: StoredModel {
    var id: Int64
    var name: String
    static let primaryKey = ["id"]
    static let searchable: [SearchableText<BadWeight>] = [.text(\.name, weight: 0)]
}

private struct BadRowid: StoredModel {
    var id: Int64
    var rowid: Int64?
    var name: String
    static let primaryKey = ["id"]
    static let searchable: [SearchableText<BadRowid>] = [.text(\.name)]
}

private struct NoRowid: StoredModel {
    var id: String
    var name: String?
    static let primaryKey = ["id"]
    static let searchable: [SearchableText<NoRowid>] = [.text(\.name)]
}

/// One body on both backends where the promise is not about SQLite's file or its FTS5 tables.
@Suite("Full-text search attacks")
struct SearchAttackTests {
    private func names(_ store: ModelStore, _ type: String) throws -> [String] {
        try store.rawRows("SELECT name FROM sqlite_master WHERE type = '\(type)' ORDER BY name").compactMap {
            if case .text(let name) = $0[0] { return name }
            return nil
        }
    }

    /// The parts of `table`'s full-text index the store keeps: SQLite's triggers, or the
    /// server's index (one, saying what it indexes).
    private func indexParts(_ test: TestStore, _ store: ModelStore, _ table: String) throws -> [String] {
        guard test.backend == .postgres else { return try names(store, "trigger").filter { $0.hasPrefix(table + "_fts") } }
        return try store.rawRows(
            """
            SELECT coalesce(obj_description(c.oid, 'pg_class'), '') FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE i.indrelid = to_regclass(quote_ident('\(table)')) AND strpos(pg_get_indexdef(c.oid), '-modelstore-') > 0
            """
        ).compactMap {
            if case .text(let comment) = $0[0] { return comment }
            return nil
        }
    }

    @Test func anExistingTableWithRecordsIsIndexedOnFirstUse() throws {
        let test = try TestStore(.file)
        try PlainMemo.save((1...100).map { PlainMemo(id: $0, title: "memo \($0)", body: "written before the index") }, in: test.store)
        #expect(try !names(test.store, "table").contains("Memo_fts"))
        // Each later declaration in a store of its own on the file (one store refuses two
        // models of one table).
        #expect(try TitleMemo.search("memo", limit: 200, in: test.later()).count == 100)
        #expect(try FullMemo.search("before", limit: 200, in: test.later()).count == 100)
        expectIndexIntact(test.store, "Memo_fts")
    }

    @Test(arguments: Backend.available) func addingOrRemovingASearchablePropertyMakesTheIndexAgain(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try TitleMemo(id: 1, title: "alpha", body: "beta").save(in: test.store)
        #expect(try TitleMemo.search("beta", in: test.store).isEmpty)  // body is not indexed
        try test.store.close()
        // Another version of the app: body became searchable.
        let second = try test.later()
        #expect(try FullMemo.search("beta", in: second).map(\.model.id) == [1])
        #expect(try FullMemo.search("alpha", in: second).map(\.model.id) == [1])
        try FullMemo(id: 2, title: "gamma", body: "delta").save(in: second)
        #expect(try indexParts(test, second, "Memo").count == (backend == .sqlite ? 3 : 1))
        if backend == .postgres { #expect(try indexParts(test, second, "Memo").first?.contains("body") == true) }
        try second.close()
        // And a version without search: the index goes.
        let third = try test.later()
        try PlainMemo(id: 3, title: "epsilon").save(in: third)
        #expect(try indexParts(test, third, "Memo").isEmpty)
        if backend == .sqlite { #expect(try !names(third, "table").contains { $0.hasPrefix("Memo_fts") }) }
        try third.close()
        // Back to searching: the rows written meanwhile are indexed too.
        let fourth = try test.later()
        #expect(try TitleMemo.search("epsilon OR gamma", in: fourth).map(\.model.id).sorted() == [2, 3])
        #expect(try TitleMemo.search("delta", in: fourth).isEmpty)
        #expect(
            try indexParts(test, fourth, "Memo").count == (backend == .sqlite ? 3 : 1), "\((try? indexParts(test, fourth, "Memo")) ?? [])")
        if backend == .sqlite { expectIndexIntact(fourth, "Memo_fts") }
    }

    @Test(arguments: Backend.available) func aRenamedTableAndColumnKeepTheirIndex(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try Jotting.save([Jotting(code: "a", text: "old words"), Jotting(code: "b", text: "other text")], in: test.store)
        try test.store.close()
        let store = try test.later()
        #expect(try Journal.search("old", in: store).map(\.model.code) == ["a"])
        try Journal(code: "c", body: "new words").save(in: store)
        try Journal.delete(key: "b", in: store)
        #expect(try Journal.search("words", in: store).map(\.model.code).sorted() == ["a", "c"])
        if backend == .sqlite {
            #expect(try names(store, "trigger") == ["Journal_fts_ad", "Journal_fts_ai", "Journal_fts_au"])
            #expect(try !names(store, "table").contains { $0.hasPrefix("Jotting") })
            expectIndexIntact(store, "Journal_fts")
        } else {
            // One index, saying it indexes the column by its new name.
            #expect(
                try indexParts(test, store, "Journal").map { $0.hasSuffix(": body") } == [true],
                "\((try? indexParts(test, store, "Journal")) ?? [])")
        }
    }

    @Test(arguments: Backend.available) func aTableRebuildRemakesTheIndexForTheNewRowids(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        // Deletes leave gaps in the rowids, which a rebuild's copy closes.
        try Journal.save((1...50).map { Journal(code: String(format: "k%03d", $0), body: "entry \($0) text") }, in: test.store)
        try Journal.deleteAll(where: .matches("text") && Column("code") < "k025", in: test.store)
        try test.store.close()
        let store = try test.later(configuration: .init(migrations: [MigrationStep("widen") { try $0.rebuild(WideJournal.self) }]))
        #expect(try WideJournal.search("text", limit: 100, in: store).count == 26)
        #expect(try WideJournal.search("\"entry 30\"", in: store).map(\.model.code) == ["k030"])
        if backend == .sqlite {
            expectIndexIntact(store, "Journal_fts")
            #expect(try names(store, "trigger") == ["Journal_fts_ad", "Journal_fts_ai", "Journal_fts_au"])
        } else {
            #expect(try indexParts(test, store, "Journal").count == 1, "\((try? indexParts(test, store, "Journal")) ?? [])")
        }
    }

    @Test func triggersDroppedBehindTheBackAreMadeAgainByTheNextStore() throws {
        let test = try TestStore(.file)
        let path = test.directory.appendingPathComponent("store.sqlite").path
        try FullMemo(id: 1, title: "first").save(in: test.store)
        try test.store.rawExecute("DROP TRIGGER Memo_fts_ai")
        try test.store.rawExecute("INSERT INTO Memo (id, title) VALUES (2, 'unindexed')")
        try test.store.close()
        let store = try ModelStore(path: path)
        #expect(try FullMemo.search("unindexed", in: store).map(\.model.id) == [2])
        try FullMemo(id: 3, title: "third").save(in: store)
        #expect(try FullMemo.search("third", in: store).map(\.model.id) == [3])
        expectIndexIntact(store, "Memo_fts")
    }

    @Test func aTableWithoutRowidOrAForeignTableOfTheIndexNameIsRefused() throws {
        let test = try TestStore(.file)
        try test.rawExecute("CREATE TABLE NoRowid (id TEXT NOT NULL PRIMARY KEY, name TEXT) WITHOUT ROWID")
        let error = try #require(throws: ModelStoreError.self) { try NoRowid(id: "a", name: "x").save(in: test.store) }
        #expect(error.code == .schemaMismatch)
        #expect(error.model == "NoRowid")
        #expect(try test.rawRows("SELECT count(*) FROM NoRowid") == [[.integer(0)]])

        try test.rawExecute("CREATE TABLE Memo_fts (whatever TEXT)")
        let taken = try #require(throws: ModelStoreError.self) { try FullMemo(id: 1, title: "x").save(in: test.store) }
        #expect(taken.code == .schemaMismatch)
        #expect(taken.value == "Memo_fts")
        #expect(try !names(test.store, "table").contains("Memo"))  // nothing written
    }

    @Test func declarationsThatCannotWorkAreInvalidModelErrorsNamingModelAndProperty() throws {
        let test = try TestStore()
        func refusal(_ body: () throws -> Void) -> ModelStoreError? {
            do {
                try body()
                return nil
            } catch {
                return error as? ModelStoreError
            }
        }
        let cases: [(ModelStoreError?, String, String)] = [
            (refusal { try BadDouble(id: 1).save(in: test.store) }, "BadDouble", "price"),
            (refusal { try BadJSON(id: 1, tags: []).save(in: test.store) }, "BadJSON", "tags"),
            (refusal { try BadEnum(id: 1).save(in: test.store) }, "BadEnum", "mood"),
            (refusal { _ = try BadUnknown.search("x", in: test.store) }, "BadUnknown", "nmae"),
            (refusal { try BadTwice(id: 1, name: "x").save(in: test.store) }, "BadTwice", "name"),
            (refusal { try BadWeight(id: 1, name: "x").save(in: test.store) }, "BadWeight", "name"),
            (refusal { try BadRowid(id: 1, name: "x").save(in: test.store) }, "BadRowid", "rowid"),
        ]
        for (error, model, property) in cases {
            #expect(error?.code == .invalidModel, "\(model)")
            #expect(error?.model == model)
            #expect(error?.column == property)
            #expect(error?.message.contains(property) == true)
        }
        #expect(try test.rawRows("SELECT name FROM sqlite_master WHERE name LIKE 'Bad%'").isEmpty)
        // Where SQLite lacks FTS5, the declaration check says so.
        let missing = try #require(throws: ModelStoreError.self) { try FullTextSupport.require(for: "Memo", available: false) }
        #expect(missing.code == .invalidModel)
        #expect(missing.message.contains("FTS5"))
        #expect(FullTextSupport.isAvailable)
    }

    @Test(arguments: Backend.available) func hostileQueryTextIsAnErrorOrAnAnswerNeverACrash(_ backend: Backend) throws {
        let test = try TestStore(backend)
        // (A server's text cannot hold NUL: U+0001 stands in for it there.)
        let nul = backend == .sqlite ? "\0" : "\u{1}"
        try FullMemo.save((1...20).map { FullMemo(id: $0, title: "word\($0) \u{1F600}", body: "x\(nul)y \"q\" *") }, in: test.store)
        var generator = SeededGenerator(seed: 14)
        let alphabet = Array("ab \"*():^-+{}NEAR AND OR NOT title body\0\u{1F600}é'\\,.")
        for _ in 0..<500 {
            let text = String((0..<Int.random(in: 0...20, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            do {
                _ = try FullMemo.search(.query(text), in: test.store)
            } catch let error as ModelStoreError {
                #expect(error.code == .invalidQuery, "\(text.debugDescription): \(error)")
                #expect(error.value == text)
            }
            // Literal forms never fail.
            _ = try FullMemo.search(.words(text, prefix: true), in: test.store)
            _ = try FullMemo.search(.phrase(text), in: test.store)
            _ = try FullMemo.count(where: .matches(.words(text), in: \.title), in: test.store)
        }
        #expect(try FullMemo.search(.words("\"q\""), in: test.store).count == 20)
        expectIndexIntact(test, "Memo_fts")
    }

    @Test(arguments: Backend.available) func concurrentWritersAndSearchersLeaveTheIndexExact(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try await FullMemo(id: 0, title: "seed").save(in: store)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask(priority: .high) {
                    for round in 0..<50 {
                        let id = Int64(worker * 1000 + round)
                        try await FullMemo(id: id, title: "worker\(worker) round\(round)", body: "shared").save(in: store)
                        if round.isMultiple(of: 3) { try await FullMemo.delete(key: id, in: store) }
                        _ = try await FullMemo.search("shared", where: Column("id") >= worker * 1000, in: store)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await FullMemo.count(where: .matches("shared"), in: store) == 4 * 33)
        expectIndexIntact(test, "Memo_fts")
    }

    @Test(arguments: Backend.available) func liveQueriesAndChangeStreamsSeeWritesThroughTheIndex(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try await FullMemo(id: 1, title: "one").save(in: store)
        let counts = Collected<Int>()
        let token = store.observe({ try FullMemo.count(where: .matches("needle"), in: store) }) { result in
            if case .success(let count) = result { counts.add(count) }
        }
        #expect(await eventually { counts.current.last == 0 })
        try await FullMemo(id: 2, title: "needle").save(in: store)
        #expect(await eventually { counts.current.last == 1 })
        try await FullMemo.updateAll(where: \.id == 1, set: [.set(\.body, to: "needle too")], in: store)
        #expect(await eventually { counts.current.last == 2 })
        token.cancel()
    }

    @Test func aVacuumKeepsTheIndexOfATextKeyedTable() throws {
        let test = try TestStore(.file)
        try Journal.save((1...200).map { Journal(code: "k\($0)", body: "entry \($0)") }, in: test.store)
        try Journal.deleteAll(where: Column("code") < "k15", in: test.store)
        try test.store.close()
        let path = test.directory.appendingPathComponent("store.sqlite").path
        // VACUUM may renumber the rowids of a table without an INTEGER key; SQLite's own
        // copies them over (it keeps rowids), which this checks stays true.
        let raw = try Connection(location: path, flags: 0x2 /* SQLITE_OPEN_READWRITE */, busyTimeout: 5)
        try raw.execute("VACUUM")
        raw.close()
        let store = try ModelStore(path: path)
        #expect(try Journal.search("\"entry 199\"", in: store).map(\.model.code) == ["k199"])
        expectIndexIntact(store, "Journal_fts")
    }
}
