import Foundation
import Testing
@testable import ModelStore

private struct User: StoredModel, Equatable {
    var id: String
    var email: String?
    var city: String?
    var age: Int?
    static let primaryKey = ["id"]
    static let indexes: [TableIndex<User>] = [.unique(\.email), .on(\.city, \.age)]
}

private struct Item: StoredModel {
    var id: Int
    var price: Double?
    static let primaryKey = ["id"]
    static let tableName = "Items"
}

private struct IndexedItem: StoredModel {
    var id: Int
    var price: Double?
    static let primaryKey = ["id"]
    static let tableName = "Items"
    static let indexes: [TableIndex<IndexedItem>] = [.on(\.price)]
}

private struct UniqueItem: StoredModel {
    var id: Int
    var price: Double?
    static let primaryKey = ["id"]
    static let tableName = "Items"
    static let indexes: [TableIndex<UniqueItem>] = [.unique(\.price)]
}

@Suite("Indexes")
struct IndexTests {
    private func indexes(_ test: TestStore, _ table: String) throws -> [String: String] {
        try test.indexDefinitions(table)
    }

    @Test(arguments: Backend.available) func declaredIndexesAreCreatedWithTheTable(_ backend: Backend) throws {
        let test = try TestStore(backend)
        // The first use in a write creates the table (a read alone sees no table, no records).
        try test.store.transaction { _ = try User.count(in: test.store) }
        if backend == .sqlite {
            let found = try indexes(test, "User")
            #expect(found["unique_User_email"] == #"CREATE UNIQUE INDEX "unique_User_email" ON "User" ("email")"#)
            #expect(found["index_User_city_age"] == #"CREATE INDEX "index_User_city_age" ON "User" ("city", "age")"#)
        } else {
            // The server's own words for each index (its schema named, its operator class, its
            // NULL order).
            let found = try test.indexDefinitions("User")
            #expect(found.keys.sorted() == ["index_User_city_age", "unique_User_email"])
            #expect(found["unique_User_email"]?.hasPrefix(#"CREATE UNIQUE INDEX "unique_User_email" ON "#) == true, "\(found)")
            #expect(found["unique_User_email"]?.contains("(email") == true, "\(found)")
            #expect(found["index_User_city_age"]?.hasPrefix(#"CREATE INDEX "index_User_city_age" ON "#) == true, "\(found)")
            #expect(found["index_User_city_age"]?.contains("(city") == true, "\(found)")
            #expect(found["index_User_city_age"]?.contains(", age") == true, "\(found)")
        }
    }

    @Test(arguments: Backend.available) func anIndexDeclaredLaterIsAdded(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try Item(id: 1, price: 2).save(in: test.store)
        #expect(try indexes(test, "Items").isEmpty)
        try IndexedItem(id: 2, price: 3).save(in: try test.later())
        #expect(try indexes(test, "Items").keys.sorted() == ["index_Items_price"])
        // SQLite's planner is asked; a server's planner scans a table this small whatever its indexes.
        if backend == .sqlite {
            let plan = try test.rawRows("EXPLAIN QUERY PLAN SELECT * FROM Items WHERE price > 2")
            #expect(plan.contains { $0.contains { $0.description.contains("index_Items_price") } })
        }
    }

    @Test(arguments: Backend.available) func aUniqueIndexMakesSaveDedupeOnItKeepingTheStoredKey(_ backend: Backend) throws {
        let test = try TestStore(backend)
        #expect(try User(id: "u1", email: "a@x", city: "Oslo").save(in: test.store) == .inserted)
        #expect(try User(id: "u2", email: "a@x", age: 30).save(in: test.store) == .updated)
        #expect(try User.findAll(in: test.store) == [User(id: "u1", email: "a@x", city: "Oslo", age: 30)])
        // Records without a value for the unique property never match each other.
        try User(id: "u3").save(in: test.store)
        try User(id: "u4").save(in: test.store)
        #expect(try User.count(in: test.store) == 3)
    }

