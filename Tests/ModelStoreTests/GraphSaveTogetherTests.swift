import Foundation
import Testing
@testable import ModelStore

private struct Squad: StoredModel, Equatable {
    var id: Int64
    var name: String?
    var members: [Member]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Squad>] = [.toMany(\.members, inverse: \Member.squad)]
}

private struct Member: StoredModel, Equatable {
    var id: Int64
    var name: String?
    var updatedAt: Date?
    @Related var squad: Squad?
    static let primaryKey = ["id"]
    static let timestamps = Timestamps<Member>(updated: \.updatedAt)
    static let relationships: [Relationship<Member>] = [.toOne(\.squad, inverse: \Squad.members)]
}

private struct Club: StoredModel, Equatable {
    var id: Int64
    var name: String?
    var fans: [Fan]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Club>] = [.toMany(\.fans, inverse: \Fan.club)]
}

private struct Fan: StoredModel, Equatable {
    var id: Int64
    var name: String?
    @Related var club: Club?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Fan>] = [.toOne(\.club, inverse: \Club.fans)]
}

/// A graph save writes the related records of a to-many, and the links of a many-to-many, in
/// multi-row statements where a statement is a round trip (a server), and one at a time on
/// SQLite. Every test here gives the answers of the one-at-a-time walk on both backends.
@Suite("Graph saves: related records written together")
struct GraphSaveTogetherTests {
    private func inserts(into table: String, _ test: TestStore) -> Int {
        test.sql.filter { $0.hasPrefix("INSERT INTO \"\(table)\"") }.count
    }

    @Test(arguments: Backend.available)
    func aTeamsFiftyPlayersAreOneStatementOnAServerWithTheSameRecords(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Player(id: 3, name: "stored").save(in: test.store)
        test.resetSQL()
        var team = Team(id: 1, name: "Rockets")
        team.players = (1...50).map { Player(id: Int64($0), name: $0 == 3 ? nil : "p\($0)") }
        try team.save(in: test.store)
        #expect(inserts(into: "Player", test) == (backend == .postgres ? 1 : 50))

        let loaded = try #require(try Team.find(key: 1, in: test.store))
        #expect(loaded.players?.map(\.id) == (1...50).map(Int64.init))
        // nil keeps the stored value, as in any save.
        #expect(loaded.players?.first { $0.id == 3 }?.name == "stored")
        #expect(try Player.count(where: \.name == "p50", in: test.store) == 1)
    }

    @Test(arguments: Backend.available)
    func aRecordListedTwiceKeepsItsFirstValuesAndLinksOnce(_ backend: Backend) throws {
        let test = try TestStore(backend)
        var team = Team(id: 1, name: "Rockets")
        team.players = [Player(id: 1, name: "first"), Player(id: 2, name: "two"), Player(id: 1, name: "second")]
        let outcome = try Team.save([team], in: test.store)
        // The walk writes a record once per graph: the second listing only links it.
        #expect(try Player.find(key: 1, loading: .none, in: test.store)?.name == "first")
        #expect(try Team.find(key: 1, in: test.store)?.players?.map(\.id) == [1, 2])
        #expect(outcome.inserted == 3)  // the team and two players
        #expect(outcome.updated == 0)
    }

    @Test(arguments: Backend.available)
    func aBatchCountsEveryRelatedRecordItInsertedUpdatedOrLeftUnchanged(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Player.save([Player(id: 1, name: "same"), Player(id: 2, name: "old")], in: test.store)
        var rockets = Team(id: 1, name: "Rockets")
        rockets.players = [Player(id: 1, name: "same"), Player(id: 2, name: "new"), Player(id: 3, name: "fresh")]
        var comets = Team(id: 2, name: "Comets")
        comets.players = [Player(id: 4, name: "four"), Player(id: 5, name: "five")]
        test.resetSQL()
        let outcome = try Team.save([rockets, comets], in: test.store)
        // On a server the batch goes level by level: one statement for the teams, one for
        // every player of both.
        if backend == .postgres {
            #expect(inserts(into: "Team", test) == 1)
            #expect(inserts(into: "Player", test) == 1)
        }
        // Players 1 and 2 gain their team's link, so both are written (updated).
        #expect(outcome.inserted == 2 + 3)
        #expect(outcome.updated == 2)
        #expect(outcome.unchanged == 0)

        let again = try Team.save([rockets, comets], in: test.store)
        #expect(again.inserted == 0)
        #expect(again.updated == 0)
        #expect(again.unchanged == 2 + 5)
    }

