import Foundation
import ModelStoreCSQLite
import Testing
@testable import ModelStore

// SQLite-only: written on SQLite files (raw checks through SQLite's catalog, backups, process
// kills); what they promise for a server runs in MigrationsOnBothBackendsTests.
/// A model history with relationships, v1 → v2 (declared renames) → v3 (steps): every
/// record's values checked after each version, through the models and on disk.
@Suite("Migrations: a v1 → v2 → v3 history")
struct HistoryTests {
    private let directory: URL
    private let path: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("history-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("store.sqlite").path
    }

    /// Reads the file with SQL alone, through a bare connection (a store without the steps
    /// would refuse a file they migrated).
    private func disk(_ sql: String) throws -> [[SQLValue]] {
        let connection = try Connection(location: path, flags: SQLITE_OPEN_READONLY, busyTimeout: 5)
        defer { connection.close() }
        let statement = try connection.makeStatement(sql)
        var rows: [[SQLValue]] = []
        try statement.forEachRow { rows.append((0..<statement.columnCount).map { statement.value(at: $0) }) }
        return rows
    }

    private func writeVersion1() throws {
        let store = try ModelStore(path: path)
        try HistoryData.writeVersion1(to: store)
        try store.close()
    }

    // MARK: What each version must see

    private func expectVersion2(_ store: ModelStore) throws {
        let athletes = try V2.Athlete.findAll(loading: .direct, in: store).sorted { $0.athleteId < $1.athleteId }
        #expect(athletes.map(\.athleteId) == HistoryData.players.map(\.id))
        for (athlete, player) in zip(athletes, HistoryData.players) {
            #expect(athlete.name == player.name)
            #expect(athlete.price == player.cost, "\(player.name)'s price")
            #expect(athlete.club?.teamId == player.team, "\(player.name)'s club")
            #expect(Set((athlete.tags ?? []).map(\.label)) == Set(player.tags), "\(player.name)'s tags")
        }
        let teams = try V2.Team.findAll(loading: .direct, in: store).sorted { $0.teamId < $1.teamId }
        #expect(teams.map(\.name) == HistoryData.teams.map(\.name))
        for team in teams {
            let expected = HistoryData.players.filter { $0.team == team.teamId }.map(\.id)
            #expect(Set((team.roster ?? []).map(\.athleteId)) == Set(expected), "team \(team.teamId)'s roster")
        }
        let tags = try V2.Tag.findAll(loading: .direct, in: store)
        for tag in tags {
            let expected = HistoryData.players.filter { $0.tags.contains(tag.label) }.map(\.id)
            #expect(Set((tag.athletes ?? []).map(\.athleteId)) == Set(expected), "tag \(tag.label)")
        }
    }

