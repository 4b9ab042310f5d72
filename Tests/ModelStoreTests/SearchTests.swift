import Foundation
import Testing
@testable import ModelStore

struct Article: StoredModel, Equatable {
    var id: Int64
    var title: String
    var body: String?
    var price: Double?
    static let primaryKey = ["id"]
    static let searchable: [SearchableText<Article>] = [.text(\.title, weight: 2), .text(\.body)]
}

struct SearchShelf: StoredModel {
    var id: Int64
    var name: String?
    var books: [SearchBook]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<SearchShelf>] = [.toMany(\.books, inverse: \SearchBook.shelf, deleteRule: .cascade)]
}

struct SearchBook: StoredModel {
    var id: Int64
    var title: String
    @Related var shelf: SearchShelf?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<SearchBook>] = [.toOne(\.shelf, inverse: \SearchShelf.books)]
    static let searchable: [SearchableText<SearchBook>] = [.text(\.title)]
}

/// Checks the backend's full-text index of a table: on SQLite, FTS5's own view of the
/// external-content index against its table (every row indexed with exactly its stored text,
/// nothing else: sqlite.org/fts5.html, "integrity-check"); on PostgreSQL, that the table has
/// exactly one index of ModelStore's, saying what it indexes.
func expectIndexIntact(_ test: TestStore, _ index: String, sourceLocation: SourceLocation = #_sourceLocation) {
    guard test.backend == .postgres else { return expectIndexIntact(test.store, index, sourceLocation: sourceLocation) }
    let table = String(index.dropLast("_fts".count))
    let rows = try? test.store.rawRows(
        """
        SELECT obj_description(c.oid, 'pg_class') FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE i.indrelid = to_regclass(quote_ident('\(table)')) AND strpos(pg_get_indexdef(c.oid), '-modelstore-') > 0
            AND i.indisvalid
        """)
    #expect(rows?.count == 1, "\(table)'s full-text indexes: \(rows ?? [])", sourceLocation: sourceLocation)
    guard case .text(let comment)? = rows?.first?.first else {
        Issue.record("\(table) has no full-text index of ModelStore's", sourceLocation: sourceLocation)
        return
    }
    #expect(comment.hasPrefix("modelstore full-text index"), sourceLocation: sourceLocation)
}

/// Checks FTS5's own view of an external-content index against its table.
func expectIndexIntact(_ store: ModelStore, _ index: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(throws: Never.self, sourceLocation: sourceLocation) {
        try store.rawExecute("INSERT INTO \"\(index)\"(\"\(index)\", rank) VALUES ('integrity-check', 1)")
    }
}

/// The code of the `ModelStoreError` that `body` throws, or nil when it throws none.
func code(of body: () throws -> Void) -> ModelStoreError.Code? {
    do {
        try body()
        return nil
    } catch {
        return (error as? ModelStoreError)?.code
    }
}

/// The keys a search finds, best first.
func ids(_ results: [SearchResult<Article>]) -> [Int64] { results.map(\.model.id) }

/// One body on both backends, except where a test says why it is SQLite's alone.
@Suite("Full-text search")
struct SearchTests {

    // MARK: Keeping the index in sync

    @Test(arguments: Backend.available) func aSaveIndexesAndAnUpdateReindexes(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try Article(id: 1, title: "Dark chocolate", body: "bitter and rich").save(in: store)
        #expect(try ids(Article.search("chocolate", in: store)) == [1])
        try Article(id: 1, title: "Mint drops").save(in: store)  // body kept (merge rule)
        #expect(try Article.search("chocolate", in: store).isEmpty)
        #expect(try ids(Article.search("mint", in: store)) == [1])
        #expect(try ids(Article.search("bitter", in: store)) == [1])
        try Article(id: 1, title: "Mint drops").save(clearing: [\.body], in: store)
        #expect(try Article.search("bitter", in: store).isEmpty)
        expectIndexIntact(test, "Article_fts")
    }

