import Foundation
import Testing
@testable import ModelStore

/// A one-to-one whose key-holding side ("Athlete.locker" sorts before "Locker.owner") is
/// itself reached through another relationship, so a graph save reaches it as a child.
private struct Club: StoredModel {
    var id: Int
    var athletes: [Athlete]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Club>] = [.toMany(\.athletes, inverse: \Athlete.club).loading(.eager)]
}

private struct Athlete: StoredModel {
    var id: Int
    @Related var locker: Locker?
    @Related var club: Club?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Athlete>] = [
        .toOne(\.locker, inverse: \Locker.owner).loading(.eager),
        .toOne(\.club, inverse: \Club.athletes).loading(.eager),
    ]
}

private struct Locker: StoredModel {
    var id: Int
    @Related var owner: Athlete?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Locker>] = [.toOne(\.owner, inverse: \Athlete.locker).loading(.eager)]
}

/// Promise: a one-to-one link moves when either side is saved with a new partner — in a
/// single save, a batch or inside a graph — the previous partners end unlinked in the same
/// transaction, and a save that fails leaves every link as it was.
///
/// Coach holds the key (`Coach.team_id`, unique). The fixture: coach 1 ↔ team 1, coach 2 ↔
/// team 2.
@Suite("Reliability: reassigning one-to-one links")
struct OneToOneReassignTests {
    private func pairs(_ backend: Backend) throws -> TestStore {
        let test = try TestStore(backend)
        for id in [1, 2] as [Int64] {
            var team = Team(id: id, name: "team \(id)")
            team.coach = Coach(id: id, name: "coach \(id)")
            try team.save(in: test.store)
        }
        test.resetSQL()
        return test
    }