    private func expectVersion2OnDisk() throws {
        let rows = try disk("SELECT athleteId, name, price, club_teamId FROM Athlete ORDER BY athleteId")
        #expect(
            rows
                == HistoryData.players.map {
                    [.integer($0.id), .text($0.name), $0.cost.map(SQLValue.real) ?? .null, $0.team.map(SQLValue.integer) ?? .null]
                })
        let links = try disk("SELECT Athlete_tags_athleteId, Tag_athletes_label FROM Athlete_tags__Tag_athletes ORDER BY 1, 2")
        let expectedLinks = HistoryData.players.flatMap { player in player.tags.sorted().map { [SQLValue.integer(player.id), .text($0)] } }
        #expect(links == expectedLinks)
        // Nothing is left under the old names, and Team.city is kept with its values.
        let tables = try disk("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").map { $0[0] }
        #expect(!tables.contains(.text("Player")) && !tables.contains(.text("Player_tags__Tag_players")))
        #expect(try disk("SELECT city FROM Team ORDER BY teamId") == HistoryData.teams.map { [$0.city.map(SQLValue.text) ?? .null] })
        let indexes = try disk("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE '%Player%'")
        #expect(indexes.isEmpty, "indexes derived from old names: \(indexes)")
        #expect(try disk("PRAGMA foreign_key_check").isEmpty)
    }

    private func expectVersion3(_ store: ModelStore) throws {
        let athletes = try V3.Athlete.findAll(loading: .direct, in: store).sorted { $0.athleteId < $1.athleteId }
        #expect(athletes.map(\.athleteId) == HistoryData.players.map(\.id))
        for (athlete, player) in zip(athletes, HistoryData.players) {
            #expect(athlete.name == player.name)
            #expect(athlete.priceCents == player.cost.map { Int64(($0 * 100).rounded()) }, "\(player.name)'s price in cents")
            #expect(athlete.club?.teamId == player.team, "\(player.name)'s club")
            #expect(Set((athlete.tags ?? []).map(\.label)) == Set(player.tags), "\(player.name)'s tags")
        }
        let contracts = try V3.Contract.findAll(in: store).sorted { $0.contractId < $1.contractId }
        #expect(
            contracts
                == HistoryData.contracts.map {
                    V3.Contract(contractId: $0.0 * 100 + $0.1 % 100, athleteId: $0.0, season: $0.1, amount: $0.2)
                })
        #expect(try store.appliedMigrations() == V3.steps.map(\.name))
    }

    private func expectVersion3OnDisk() throws {
        let rows = try disk("SELECT athleteId, name, priceCents, typeof(priceCents), club_teamId FROM Athlete ORDER BY athleteId")
        #expect(
            rows
                == HistoryData.players.map { player in
                    let cents = player.cost.map { Int64(($0 * 100).rounded()) }
                    return [
                        .integer(player.id), .text(player.name), cents.map(SQLValue.integer) ?? .null,
                        .text(cents == nil ? "null" : "integer"), player.team.map(SQLValue.integer) ?? .null,
                    ]
                })
        let athleteColumns = try disk("SELECT name FROM pragma_table_info('Athlete') ORDER BY cid").map { $0[0] }
        #expect(athleteColumns == [.text("athleteId"), .text("name"), .text("priceCents"), .text("club_teamId")])
        #expect(try disk("SELECT name FROM pragma_table_info('Team') WHERE name = 'city'").isEmpty)
        #expect(try disk("SELECT name FROM pragma_table_info('Contract') WHERE pk > 0") == [[.text("contractId")]])
        #expect(
            try disk("SELECT count(*) FROM Athlete_tags__Tag_athletes") == [[.integer(Int64(HistoryData.players.flatMap(\.tags).count))]])
        #expect(try disk("PRAGMA foreign_key_check").isEmpty)
        #expect(try disk("PRAGMA integrity_check") == [[.text("ok")]])
    }

    // MARK: The history

    @Test func versionOneThenTwoThenThreeKeepsEveryValueAndLink() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try writeVersion1()

        // v2: the renames run on first use; a plan first shows them, and that city is unused.
        let plan = try ModelStore.migrationPlan(at: path, for: [V2.Athlete.self, V2.Team.self, V2.Tag.self, V1.Contract.self])
        #expect(plan.pendingSteps.isEmpty)
        #expect(plan.statements.contains { $0.contains("RENAME TO \"Athlete\"") })
        #expect(plan.statements.contains { $0.contains("RENAME COLUMN \"cost\" TO \"price\"") })
        #expect(plan.unusedColumns.map(\.description) == ["Team.city"])
        #expect(try disk("SELECT count(*) FROM Player") == [[.integer(5)]], "the plan changed the file")

        let version2 = try ModelStore(path: path)
        try expectVersion2(version2)
        // A second use renames nothing more.
        #expect(try version2.migrationPlan(for: [V2.Athlete.self, V2.Team.self]).statements.isEmpty)
        try version2.close()
        try expectVersion2OnDisk()

        // v3: the steps run as the store opens.
        let version3 = try ModelStore(path: path, configuration: .init(migrations: V3.steps))
        try expectVersion3(version3)
        try version3.close()
        try expectVersion3OnDisk()

        // Opening again runs nothing.
        let again = try ModelStore(path: path, configuration: .init(migrations: V3.steps))
        try expectVersion3(again)
        #expect(try again.migrationPlan(for: [V3.Athlete.self, V3.Team.self, V3.Contract.self]).changesNothing)
        try again.close()
    }

    @Test func versionOneOpenedDirectlyByVersionThreeEndsTheSame() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try writeVersion1()
        let plan = try ModelStore.migrationPlan(at: path, configuration: .init(migrations: V3.steps), for: [V3.Athlete.self])
        #expect(plan.pendingSteps == V3.steps.map(\.name))
        #expect(try disk("SELECT count(*) FROM Player") == [[.integer(5)]], "the plan changed the file")

        let store = try ModelStore(path: path, configuration: .init(migrations: V3.steps))
        try expectVersion3(store)
        try store.close()
        try expectVersion3OnDisk()
    }

    @Test func aVersionTwoStoreCanStillWriteAndReadThroughTheRenamedNames() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try writeVersion1()
        let store = try ModelStore(path: path)
        // The first call is a read: it must see the old records, not an empty new table.
        #expect(try V2.Athlete.count(in: store) == 5)
        var fay = V2.Athlete(athleteId: 15, name: "Fay", price: 7, tags: [V2.Tag(label: "spare")])
        fay.club = V2.Team(teamId: 2, name: "Herons")
        try fay.save(in: store)
        let found = try #require(try V2.Athlete.find(key: 15, loading: .direct, in: store))
        #expect(found.club?.teamId == 2)
        #expect(found.tags?.map(\.label) == ["spare"])
        #expect(try V2.Team.find(key: 2, loading: .direct, in: store)?.roster?.map(\.athleteId).sorted() == [12, 15])
        try store.close()
    }
}
