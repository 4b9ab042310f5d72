import BenchCore
import Foundation
import GRDB

/// GRDB with Codable records, the way its documentation shows.
public struct GRDBContender: Contender {
    public let name = "GRDB"

    public init() {}

    struct Item: Codable, FetchableRecord, PersistableRecord {
        var id: Int64
        var name: String
        var price: Double
        var quantity: Int64
        var createdAt: Double
        var note: String?
        static let databaseTableName = "item"
    }

    /// W1d and W3d: the item with its creation time a `Date`, stored as GRDB stores dates by
    /// default (text).
    struct DatedItem: Codable, FetchableRecord, PersistableRecord {
        var id: Int64
        var name: String
        var price: Double
        var quantity: Int64
        var createdAt: Date
        var note: String?
        static let databaseTableName = "item"
    }

    struct Team: Codable, FetchableRecord, PersistableRecord {
        var id: Int64
        var name: String
        static let databaseTableName = "team"
        static let players = hasMany(Player.self, using: ForeignKey(["team_id"]))
    }

    struct Player: Codable, FetchableRecord, PersistableRecord {
        var id: Int64
        var name: String
        var teamId: Int64?
        static let databaseTableName = "player"
        enum CodingKeys: String, CodingKey { case id, name, teamId = "team_id" }
    }

    struct TeamInfo: Decodable, FetchableRecord {
        var team: Team
        var players: [Player]
    }

    struct Worker: Codable, FetchableRecord, PersistableRecord {
        var id: Int64
        var name: String
        static let databaseTableName = "worker"
        static let links = hasMany(WorkerSnack.self, using: ForeignKey([Schema.workerColumn]))
        static let snacks = hasMany(Snack.self, through: links, using: WorkerSnack.snack)
    }

    struct Snack: Codable, FetchableRecord, PersistableRecord {
        var id: Int64
        var name: String
        static let databaseTableName = "snack"
    }

    struct WorkerSnack: TableRecord {
        static let databaseTableName = Schema.joinTable
        static let snack = belongsTo(Snack.self, using: ForeignKey([Schema.snackColumn]))
    }

    struct WorkerInfo: Decodable, FetchableRecord {
        var worker: Worker
        var snacks: [Snack]
    }

