import Foundation
import Testing
@testable import ModelStore

/// Conditions, counts and orderings across relationships: typed, one statement, two-valued.
@Suite struct AcrossRelationshipsTests {
    /// Rockets (Ann, Bob, coach Cy), Comets (Dee, nameless player 6), Idle (no players), and
    /// a free agent (Eve) with no team.
    private func league(_ kind: StoreKind = .memory) throws -> TestStore {
        let test = try TestStore(kind)
        var rockets = Team(id: 1, name: "Rockets")
        rockets.players = [Player(id: 1, name: "Ann"), Player(id: 2, name: "Bob")]
        rockets.coach = Coach(id: 1, name: "Cy")
        var comets = Team(id: 2, name: "Comets")
        comets.players = [Player(id: 3, name: "Dee"), Player(id: 6, name: nil)]
        try Team.save([rockets, comets, Team(id: 3, name: "Idle")], in: test.store)
        try Player(id: 5, name: "Eve").save(in: test.store)
        return test
    }

    private func ids<M: StoredModel>(_ models: [M], _ id: KeyPath<M, Int64>) -> [Int64] { models.map { $0[keyPath: id] }.sorted() }

    @Test(arguments: StoreKind.everywhere)
    func filtersByTheValuesOfTheRecordAToOneLinksTo(_ kind: StoreKind) throws {
        let test = try league(kind)
        test.resetSQL()
        let players = try Player.findAll(where: .related(\.team, \.name == "Rockets"), loading: .none, in: test.store)
        #expect(ids(players, \.id) == [1, 2])
        #expect(test.sql.filter { $0.hasPrefix("SELECT") }.count == 1, "one statement: \(test.sql)")
        // Negation is two-valued: Eve, who has no team, is not a Rockets player.
        let others = try Player.findAll(where: !.related(\.team, \.name == "Rockets"), loading: .none, in: test.store)
        #expect(ids(others, \.id) == [3, 5, 6])
    }

    @Test(arguments: Backend.available) func anyAndNoneOverAToMany(_ backend: Backend) throws {
        let test = try league(StoreKind.memory.or(backend))
        #expect(ids(try Team.findAll(where: .any(\.players, \.name == "Dee"), loading: .none, in: test.store), \.id) == [2])
        #expect(ids(try Team.findAll(where: .any(\.players), loading: .none, in: test.store), \.id) == [1, 2])
        #expect(ids(try Team.findAll(where: .none(\.players), loading: .none, in: test.store), \.id) == [3])
        #expect(ids(try Team.findAll(where: .none(\.players, \.name == "Ann"), loading: .none, in: test.store), \.id) == [2, 3])
        // A nameless player neither matches `== "Dee"` nor its negation's complement.
        #expect(ids(try Team.findAll(where: .any(\.players, \.name != "Dee"), loading: .none, in: test.store), \.id) == [1, 2])
    }

    @Test(arguments: Backend.available) func everyCountsUnknownAsNotHoldingAndAnEmptySetAsHolding(_ backend: Backend) throws {
        let test = try league(StoreKind.memory.or(backend))
        let allShort = try Team.findAll(where: .every(\.players, .like(\.name, "___")), loading: .none, in: test.store)
        // Rockets: Ann, Bob (3 letters each). Comets: player 6's name is NULL, so not all
        // match. Idle has no players: every holds, as `[].allSatisfy` does.
        #expect(ids(allShort, \.id) == [1, 3])
    }