    @Test(arguments: Backend.available) func aBatchSaveIndexesEveryElement(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        let notes = (1...50).map { Article(id: $0, title: $0.isMultiple(of: 2) ? "even apple \($0)" : "odd pear", body: nil) }
        let outcome = try Article.save(notes, in: store)
        #expect(outcome.inserted == 50)
        #expect(try Article.count(where: .matches("apple"), in: store) == 25)
        #expect(try Article.count(where: .matches("pear"), in: store) == 25)
        // A batch that changes half of them moves them in the index.
        try Article.save((1...10).map { Article(id: $0, title: "banana") }, in: store)
        #expect(try Article.count(where: .matches("banana"), in: store) == 10)
        #expect(try Article.count(where: .matches("apple"), in: store) == 20)
        expectIndexIntact(test, "Article_fts")
    }

    @Test(arguments: Backend.available) func aGraphSaveIndexesTheRelatedModels(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        var shelf = SearchShelf(id: 1, name: "Kitchen")
        shelf.books = [SearchBook(id: 1, title: "Baking bread"), SearchBook(id: 2, title: "Chocolate desserts")]
        try shelf.save(in: store)
        #expect(try SearchBook.search("bread OR chocolate", in: store).map(\.model.id).sorted() == [1, 2])
        // Deleting the shelf cascades to its books, and they leave the index with them.
        try SearchShelf.delete(key: 1, in: store)
        #expect(try SearchBook.count(in: store) == 0)
        #expect(try SearchBook.search("bread OR chocolate", in: store).isEmpty)
        expectIndexIntact(test, "SearchBook_fts")
    }

    @Test(arguments: Backend.available) func deletesRemoveRecordsFromTheIndex(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try Article.save((1...6).map { Article(id: $0, title: "tea \($0)", price: Double($0)) }, in: store)
        try Article.delete(key: 1, in: store)
        #expect(try Article.count(where: .matches("tea"), in: store) == 5)
        try Article.deleteAll(where: \.price > 4, in: store)
        #expect(try ids(Article.search("tea", in: store)).sorted() == [2, 3, 4])
        // Deleting by a match reads the index while the triggers change it.
        #expect(try Article.deleteAll(where: .matches("tea") && \.price < 3, in: store) == 1)
        #expect(try ids(Article.search("tea", in: store)).sorted() == [3, 4])
        try Article.deleteAll(in: store)
        #expect(try Article.search("tea", in: store).isEmpty)
        expectIndexIntact(test, "Article_fts")
    }

    @Test(arguments: Backend.available) func updateAllReindexes(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try Article.save((1...4).map { Article(id: $0, title: "plain \($0)", body: "old words", price: Double($0)) }, in: store)
        #expect(try Article.updateAll(where: \.price < 3, set: [.set(\.body, to: "new words")], in: store) == 2)
        #expect(try ids(Article.search("new", in: store)).sorted() == [1, 2])
        #expect(try ids(Article.search("old", in: store)).sorted() == [3, 4])
        // A change of key is a change of rowid (an INTEGER key is the rowid).
        try store.rawExecute("UPDATE \"Article\" SET id = 40 WHERE id = 4")
        #expect(try ids(Article.search("old", in: store)).sorted() == [3, 40])
        expectIndexIntact(test, "Article_fts")
    }

