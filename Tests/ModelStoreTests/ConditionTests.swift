import Foundation
import Testing
@testable import ModelStore

@Suite("Conditions")
struct ConditionTests {
    /// Snacks 1…10: price = id, taste alternates, name "snack-<id>", size nil for odd ids.
    private func seeded(_ backend: Backend) throws -> TestStore {
        let test = try TestStore(backend)
        var snacks: [Snack] = []
        for id in 1...10 {
            let even = id % 2 == 0
            snacks.append(
                Snack(
                    snackId: Int64(id), name: "snack-\(id)", taste: even ? "sweet" : "sour",
                    size: even ? Double(id) : nil, price: Double(id)))
        }
        try Snack.save(snacks, in: test.store)
        return test
    }

    private func ids(_ predicate: Condition<Snack>, _ test: TestStore) throws -> [Int64] {
        try Snack.findAll(where: predicate, in: test.store).map(\.snackId)
    }

    @Test(arguments: Backend.available) func comparisonOperatorsSelectTheRightRecords(_ backend: Backend) throws {
        let test = try seeded(backend)
        #expect(try ids(\.price == 3, test) == [3])
        #expect(try ids(\.price != 3, test) == [1, 2, 4, 5, 6, 7, 8, 9, 10])
        #expect(try ids(\.price < 3, test) == [1, 2])
        #expect(try ids(\.price <= 3, test) == [1, 2, 3])
        #expect(try ids(\.price > 8, test) == [9, 10])
        #expect(try ids(\.price >= 8, test) == [8, 9, 10])
        #expect(try ids(\.snackId == 4, test) == [4])
    }

    @Test(arguments: Backend.available) func comparingWithNilTestsForNullAndNotEqualsIncludesNull(_ backend: Backend) throws {
        let test = try seeded(backend)
        #expect(try ids(\.size == nil, test) == [1, 3, 5, 7, 9])
        #expect(try ids(\.size != nil, test) == [2, 4, 6, 8, 10])
        #expect(try ids(.isNull(\.size), test) == [1, 3, 5, 7, 9])
        #expect(try ids(.isNotNull(\.size), test) == [2, 4, 6, 8, 10])
        // Swift's meaning of !=: a record without a size differs from 4.
        #expect(try ids(\.size != 4, test) == [1, 2, 3, 5, 6, 7, 8, 9, 10])
        #expect(try ids(\.size < 5, test) == [2, 4])
    }

    @Test(arguments: Backend.available) func membershipAndRanges(_ backend: Backend) throws {
        let test = try seeded(backend)
        #expect(try ids(.in(\.snackId, [2, 4, 99]), test) == [2, 4])
        #expect(try ids(.notIn(\.snackId, [1, 2, 3, 4, 5, 6, 7]), test) == [8, 9, 10])
        #expect(try ids(.in(\.snackId, [Int64]()), test) == [])
        #expect(try ids(.notIn(\.snackId, [Int64]()), test).count == 10)
        #expect(try ids(.between(\.price, 3, 5), test) == [3, 4, 5])
        #expect(try ids(.in(\.taste, ["sweet"]) && .between(\.price, 1, 4), test) == [2, 4])
    }

    @Test(arguments: Backend.available) func longListsBindAsOneParameter(_ backend: Backend) throws {
        let test = try seeded(backend)
        let many = Array(Int64(5)...Int64(5_004))
        #expect(try ids(.in(\.snackId, many), test) == [5, 6, 7, 8, 9, 10])
        #expect(try ids(.notIn(\.snackId, many), test) == [1, 2, 3, 4])
        let prices = (0..<2_000).map { Double($0) + 0.5 } + [3.0]
        #expect(try ids(.in(\.price, prices), test) == [3])
        let names = (0..<2_000).map { "snack-\($0)" }
        #expect(try ids(.in(\.name, names), test).count == 10)
        if backend == .sqlite {
            // SQLite's one parameter is a JSON list read by json_each.
            #expect(test.sql.contains { $0.contains("json_each") })
        }
    }

    @Test(arguments: Backend.available) func logicalOperatorsCombine(_ backend: Backend) throws {
        let test = try seeded(backend)
        #expect(try ids(\.taste == "sweet" && \.price > 5, test) == [6, 8, 10])
        #expect(try ids(\.price < 2 || \.price > 9, test) == [1, 10])
        #expect(try ids(!(\.taste == "sweet"), test) == [1, 3, 5, 7, 9])
        #expect(try ids((\.price < 3 || \.price > 8) && !(\.taste == "sour"), test) == [2, 10])
        #expect(try ids(.all, test).count == 10)
        #expect(try ids(.none, test) == [])
    }

