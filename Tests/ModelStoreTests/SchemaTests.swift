import Foundation
import Testing
@testable import ModelStore

/// Versions of one model, sharing a table, for schema evolution: each version is used in a
/// store of its own on one file (one store refuses two models of one table).
private struct PetV1: StoredModel {
    var id: Int
    var name: String
    var legacy: String?
    static let primaryKey = ["id"]
    static let tableName = "Pet"
}

private struct PetV2: StoredModel, Equatable {
    var id: Int
    var name: String
    var nickname: String?
    var age: Int?
    static let primaryKey = ["id"]
    static let tableName = "Pet"
}

private struct PetV3: StoredModel {
    var id: Int
    var name: String
    var weight: Double
    static let primaryKey = ["id"]
    static let tableName = "Pet"
}

private struct PetWithOtherKey: StoredModel {
    var id: Int
    var name: String
    static let primaryKey = ["name"]
    static let tableName = "Pet"
}

/// Coding keys that differ from the property names, as for a snake_case table.
private struct Account: StoredModel, Equatable {
    var id: Int
    var displayName: String?
    var createdAt: Date
    var isActive: Bool
    var tier: Size
    @Related var owner: Coach?
    enum CodingKeys: String, CodingKey {
        case id = "account_id"
        case displayName = "display_name"
        case createdAt = "created_at"
        case isActive = "is_active"
        case tier = "tier_level"
        case owner = "owned_by"
    }
    static let primaryKey = ["id"]
    static let indexes: [TableIndex<Account>] = [.on(\.createdAt)]
    static let relationships: [Relationship<Account>] = [.toOne(\.owner).loading(.eager)]
}