    /// Each coach's team, by coach id.
    private func links(_ test: TestStore) throws -> [[SQLValue]] {
        try test.rawRows(#"SELECT "id", "team_id" FROM "Coach" ORDER BY "id""#)
    }

    /// Everything the tests can change.
    private func snapshot(_ test: TestStore) throws -> [[SQLValue]] {
        try test.rawRows(
            #"SELECT 'coach', "id", "name", "team_id" FROM "Coach" "#
                + #"UNION ALL SELECT 'team', "id", "name", NULL FROM "Team" ORDER BY 1, 2"#)
    }

    private func expectOneTransaction(_ test: TestStore, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(test.sql.filter { $0.hasPrefix("BEGIN") }.count == 1, sourceLocation: sourceLocation)
        if test.backend == .sqlite {
            // On SQLite, one that takes the write lock at once.
            #expect(test.sql.filter { $0 == "BEGIN IMMEDIATE" }.count == 1, sourceLocation: sourceLocation)
        }
        #expect(test.sql.filter { $0 == "COMMIT" }.count == 1, sourceLocation: sourceLocation)
    }

    // MARK: Single saves

    @Test(arguments: Backend.available) func reassigningFromTheKeyHoldingSideUnlinksThePreviousPartnerInOneTransaction(_ backend: Backend)
        throws
    {
        let test = try pairs(backend)
        var coach = Coach(id: 1)
        coach.team = Team(id: 2)
        #expect(try coach.save(in: test.store) == .updated)
        expectOneTransaction(test)
        #expect(try links(test) == [[.integer(1), .integer(2)], [.integer(2), .null]])
        #expect(try Team.find(key: 2, in: test.store)?.coach?.id == 1)
        #expect(try Team.find(key: 1, in: test.store)?.coach == nil)
        #expect(try Coach.find(key: 2, in: test.store)?.team == nil)
        #expect(try Coach.find(key: 1, in: test.store)?.name == "coach 1")  // merge rules still apply
    }

    @Test(arguments: Backend.available) func reassigningFromTheOtherSideUnlinksThePreviousPartnerInOneTransaction(_ backend: Backend) throws
    {
        let test = try pairs(backend)
        var team = Team(id: 2)
        team.coach = Coach(id: 1)
        try team.save(in: test.store)
        expectOneTransaction(test)
        #expect(try links(test) == [[.integer(1), .integer(2)], [.integer(2), .null]])
        #expect(try Team.find(key: 1, in: test.store)?.coach == nil)
    }

    @Test(arguments: Backend.available) func aNewRecordCanTakeAPartnerFromEitherSide(_ backend: Backend) throws {
        let test = try pairs(backend)
        var coach = Coach(id: 3, name: "coach 3")
        coach.team = Team(id: 1)
        #expect(try coach.save(in: test.store) == .inserted)
        var team = Team(id: 3, name: "team 3")
        team.coach = Coach(id: 2)
        #expect(try team.save(in: test.store) == .inserted)
        #expect(try links(test) == [[.integer(1), .null], [.integer(2), .integer(3)], [.integer(3), .integer(1)]])
    }

    @Test(arguments: Backend.available) func reassigningToAPartnerLoadedWithItsOldLinkTakesTheNewLink(_ backend: Backend) throws {
        let test = try pairs(backend)
        // The loaded team still names coach 2; the coach being saved names the team. The
        // coach's own choice is written last, so it wins.
        let loadedTeam = try #require(try Team.find(key: 2, in: test.store))
        #expect(loadedTeam.coach?.id == 2)
        var coach = Coach(id: 1)
        coach.team = loadedTeam
        try coach.save(in: test.store)
        #expect(try links(test) == [[.integer(1), .integer(2)], [.integer(2), .null]])

        // And from the other side: the loaded coach still names team 2; the team saving it
        // sets the link.
        let loadedCoach = try #require(try Coach.find(key: 1, in: test.store))
        #expect(loadedCoach.team?.id == 2)
        var team = Team(id: 1)
        team.coach = loadedCoach
        try team.save(in: test.store)
        #expect(try links(test) == [[.integer(1), .integer(1)], [.integer(2), .null]])
        #expect(try Team.find(key: 2, in: test.store)?.coach == nil)
    }

    @Test(arguments: Backend.available) func savingTheSameLinkAgainChangesNothing(_ backend: Backend) throws {
        let test = try pairs(backend)
        var coach = Coach(id: 2)
        coach.team = Team(id: 2)
        try coach.save(in: test.store)
        #expect(try links(test) == [[.integer(1), .integer(1)], [.integer(2), .integer(2)]])
    }

    // MARK: Batches

    @Test(arguments: Backend.available) func aBatchCanSwapPartnersFromTheKeyHoldingSide(_ backend: Backend) throws {
        let test = try pairs(backend)
        var first = Coach(id: 1)
        first.team = Team(id: 2)
        var second = Coach(id: 2)
        second.team = Team(id: 1)
        // Two coaches updated; the two teams they carry (keys only) are already stored as given.
        #expect(try Coach.save([first, second], in: test.store) == BatchSaveOutcome(inserted: 0, updated: 2, unchanged: 2))
        expectOneTransaction(test)
        #expect(try links(test) == [[.integer(1), .integer(2)], [.integer(2), .integer(1)]])
    }

    @Test(arguments: Backend.available) func aBatchCanSwapPartnersFromTheOtherSide(_ backend: Backend) throws {
        let test = try pairs(backend)
        var first = Team(id: 1)
        first.coach = Coach(id: 2)
        var second = Team(id: 2)
        second.coach = Coach(id: 1)
        _ = try Team.save([first, second], in: test.store)
        #expect(try links(test) == [[.integer(1), .integer(2)], [.integer(2), .integer(1)]])
    }

    /// Elements of a batch are saved in array order, later over earlier (as elements with the
    /// same key merge): two elements claiming one partner leave it with the last.
    @Test(arguments: Backend.available) func twoCoachesOfABatchClaimingOneTeamLeaveItWithTheLast(_ backend: Backend) throws {
        let test = try pairs(backend)
        var newcomer = Coach(id: 3, name: "coach 3")
        newcomer.team = Team(id: 2)
        var first = Coach(id: 1)
        first.team = Team(id: 2)
        #expect(try Coach.save([newcomer, first], in: test.store) == BatchSaveOutcome(inserted: 1, updated: 1, unchanged: 2))
        #expect(try links(test) == [[.integer(1), .integer(2)], [.integer(2), .null], [.integer(3), .null]])
        #expect(try Team.find(key: 1, in: test.store)?.coach == nil)
    }

    @Test(arguments: Backend.available) func twoTeamsOfABatchClaimingOneCoachLeaveItWithTheLast(_ backend: Backend) throws {
        let test = try pairs(backend)
        var second = Team(id: 2)
        second.coach = Coach(id: 1)
        var third = Team(id: 3, name: "team 3")
        third.coach = Coach(id: 1)
        #expect(try Team.save([second, third], in: test.store).inserted == 1)
        // Team 2 let coach 2 go for coach 1, who then left for team 3.
        #expect(try links(test) == [[.integer(1), .integer(3)], [.integer(2), .null]])
        #expect(try Team.find(key: 2, in: test.store)?.coach == nil)
    }

    // MARK: Graphs

    @Test(arguments: Backend.available) func aGraphSaveMovesACoachCarriedByItsTeamFromTheOtherSide(_ backend: Backend) throws {
        let test = try pairs(backend)
        var team = Team(id: 1)
        team.coach = Coach(id: 2)
        var player = Player(id: 9, name: "Pat")
        player.team = team
        try player.save(in: test.store)
        expectOneTransaction(test)
        #expect(try links(test) == [[.integer(1), .null], [.integer(2), .integer(1)]])
        #expect(try Player.find(key: 9, in: test.store)?.team?.id == 1)
    }

    @Test(arguments: Backend.available) func aGraphSaveMovesALockerTakenByAnAthleteReachedThroughItsClub(_ backend: Backend) throws {
        let test = try TestStore(backend)
        var ann = Athlete(id: 1)
        ann.locker = Locker(id: 10)
        var bo = Athlete(id: 2)
        bo.locker = Locker(id: 20)
        try Club(id: 1, athletes: [ann, bo]).save(in: test.store)
        #expect(
            try test.rawRows(#"SELECT "id", "locker_id" FROM "Athlete" ORDER BY "id""#) == [
                [.integer(1), .integer(10)], [.integer(2), .integer(20)],
            ])

        // Ann, reached as a child of her club, takes Bo's locker: the key-holding side, inside a graph.
        var moved = Athlete(id: 1)
        moved.locker = Locker(id: 20)
        try Club(id: 1, athletes: [moved, Athlete(id: 2)]).save(in: test.store)
        #expect(
            try test.rawRows(#"SELECT "id", "locker_id" FROM "Athlete" ORDER BY "id""#) == [
                [.integer(1), .integer(20)], [.integer(2), .null],
            ])
        #expect(try Locker.find(key: 10, in: test.store)?.owner == nil)
        #expect(try Locker.find(key: 20, in: test.store)?.owner?.id == 1)
    }