    @Test(arguments: Backend.available) func textMatching(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let all = ["Pocky", "pocky stick", "KitKat", "Kit_Kat", "100% cocoa", "it's", "x"]
        try Snack.save(all.enumerated().map { Snack(snackId: Int64($0.offset), name: $0.element) }, in: test.store)
        func names(_ predicate: Condition<Snack>) throws -> [String] {
            try Snack.findAll(where: predicate, in: test.store).compactMap(\.name)
        }
        #expect(try names(.contains(\.name, "ock")) == ["Pocky", "pocky stick"])
        #expect(try names(.contains(\.name, "OCK")) == [])
        #expect(try names(.contains(\.name, "OCK", caseInsensitive: true)) == ["Pocky", "pocky stick"])
        #expect(try names(.hasPrefix(\.name, "Kit")) == ["KitKat", "Kit_Kat"])
        #expect(try names(.hasPrefix(\.name, "kit", caseInsensitive: true)) == ["KitKat", "Kit_Kat"])
        #expect(try names(.hasSuffix(\.name, "Kat")) == ["KitKat", "Kit_Kat"])
        #expect(try names(.hasSuffix(\.name, "STICK", caseInsensitive: true)) == ["pocky stick"])
        #expect(try names(.like(\.name, "p%")) == ["Pocky", "pocky stick"])
        #expect(try names(.like(\.name, "p%", caseInsensitive: false)) == ["pocky stick"])
        #expect(try names(.like(\.name, "Kit_at")) == ["KitKat"])
        #expect(try names(.hasPrefix(\.name, "")) == all)
    }

    @Test(arguments: Backend.available) func quotesPercentUnderscoreAndKeywordsInValuesMatchLiterally(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let hostile = ["it's", "100%", "a_b", "a%b", "'; DROP TABLE Snack; --", "SELECT * FROM Snack", "\\", "\"q\""]
        try Snack.save(
            hostile.enumerated().map { Snack(snackId: Int64($0.offset), name: $0.element) } + [
                Snack(snackId: 100, name: "axb"), Snack(snackId: 101, name: "100 percent"), Snack(snackId: 102, name: "its"),
            ], in: test.store)
        for (offset, value) in hostile.enumerated() {
            #expect(try Snack.findAll(where: \.name == value, in: test.store).map(\.snackId) == [Int64(offset)], "\(value)")
            #expect(try Snack.findAll(where: .contains(\.name, value), in: test.store).map(\.snackId).contains(Int64(offset)))
            #expect(
                try Snack.findAll(where: .contains(\.name, value, caseInsensitive: true), in: test.store).map(\.snackId).contains(
                    Int64(offset)))
        }
        #expect(try Snack.findAll(where: .contains(\.name, "_"), in: test.store).map(\.snackId) == [2])
        #expect(try Snack.findAll(where: .contains(\.name, "%", caseInsensitive: true), in: test.store).map(\.snackId) == [1, 3])
        #expect(try Snack.findAll(where: .hasPrefix(\.name, "a_", caseInsensitive: true), in: test.store).map(\.snackId) == [2])
        #expect(try Snack.count(in: test.store) == hostile.count + 3)
    }

    @Test(arguments: Backend.available) func valuesAreBoundNeverSplicedIntoSQL(_ backend: Backend) throws {
        let test = try seeded(backend)
        test.resetSQL()
        _ = try Snack.findAll(where: \.name == "secret-value" || .contains(\.taste, "other-secret"), in: test.store)
        #expect(!test.sql.joined().contains("secret"))
    }

    @Test(arguments: Backend.available) func aPredicateOnAPropertyTheModelLacksFailsBeforeAnySQLRuns(_ backend: Backend) throws {
        let test = try seeded(backend)
        test.resetSQL()
        let error = try #require(throws: ModelStoreError.self) { try Snack.findAll(where: Column("prise") > 2, in: test.store) }
        #expect(error.code == .invalidQuery)
        #expect(error.model == "Snack")
        #expect(error.column == "prise")
        #expect(error.message.contains("Snack has no stored property 'prise'"))
        #expect(test.dataSQL.isEmpty)
        let nested = try #require(throws: ModelStoreError.self) { try Snack.count(where: \.name?.count == 3, in: test.store) }
        #expect(nested.code == .invalidQuery)
    }

    @Test(arguments: Backend.available) func aValueThatCannotBeStoredFailsAsAnInvalidQuery(_ backend: Backend) throws {
        let test = try seeded(backend)
        let error = try #require(throws: ModelStoreError.self) { try Snack.findAll(where: \.price > .nan, in: test.store) }
        #expect(error.code == .invalidQuery)
        #expect(error.column == "price")
    }

    @Test(arguments: Backend.available) func columnsByNameAndTheSQLEscapeHatch(_ backend: Backend) throws {
        let test = try seeded(backend)
        #expect(try ids(Column("taste") == "sweet" && Column("price") >= 8, test) == [8, 10])
        #expect(try ids(.in(Column("snackId"), [1, 3]), test) == [1, 3])
        #expect(try ids(.sql("\"price\" * 2 > ? AND \"taste\" = ?", [15, "sour"]), test) == [9])
    }

    @Test(arguments: Backend.available) func datesEnumsAndUUIDsCompareAsStored(_ backend: Backend) throws {
        struct Event: StoredModel {
            var id: UUID
            var at: Date
            var taste: Taste
            static let primaryKey = ["id"]
        }
        let test = try TestStore(backend)
        let base = Date(timeIntervalSinceReferenceDate: 700_000_000)
        let events = (0..<5).map { Event(id: UUID(), at: base.addingTimeInterval(Double($0) * 60), taste: $0 % 2 == 0 ? .sweet : .salty) }
        try Event.save(events, in: test.store)
        #expect(try Event.count(where: \.at > base.addingTimeInterval(90), in: test.store) == 3)
        #expect(try Event.count(where: \.taste == Taste.salty, in: test.store) == 2)
        #expect(try Event.findFirst(where: \.id == events[3].id, in: test.store)?.at == events[3].at)
    }
}

extension Taste: SQLValueConvertible {}