    @Test(arguments: Backend.available)
    func playersMoveBetweenTeamsAndTheOnesLeftOutAreUnlinked(_ backend: Backend) throws {
        let test = try TestStore(backend)
        var rockets = Team(id: 1, name: "Rockets")
        rockets.players = (1...4).map { Player(id: $0, name: "p\($0)") }
        try rockets.save(in: test.store)

        var comets = Team(id: 2, name: "Comets")
        comets.players = [Player(id: 3), Player(id: 4), Player(id: 5, name: "p5")]
        rockets.players = [Player(id: 1), Player(id: 6, name: "p6")]
        try Team.save([comets, rockets], in: test.store)
        #expect(try Team.find(key: 1, in: test.store)?.players?.map(\.id) == [1, 6])
        #expect(try Team.find(key: 2, in: test.store)?.players?.map(\.id) == [3, 4, 5])
        #expect(try Player.find(key: 2, in: test.store)?.team == nil)  // left out: unlinked, kept
        #expect(try Player.find(key: 4, loading: .none, in: test.store)?.name == "p4")
    }

    @Test(arguments: Backend.available)
    func relatedRecordsCarryingRelationshipsOfTheirOwnGetTheWholeWalk(_ backend: Backend) throws {
        let test = try TestStore(backend)
        // Each report carries reports of its own: they are saved, linked and unlinked as always.
        var boss = Employee(id: 1, name: "Ada")
        var lead = Employee(id: 2, name: "Bea")
        lead.reports = [Employee(id: 4, name: "Dot"), Employee(id: 5, name: "Eli")]
        boss.reports = [lead, Employee(id: 3, name: "Cid")]
        try boss.save(in: test.store)
        #expect(try Employee.find(key: 2, in: test.store)?.reports?.map(\.id) == [4, 5])
        #expect(try Employee.find(key: 1, in: test.store)?.reports?.map(\.id) == [2, 3])
        // A record the graph wrote already (here the root itself) is only linked again.
        boss.reports = [Employee(id: 3, name: "renamed"), Employee(id: 1, name: "not written twice")]
        try boss.save(in: test.store)
        #expect(try Employee.find(key: 1, loading: .none, in: test.store)?.name == "Ada")
        #expect(try Employee.find(key: 3, loading: .none, in: test.store)?.name == "renamed")
        #expect(try Employee.find(key: 1, in: test.store)?.reports?.map(\.id) == [1, 3])
        #expect(try Employee.find(key: 2, in: test.store)?.manager == nil)
    }