    // MARK: Failures

    @Test(arguments: Backend.available) func aSingleSaveThatFailsAfterUnlinkingLeavesEveryLinkAsItWas(_ backend: Backend) throws {
        let test = try pairs(backend)
        let before = try snapshot(test)
        // insert() fails on the existing key, after the previous partner was let go.
        var coach = Coach(id: 1)
        coach.team = Team(id: 2)
        let error = try #require(throws: ModelStoreError.self) { try coach.insert(in: test.store) }
        #expect(error.code == .alreadyExists)
        #expect(try snapshot(test) == before)

        var team = Team(id: 2)
        team.coach = Coach(id: 1)
        #expect(throws: ModelStoreError.self) { try team.insert(in: test.store) }
        #expect(try snapshot(test) == before)
    }

    @Test(arguments: Backend.available) func aBatchThatFailsOnALaterElementLeavesEveryLinkAsItWas(_ backend: Backend) throws {
        let test = try pairs(backend)
        // Refuse any record 3: a trigger on SQLite (which adds no constraint to a table), a check on a server.
        for table in ["Coach", "Team"] {
            try test.rawExecute(
                backend == .sqlite
                    ? #"CREATE TRIGGER "refuse_\#(table)_3" BEFORE INSERT ON "\#(table)" WHEN NEW."id" = 3 "#
                        + "BEGIN SELECT RAISE(ABORT, 'refused'); END"
                    : #"ALTER TABLE "\#(table)" ADD CONSTRAINT "refuse_\#(table)_3" CHECK ("id" <> 3)"#)
        }
        let before = try snapshot(test)

        var first = Coach(id: 1)
        first.team = Team(id: 2)
        var refused = Coach(id: 3)
        refused.team = Team(id: 1)
        let error = try #require(throws: ModelStoreError.self) { try Coach.save([first, refused], in: test.store) }
        #expect(error.message.contains("Element 1 of a batch of 2"))
        #expect(try snapshot(test) == before)

        var second = Team(id: 2)
        second.coach = Coach(id: 1)
        #expect(throws: ModelStoreError.self) { try Team.save([second, Team(id: 3)], in: test.store) }
        #expect(try snapshot(test) == before)
    }
}
