import Foundation
import Testing
@testable import ModelStore

@Suite("Coverage: loadingRelationships in every form, for one model and for arrays")
struct LoadingRelationshipsFormsTests {
    /// Two teams with their own players and coaches, read back bare.
    private func twoBareTeams(_ test: TestStore) throws -> (rockets: Team, comets: Team) {
        var rockets = Team(id: 1, name: "Rockets")
        rockets.players = [Player(id: 1, name: "Ann"), Player(id: 2, name: "Bo")]
        rockets.coach = Coach(id: 7, name: "Dee")
        try rockets.save(in: test.store)
        var comets = Team(id: 2, name: "Comets")
        comets.players = [Player(id: 3, name: "Cy")]
        try comets.save(in: test.store)
        let bare = try Team.findAll(loading: .none, in: test.store)
        #expect(bare.allSatisfy { $0.players == nil && $0.coach == nil })
        return (bare[0], bare[1])
    }

    @Test(arguments: Backend.available) func theCompletionFormFillsOneModelsRelationshipsAndKeepsItsOwnValues(_ backend: Backend)
        async throws
    {
        let test = try TestStore(backend)
        var (rockets, _) = try synchronously { try twoBareTeams(test) }
        rockets.name = "Renamed here, not stored"
        let result: Result<Team, ModelStoreError> = await withCheckedContinuation { continuation in
            rockets.loadingRelationships(in: test.store) { continuation.resume(returning: $0) }
        }
        let loaded = try result.get()
        #expect(loaded.name == "Renamed here, not stored")
        #expect(loaded.players?.map(\.name) == ["Ann", "Bo"])
        #expect(loaded.coach?.name == "Dee")
        #expect(loaded.players?.first?.team?.id == 1)
    }

    @Test(arguments: Backend.available) func theCompletionFormHonoursTheLoadOptions(_ backend: Backend) async throws {
        let test = try TestStore(backend)
        let (rockets, _) = try synchronously { try twoBareTeams(test) }
        let result: Result<Team, ModelStoreError> = await withCheckedContinuation { continuation in
            rockets.loadingRelationships(.only("coach"), in: test.store) { continuation.resume(returning: $0) }
        }
        let loaded = try result.get()
        #expect(loaded.coach?.id == 7)
        #expect(loaded.players == nil)
    }

    @Test(arguments: Backend.available) func theCompletionFormDeliversAnInvalidPathAsAFailure(_ backend: Backend) async throws {
        let test = try TestStore(backend)
        let (rockets, comets) = try synchronously { try twoBareTeams(test) }
        let one: Result<Team, ModelStoreError> = await withCheckedContinuation { continuation in
            rockets.loadingRelationships(.only("players.agent"), in: test.store) { continuation.resume(returning: $0) }
        }
        let error = try #require(throws: ModelStoreError.self) { try one.get() }
        #expect(error.code == .invalidQuery)
        #expect(error.model == "Player")
        #expect(error.column == "agent")
        let many: Result<[Team], ModelStoreError> = await withCheckedContinuation { continuation in
            Team.loadingRelationships(of: [rockets, comets], .only("mascot"), in: test.store) { continuation.resume(returning: $0) }
        }
        let arrayError = try #require(throws: ModelStoreError.self) { try many.get() }
        #expect(arrayError.code == .invalidQuery)
        #expect(arrayError.column == "mascot")
    }

    @Test(arguments: Backend.available) func theArrayCompletionFormFillsEachModelWithItsOwnRelationshipsInOrder(_ backend: Backend)
        async throws
    {
        let test = try TestStore(backend)
        let (rockets, comets) = try synchronously { try twoBareTeams(test) }
        let result: Result<[Team], ModelStoreError> = await withCheckedContinuation { continuation in
            Team.loadingRelationships(of: [comets, rockets, comets], in: test.store) { continuation.resume(returning: $0) }
        }
        let loaded = try result.get()
        #expect(loaded.map(\.id) == [2, 1, 2])
        #expect(loaded.map { $0.players?.map(\.id) ?? [] } == [[3], [1, 2], [3]])
        #expect(loaded.map { $0.coach?.id } == [nil, 7, nil])
    }

    @Test(arguments: Backend.available) func theArrayAsyncFormFillsEachModelWithItsOwnRelationshipsInOrder(_ backend: Backend) async throws
    {
        let test = try TestStore(backend)
        let (rockets, comets) = try synchronously { try twoBareTeams(test) }
        let loaded = try await Team.loadingRelationships(of: [rockets, comets], in: test.store)
        #expect(loaded.map(\.name) == ["Rockets", "Comets"])
        #expect(loaded.map { $0.players?.count } == [2, 1])
        #expect(loaded[0].coach?.name == "Dee")
        let coachesOnly = try await Team.loadingRelationships(of: [rockets, comets], .only("coach"), in: test.store)
        #expect(coachesOnly.map { $0.players == nil } == [true, true])
        #expect(coachesOnly[0].coach?.id == 7)
        #expect(try await Team.loadingRelationships(of: [], in: test.store).isEmpty)
    }

    @Test(arguments: Backend.available) func theArrayAsyncFormDeliversAnInvalidPathAsAnError(_ backend: Backend) async throws {
        let test = try TestStore(backend)
        let (rockets, _) = try synchronously { try twoBareTeams(test) }
        let code = await asyncErrorCode { _ = try await Team.loadingRelationships(of: [rockets], .only("players.agent"), in: test.store) }
        #expect(code == .invalidQuery)
    }

    @Test(arguments: Backend.available) func loadingNothingReturnsTheModelsAsTheyAreInEveryForm(_ backend: Backend) async throws {
        let test = try TestStore(backend)
        let (rockets, comets) = try synchronously { try twoBareTeams(test) }
        #expect(try await rockets.loadingRelationships(.none, in: test.store) == rockets)
        #expect(try await Team.loadingRelationships(of: [rockets, comets], .none, in: test.store) == [rockets, comets])
        #expect(try synchronously { try Team.loadingRelationships(of: [comets], .none, in: test.store) } == [comets])
        let viaCompletion: Result<[Team], ModelStoreError> = await withCheckedContinuation { continuation in
            Team.loadingRelationships(of: [rockets], .none, in: test.store) { continuation.resume(returning: $0) }
        }
        #expect(try viaCompletion.get() == [rockets])
    }

    @Test(arguments: Backend.available) func aModelWhoseRecordIsNotStoredLoadsNoRelatedRecords(_ backend: Backend) async throws {
        let test = try TestStore(backend)
        _ = try synchronously { try twoBareTeams(test) }
        let stranger = Team(id: 99, name: "Not stored")
        let loaded = try await stranger.loadingRelationships(in: test.store)
        #expect(loaded.name == "Not stored")
        #expect(loaded.players ?? [] == [])
        #expect(loaded.coach == nil)
    }
}
