import Foundation
import Testing
@testable import ModelStore

struct ShelfItem: StoredModel, Equatable {
    var id: Int64
    var name: String?
    var price: Double?
    var aisle: Int
    static let primaryKey = ["id"]
}

/// Records identified by (account, friend) rather than by their own key.
struct Membership: StoredModel, Equatable {
    var localId: String
    var accountId: Int
    var friendId: Int
    var nickname: String?
    var score: Int?
    static let primaryKey = ["localId"]
}

@Suite("Coverage: orderings by key path and by column name, and match keys by name")
struct OrderingAndMatchKeysTests {
    /// Prices with a NULL and a tie (ids 1 and 4), names with a NULL and a tie (ids 2 and 5).
    private func shelf(_ backend: Backend) throws -> TestStore {
        let test = try TestStore(backend)
        try ShelfItem.save(
            [
                ShelfItem(id: 1, name: "b", price: 2, aisle: 1), ShelfItem(id: 2, name: "a", price: nil, aisle: 2),
                ShelfItem(id: 3, name: "c", price: 1, aisle: 1), ShelfItem(id: 4, name: nil, price: 2, aisle: 2),
                ShelfItem(id: 5, name: "a", price: 3, aisle: 1),
            ], in: test.store)
        return test
    }

    private func ids(_ query: Query<ShelfItem>, _ test: TestStore) throws -> [Int64] {
        try query.findAll(in: test.store).map(\.id)
    }

    @Test(arguments: Backend.available) func ascendingPutsNullsFirstAndBreaksTiesByKeyInEveryForm(_ backend: Backend) throws {
        let test = try shelf(backend)
        let expected: [Int64] = [2, 3, 1, 4, 5]
        #expect(try ids(ShelfItem.order(.ascending(\.price)), test) == expected)
        #expect(try ids(ShelfItem.order(.ascending(Column("price"))), test) == expected)
        #expect(try ids(ShelfItem.order(.ascending("price")), test) == expected)
    }

    @Test(arguments: Backend.available) func descendingPutsNullsLastAndStillBreaksTiesByAscendingKeyInEveryForm(_ backend: Backend) throws {
        let test = try shelf(backend)
        let expected: [Int64] = [5, 1, 4, 3, 2]
        #expect(try ids(ShelfItem.order(.descending(\.price)), test) == expected)
        #expect(try ids(ShelfItem.order(.descending(Column("price"))), test) == expected)
        #expect(try ids(ShelfItem.order(.descending("price")), test) == expected)
        #expect(try ids(ShelfItem.order(.descending(Column("name"))), test) == [3, 1, 2, 5, 4])
    }

    @Test(arguments: Backend.available) func severalOrderingsSortByEachInTurnWhateverFormNamesThem(_ backend: Backend) throws {
        let test = try shelf(backend)
        // Aisle 1 (ids 1, 3, 5) before aisle 2 (ids 2, 4); within an aisle, dearest first, NULL last.
        #expect(try ids(ShelfItem.order(.ascending(Column("aisle")), .descending(\.price)), test) == [5, 1, 3, 4, 2])
        #expect(try ids(ShelfItem.order(.ascending(\.aisle), .descending(Column("price"))), test) == [5, 1, 3, 4, 2])
        #expect(try ids(ShelfItem.order(.descending("aisle"), .ascending("name")), test) == [4, 2, 5, 1, 3])
        // A later order replaces an earlier one.
        #expect(try ids(ShelfItem.order(.descending(\.price)).order(.ascending(Column("name"))), test) == [4, 2, 5, 1, 3])
    }

    @Test(arguments: Backend.available) func orderingByTheKeyItselfDescendingReversesKeyOrder(_ backend: Backend) throws {
        let test = try shelf(backend)
        #expect(try ids(ShelfItem.order(.descending(Column("id"))), test) == [5, 4, 3, 2, 1])
        #expect(try ids(ShelfItem.order(.ascending(\.price), .descending(\.id)), test) == [2, 3, 4, 1, 5])
    }

    @Test(arguments: Backend.available) func columnOrderingsWorkWithFiltersPagesAndFirst(_ backend: Backend) throws {
        let test = try shelf(backend)
        #expect(try ShelfItem.findAll(where: \.aisle == 1, orderBy: [.descending(Column("name"))], in: test.store).map(\.id) == [3, 1, 5])
        #expect(try ShelfItem.findFirst(where: \.price != nil, orderBy: [.ascending(Column("price"))], in: test.store)?.id == 3)
        #expect(try ids(ShelfItem.order(.ascending(Column("name"))).page(1, rows: 2), test) == [5, 1])
        #expect(try ShelfItem.order(.descending(Column("price"))).values(of: \.name, in: test.store) == ["a", "b", nil, "c", "a"])
    }

    @Test(arguments: Backend.available) func columnOrderingsWorkInTheAsyncAndCompletionForms(_ backend: Backend) async throws {
        let test = try shelf(backend)
        #expect(try await ShelfItem.order(.descending(Column("price"))).findAll(in: test.store).map(\.id) == [5, 1, 4, 3, 2])
        let result: Result<ShelfItem?, ModelStoreError> = await withCheckedContinuation { continuation in
            ShelfItem.order(.descending("aisle"), .descending("price")).findFirst(in: test.store) { continuation.resume(returning: $0) }
        }
        #expect(try result.get()?.id == 4)
    }