@Suite("Schema from the model")
struct SchemaTests {
    @Test(arguments: Backend.available) func keyPathsReachColumnsNamedByCustomCodingKeys(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let day = Date(timeIntervalSinceReferenceDate: 86_400)
        var first = Account(id: 1, displayName: "Ann", createdAt: day, isActive: true, tier: .large)
        first.owner = Coach(id: 9, name: "Dee")
        try first.save(in: test.store)
        try Account(id: 2, displayName: "Bo", createdAt: day.addingTimeInterval(60), isActive: false, tier: .small).save(in: test.store)

        #expect(
            try tableInfo(test, "Account").map(\.name) == [
                "account_id", "display_name", "created_at", "is_active", "tier_level", "owned_by_id",
            ])
        #expect(try tableInfo(test, "Account").first?.pk == 1)
        #expect(try Account.findAll(where: \.isActive == true, in: test.store).map(\.id) == [1])
        #expect(try Account.all().order(.descending(\.createdAt)).findAll(in: test.store).map(\.id) == [2, 1])
        #expect(try Account.findAll(where: \.tier == Size.small, in: test.store).map(\.id) == [2])
        #expect(try Account.all().max(\.createdAt, in: test.store) == day.addingTimeInterval(60))
        #expect(try Account.find(key: 1, in: test.store)?.owner?.name == "Dee")
        try Account(id: 1, displayName: nil, createdAt: day, isActive: true, tier: .large).save(clearing: [\.displayName], in: test.store)
        #expect(try Account.find(key: 1, in: test.store)?.displayName == nil)
        #expect(try test.indexDefinitions("Account").values.filter { $0.contains("created_at") }.count == 1)
    }

    private func tableInfo(_ test: TestStore, _ table: String) throws -> [(name: String, type: String, notNull: Bool, pk: Int64)] {
        try test.tableColumns(table)
    }

    @Test(arguments: Backend.available) func theTableIsDerivedFromTheModelOnFirstUse(_ backend: Backend) throws {
        let test = try TestStore(backend)
        #expect(try tableInfo(test, "Snack").isEmpty)
        // The first use in a write creates the table (a read alone sees no table, no records).
        try test.store.transaction { _ = try Snack.count(in: test.store) }
        let columns = try tableInfo(test, "Snack")
        #expect(columns.map(\.name) == ["snackId", "name", "taste", "size", "price", "tags", "createdAt"])
        #expect(
            columns.map(\.type)
                == (backend == .sqlite
                    ? ["INTEGER", "TEXT", "TEXT", "REAL", "REAL", "TEXT", "REAL"]
                    : ["bigint", "text", "text", "double precision", "double precision", "text", "double precision"]))
        #expect(columns.map(\.notNull) == [true, false, false, false, false, true, false])
        #expect(columns.map(\.pk) == [1, 0, 0, 0, 0, 0, 0])
    }

    // SQLite-only: reads or sets up the stored rows with raw SQLite SQL (unquoted names, pragma_table_info, typeof, triggers, SQLite column types).
    @Test func aSingleIntegerKeyIsTheRowid() throws {
        let test = try TestStore()
        try Snack(snackId: 42).save(in: test.store)
        #expect(try test.rawRows("SELECT rowid FROM Snack") == [[.integer(42)]])
    }

    @Test(arguments: Backend.available) func aCompositeKeyKeepsItsDeclaredOrder(_ backend: Backend) throws {
        let test = try TestStore(backend)
        // The first use in a write creates the table (a read alone sees no table, no records).
        try test.store.transaction { _ = try Friendship.count(in: test.store) }
        let keyed = try tableInfo(test, "Friendship").filter { $0.pk > 0 }.sorted { $0.pk < $1.pk }.map(\.name)
        #expect(keyed == ["userId", "friendId"])
    }

    @Test(arguments: Backend.available) func theTableIsPreparedOnceNotOnEveryCall(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Snack(snackId: 1).save(in: test.store)
        test.resetSQL()
        try Snack(snackId: 2).save(in: test.store)
        _ = try Snack.find(key: 1, in: test.store)
        _ = try Snack.count(in: test.store)
        #expect(!test.sql.contains { $0.contains("table_info") || $0.contains("CREATE") })
    }

    @Test(arguments: Backend.available) func aColumnTheModelGainsIsAddedAndOldRecordsReadItAsNil(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try PetV1(id: 1, name: "Rex", legacy: "old").save(in: test.store)
        let later = try test.later()
        try PetV2(id: 2, name: "Tom", nickname: "T", age: 3).save(in: later)
        #expect(try tableInfo(test, "Pet").map(\.name) == ["id", "name", "legacy", "nickname", "age"])
        #expect(try PetV2.find(key: 1, in: later) == PetV2(id: 1, name: "Rex"))
        #expect(try PetV2.find(key: 2, in: later) == PetV2(id: 2, name: "Tom", nickname: "T", age: 3))
    }

    @Test(arguments: Backend.available) func aColumnTheModelDroppedIsLeftWithItsValues(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try PetV1(id: 1, name: "Rex", legacy: "keep me").save(in: test.store)
        try PetV2(id: 1, name: "Rex II").save(in: try test.later())
        #expect(try test.rawRows(#"SELECT name, legacy FROM "Pet""#) == [[.text("Rex II"), .text("keep me")]])
    }

    @Test(arguments: Backend.available) func aNonOptionalColumnAddedLaterExplainsOldRecordsWithoutAValue(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try PetV1(id: 1, name: "Rex").save(in: test.store)
        let later = try test.later()
        try PetV3(id: 2, name: "Fat", weight: 9).save(in: later)
        #expect(try PetV3.find(key: 2, in: later)?.weight == 9)
        let error = try #require(throws: ModelStoreError.self) { try PetV3.find(key: 1, in: later) }
        #expect(error.code == .decodingFailed)
        #expect(error.model == "PetV3")
        #expect(error.column == "weight")
        #expect(error.key == "id = 1")
        #expect(error.suggestion?.contains("Optional") == true)
    }

    @Test(arguments: Backend.available) func aStoredTableWithAnotherPrimaryKeyIsASchemaMismatch(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try PetV1(id: 1, name: "Rex").save(in: test.store)
        let later = try test.later()
        let error = try #require(throws: ModelStoreError.self) { try PetWithOtherKey(id: 1, name: "Rex").save(in: later) }
        #expect(error.code == .schemaMismatch)
        #expect(error.model == "PetWithOtherKey")
        #expect(error.message.contains("(id)"))
        #expect(error.message.contains("(name)"))
    }

    @Test(arguments: Backend.available) func tableCreationRollsBackWithTheFailedOperationAndHappensAgainLater(_ backend: Backend) throws {
        let test = try TestStore(backend)
        #expect(throws: ModelStoreError.self) { try Snack(snackId: 1, size: .nan).save(in: test.store) }
        #expect(try tableInfo(test, "Snack").isEmpty)
        try Snack(snackId: 1, size: 1).save(in: test.store)
        #expect(try Snack.find(key: 1, in: test.store)?.size == 1)
    }

    // MARK: Declarations that cannot work

    @Test(arguments: Backend.available) func anEmptyPrimaryKeyIsRejected(_ backend: Backend) throws {
        let inline1 = try TestStore(backend)
        struct NoKey: StoredModel { var id: Int; static let primaryKey: [String] = [] }
        let error = try #require(throws: ModelStoreError.self) { try NoKey(id: 1).save(in: inline1.store) }
        #expect(error.code == .invalidModel)
        #expect(error.model == "NoKey")
        #expect(error.message.contains("primaryKey is empty"))
    }

    @Test(arguments: Backend.available) func aPrimaryKeyNamingAMissingPropertyIsRejectedListingTheProperties(_ backend: Backend) throws {
        let inline1 = try TestStore(backend)
        struct Typo: StoredModel { var snackId: Int; var name: String?; static let primaryKey = ["snakId"] }
        let error = try #require(throws: ModelStoreError.self) { try Typo.find(key: 1, in: inline1.store) }
        #expect(error.code == .invalidModel)
        #expect(error.column == "snakId")
        #expect(error.message.contains("snackId, name"))
    }

    @Test(arguments: Backend.available) func anOptionalOrJSONKeyPropertyIsRejected(_ backend: Backend) throws {
        let inline1 = try TestStore(backend)
        // Only one optional integer key is accepted: SQLite assigns it (AssignedKeyTests).
        struct OptionalKey: StoredModel { var id: String?; static let primaryKey = ["id"] }
        struct ArrayKey: StoredModel { var ids: [Int]; static let primaryKey = ["ids"] }
        struct Twice: StoredModel { var id: Int; static let primaryKey = ["id", "id"] }
        let store = inline1.store
        #expect(throws: ModelStoreError.self) { try OptionalKey(id: "1").save(in: store) }
        #expect(throws: ModelStoreError.self) { try ArrayKey(ids: [1]).save(in: store) }
        #expect(throws: ModelStoreError.self) { try Twice(id: 1).save(in: store) }
    }

    @Test(arguments: Backend.available) func propertiesWhoseNamesDifferOnlyInCaseAreRejected(_ backend: Backend) throws {
        let inline1 = try TestStore(backend)
        struct Clash: StoredModel {
            var id: Int
            var name: String?
            var Name: String?
            static let primaryKey = ["id"]
        }
        let error = try #require(throws: ModelStoreError.self) { try Clash(id: 1).save(in: inline1.store) }
        #expect(error.code == .invalidModel)
        #expect(error.message.contains("same column name"))
    }

    @Test(arguments: Backend.available) func aReservedTableNameIsRejected(_ backend: Backend) throws {
        struct Internal: StoredModel { var id: Int; static let primaryKey = ["id"]; static let tableName = "sqlite_stuff" }
        let test = try TestStore(backend)
        let error = try #require(throws: ModelStoreError.self) { try Internal(id: 1).save(in: test.store) }
        #expect(error.code == .invalidModel)
    }

    @Test(arguments: Backend.available) func aModelDecodingANestedContainerIsRejected(_ backend: Backend) throws {
        let inline1 = try TestStore(backend)
        struct Nested: StoredModel {
            var id: Int
            var city: String
            static let primaryKey = ["id"]
            enum CodingKeys: String, CodingKey { case id, address }
            enum AddressKeys: String, CodingKey { case city }
            init(id: Int, city: String) { self.id = id; self.city = city }
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                id = try container.decode(Int.self, forKey: .id)
                city = try container.nestedContainer(keyedBy: AddressKeys.self, forKey: .address).decode(String.self, forKey: .city)
            }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(id, forKey: .id)
                var address = container.nestedContainer(keyedBy: AddressKeys.self, forKey: .address)
                try address.encode(city, forKey: .city)
            }
        }
        let error = try #require(throws: ModelStoreError.self) { try Nested(id: 1, city: "x").save(in: inline1.store) }
        #expect(error.code == .invalidModel)
        #expect(error.column == "address")
    }
}
