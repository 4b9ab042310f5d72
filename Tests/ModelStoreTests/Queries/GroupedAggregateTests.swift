import Foundation
import Testing
@testable import ModelStore

private struct TasteStats: Decodable, Sendable, Equatable {
    var taste: String?
    var count: Int
    var total: Double?
    var cheapest: Double?
}

private struct TasteCount: Decodable, Sendable, Equatable {
    var taste: String?
    var count: Int
}

private struct TasteSizeCount: Decodable, Sendable, Equatable {
    var taste: String?
    var size: Double?
    var count: Int
}

/// Group by one or more properties with count, sum, average, min and max; HAVING, ordered
/// and limited; one statement; typed rows.
@Suite struct GroupedAggregateTests {
    private func snacks(_ backend: Backend) throws -> TestStore {
        let test = try TestStore(backend)
        try Snack.save(
            [
                Snack(snackId: 1, name: "a", taste: "sweet", size: 1, price: 2),
                Snack(snackId: 2, name: "b", taste: "sweet", size: 1, price: 3),
                Snack(snackId: 3, name: "c", taste: "sweet", size: 2, price: nil),
                Snack(snackId: 4, name: "d", taste: "sour", size: 1, price: 1),
                Snack(snackId: 5, name: "e", taste: nil, size: 2, price: 5),
                Snack(snackId: 6, name: "f", taste: "salty", size: 1, price: nil),
            ], in: test.store)
        return test
    }

    @Test(arguments: Backend.available) func groupsByOnePropertyWithEveryAggregate(_ backend: Backend) throws {
        let test = try snacks(backend)
        test.resetSQL()
        let stats = try Snack.all().grouped(by: \.taste)
            .findAll(as: TasteStats.self, .count(), .sum(\.price, as: "total"), .min(\.price, as: "cheapest"), in: test.store)
        #expect(
            stats == [
                TasteStats(taste: nil, count: 1, total: 5, cheapest: 5),
                TasteStats(taste: "salty", count: 1, total: nil, cheapest: nil),
                TasteStats(taste: "sour", count: 1, total: 1, cheapest: 1),
                TasteStats(taste: "sweet", count: 3, total: 5, cheapest: 2),
            ])
        #expect(test.sql.filter { $0.hasPrefix("SELECT") }.count == 1)
        #expect(test.sql.contains { $0.contains("GROUP BY \"taste\"") })
        struct Averages: Decodable, Sendable { var taste: String?; var mean: Double?; var priced: Int; var dearest: Double? }
        let averages = try Snack.filter(\.taste == "sweet").grouped(by: \.taste)
            .findAll(
                as: Averages.self, .average(\.price, as: "mean"), .count(\.price, as: "priced"), .max(\.price, as: "dearest"),
                in: test.store)
        #expect(averages.count == 1)
        #expect(averages.first?.mean == 2.5)
        #expect(averages.first?.priced == 2)
        #expect(averages.first?.dearest == 3)
    }

    @Test(arguments: Backend.available) func havingOrderAndLimitSelectGroups(_ backend: Backend) throws {
        let test = try snacks(backend)
        let busy = try Snack.all().grouped(by: \.taste).having(Aggregate.count() >= 2)
            .findAll(as: TasteCount.self, .count(), in: test.store)
        #expect(busy.map(\.taste) == ["sweet"])
        let ranked = try Snack.all().grouped(by: \.taste)
            .order(.descending(Aggregate.sum(\.price, as: "total")))
            .limit(2)
            .findAll(as: TasteStats.self, .count(), .sum(\.price, as: "total"), .min(\.price, as: "cheapest"), in: test.store)
        #expect(ranked.map(\.taste) == [nil, "sweet"])
        let combined = try Snack.all().grouped(by: \.taste)
            .having(Aggregate.count() == 1 && !(Aggregate.sum(\.price, as: "total") == nil))
            .order(.descending(\.taste))
            .findAll(as: TasteCount.self, .count(), in: test.store)
        #expect(combined.map(\.taste) == ["sour", nil])
        let page2 = try Snack.all().grouped(by: \.taste).limit(2, offset: 2).findAll(as: TasteCount.self, .count(), in: test.store)
        #expect(page2.map(\.taste) == ["sour", "sweet"])
    }

    @Test(arguments: Backend.available) func groupsBySeveralProperties(_ backend: Backend) throws {
        let test = try snacks(backend)
        let counts = try Snack.all().grouped(by: \.taste, \.size).having(Aggregate.count() > 0)
            .findAll(as: TasteSizeCount.self, .count(), in: test.store)
        #expect(counts.count == 5)
        #expect(counts.first { $0.taste == "sweet" && $0.size == 1 }?.count == 2)
    }

    @Test(arguments: Backend.available) func refusesRowsAndOrderingsThatDoNotFitTheGroups(_ backend: Backend) throws {
        let test = try snacks(backend)
        test.resetSQL()
        let unknown = #expect(throws: ModelStoreError.self) {
            _ = try Snack.all().grouped(by: \.taste).findAll(as: TasteStats.self, .count(), in: test.store)
        }
        #expect(unknown?.code == .invalidQuery)
        #expect(unknown?.column == "total")
        let twice = #expect(throws: ModelStoreError.self) {
            _ = try Snack.all().grouped(by: \.taste)
                .findAll(as: TasteSizeCount.self, .count(), .count(as: "count"), in: test.store)
        }
        #expect(twice?.code == .invalidQuery)
        let ungrouped = #expect(throws: ModelStoreError.self) {
            _ = try Snack.all().grouped(by: \.taste).order(.ascending(\.price))
                .findAll(as: TasteStats.self, .count(), .sum(\.price, as: "total"), .min(\.price, as: "cheapest"), in: test.store)
        }
        #expect(ungrouped?.code == .invalidQuery)
        #expect(!test.sql.contains { $0.contains("GROUP BY") })
    }

    @Test(arguments: Backend.available) func everyCallForm(_ backend: Backend) async throws {
        let test = try snacks(backend)
        let viaAsync = try await Snack.all().grouped(by: \.taste).findAll(
            as: TasteSizeCount.self, .count(), .max(\.size, as: "size"), in: test.store)
        #expect(viaAsync.count == 4)
        let viaCompletion: [TasteSizeCount] = try await withCheckedThrowingContinuation { continuation in
            Snack.all().grouped(by: \.taste).findAll(as: TasteSizeCount.self, .count(), .max(\.size, as: "size"), in: test.store) {
                continuation.resume(with: $0.mapError { $0 as any Error })
            }
        }
        #expect(viaCompletion == viaAsync)
    }

    @Test(arguments: Backend.available) func groupsAcrossARelationshipCondition(_ backend: Backend) throws {
        let test = try TestStore(backend)
        var team = Team(id: 1, name: "Rockets")
        team.players = [Player(id: 1, name: "Ann"), Player(id: 2, name: "Ann"), Player(id: 3, name: "Bo")]
        try team.save(in: test.store)
        struct NameCount: Decodable, Sendable { var name: String?; var count: Int }
        let names = try Player.filter(.related(\.team, \.name == "Rockets")).grouped(by: \.name)
            .findAll(as: NameCount.self, .count(), in: test.store)
        #expect(names.map(\.name) == ["Ann", "Bo"])
        #expect(names.map(\.count) == [2, 1])
    }
}