    @Test(arguments: Backend.available) func aUniqueIndexDedupesWithinAndAcrossABatch(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try User(id: "stored", email: "s@x").save(in: test.store)
        let result = try User.save(
            [
                User(id: "n1", email: "s@x", city: "A"), User(id: "n2", email: "new@x"), User(id: "n3", email: "new@x", age: 5),
            ], in: test.store)
        #expect(result == BatchSaveOutcome(inserted: 1, updated: 2))
        #expect(
            try User.findAll(in: test.store) == [
                User(id: "n2", email: "new@x", age: 5), User(id: "stored", email: "s@x", city: "A"),
            ])
    }

    /// On a server an upsert has one conflict target (the key), so its statement takes the
    /// stored record's key when the model's unique values find one: inside the caller's
    /// transaction too, in every form; a clash while updating the record with the model's own
    /// key is refused, writing nothing.
    @Test(arguments: Backend.available)
    func aUniqueIndexMergesInEveryFormAndInsideATransactionAndAKeyedClashIsRefused(_ backend: Backend) async throws {
        let test = try TestStore(backend)
        let store = test.store
        try Self.mergeSynchronously(store)
        #expect(try await User(id: "async", email: "t@x", age: 7).save(in: store) == .updated)
        let viaCompletion: Result<SaveOutcome, ModelStoreError> = await withCheckedContinuation { continuation in
            User(id: "completion", email: "t@x", city: "Rome").save(in: store) { continuation.resume(returning: $0) }
        }
        #expect(try viaCompletion.get() == .updated)
        #expect(try await User.findAll(in: store) == [User(id: "other", email: "o@x"), User(id: "t1", email: "t@x", city: "Rome", age: 7)])
    }

    /// `saved()` returns the stored record: on a server its upsert merged by the key alone and
    /// a unique-index clash was a constraint violation (found by review).
    @Test(arguments: Backend.available) func savedMergesIntoTheRecordAUniqueIndexFinds(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try User(id: "u1", email: "a@x", city: "Oslo").save(in: test.store)
        let stored = try User(id: "u2", email: "a@x", age: 30).saved(in: test.store)
        #expect(stored == User(id: "u1", email: "a@x", city: "Oslo", age: 30))
        #expect(try User.count(in: test.store) == 1)
        // A record with the model's own key wins over one its unique values find.
        try User(id: "u3", email: "c@x").save(in: test.store)
        #expect(try User(id: "u3", city: "Rome").saved(in: test.store) == User(id: "u3", email: "c@x", city: "Rome"))
    }

    private static func mergeSynchronously(_ store: ModelStore) throws {
        try User(id: "t1", email: "t@x", city: "Oslo").save(in: store)
        try User(id: "other", email: "o@x").save(in: store)
        let outcomes = try store.transaction {
            let merged = try User(id: "t2", email: "t@x", age: 3).save(in: store)
            let inserted = try User(id: "t3", email: "n@x").save(in: store)
            // A failed save caught inside the block leaves the rest of it to commit.
            let refused = (try? User(id: "other", email: "t@x").save(in: store)) == nil
            return (merged, inserted, refused)
        }
        #expect(outcomes.0 == .updated && outcomes.1 == .inserted && outcomes.2)
        #expect(try User.find(key: "other", in: store)?.email == "o@x")
        #expect(try User.find(key: "t1", in: store) == User(id: "t1", email: "t@x", city: "Oslo", age: 3))
        #expect(try User.exists(key: "t2", in: store) == false)
        try User.delete(key: "t3", in: store)
    }

    @Test(arguments: Backend.available) func insertRefusesAModelWhoseUniqueValuesAreTaken(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try User(id: "u1", email: "a@x").save(in: test.store)
        let error = try #require(throws: ModelStoreError.self) { try User(id: "u2", email: "a@x").insert(in: test.store) }
        #expect(error.code == .alreadyExists)
        #expect(try User.count(in: test.store) == 1)
    }

    @Test(arguments: Backend.available) func aUniqueIndexOverDuplicatedStoredValuesFailsClearly(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try Item.save([Item(id: 1, price: 2), Item(id: 2, price: 2)], in: test.store)
        let later = try test.later()
        let error = try #require(throws: ModelStoreError.self) { try UniqueItem(id: 3, price: 4).save(in: later) }
        #expect(error.code == .constraintViolation)
        #expect(error.model == "UniqueItem")
        #expect(error.message.contains("share values"))
        #expect(try Item.count(in: test.store) == 2)
    }

    @Test(arguments: Backend.available) func anIndexOnAMissingPropertyIsAModelError(_ backend: Backend) throws {
        let inline1 = try TestStore(backend)
        struct Broken: StoredModel {
            var id: Int
            static let primaryKey = ["id"]
            static let indexes: [TableIndex<Broken>] = [.on(columns: ["nope"])]
        }
        let error = try #require(throws: ModelStoreError.self) { try Broken(id: 1).save(in: inline1.store) }
        #expect(error.code == .invalidModel)
        #expect(error.column == "nope")
    }
}