    @Test(arguments: Backend.available) func aOneToOneFromTheSideWithoutTheKeyAndAManyToMany(_ backend: Backend) throws {
        let test = try league(StoreKind.memory.or(backend))
        #expect(ids(try Team.findAll(where: .related(\.coach, \.name == "Cy"), loading: .none, in: test.store), \.id) == [1])
        #expect(ids(try Coach.findAll(where: .related(\.team, \.name == "Rockets"), loading: .none, in: test.store), \.id) == [1])
        var ann = Worker(id: 1, name: "Ann")
        ann.snacks = [Food(id: 1, name: "Pocky"), Food(id: 2, name: "Mochi")]
        var bob = Worker(id: 2, name: "Bob")
        bob.snacks = [Food(id: 2, name: "Mochi")]
        try Worker.save([ann, bob, Worker(id: 3, name: "Cy")], in: test.store)
        test.resetSQL()
        let mochiFans = try Worker.findAll(where: .any(\.snacks, \.name == "Mochi"), loading: .none, in: test.store)
        #expect(ids(mochiFans, \.id) == [1, 2])
        #expect(test.sql.filter { $0.hasPrefix("SELECT") }.count == 1)
        #expect(ids(try Food.findAll(where: .any(\.workers, \.name == "Bob"), loading: .none, in: test.store), \.id) == [2])
        #expect(ids(try Worker.findAll(where: .none(\.snacks), loading: .none, in: test.store), \.id) == [3])
        #expect(ids(try Worker.findAll(where: RelatedCount(\Worker.snacks) >= 2, loading: .none, in: test.store), \.id) == [1])
        #expect(
            ids(
                try Worker.findAll(where: RelatedCount(\Worker.snacks, where: \.name == "Mochi") == 1, loading: .none, in: test.store), \.id
            )
                == [1, 2])
    }

    @Test(arguments: Backend.available) func countsRelatedRecordsWithoutLoadingThem(_ backend: Backend) throws {
        let test = try league(StoreKind.memory.or(backend))
        test.resetSQL()
        #expect(ids(try Team.findAll(where: RelatedCount(\Team.players) == 2, loading: .none, in: test.store), \.id) == [1, 2])
        #expect(ids(try Team.findAll(where: RelatedCount(\Team.players) == 0, loading: .none, in: test.store), \.id) == [3])
        #expect(ids(try Team.findAll(where: RelatedCount(\Team.players) != 2, loading: .none, in: test.store), \.id) == [3])
        #expect(
            ids(try Team.findAll(where: RelatedCount(\Team.players, where: .isNotNull(\.name)) < 2, loading: .none, in: test.store), \.id)
                == [2, 3])
        #expect(try Team.filter(RelatedCount(\Team.players) > 0).count(in: test.store) == 2)
        #expect(try Player.filter(.related(\.team, .any(\.players, \.name == "Dee"))).count(in: test.store) == 2)
        #expect(test.sql.allSatisfy { !$0.contains("FROM \"Player\" WHERE \"team") }, "no per-record lookups: \(test.sql)")
    }

    @Test(arguments: Backend.available) func ordersByARelatedValueAndByARelatedCount(_ backend: Backend) throws {
        let test = try league(StoreKind.memory.or(backend))
        let byTeam = try Player.order(.ascending(\.team, \.name), .ascending(\.id)).loading(.none).findAll(in: test.store)
        // No team sorts as NULL, first; then Comets, then Rockets.
        #expect(byTeam.map(\.id) == [5, 3, 6, 1, 2])
        let byTeamDescending = try Player.order(.descending(\.team, \.name)).loading(.none).findAll(in: test.store)
        #expect(byTeamDescending.map(\.id) == [1, 2, 3, 6, 5])
        let byCrowd = try Team.order(.descending(RelatedCount(\Team.players, where: .isNotNull(\.name)))).loading(.none).findAll(
            in: test.store)
        #expect(byCrowd.map(\.id) == [1, 2, 3])
        let page = try Team.order(.ascending(RelatedCount(\Team.players))).page(0, rows: 2).loading(.none).findAll(in: test.store)
        #expect(page.map(\.id) == [3, 1])
        #expect(try Team.order(.ascending(\.coach, \.name)).loading(.none).findAll(in: test.store).map(\.id) == [2, 3, 1])
    }

    @Test(arguments: Backend.available) func aSelfRelationshipNestedTwoLevelsNamesTheRightRecords(_ backend: Backend) throws {
        let test = try TestStore(backend)
        var ceo = Employee(id: 1, name: "Ada")
        var cto = Employee(id: 2, name: "Brian")
        cto.reports = [Employee(id: 4, name: "Dan"), Employee(id: 5, name: "Eli")]
        ceo.reports = [cto, Employee(id: 3, name: "Cleo")]
        try ceo.save(in: test.store)
        let underAda = try Employee.findAll(where: .related(\.manager, \.name == "Ada"), loading: .none, in: test.store)
        #expect(underAda.map(\.id) == [2, 3])
        let grandReports = try Employee.findAll(
            where: .related(\.manager, .related(\.manager, \.name == "Ada")), loading: .none, in: test.store)
        #expect(grandReports.map(\.id) == [4, 5])
        let managersOfManagers = try Employee.findAll(
            where: .any(\.reports, RelatedCount(\Employee.reports) >= 2), loading: .none, in: test.store)
        #expect(managersOfManagers.map(\.id) == [1])
        let ranked = try Employee.order(.descending(RelatedCount(\Employee.reports)), .ascending(\.id)).loading(.none).findAll(
            in: test.store)
        #expect(ranked.map(\.id) == [1, 2, 3, 4, 5])
        #expect(try Employee.order(.ascending(\.manager, \.name)).loading(.none).findAll(in: test.store).map(\.id) == [1, 2, 3, 4, 5])
    }

    @Test(arguments: Backend.available) func changesAndDeletesByARelatedCondition(_ backend: Backend) throws {
        let test = try league(StoreKind.memory.or(backend))
        let renamed = try Player.filter(.related(\.team, \.name == "Comets")).updateAll(.set(\.name, to: "Comet"), in: test.store)
        #expect(renamed == 2)
        #expect(try Player.findAll(by: \.name, equals: "Comet", loading: .none, in: test.store).map(\.id) == [3, 6])
        let removed = try Team.filter(.none(\.players)).deleteAll(in: test.store)
        #expect(removed == 1)
        #expect(try Team.find(key: 3, in: test.store) == nil)
    }

    @Test(arguments: Backend.available) func everyCallFormTakesARelatedCondition(_ backend: Backend) async throws {
        let test = try league(StoreKind.memory.or(backend))
        let condition: Condition<Team> = .any(\.players, \.name == "Ann")
        let viaAsync = try await Team.findAll(where: condition, loading: .none, in: test.store)
        #expect(viaAsync.map(\.id) == [1])
        let viaCompletion: [Team] = try await withCheckedThrowingContinuation { continuation in
            Team.findAll(where: condition, loading: .none, in: test.store) { continuation.resume(with: $0.mapError { $0 as any Error }) }
        }
        #expect(viaCompletion.map(\.id) == [1])
        #expect(try await Team.filter(condition).count(in: test.store) == 1)
    }

    @Test(arguments: Backend.available) func aRelatedTableNothingHasWrittenReadsAsEmpty(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        // Only players exist; the team table has never been written.
        try test.store.write { _ in }
        #expect(try Coach.findAll(where: .related(\.team, \.name == "x"), loading: .none, in: test.store).isEmpty)
        #expect(try Team.findAll(where: .none(\.players), loading: .none, in: test.store).isEmpty)
    }

    @Test(arguments: Backend.available) func refusesWhatItCannotFollowBeforeAnySQLRuns(_ backend: Backend) throws {
        let test = try league(StoreKind.memory.or(backend))
        test.resetSQL()
        #expect {
            _ = try Player.order(.ascending(Column("team"))).findAll(in: test.store)
        } throws: { ($0 as? ModelStoreError)?.code == .invalidQuery }
        // A relationship the model does not declare is refused, naming model and property.
        let undeclared = #expect(throws: ModelStoreError.self) {
            _ = try Snack.findAll(where: .related(\Snack.friend, \.note == "x"), in: test.store)
        }
        #expect(undeclared?.code == .invalidQuery)
        #expect(undeclared?.model == "Snack")
        #expect(undeclared?.message.contains("relationships") == true)
        // (A server store reads its catalog while it prepares Snack's table: not a query of records.)
        let queries = test.sql.filter { $0.hasPrefix("SELECT") && (backend == .sqlite || !$0.contains("information_schema")) }
        #expect(queries.isEmpty, "refused before any query: \(test.sql)")
    }
}

