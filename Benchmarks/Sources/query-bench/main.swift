// Queries that go further, ModelStore next to hand-written SQLite C and GRDB in the same run,
// on the same file (made by ModelStore, filled once, not timed):
//  - Q1 a filter across a to-one: players whose team is in a region;
//  - Q2 a filter across a to-many: teams with any player scoring above a threshold;
//  - Q3 a count across a relationship: how many players play in a region;
//  - Q4 a grouped aggregate: players per position with count, average and maximum score,
//    HAVING count ≥ n, ordered by count.
// Each contender reads every result into values of its own (structs in Swift, C structs in C).
//
//   swift run -c release --package-path Benchmarks query-bench [--players N] [--reps K]
import CQueries
import Foundation
import GRDB
import ModelStore

struct Team: StoredModel {
    var id: Int64
    var name: String
    var region: String
    var players: [Player]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Team>] = [.toMany(\.players, inverse: \Player.team)]
}

struct Player: StoredModel {
    var id: Int64
    var name: String
    var score: Double
    var position: String
    var team: Team?
    static let primaryKey = ["id"]
    static let indexes: [TableIndex<Player>] = [.on(\.position)]
    static let relationships: [Relationship<Player>] = [.toOne(\.team, inverse: \Team.players)]
}

struct GTeam: Codable, FetchableRecord, TableRecord {
    var id: Int64
    var name: String
    var region: String
    static let databaseTableName = "Team"
    static let players = hasMany(GPlayer.self, using: ForeignKey(["team_id"]))
}

struct GPlayer: Codable, FetchableRecord, TableRecord {
    var id: Int64
    var name: String
    var score: Double
    var teamId: Int64?
    static let databaseTableName = "Player"
    static let team = belongsTo(GTeam.self, using: ForeignKey(["team_id"]))
    enum CodingKeys: String, CodingKey {
        case id, name, score
        case teamId = "team_id"
    }
}

struct PositionStats: Decodable, Sendable, FetchableRecord {
    var position: String
    var count: Int
    var average: Double?
    var best: Double?
}

let (players, reps): (Int, Int) = {
    var players = 200_000
    var reps = 7
    var arguments = CommandLine.arguments.dropFirst()
    while let flag = arguments.popFirst() {
        switch flag {
        case "--players": players = Int(arguments.popFirst() ?? "") ?? players
        case "--reps": reps = Int(arguments.popFirst() ?? "") ?? reps
        default:
            print("usage: query-bench [--players N] [--reps K]")
            exit(2)
        }
    }
    return (players, reps)
}()

