import Foundation
import Testing
@testable import ModelStore

private struct Entry: StoredModel, Equatable {
    var id: Int64?
    var kind: String
    var amount: Double
    static let primaryKey = ["id"]
}

/// This round's calls inside transaction and read blocks: writes join a transaction and roll
/// back with it; reads work in both; writes in a read block are refused, never deadlocked.
@Suite struct QueryCallsInBlocksTests {
    private struct KindTotal: Decodable, Sendable, Equatable {
        var kind: String
        var total: Double?
    }

    @Test(arguments: StoreKind.everywhere)
    func savesThatReturnOrAssignJoinATransactionAndRollBackWithIt(_ kind: StoreKind) throws {
        let test = try TestStore(kind)
        let store = test.store
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try store.transaction {
                let first = try Entry(id: nil, kind: "a", amount: 1).saved(in: store)
                #expect(first.id == 1)
                _ = try Entry.save([Entry(id: nil, kind: "b", amount: 2)], in: store)
                #expect(try Entry.all().count(in: store) == 2)
                throw Abort()
            }
        }
        #expect(try Entry.all().count(in: store) == 0)
        let kept = try store.transaction {
            try Entry(id: nil, kind: "a", amount: 1).saved(in: store)
        }
        #expect(try Entry.find(key: try #require(kept.id), in: store) == kept)
    }

    @Test(arguments: StoreKind.everywhere)
    func readsWorkInsideReadBlocksAndWritesThereAreRefused(_ kind: StoreKind) throws {
        let test = try TestStore(kind)
        let store = test.store
        _ = try Entry.save([Entry(id: nil, kind: "a", amount: 1), Entry(id: nil, kind: "a", amount: 2)], in: store)
        var team = Team(id: 1, name: "Rockets")
        team.players = [Player(id: 1, name: "Ann")]
        try team.save(in: store)
        let (totals, players) = try store.read {
            (
                try Entry.all().grouped(by: \.kind).findAll(as: KindTotal.self, .sum(\.amount, as: "total"), in: store),
                try Player.findAll(where: .related(\.team, \.name == "Rockets"), loading: .none, in: store)
            )
        }
        #expect(totals == [KindTotal(kind: "a", total: 3)])
        #expect(players.map(\.id) == [1])
        let refused = #expect(throws: ModelStoreError.self) {
            try store.read { _ = try Entry(id: nil, kind: "c", amount: 3).saved(in: store) }
        }
        #expect(refused?.code == .reentrancy)
        let linked = #expect(throws: ModelStoreError.self) {
            try store.read { _ = try Player(id: 2, name: "Bob").save(related: .skipMissing, in: store) }
        }
        #expect(linked?.code == .reentrancy)
        #expect(try Entry.all().count(in: store) == 2)
    }

    @Test(arguments: Backend.available) func aBatchOfTenThousandWithOneMissingReferenceWritesNothingAndNamesIt(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Team.save((1...100).map { Team(id: Int64($0), name: "t\($0)") }, in: test.store)
        var players: [Player] = []
        for number in 1...10_000 {
            var player = Player(id: Int64(number), name: "p\(number)")
            player.team = Team(id: number == 7_777 ? 555 : Int64(number % 100 + 1))
            players.append(player)
        }
        let error = #expect(throws: ModelStoreError.self) { try Player.save(players, related: .mustExist, in: test.store) }
        #expect(error?.code == .notFound)
        #expect(error?.message.contains("Team 555") == true)
        #expect(try Player.all().count(in: test.store) == 0)
        players[7_776].team = Team(id: 1)
        let outcome = try Player.save(players, related: .mustExist, in: test.store)
        #expect(outcome.inserted == 10_000)
        #expect(try Team.all().count(in: test.store) == 100)
        #expect(try Player.filter(.related(\.team, \.name == "t1")).count(in: test.store) == 101)
    }
}