    @Test(arguments: Backend.available)
    func aFailingRelatedRecordNamesItselfAndNothingOfTheGraphIsWritten(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Player(id: 9, name: "placeholder").save(in: test.store)
        // A unique index made behind the store's back: the database refuses the second "Sam".
        try test.rawExecute(#"CREATE UNIQUE INDEX "player_name_behind" ON "Player" ("name")"#)
        var team = Team(id: 1, name: "Rockets")
        team.players = [Player(id: 1, name: "Ann"), Player(id: 2, name: "Sam"), Player(id: 3, name: "Sam")]
        let error = try #require(throws: ModelStoreError.self) { try team.save(in: test.store) }
        #expect(error.code == .constraintViolation)
        #expect(error.model == "Player")
        #expect(error.key == "id = 3")
        #expect(try Team.count(in: test.store) == 0)
        #expect(try Player.count(in: test.store) == 1)
    }

    @Test(arguments: Backend.available)
    func aRecordABatchUnlinksAndLinksAgainGetsANewChangeDateAsTheWalkGivesIt(_ backend: Backend) throws {
        let test = try TestStore(backend)
        var squad = Squad(id: 1, name: "s")
        squad.members = [Member(id: 1, name: "m")]
        try squad.save(in: test.store)
        let before = try #require(try Member.find(key: 1, loading: .none, in: test.store)?.updatedAt)
        var emptied = Squad(id: 1)
        emptied.members = []
        var relinked = Squad(id: 1)
        relinked.members = [Member(id: 1, name: "m")]
        let outcome = try Squad.save([emptied, relinked], in: test.store)
        #expect(outcome.inserted == 0)
        #expect(outcome.updated == 3)
        #expect(outcome.unchanged == 0)
        let after = try #require(try Member.find(key: 1, loading: .none, in: test.store)?.updatedAt)
        #expect(after > before)
        #expect(try Squad.find(key: 1, loading: .direct, in: test.store)?.members?.map(\.id) == [1])
    }

    @Test func tablesAnotherToolMadeWithFourByteKeysGetTheWalksAnswers() throws {
        guard Backend.available.contains(.postgres) else { return }
        let test = try TestStore(Backend.postgres)
        // Keys of another integer type than the store's BIGINT: the server gives them back as
        // integers, so the levels match them (a type that did not would send the batch to the
        // walk; one the model cannot hold exactly is refused as `.schemaMismatch`).
        try test.rawExecute(#"CREATE TABLE "Club" ("id" integer PRIMARY KEY, "name" text)"#)
        try test.rawExecute(#"CREATE TABLE "Fan" ("id" integer PRIMARY KEY, "name" text, "club_id" integer REFERENCES "Club" ("id"))"#)
        try test.rawExecute(#"INSERT INTO "Club" VALUES (1, 'stored'); INSERT INTO "Fan" VALUES (2, 'two', 1), (3, 'three', 1)"#)
        var first = Club(id: 1)
        first.fans = [Fan(id: 3), Fan(id: 4, name: "four")]
        var second = Club(id: 5, name: "new")
        second.fans = [Fan(id: 6, name: "six")]
        test.resetSQL()
        let outcome = try Club.save([first, second], in: test.store)
        #expect(inserts(into: "Club", test) == 1)
        // As the walk: club 1 unchanged but for its links (updated), fan 2 unlinked, 3 kept.
        #expect(outcome.inserted == 3)
        #expect(outcome.updated == 1)
        #expect(outcome.unchanged == 1)
        #expect(try Club.find(key: 1, loading: .direct, in: test.store)?.fans?.map(\.id) == [3, 4])
        #expect(try test.rawRows(#"SELECT "club_id" FROM "Fan" WHERE "id" = 2"#) == [[.null]])
        #expect(try Club.find(key: 5, loading: .direct, in: test.store)?.fans?.map(\.id) == [6])
    }

    @Test(arguments: Backend.available)
    func manyToManyLinksAreWrittenTogetherOnceEach(_ backend: Backend) throws {
        let test = try TestStore(backend)
        var ann = Worker(id: 1, name: "Ann")
        // Seven snacks, one listed twice: seven links (a short chunk's padding adds none).
        ann.snacks = (10...16).map { Food(id: $0, name: "f\($0)") } + [Food(id: 12)]
        test.resetSQL()
        try ann.save(in: test.store)
        let join = "Food_workers__Worker_snacks"
        #expect(try test.rawRows("SELECT count(*) FROM \"\(join)\"") == [[.integer(7)]])
        if backend == .postgres {
            #expect(inserts(into: join, test) == 1)
            #expect(inserts(into: "Food", test) == 1)
        }
        #expect(try Worker.find(key: 1, in: test.store)?.snacks?.map(\.id) == Array(10...16))

        // Replacing the set keeps three, drops four and adds 600 (more than one chunk).
        ann.snacks = [Food(id: 10), Food(id: 14), Food(id: 16)] + (1_000..<1_600).map { Food(id: Int64($0), name: "n\($0)") }
        try ann.save(in: test.store)
        let snacks = try #require(try Worker.find(key: 1, in: test.store)?.snacks)
        #expect(snacks.count == 603)
        #expect(Set(snacks.map(\.id)) == Set([10, 14, 16] + (1_000..<1_600).map(Int64.init)))
        #expect(try test.rawRows("SELECT count(*) FROM \"\(join)\"") == [[.integer(603)]])
        #expect(try Food.count(in: test.store) == 607)
    }
}

/// The server's level-by-level batch of graphs against SQLite's walk, on random batches:
/// teams listed twice, players listed twice, moved between teams, left out, stored linked
/// elsewhere, with and without names (nil keeps the stored one), and empty lists.
@Suite("Graph saves: levels against the walk")
struct GraphSaveLevelsOracleTests {
    private struct State: Equatable, CustomStringConvertible {
        var teams: [[SQLValue]]
        var players: [[SQLValue]]
        var outcome: [Int]
        var description: String { "outcome \(outcome)\nteams \(teams)\nplayers \(players)" }
    }

    @Test func randomBatchesOfTeamsWithPlayersGiveTheWalksRecordsLinksAndCounts() throws {
        guard Backend.available.contains(.postgres) else { return }
        let seed = SeededGenerator.seed(from: "MODELSTORE_LEVELS_SEED")
        var random = SeededGenerator(seed: seed)
        let walk = try TestStore(Backend.sqlite)
        let levels = try TestStore(Backend.postgres)
        // The tables, made by a first save.
        for test in [walk, levels] {
            try Team(id: 100, name: "made").save(in: test.store)
            try Player(id: 100, name: "made").save(in: test.store)
        }
        for round in 0..<SeededGenerator.count(from: "MODELSTORE_LEVELS_ROUNDS", default: 60) {
            // The stored state both start from, written with plain SQL.
            var sql = [#"DELETE FROM "Player""#, #"DELETE FROM "Team""#]
            let stored = (1...5).filter { _ in Bool.random(using: &random) }
            for team in stored { sql.append(#"INSERT INTO "Team" ("id", "name") VALUES (\#(team), 't\#(team)')"#) }
            for player in 1...12 where Bool.random(using: &random) {
                let team =
                    stored.isEmpty || Int.random(in: 0..<3, using: &random) == 0 ? "NULL" : "\(stored.randomElement(using: &random)!)"
                sql.append(#"INSERT INTO "Player" ("id", "name", "team_id") VALUES (\#(player), 'p\#(player)', \#(team))"#)
            }
            let batch = (0..<Int.random(in: 2...6, using: &random)).map { _ in
                var team = Team(id: Int64.random(in: 1...6, using: &random))
                team.name = Bool.random(using: &random) ? "T\(Int.random(in: 0...2, using: &random))" : nil
                if Int.random(in: 0..<4, using: &random) > 0 {
                    team.players = (0..<Int.random(in: 0...5, using: &random)).map { _ in
                        let id = Int64.random(in: 1...15, using: &random)
                        return Player(id: id, name: Bool.random(using: &random) ? "P\(Int.random(in: 0...2, using: &random))" : nil)
                    }
                }
                return team
            }
            var states: [State] = []
            for test in [walk, levels] {
                for statement in sql { try test.rawExecute(statement) }
                let outcome = try Team.save(batch, in: test.store)
                states.append(
                    State(
                        teams: try test.rawRows(#"SELECT "id", "name" FROM "Team" ORDER BY "id""#),
                        players: try test.rawRows(#"SELECT "id", "name", "team_id" FROM "Player" ORDER BY "id""#),
                        outcome: [outcome.inserted, outcome.updated, outcome.unchanged]))
            }
            #expect(
                states[0] == states[1],
                "seed \(seed) (MODELSTORE_LEVELS_SEED), round \(round): batch \(batch)\nwalk \(states[0])\nlevels \(states[1])")
            if states[0] != states[1] { break }
        }
    }
}