    @Test(arguments: Backend.available) func aRolledBackTransactionLeavesTheIndexAsItWas(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try Article(id: 1, title: "kept").save(in: store)
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try store.transaction {
                try Article(id: 2, title: "gone").save(in: store)
                try Article(id: 1, title: "changed").save(in: store)
                #expect(try ids(Article.search("gone OR changed", in: store)).sorted() == [1, 2])  // seen inside
                throw Abort()
            }
        }
        #expect(try Article.search("gone OR changed", in: store).isEmpty)
        #expect(try ids(Article.search("kept", in: store)) == [1])
        expectIndexIntact(test, "Article_fts")
    }

    @Test(arguments: Backend.available) func rawSQLWritesAreIndexedToo(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        _ = try Article.count(in: store)
        try Article(id: 1, title: "first").save(in: store)
        try store.rawExecute("INSERT INTO \"Article\" (id, title, body) VALUES (2, 'raw insert', 'by hand')")
        #expect(try ids(Article.search("hand", in: store)) == [2])
        try store.rawExecute("DELETE FROM \"Article\" WHERE id = 2")
        #expect(try Article.search("hand", in: store).isEmpty)
        expectIndexIntact(test, "Article_fts")
    }

    // MARK: Ranking, snippets, conditions

    @Test(arguments: Backend.available) func resultsComeMostRelevantFirstWithTheDeclaredWeights(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try Article.save(
            [
                Article(id: 1, title: "Notes", body: "one mention of lemon among many other words in a long body of text"),
                Article(id: 2, title: "Lemon tart", body: "butter and sugar"),
                Article(id: 3, title: "Lemon lemon", body: "lemon curd with lemon zest"),
                Article(id: 4, title: "Nothing", body: "unrelated"),
            ], in: store)
        let results = try Article.search("lemon", in: store)
        #expect(ids(results) == [3, 2, 1])
        #expect(results.map(\.rank) == results.map(\.rank).sorted())  // bm25: lower is better
        #expect(results.allSatisfy { $0.rank < 0 })
        // A title weighs twice a body: the same word moved to the body ranks lower.
        try Article(id: 2, title: "Tart", body: "lemon butter and sugar").save(in: store)
        let reweighed = try Article.search("lemon", in: store)
        #expect(try #require(reweighed.first { $0.model.id == 2 }).rank > results[1].rank)
        // Paging.
        #expect(
            try ids(Article.search("lemon", limit: 1, offset: 1, in: store))
                == ids(Article.search("lemon", in: store)).dropFirst().prefix(1).map { $0 })
    }

    @Test(arguments: Backend.available) func snippetsMarkTheMatchedWords(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try Article(id: 1, title: "Chocolate cake", body: "Melt the dark chocolate slowly, then fold it into the batter with care").save(
            in: store)
        try Article(id: 2, title: "Untitled", body: nil).save(in: store)
        let hit = try #require(Article.search("chocolate", in: store).first)
        #expect(hit.snippet(\.title) == "[Chocolate] cake")
        #expect(hit.snippets["body"]?.contains("dark [chocolate] slowly") == true)
        let custom = try #require(
            Article.search("fold", highlight: SearchHighlight(open: "<b>", close: "</b>", ellipsis: "...", tokens: 3), in: store).first)
        #expect(custom.snippet(\.body) == "...it into <b>fold</b>..." || custom.snippet(\.body)?.contains("<b>fold</b>") == true)
        #expect(custom.snippet(\.body)?.hasPrefix("...") == true)
        // A NULL body has no snippet; a property that is not searchable has none either.
        let untitled = try #require(Article.search("untitled", in: store).first)
        #expect(untitled.snippet(\.body) == nil)
        #expect(untitled.snippet(\.price) == nil)
        #expect(untitled.model == Article(id: 2, title: "Untitled", body: nil))
    }

    @Test(arguments: Backend.available) func matchesCombinesWithOrdinaryConditions(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try Article.save(
            [
                Article(id: 1, title: "chocolate bar", price: 1),
                Article(id: 2, title: "chocolate box", price: 5),
                Article(id: 3, title: "mint", body: "chocolate coated", price: 1.5),
                Article(id: 4, title: "crisps", price: 1),
            ], in: store)
        #expect(try Article.filter(.matches("choc*") && \.price < 2).findAll(in: store).map(\.id) == [1, 3])
        #expect(try Article.filter(.matches("choc*") || \.title == "crisps").count(in: store) == 4)
        #expect(try Article.filter(!.matches("chocolate")).findAll(in: store).map(\.id) == [4])
        #expect(try Article.findAll(where: .matches(.words("chocolate"), in: \.title), in: store).map(\.id) == [1, 2])
        #expect(try ids(Article.search("chocolate", where: \.price < 2, in: store)).sorted() == [1, 3])
        #expect(try ids(Article.search("chocolate", where: .matches("coated"), in: store)) == [3])
        #expect(try Article.filter(.matches("choc*")).sum(\.price, in: store) == 7.5)
    }

    @Test(arguments: Backend.available) func userTextIsSearchedLiterally(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try Article(id: 1, title: "AND OR NOT", body: "quote \" star * colon : minus -").save(in: store)
        try Article(id: 2, title: "chocolate milk", body: "cold").save(in: store)
        #expect(try ids(Article.search(.words("and or"), in: store)) == [1])
        #expect(try ids(Article.search(.words("\"chocolate"), in: store)) == [2])
        #expect(try ids(Article.search(.words("title: milk"), in: store)).isEmpty)  // "title" is a word here
        #expect(try ids(Article.search(.words("choc", prefix: true), in: store)) == [2])
        #expect(try Article.search(.words("choc"), in: store).isEmpty)
        #expect(try ids(Article.search(.phrase("chocolate milk"), in: store)) == [2])
        #expect(try Article.search(.phrase("milk chocolate"), in: store).isEmpty)
        // Text without words matches nothing, in every use.
        #expect(try Article.search(.words("  \n "), in: store).isEmpty)
        #expect(try Article.count(where: .matches(.phrase("")), in: store) == 0)
    }

    @Test(arguments: Backend.available) func marksBeyondLatinKeepTheirLettersWhole(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        try Article.save(
            [
                Article(id: 1, title: "ガス", body: "か"), Article(id: 2, title: "أحمد", body: "각도"),
                Article(id: 3, title: "ΟΔΟΣΗΜΑΝΣΗ", body: "οδος"),
            ], in: store)
        // A dakuten, a hamza and a Hangul syllable are part of their letter: no word is split
        // at them, and no letter without one finds a letter with one.
        #expect(try Article.search("ス", in: store).isEmpty)
        #expect(try Article.search("が", in: store).isEmpty)
        #expect(try Article.search("حمد", in: store).isEmpty)
        #expect(try Article.search(.words("가", prefix: true), in: store).isEmpty)
        #expect(try ids(Article.search("ガス", in: store)) == [1])
        #expect(try ids(Article.search(.words("각도"), in: store)) == [2])
        // A final sigma is a sigma.
        #expect(try ids(Article.search(.words("ΟΔΟΣ", prefix: true), in: store)).sorted() == [3])
        #expect(try ids(Article.search(.words("ΟΔΟΣ"), in: store)) == [3])
    }

    // MARK: Errors

    @Test(arguments: Backend.available) func malformedQuerySyntaxIsAnInvalidQueryNamingModelAndText(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try Article(id: 1, title: "tea").save(in: store)
        for bad in ["\"unbalanced", "nosuchcolumn: tea", "AND", "tea NEAR(", ""] {
            let error = try #require(throws: ModelStoreError.self) { try Article.search(.query(bad), in: store) }
            #expect(error.code == .invalidQuery)
            #expect(error.model == "Article")
            #expect(error.value == bad)
            #expect(error.message.contains("'\(bad)'"))
        }
        // Text that would close the column filter's parenthesis is not a query of its own.
        let escaping = try #require(throws: ModelStoreError.self) {
            try Article.count(where: .matches(.query("a) OR (tea"), in: \.body), in: store)
        }
        #expect(escaping.code == .invalidQuery)
        #expect(escaping.value == "a) OR (tea")
        let inQuery = try #require(throws: ModelStoreError.self) {
            try Article.deleteAll(where: .matches("\"tea"), in: store)
        }
        #expect(inQuery.code == .invalidQuery)
        #expect(try Article.count(in: store) == 1)  // the failed delete changed nothing
    }

    @Test(arguments: Backend.available) func badSearchArgumentsAreInvalidQueries(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try Article(id: 1, title: "tea").save(in: store)
        for call in [
            { _ = try Article.search("tea", limit: 0, in: store) },
            { _ = try Article.search("tea", offset: -1, in: store) },
            { _ = try Article.search("tea", highlight: SearchHighlight(open: "", close: "", tokens: 65), in: store) },
            { _ = try Article.count(where: .matches("tea", in: \.price), in: store) },
            { _ = try Snack.search("tea", in: store) },
        ] as [() throws -> Void] {
            #expect(code(of: call) == .invalidQuery)
        }
    }

    // MARK: Three call forms

    @Test(arguments: Backend.available) func everyCallFormSearches(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try await Article.save([Article(id: 1, title: "alpha"), Article(id: 2, title: "beta")], in: store)
        let viaSync = try { try Article.search("alpha", in: store) }()  // the synchronous form, on purpose
        #expect(ids(viaSync) == [1])
        let viaHandler = try await withCheckedThrowingContinuation { continuation in
            Article.search("beta", in: store) { continuation.resume(with: $0) }
        }
        #expect(ids(viaHandler) == [2])
        let viaAsync = try await Article.search("alpha OR beta", where: \.id > 1, in: store)
        #expect(ids(viaAsync) == [2])
        let failure = try await withCheckedThrowingContinuation { continuation in
            Article.search("\"", in: store) { continuation.resume(returning: $0) }
        }
        guard case .failure(let error) = failure else { Issue.record("a malformed query succeeded"); return }
        #expect(error.code == .invalidQuery)
        do {
            _ = try await Article.search("(", in: store)
            Issue.record("a malformed query succeeded")
        } catch let error as ModelStoreError {
            #expect(error.code == .invalidQuery)
        }
    }

    // MARK: Schema

    @Test(arguments: Backend.available) func aModelNothingWroteSearchesEmpty(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        #expect(try Article.search("anything", in: store).isEmpty)
        #expect(try Article.count(where: .matches("anything"), in: store) == 0)
        #expect(try test.tableNames().filter { $0.hasPrefix("Article") }.isEmpty)
    }

    // SQLite only: a migration plan of a file.
    @Test func theIndexIsNotAnUnusedTableInAMigrationPlan() throws {
        let test = try TestStore(.file)
        let store = test.store
        try Article(id: 1, title: "x").save(in: store)
        try store.close()
        let plan = try ModelStore.migrationPlan(at: test.directory.appendingPathComponent("store.sqlite").path, for: [Article.self])
        #expect(plan.unusedTables.isEmpty)
        #expect(plan.statements.isEmpty)
    }

    // SQLite only: stores opened on one file.
    @Test func aSecondStoreOnTheFileSearchesWhatTheFirstWrote() throws {
        let test = try TestStore(.file)
        let store = test.store
        let path = test.directory.appendingPathComponent("store.sqlite").path
        try Article(id: 1, title: "shared words").save(in: store)
        let other = try ModelStore(path: path)
        #expect(try ids(Article.search("shared", in: other)) == [1])
        try Article(id: 2, title: "from the other store").save(in: other)
        #expect(try ids(Article.search("other", in: store)) == [2])
        let reader = try ModelStore(path: path, configuration: .init(readOnly: true))
        #expect(try ids(Article.search("shared OR other", in: reader)).sorted() == [1, 2])
        #expect(code { try Article(id: 3, title: "no").save(in: reader) } == .readOnly)
        // The second store made no index of its own: one set of triggers, one index.
        let triggers = try store.rawRows("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        #expect(triggers.count == 3)
        expectIndexIntact(test, "Article_fts")
    }

    // SQLite only: text holding NUL, which a server refuses.
    @Test func textWithNULAndUnicodeRoundTripsAndIsFound() throws {
        let test = try TestStore(.file)
        let store = test.store
        let title = "caf\u{E9} na\u{EF}ve \u{1F36B} \u{65E5}\u{672C}\u{8A9E}"
        try Article(id: 1, title: title, body: "before\0after").save(in: store)
        #expect(try Article.find(key: 1, in: store)?.body == "before\0after")
        #expect(try Article.find(key: 1, in: store)?.title == title)
        #expect(try ids(Article.search("cafe", in: store)) == [1])  // diacritics folded
        #expect(try ids(Article.search("NAIVE", in: store)) == [1])  // case folded
        #expect(try ids(Article.search("after", in: store)) == [1])  // text after NUL is indexed
        #expect(try ids(Article.search(.words("before\0after"), in: store)) == [1])
        #expect(try ids(Article.search(.phrase("\u{65E5}\u{672C}\u{8A9E}"), in: store)) == [1])
        try Article.delete(key: 1, in: store)
        expectIndexIntact(test, "Article_fts")
    }

    @Test(arguments: Backend.available) func aBatchOfTenThousandIsIndexedInOneTransaction(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        let words = ["apple", "banana", "cherry", "damson", "elder"]
        let notes = (1...10_000).map { Article(id: Int64($0), title: "item \($0)", body: words[$0 % 5] + " pie") }
        try Article.save(notes, in: store)
        #expect(try Article.count(where: .matches("cherry"), in: store) == 2_000)
        #expect(try Article.search("pie", limit: 20, in: store).count == 20)
        #expect(try ids(Article.search("\"item 9999\"", in: store)) == [9999])
        expectIndexIntact(test, "Article_fts")
    }
}