    @Test(arguments: Backend.available) func orderingByANameTheModelDoesNotStoreIsAnInvalidQueryNamingIt(_ backend: Backend) throws {
        let test = try shelf(backend)
        for ordering in [Ordering<ShelfItem>.ascending(Column("shelfLife")), .descending("shelfLife")] {
            let error = try #require(throws: ModelStoreError.self) { try ShelfItem.order(ordering).findAll(in: test.store) }
            #expect(error.code == .invalidQuery)
            #expect(error.model == "ShelfItem")
            #expect(error.column == "shelfLife")
            #expect(error.message.contains("aisle"))
        }
        let paged = try #require(throws: ModelStoreError.self) {
            try ShelfItem.order(.ascending(\.price), .ascending("Price")).page(0, rows: 1).findAll(in: test.store)
        }
        #expect(paged.column == "Price")
    }

    // MARK: MatchKeys by name

    private func members(_ test: TestStore) throws {
        try Membership.save(
            [
                Membership(localId: "a", accountId: 1, friendId: 10, nickname: "Ann", score: 1),
                Membership(localId: "b", accountId: 1, friendId: 11, nickname: "Bob"),
                Membership(localId: "c", accountId: 2, friendId: 10, nickname: "Other account's Ann"),
            ], in: test.store)
    }

    @Test(arguments: Backend.available) func matchKeysNamedByStringFindRecordsAsKeyPathsDo(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try members(test)
        test.resetSQL()
        let result = try Membership.save(
            [
                Membership(localId: "x1", accountId: 1, friendId: 10, score: 5),
                Membership(localId: "x2", accountId: 1, friendId: 12, nickname: "Cy"),
            ], matching: MatchKeys(sharedColumns: ["accountId"], varyingColumns: ["friendId"]), in: test.store)
        #expect(result == BatchSaveOutcome(inserted: 1, updated: 1))
        #expect(test.dataSQL.filter { $0.hasPrefix("SELECT") }.count == 1)
        #expect(
            try Membership.findAll(in: test.store) == [
                Membership(localId: "a", accountId: 1, friendId: 10, nickname: "Ann", score: 5),
                Membership(localId: "b", accountId: 1, friendId: 11, nickname: "Bob"),
                Membership(localId: "c", accountId: 2, friendId: 10, nickname: "Other account's Ann"),
                Membership(localId: "x2", accountId: 1, friendId: 12, nickname: "Cy"),
            ])
    }

    @Test(arguments: Backend.available) func matchKeysNamedByStringWithoutSharedOnesMatchAsATuple(_ backend: Backend) async throws {
        let test = try TestStore(backend)
        try members(test)
        let keys = MatchKeys<Membership>(varyingColumns: ["accountId", "friendId"])
        let result = try await Membership.save(
            [Membership(localId: "y", accountId: 2, friendId: 10, score: 9), Membership(localId: "z", accountId: 2, friendId: 11)],
            matching: keys, in: test.store)
        #expect(result == BatchSaveOutcome(inserted: 1, updated: 1))
        #expect(try await Membership.find(key: "c", in: test.store)?.score == 9)
        #expect(try await Membership.find(key: "z", in: test.store)?.accountId == 2)
        #expect(try await Membership.exists(key: "y", in: test.store) == false)
    }

    @Test(
        arguments: Backend.available,
        [
            MatchKeys<Membership>(sharedColumns: ["account"], varyingColumns: ["friendId"]),
            MatchKeys<Membership>(sharedColumns: ["accountId"], varyingColumns: ["friend"]),
        ])
    func matchKeysNamingAPropertyTheModelDoesNotStoreAreAnInvalidQueryAndNothingIsWritten(_ backend: Backend, keys: MatchKeys<Membership>)
        throws
    {
        let test = try TestStore(backend)
        try members(test)
        let error = try #require(throws: ModelStoreError.self) {
            try Membership.save([Membership(localId: "n", accountId: 1, friendId: 99)], matching: keys, in: test.store)
        }
        #expect(error.code == .invalidQuery)
        #expect(error.model == "Membership")
        #expect(["account", "friend"].contains(error.column ?? ""))
        #expect(try Membership.count(in: test.store) == 3)
    }

    @Test(arguments: Backend.available) func matchKeysWithNoVaryingNameAreAnInvalidQuery(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try members(test)
        let error = try #require(throws: ModelStoreError.self) {
            try Membership.save(
                [Membership(localId: "n", accountId: 1, friendId: 10)],
                matching: MatchKeys(sharedColumns: ["accountId"], varyingColumns: []), in: test.store)
        }
        #expect(error.code == .invalidQuery)
        #expect(error.model == "Membership")
        #expect(error.message.contains("no varying property"))
        #expect(try Membership.count(in: test.store) == 3)
    }

    @Test(arguments: Backend.available) func anElementLackingANamedMatchPropertyIsRefusedThroughTheCompletionForm(_ backend: Backend)
        async throws
    {
        let test = try TestStore(backend)
        try members(test)
        let result: Result<BatchSaveOutcome, ModelStoreError> = await withCheckedContinuation { continuation in
            Membership.save(
                [Membership(localId: "n", accountId: 1, friendId: 10)], matching: MatchKeys(varyingColumns: ["nickname"]), in: test.store
            ) { continuation.resume(returning: $0) }
        }
        let error = try #require(throws: ModelStoreError.self) { try result.get() }
        #expect(error.code == .invalidQuery)
        #expect(error.column == "nickname")
        #expect(try await Membership.count(in: test.store) == 3)
    }
}
