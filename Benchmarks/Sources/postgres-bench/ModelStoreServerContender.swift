import BenchCore
import Foundation
import ModelStore
import ModelStorePostgres

/// Stores the contender opened, closed after each workload.
nonisolated(unsafe) var openStores: [ModelStore] = []

/// ModelStore on the server, through its public API only: the calls the README teaches,
/// the store opened with `ModelStore(postgres:)`.
struct ModelStoreServerContender: ServerContender {
    let name = "ModelStore"

    struct Item: StoredModel {
        var id: Int64
        var name: String
        var price: Double
        var quantity: Int64
        var createdAt: Double
        var note: String?
        static let primaryKey = ["id"]
        static let tableName = "item"
        static let indexes: [TableIndex<Item>] = [.on(\.price)]
    }

    /// W1r: the item table, with a many-to-many to tags that W1r's saves do not hold.
    struct TaggedItem: StoredModel {
        var id: Int64
        var name: String
        var price: Double
        var quantity: Int64
        var createdAt: Double
        var note: String?
        var tags: [Tag]?
        static let primaryKey = ["id"]
        static let tableName = "item"
        static let indexes: [TableIndex<TaggedItem>] = [.on(\.price)]
        static let relationships: [Relationship<TaggedItem>] = [.toMany(\.tags, inverse: \Tag.items)]
    }

    struct Tag: StoredModel {
        var id: Int64
        var label: String
        var items: [TaggedItem]?
        static let primaryKey = ["id"]
        static let relationships: [Relationship<Tag>] = [.toMany(\.items, inverse: \TaggedItem.tags)]
    }

    struct Team: StoredModel {
        var id: Int64
        var name: String
        var players: [Player]?
        static let primaryKey = ["id"]
        static let tableName = "team"
        static let relationships: [Relationship<Team>] = [.toMany(\.players, inverse: \Player.team)]
    }

    struct Player: StoredModel {
        var id: Int64
        var name: String
        @Related var team: Team?
        static let primaryKey = ["id"]
        static let tableName = "player"
        static let relationships: [Relationship<Player>] = [.toOne(\.team, inverse: \Team.players)]
    }

    struct Worker: StoredModel {
        var id: Int64
        var name: String
        var snacks: [Snack]?
        static let primaryKey = ["id"]
        static let tableName = "worker"
        static let relationships: [Relationship<Worker>] = [.toMany(\.snacks, inverse: \Snack.workers)]
    }

    struct Snack: StoredModel {
        var id: Int64
        var name: String
        var workers: [Worker]?
        static let primaryKey = ["id"]
        static let tableName = "snack"
        static let relationships: [Relationship<Snack>] = [.toMany(\.workers, inverse: \Worker.snacks)]
    }

    private static func items(_ data: [ItemData]) -> [Item] {
        data.map { Item(id: $0.id, name: $0.name, price: $0.price, quantity: $0.quantity, createdAt: $0.createdAt, note: $0.note) }
    }

    private static func teams(_ data: Dataset) -> [Team] {
        zip(data.teams, data.players).map { team, players in
            Team(id: team.id, name: team.name, players: players.map { Player(id: $0.id, name: $0.name) })
        }
    }

