import Foundation
import Testing
@testable import ModelStore

@Suite("Coverage: named conditions on columns named by string, and values a condition cannot use")
struct ColumnNamedConditionsTests {
    private func seeded(_ backend: Backend) throws -> TestStore {
        let test = try TestStore(backend)
        _ = try Snack.save(
            [
                Snack(snackId: 1, name: "Pocky", price: 1.0),
                Snack(snackId: 2, name: "KitKat", price: 2.5),
                Snack(snackId: 3, name: "pocky stick"),
                Snack(snackId: 4, name: "100%_bar", price: 5),
            ], in: test.store)
        return test
    }

    private func ids(_ condition: Condition<Snack>, _ test: TestStore) throws -> [Int64] {
        try Snack.findAll(where: condition, in: test.store).map(\.snackId)
    }

    @Test(arguments: Backend.available) func betweenByColumnNameIncludesBothEndsAndMatchesTheKeyPathForm(_ backend: Backend) throws {
        let test = try seeded(backend)
        #expect(try ids(.between(Column("price"), 1.0, 2.5), test) == [1, 2])
        #expect(try ids(.between(Column("price"), 1.0, 2.5), test) == ids(.between(\.price, 1.0, 2.5), test))
        #expect(try ids(.between(Column("snackId"), 2, 3), test) == [2, 3])
    }

    @Test(arguments: Backend.available) func nullTestsByColumnNameMatchTheKeyPathForms(_ backend: Backend) throws {
        let test = try seeded(backend)
        #expect(try ids(.isNull(Column("price")), test) == [3])
        #expect(try ids(.isNotNull(Column("price")), test) == [1, 2, 4])
        #expect(try ids(.isNull(Column("price")), test) == ids(.isNull(\.price), test))
        #expect(try ids(.isNotNull(Column("price")), test) == ids(.isNotNull(\.price), test))
    }

    @Test(arguments: Backend.available) func textMatchingByColumnNameIsCaseSensitiveUnlessAsked(_ backend: Backend) throws {
        let test = try seeded(backend)
        #expect(try ids(.contains(Column("name"), "ock"), test) == [1, 3])
        #expect(try ids(.contains(Column("name"), "OCK"), test) == [])
        #expect(try ids(.contains(Column("name"), "OCK", caseInsensitive: true), test) == [1, 3])
        #expect(try ids(.hasPrefix(Column("name"), "Kit"), test) == [2])
        #expect(try ids(.hasPrefix(Column("name"), "kit"), test) == [])
        #expect(try ids(.hasPrefix(Column("name"), "kit", caseInsensitive: true), test) == [2])
        #expect(try ids(.hasSuffix(Column("name"), "Kat"), test) == [2])
        #expect(try ids(.hasSuffix(Column("name"), "STICK"), test) == [])
        #expect(try ids(.hasSuffix(Column("name"), "STICK", caseInsensitive: true), test) == [3])
    }

    @Test(arguments: Backend.available) func containsByColumnNameTreatsPercentAndUnderscoreAsPlainCharacters(_ backend: Backend) throws {
        let test = try seeded(backend)
        #expect(try ids(.contains(Column("name"), "%_"), test) == [4])
        #expect(try ids(.hasPrefix(Column("name"), "_"), test) == [])
        #expect(try ids(.contains(Column("name"), "%_"), test) == ids(.contains(\.name, "%_"), test))
    }

    @Test(arguments: Backend.available) func likeByColumnNameUsesWildcardsAndIsCaseInsensitiveByDefault(_ backend: Backend) throws {
        let test = try seeded(backend)
        #expect(try ids(.like(Column("name"), "p_cky%"), test) == [1, 3])
        #expect(try ids(.like(Column("name"), "p_cky%", caseInsensitive: false), test) == [3])
        #expect(try ids(.like(Column("name"), "%k%t"), test) == [2])
        #expect(try ids(.like(Column("name"), "p_cky%"), test) == ids(.like(\.name, "p_cky%"), test))
    }

    @Test(arguments: Backend.available) func comparisonsOnAColumnNamedByStringTreatNullAsTheKeyPathFormsDo(_ backend: Backend) throws {
        let test = try seeded(backend)
        // `!=` matches NULL as Swift's `!=` would; `<` and `<=` never match it.
        #expect(try ids(Column("price") != 2.5, test) == [1, 3, 4])
        #expect(try ids(Column("price") < 2.5, test) == [1])
        #expect(try ids(Column("price") <= 2.5, test) == [1, 2])
        #expect(try ids(Column("price") != 2.5, test) == ids(\.price != 2.5, test))
        #expect(try ids(Column("price") < 2.5, test) == ids(\.price < 2.5, test))
        #expect(try ids(Column("price") <= 2.5, test) == ids(\.price <= 2.5, test))
        #expect(try ids(Column("name") < "P", test) == [2, 4])  // "100%_bar" and "KitKat", in key order
    }

    @Test(arguments: Backend.available) func aColumnNameTheModelDoesNotStoreIsAnInvalidQuery(_ backend: Backend) throws {
        let test = try seeded(backend)
        let error = try #require(throws: ModelStoreError.self) { try ids(.hasPrefix(Column("flavour"), "x"), test) }
        #expect(error.code == .invalidQuery)
        #expect(error.column == "flavour")
    }

    @Test(arguments: Backend.available) func aNaNInAnInListIsAnInvalidQueryNamingTheColumnAndNothingIsDeleted(_ backend: Backend) throws {
        let test = try seeded(backend)
        let find = try #require(throws: ModelStoreError.self) { try ids(.in(\.price, [1.0, .nan]), test) }
        #expect(find.code == .invalidQuery)
        #expect(find.model == "Snack")
        #expect(find.column == "price")
        let delete = try #require(throws: ModelStoreError.self) {
            try Snack.deleteAll(where: .notIn(\.price, [Double.nan]), in: test.store)
        }
        #expect(delete.code == .invalidQuery)
        #expect(try Snack.count(in: test.store) == 4)
    }

    @Test(arguments: Backend.available) func anUnsignedValueBeyondInt64InAColumnInListIsAnInvalidQuery(_ backend: Backend) throws {
        let test = try seeded(backend)
        let error = try #require(throws: ModelStoreError.self) { try ids(.in(Column("snackId"), [1, UInt64.max]), test) }
        #expect(error.code == .invalidQuery)
        #expect(error.model == "Snack")
        #expect(error.column == "snackId")
        #expect(throws: ModelStoreError.self) { try ids(.notIn(Column("snackId"), [UInt64.max]), test) }
    }

    @Test(arguments: Backend.available) func aNaNBoundOfARangeIsAnInvalidQueryInBothForms(_ backend: Backend) throws {
        let test = try seeded(backend)
        let keyPath = try #require(throws: ModelStoreError.self) { try ids(.between(\.price, .nan, 2.0), test) }
        #expect(keyPath.code == .invalidQuery)
        #expect(keyPath.column == "price")
        let named = try #require(throws: ModelStoreError.self) { try ids(.between(Column("price"), 0.0, Double.nan), test) }
        #expect(named.code == .invalidQuery)
        #expect(named.column == "price")
        let updated = try #require(throws: ModelStoreError.self) {
            try Snack.updateAll(where: .between(Column("price"), Double.nan, 9.0), set: [.set(\.name, to: "gone")], in: test.store)
        }
        #expect(updated.code == .invalidQuery)
        #expect(try Snack.count(where: \.name == "gone", in: test.store) == 0)
    }
}