extension Snack {
    /// Not a declared relationship: queries must refuse to follow it.
    var friend: Friendship? { nil }
}

@Suite struct KeyPathThroughARelationshipTests {
    @Test(arguments: Backend.available) func aKeyPathThroughARelationshipPointsToTheRelatedCondition(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let error = #expect(throws: ModelStoreError.self) {
            _ = try Worker.findAll(where: \.ticket?.seat == "12A", in: test.store)
        }
        #expect(error?.code == .invalidQuery, "\(String(describing: error))")
        #expect(error?.suggestion?.contains(".related(\\.ticket") == true)
        // A wrapped (`@Related`) to-one's key path names no property; it is refused too.
        #expect(throws: ModelStoreError.self) { _ = try Player.findAll(where: \.team?.name == "Rockets", in: test.store) }
    }
}

/// Reads of models whose tables do not exist yet answer "nothing" through empty stand-in
/// tables, join tables included. On a server a join table's stand-in lacked column types,
/// which PostgreSQL's CREATE TABLE refuses, so every first read of a model with a
/// many-to-many failed with `.server` (a syntax error) until something was saved.
@Suite struct ReadsBeforeAnyTableExistsTests {
    @Test(arguments: Backend.available)
    func readsOfModelsWithRelationshipsFindNothingInEveryFormBeforeAnyTableExists(_ backend: Backend) async throws {
        let test = try TestStore(backend)
        let store = test.store
        try Self.synchronousReadsFindNothing(store)
        #expect(try await Worker.findAll(in: store).isEmpty)
        var streamed = 0
        for try await _ in Worker.all().stream(in: store) { streamed += 1 }
        #expect(streamed == 0)
        let viaCompletion: Result<[Worker], ModelStoreError> = await withCheckedContinuation { continuation in
            Worker.findAll(in: store) { continuation.resume(returning: $0) }
        }
        #expect(try viaCompletion.get().isEmpty)
        // The first save makes the tables, and the reads see it.
        var worker = Worker(id: 1, name: "Ann")
        worker.snacks = [Food(id: 7, name: "tea")]
        try await worker.save(in: store)
        #expect(try await Worker.find(key: 1, in: store)?.snacks?.map(\.id) == [7])
        #expect(try await Worker.filter(.any(\.snacks, \.name == "tea")).count(in: store) == 1)
    }

    private static func synchronousReadsFindNothing(_ store: ModelStore) throws {
        #expect(try Worker.findAll(in: store).isEmpty)
        #expect(try Worker.find(key: 1, in: store) == nil)
        #expect(try Worker.count(in: store) == 0)
        #expect(try Worker.filter(.any(\.snacks, \.name == "tea")).findAll(in: store).isEmpty)
        #expect(try Worker.filter(.related(\.ticket, \.seat == "12A")).count(in: store) == 0)
        #expect(try Food.findAll(in: store).isEmpty)
    }
}