    func prepare(_ workload: Workload, data: Dataset, server: Server, schema: String) throws -> PreparedRun {
        try server.freshSchema(schema)
        var configuration = try PostgresConfiguration(url: server.url)
        configuration.schema = schema
        let store = try ModelStore(postgres: configuration)
        openStores.append(store)
        let itemChecksum = { try withExtendedLifetime(store) { try server.checksum(schema, Server.itemChecksumSQL) } }
        var checksum = Checksum()
        // A store connects its readers at its first read; the hand-written program's connection
        // is open before its clock starts, so the store's reader is too (a read before timing).
        let openReader = { (count: () throws -> Int) in _ = try count() }
        switch workload {
        case .w1:
            _ = try Item.deleteAll(in: store)  // creates the table outside the timing (a write does)
            let items = Self.items(data.items)
            return PreparedRun(timed: { try Item.save(items, in: store) }, verify: itemChecksum)
        case .w1r:
            _ = try TaggedItem.deleteAll(in: store)  // the item and join tables, outside the timing
            let items = data.items.map {
                TaggedItem(id: $0.id, name: $0.name, price: $0.price, quantity: $0.quantity, createdAt: $0.createdAt, note: $0.note)
            }
            return PreparedRun(timed: { try TaggedItem.save(items, in: store) }, verify: itemChecksum)
        case .w2:
            try Item.save(Self.items(Array(data.items.prefix(data.rows / 2))), in: store)
            let upserts = Self.items(data.upserts)
            return PreparedRun(timed: { try Item.save(upserts, in: store) }, verify: itemChecksum)
        case .w3:
            try Item.save(Self.items(data.items), in: store)
            try openReader { try Item.count(in: store) }
            var loaded: [Item] = []
            return PreparedRun(
                timed: { loaded = try Item.findAll(in: store) },
                verify: {
                    var checksum = Checksum()
                    for item in loaded { checksum.add(key: item.id, text: item.name, price: item.price) }
                    return checksum
                })
        case .w4:
            try Item.save(Self.items(data.items), in: store)
            try openReader { try Item.count(in: store) }
            return PreparedRun(
                timed: {
                    checksum = Checksum()
                    for key in data.lookupKeys {
                        if let item = try Item.find(key: key, in: store) { checksum.add(key: item.id, text: item.name, price: item.price) }
                    }
                }, verify: { checksum })
        case .w5:
            try Item.save(Self.items(data.items), in: store)
            try openReader { try Item.count(in: store) }
            return PreparedRun(
                timed: {
                    checksum = Checksum()
                    for threshold in data.thresholds {
                        let page = try Item.filter(\.price > threshold).order(.ascending(\.price)).limit(50, offset: 100).findAll(in: store)
                        for item in page { checksum.add(key: item.id, text: item.name, price: item.price) }
                    }
                }, verify: { checksum })
        case .w6:
            try Team.save(Self.teams(data), in: store)
            try openReader { try Team.count(in: store) }
            var loaded: [Team] = []
            return PreparedRun(
                timed: { loaded = try Team.findAll(loading: .direct, in: store) },
                verify: {
                    var checksum = Checksum()
                    for team in loaded {
                        checksum.add(key: team.id, text: team.name)
                        for player in team.players ?? [] { checksum.add(key: player.id, text: player.name) }
                    }
                    return checksum
                })
        case .w7:
            let snacks = data.snacks.map { Snack(id: $0.id, name: $0.name) }
            try Snack.save(snacks, in: store)
            try Worker.save(
                zip(data.workers, data.workerSnacks).map { worker, ids in
                    Worker(id: worker.id, name: worker.name, snacks: ids.map { snacks[Int($0) - 1] })
                }, in: store)
            try openReader { try Worker.count(in: store) }
            var loaded: [Worker] = []
            return PreparedRun(
                timed: { loaded = try Worker.findAll(loading: .direct, in: store) },
                verify: {
                    var checksum = Checksum()
                    for worker in loaded {
                        checksum.add(key: worker.id, text: worker.name)
                        for snack in worker.snacks ?? [] { checksum.add(key: snack.id, text: snack.name) }
                    }
                    return checksum
                })
        case .w8:
            try Item.save(Self.items(data.items), in: store)
            let median = data.medianPrice
            return PreparedRun(timed: { try Item.deleteAll(where: \.price < median, in: store) }, verify: itemChecksum)
        case .w9:
            _ = try Team.deleteAll(in: store)  // creates the tables outside the timing (a write does)
            let teams = Self.teams(data)
            return PreparedRun(
                timed: { try Team.save(teams, in: store) },
                verify: { try withExtendedLifetime(store) { try server.checksum(schema, Server.graphChecksumSQL) } })
        default:
            preconditionFailure("\(workload.rawValue) is not in the server benchmark")
        }
    }
}