func note(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("query-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let path = directory.appendingPathComponent("league.sqlite").path
let teams = max(10, players / 100)
let positions = ["keeper", "back", "wing", "center", "forward", "sweeper", "libero", "pivot"]
let regions = ["north", "south", "east", "west", "central"]

note("Writing \(teams) teams and \(players) players…")
do {
    let store = try ModelStore(path: path)
    try Team.save((1...teams).map { Team(id: Int64($0), name: "team \($0)", region: regions[$0 % regions.count]) }, in: store)
    try Player.save(
        (1...players).map { number in
            Player(
                id: Int64(number), name: "player \(number)", score: Double((number * 7919) % 1000) / 10,
                position: positions[number % positions.count], team: Team(id: Int64(number % teams + 1), name: "", region: ""))
        }, related: .mustExist, in: store)
    try store.close()
}
// The link column's name is ModelStore's; the C and GRDB contenders read the same file.
let columns = try DatabaseQueue(path: path).read { try $0.columns(in: "Player").map(\.name) }
guard columns.contains("team_id") else { fatalError("Player's link column is not team_id: \(columns)") }

func milliseconds(_ work: () throws -> Int64) rethrows -> (Double, Int64) {
    var samples: [Double] = []
    var check: Int64 = 0
    for _ in 0..<reps {
        let start = DispatchTime.now().uptimeNanoseconds
        check = try work()
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
    }
    return (samples.sorted()[samples.count / 2], check)
}

let store = try ModelStore(path: path)
let pool = try DatabasePool(path: path)
let c = cq_open(path)!
defer { cq_close(c) }

@MainActor func cRecords(_ sql: String, text: String) -> Int64 {
    var sum = cq_sum()
    guard cq_records_text(c, sql, text, &sum) == 0 else { fatalError(String(cString: cq_error(c))) }
    return sum.rows
}

@MainActor func cNamed(_ sql: String, value: Double) -> Int64 {
    var sum = cq_sum()
    guard cq_records_real(c, sql, value, &sum) == 0 else { fatalError(String(cString: cq_error(c))) }
    return sum.rows
}

var rows: [(String, Double, Double, Double, Int64)] = []

note("Q1 players of teams in a region…")
let q1ms = try milliseconds { Int64(try Player.findAll(where: .related(\.team, \.region == "north"), loading: .none, in: store).count) }
let q1c = milliseconds {
    cRecords(
        "SELECT p.id, p.name, p.score, p.team_id FROM Player p JOIN Team t ON t.id = p.team_id WHERE t.region = ? ORDER BY p.id",
        text: "north")
}
let q1g = try milliseconds {
    Int64(
        try pool.read { db in
            try GPlayer.joining(required: GPlayer.team.filter(Column("region") == "north")).order(Column("id")).fetchAll(db).count
        })
}
rows.append(("Q1 filter across a to-one", q1ms.0, q1c.0, q1g.0, q1ms.1))
guard q1ms.1 == q1c.1, q1c.1 == q1g.1 else { fatalError("Q1 results differ: \(q1ms.1) \(q1c.1) \(q1g.1)") }

note("Q2 teams with any player above a score…")
let q2ms = try milliseconds { Int64(try Team.findAll(where: .any(\.players, \.score > 99.8), loading: .none, in: store).count) }
let q2c = milliseconds {
    cNamed(
        "SELECT t.id, t.name, t.region FROM Team t WHERE t.id IN (SELECT p.team_id FROM Player p WHERE p.score > ?) ORDER BY t.id",
        value: 99.8)
}
let q2g = try milliseconds {
    Int64(
        try pool.read { db in
            try GTeam.having(GTeam.players.filter(Column("score") > 99.8).isEmpty == false).order(Column("id")).fetchAll(db).count
        })
}
rows.append(("Q2 filter across a to-many (any)", q2ms.0, q2c.0, q2g.0, q2ms.1))
guard q2ms.1 == q2c.1, q2c.1 == q2g.1 else { fatalError("Q2 results differ: \(q2ms.1) \(q2c.1) \(q2g.1)") }

note("Q3 count across a relationship…")
let q3ms = try milliseconds { Int64(try Player.filter(.related(\.team, \.region == "south")).count(in: store)) }
let q3c = milliseconds {
    var count: Int64 = 0
    guard cq_count_text(c, "SELECT count(*) FROM Player p JOIN Team t ON t.id = p.team_id WHERE t.region = ?", "south", &count) == 0
    else { fatalError(String(cString: cq_error(c))) }
    return count
}
let q3g = try milliseconds {
    Int64(try pool.read { db in try GPlayer.joining(required: GPlayer.team.filter(Column("region") == "south")).fetchCount(db) })
}
rows.append(("Q3 count across a to-one", q3ms.0, q3c.0, q3g.0, q3ms.1))
guard q3ms.1 == q3c.1, q3c.1 == q3g.1 else { fatalError("Q3 results differ: \(q3ms.1) \(q3c.1) \(q3g.1)") }

note("Q4 grouped aggregate…")
let q4ms = try milliseconds {
    Int64(
        try Player.all().grouped(by: \.position)
            .having(Aggregate.count() >= 10)
            .order(.descending(Aggregate.count()))
            .findAll(
                as: PositionStats.self, .count(), .average(\.score, as: "average"), .max(\.score, as: "best"), in: store
            ).count)
}
let q4c = milliseconds {
    var sum = cq_sum()
    guard
        cq_groups(
            c,
            "SELECT position, count(*), avg(score), max(score) FROM Player GROUP BY position HAVING count(*) >= ? ORDER BY count(*) DESC, position",
            10, &sum) == 0
    else { fatalError(String(cString: cq_error(c))) }
    return sum.rows
}
let q4g = try milliseconds {
    Int64(
        try pool.read { db in
            try GPlayer.select(
                Column("position"), count(Column("id")).forKey("count"), average(Column("score")).forKey("average"),
                max(Column("score")).forKey("best")
            )
            .group(Column("position"))
            .having(count(Column("id")) >= 10)
            .order(count(Column("id")).desc, Column("position"))
            .asRequest(of: PositionStats.self)
            .fetchAll(db).count
        })
}
rows.append(("Q4 grouped aggregate", q4ms.0, q4c.0, q4g.0, q4ms.1))
guard q4ms.1 == q4c.1, q4c.1 == q4g.1 else { fatalError("Q4 results differ: \(q4ms.1) \(q4c.1) \(q4g.1)") }
try store.close()

print("Queries on \(teams) teams and \(players) players (median of \(reps), ms)")
print("| Workload | ModelStore | C | GRDB | ModelStore / C | ModelStore / GRDB | rows |")
print("|---|---:|---:|---:|---:|---:|---:|")
for (name, ms, cTime, grdb, count) in rows {
    print(
        "| \(name) | \(String(format: "%.2f", ms)) | \(String(format: "%.2f", cTime)) | \(String(format: "%.2f", grdb)) | \(String(format: "%.2f", ms / cTime))× | \(String(format: "%.2f", ms / grdb))× | \(count) |"
    )
}