    private func open(_ path: String, schema: String) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { try $0.execute(sql: schema) }
        return pool
    }

    private static func items(_ data: [ItemData]) -> [Item] {
        data.map { Item(id: $0.id, name: $0.name, price: $0.price, quantity: $0.quantity, createdAt: $0.createdAt, note: $0.note) }
    }

    private static func datedItems(_ data: [ItemData]) -> [DatedItem] {
        data.map {
            DatedItem(
                id: $0.id, name: $0.name, price: $0.price, quantity: $0.quantity,
                createdAt: Date(timeIntervalSinceReferenceDate: $0.createdAt), note: $0.note)
        }
    }

    public func prepare(_ workload: Workload, data: Dataset, path: String) throws -> PreparedRun {
        switch workload {
        case .w1d:
            let pool = try open(path, schema: Schema.item)
            let items = Self.datedItems(data.items)
            return PreparedRun(
                timed: { try pool.write { db in for item in items { try item.insert(db) } } },
                verify: { withExtendedLifetime(pool) { Checksum.ofFile(path, Checksum.itemTableSQL) } })
        case .w3d:
            let pool = try open(path, schema: Schema.item)
            let items = Self.datedItems(data.items)
            try pool.write { db in for item in items { try item.insert(db) } }
            var loaded: [DatedItem] = []
            return PreparedRun(
                timed: { loaded = try pool.read { try DatedItem.fetchAll($0) } },
                verify: {
                    var checksum = Checksum()
                    for item in loaded { checksum.add(key: item.id, text: item.name, price: item.price) }
                    return checksum
                })
        case .w1, .w1r:
            let pool = try open(path, schema: Schema.item)
            let items = Self.items(data.items)
            return PreparedRun(
                timed: { try pool.write { db in for item in items { try item.insert(db) } } },
                verify: { withExtendedLifetime(pool) { Checksum.ofFile(path, Checksum.itemTableSQL) } })
        case .w2:
            let pool = try open(path, schema: Schema.item)
            let stored = Self.items(Array(data.items.prefix(data.rows / 2)))
            try pool.write { db in for item in stored { try item.insert(db) } }
            let upserts = Self.items(data.upserts)
            return PreparedRun(
                timed: { try pool.write { db in for item in upserts { try item.upsert(db) } } },
                verify: { withExtendedLifetime(pool) { Checksum.ofFile(path, Checksum.itemTableSQL) } })
        case .w11:
            let pool = try open(path, schema: Schema.item)
            let items = Self.items(data.items)
            try pool.write { db in for item in items { try item.insert(db) } }
            return PreparedRun(
                timed: { try pool.write { db in for item in items { try item.upsert(db) } } },
                verify: { withExtendedLifetime(pool) { Checksum.ofFile(path, Checksum.itemTableSQL) } })
        case .w12:
            let pool = try open(path, schema: Schema.itemByName)
            let stored = Self.items(Array(data.items.prefix(data.rows / 2)))
            try pool.write { db in for item in stored { try item.insert(db) } }
            let upserts = Self.items(data.upserts)
            return PreparedRun(
                timed: {
                    // GRDB's upsert needs a unique index to conflict on; matching by another
                    // column is a lookup, then an update or an insert.
                    try pool.write { db in
                        for item in upserts {
                            if let found = try Item.filter(Column("name") == item.name).fetchOne(db) {
                                var updated = item
                                updated.id = found.id
                                try updated.update(db)
                            } else {
                                try item.insert(db)
                            }
                        }
                    }
                },
                verify: { withExtendedLifetime(pool) { Checksum.ofFile(path, Checksum.itemTableSQL) } })
        case .w3, .w3r, .w4, .w4b, .w5, .w8, .w8r, .w10:
            let pool = try open(path, schema: Schema.item)
            let items = Self.items(data.items)
            try pool.write { db in for item in items { try item.insert(db) } }
            return try readRun(workload, pool: pool, data: data, path: path)
        case .w6:
            let pool = try open(path, schema: Schema.teams)
            try Self.insertGraphs(pool, data)
            var loaded: [TeamInfo] = []
            return PreparedRun(
                timed: {
                    loaded = try pool.read { db in try Team.including(all: Team.players).asRequest(of: TeamInfo.self).fetchAll(db) }
                },
                verify: {
                    var checksum = Checksum()
                    for info in loaded {
                        checksum.add(key: info.team.id, text: info.team.name)
                        for player in info.players { checksum.add(key: player.id, text: player.name) }
                    }
                    return checksum
                })
        case .w7:
            let pool = try open(path, schema: Schema.workers)
            try pool.write { db in
                for statement in Schema.workerRows(data) where statement != "BEGIN" && statement != "COMMIT" {
                    try db.execute(sql: statement)
                }
            }
            var loaded: [WorkerInfo] = []
            return PreparedRun(
                timed: {
                    loaded = try pool.read { db in try Worker.including(all: Worker.snacks).asRequest(of: WorkerInfo.self).fetchAll(db) }
                },
                verify: {
                    var checksum = Checksum()
                    for info in loaded {
                        checksum.add(key: info.worker.id, text: info.worker.name)
                        for snack in info.snacks.sorted(by: { $0.id < $1.id }) { checksum.add(key: snack.id, text: snack.name) }
                    }
                    return checksum
                })
        case .w9:
            let pool = try open(path, schema: Schema.teams)
            return PreparedRun(
                timed: { try Self.insertGraphs(pool, data) },
                verify: { withExtendedLifetime(pool) { Checksum.ofFile(path, Checksum.graphTableSQL) } })
        }
    }

    private func readRun(_ workload: Workload, pool: DatabasePool, data: Dataset, path: String) throws -> PreparedRun {
        var checksum = Checksum()
        switch workload {
        case .w3, .w3r:
            var loaded: [Item] = []
            return PreparedRun(
                timed: { loaded = try pool.read { try Item.fetchAll($0) } },
                verify: {
                    var checksum = Checksum()
                    for item in loaded { checksum.add(key: item.id, text: item.name, price: item.price) }
                    return checksum
                })
        case .w4:
            let keys = data.lookupKeys
            return PreparedRun(
                timed: {
                    checksum = Checksum()
                    for key in keys {
                        if let item = try pool.read({ try Item.fetchOne($0, key: key) }) {
                            checksum.add(key: item.id, text: item.name, price: item.price)
                        }
                    }
                }, verify: { checksum })
        case .w4b:
            let keys = data.lookupKeys
            return PreparedRun(
                timed: {
                    checksum = Checksum()
                    try pool.read { db in
                        for key in keys {
                            if let item = try Item.fetchOne(db, key: key) { checksum.add(key: item.id, text: item.name, price: item.price) }
                        }
                    }
                }, verify: { checksum })
        case .w5:
            let thresholds = data.thresholds
            return PreparedRun(
                timed: {
                    checksum = Checksum()
                    for threshold in thresholds {
                        let page = try pool.read { db in
                            try Item.filter(Column("price") > threshold).order(Column("price"), Column("id")).limit(50, offset: 100)
                                .fetchAll(db)
                        }
                        for item in page { checksum.add(key: item.id, text: item.name, price: item.price) }
                    }
                }, verify: { checksum })
        case .w8, .w8r:
            let median = data.medianPrice
            return PreparedRun(
                timed: { _ = try pool.write { try Item.filter(Column("price") < median).deleteAll($0) } },
                verify: { Checksum.ofFile(path, Checksum.itemTableSQL) })
        default:
            let batch = Self.items(data.concurrentBatch)
            let keys = data.lookupKeys
            let fetches = Tally()
            return PreparedRun(
                timed: {
                    fetches.reset()
                    fetches.add(
                        try fetchesWhileWriting({ try pool.write { db in for item in batch { try item.insert(db) } } }) { done in
                            _ = try? pool.read { try Item.fetchOne($0, key: keys[done % keys.count]) }
                        })
                }, verify: { Checksum.ofFile(path, Checksum.itemTableSQL) }, operations: { fetches.value })
        }
    }

    private static func insertGraphs(_ pool: DatabasePool, _ data: Dataset) throws {
        try pool.write { db in
            for (team, players) in zip(data.teams, data.players) {
                try Team(id: team.id, name: team.name).insert(db)
                for player in players { try Player(id: player.id, name: player.name, teamId: team.id).insert(db) }
            }
        }
    }
}
