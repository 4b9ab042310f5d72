import Foundation
import Testing
@testable import ModelStore

/// Linking only to related records that exist: `.mustExist` refuses, `.skipMissing` leaves out.
@Suite struct LinkToExistingTests {
    @Test(arguments: Backend.available) func theDefaultStillCreatesTheRelatedRecord(_ backend: Backend) throws {
        let test = try TestStore(backend)
        var player = Player(id: 1, name: "Ann")
        player.team = Team(id: 9)
        try player.save(in: test.store)
        #expect(try Team.find(key: 9, loading: .none, in: test.store) != nil)
    }

    @Test(arguments: Backend.available) func mustExistRefusesNamingEveryMissingKeyAndWritesNothing(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Food(id: 1, name: "Pocky").save(in: test.store)
        var ann = Worker(id: 1, name: "Ann")
        ann.snacks = [Food(id: 1), Food(id: 7), Food(id: 8)]
        var bob = Worker(id: 2, name: "Bob")
        bob.snacks = [Food(id: 9)]
        let error = #expect(throws: ModelStoreError.self) {
            try Worker.save([ann, bob], related: .mustExist, in: test.store)
        }
        #expect(error?.code == .notFound)
        #expect(error?.model == "Food")
        for key in ["7", "8", "9"] { #expect(error?.message.contains("Food \(key)") == true, "\(error?.message ?? "")") }
        #expect(try Worker.all().count(in: test.store) == 0)
        #expect(try Food.all().count(in: test.store) == 1)
    }

    @Test(arguments: Backend.available) func mustExistLinksWithoutWritingTheRelatedValues(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Team(id: 1, name: "Rockets").save(in: test.store)
        var player = Player(id: 1, name: "Ann")
        player.team = Team(id: 1, name: "Renamed?")
        try player.save(related: .mustExist, in: test.store)
        let stored = try Player.find(key: 1, loading: .direct, in: test.store)
        #expect(stored?.team?.id == 1)
        // The related model was a reference: its values were not written.
        #expect(try Team.find(key: 1, loading: .none, in: test.store)?.name == "Rockets")
    }

    @Test(arguments: Backend.available) func skipMissingLinksToThoseThatExistAndLeavesTheRestOut(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Food.save([Food(id: 1, name: "Pocky"), Food(id: 2, name: "Mochi")], in: test.store)
        var ann = Worker(id: 1, name: "Ann")
        ann.snacks = [Food(id: 1), Food(id: 5), Food(id: 2)]
        let outcome = try Worker.save([ann], related: .skipMissing, in: test.store)
        #expect(outcome.inserted == 1)
        #expect(try Food.all().count(in: test.store) == 2)
        let stored = try Worker.find(key: 1, loading: .direct, in: test.store)
        #expect(stored?.snacks?.map(\.id).sorted() == [1, 2])
        // A to-one to a missing record leaves the stored link as it was.
        try Team(id: 1, name: "Rockets").save(in: test.store)
        var player = Player(id: 1, name: "Ann")
        player.team = Team(id: 1)
        try player.save(in: test.store)
        player.team = Team(id: 404)
        try player.save(related: .skipMissing, in: test.store)
        #expect(try Player.find(key: 1, loading: .direct, in: test.store)?.team?.id == 1)
        #expect(try Team.find(key: 404, loading: .none, in: test.store) == nil)
    }

    @Test(arguments: Backend.available) func referencesFromTheSideWithoutTheKey(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Player.save([Player(id: 1, name: "Ann"), Player(id: 2, name: "Bob")], in: test.store)
        var team = Team(id: 1, name: "Rockets")
        team.players = [Player(id: 1), Player(id: 3)]
        try team.save(related: .skipMissing, in: test.store)
        let stored = try Team.find(key: 1, loading: .direct, in: test.store)
        #expect(stored?.players?.map(\.id) == [1])
        #expect(stored?.players?.first?.name == "Ann")
        #expect(try Player.find(key: 3, loading: .none, in: test.store) == nil)
        team.players = [Player(id: 3)]
        let error = #expect(throws: ModelStoreError.self) { try team.save(related: .mustExist, in: test.store) }
        #expect(error?.code == .notFound)
        #expect(try Team.find(key: 1, loading: .direct, in: test.store)?.players?.map(\.id) == [1])
    }

    @Test(arguments: Backend.available) func everyCallForm(_ backend: Backend) async throws {
        let test = try TestStore(backend)
        var player = Player(id: 1, name: "Ann")
        player.team = Team(id: 5)
        await #expect(throws: ModelStoreError.self) { try await player.save(related: .mustExist, in: test.store) }
        let viaCompletion: SaveOutcome = try await withCheckedThrowingContinuation { continuation in
            player.save(related: .skipMissing, in: test.store) { continuation.resume(with: $0.mapError { $0 as any Error }) }
        }
        #expect(viaCompletion == .inserted)
        _ = try await Player.save([player], related: .skipMissing, in: test.store)
        #expect(try await Team.all().count(in: test.store) == 0)
    }
}
