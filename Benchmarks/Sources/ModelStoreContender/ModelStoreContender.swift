import BenchCore
import Foundation
import ModelStore

/// ModelStore, through its public API only.
public struct ModelStoreContender: Contender {
    public let name = "ModelStore"

    public init() {}

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

    /// W12: the item table with an index on the name the batch matches by.
    struct NamedItem: StoredModel {
        var id: Int64
        var name: String
        var price: Double
        var quantity: Int64
        var createdAt: Double
        var note: String?
        static let primaryKey = ["id"]
        static let tableName = "item"
        static let indexes: [TableIndex<NamedItem>] = [.on(\.price), .on(\.name)]
    }

    /// W1r and W3r: the item table, with a many-to-many to tags that W1r's saves do not hold
    /// and W3r's finder does not ask for.
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

    /// W1d and W3d: the item with its creation time a `Date` (stored as the REAL it holds).
    struct DatedItem: StoredModel {
        var id: Int64
        var name: String
        var price: Double
        var quantity: Int64
        var createdAt: Date
        var note: String?
        static let primaryKey = ["id"]
        static let tableName = "item"
        static let indexes: [TableIndex<DatedItem>] = [.on(\.price)]
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

    private static func datedItems(_ data: [ItemData]) -> [DatedItem] {
        data.map {
            DatedItem(
                id: $0.id, name: $0.name, price: $0.price, quantity: $0.quantity,
                createdAt: Date(timeIntervalSinceReferenceDate: $0.createdAt), note: $0.note)
        }
    }

    private static func teams(_ data: Dataset) -> [Team] {
        zip(data.teams, data.players).map { team, players in
            Team(id: team.id, name: team.name, players: players.map { Player(id: $0.id, name: $0.name) })
        }
    }

    public func prepare(_ workload: Workload, data: Dataset, path: String) throws -> PreparedRun {
        // W10 compares readers that must not stall behind a long write, as GRDB's pool
        // readers do not: that is ReadOrdering.latestCommitted. Every other workload uses the
        // default configuration.
        let configuration = ModelStore.Configuration(readOrdering: workload == .w10 ? .latestCommitted : .afterEarlierWrites)
        let store = try ModelStore(path: path, configuration: configuration)
        switch workload {
        case .w1:
            _ = try Item.deleteAll(in: store)  // creates the table outside the timing (a write does)
            let items = Self.items(data.items)
            return PreparedRun(
                timed: { try Item.save(items, in: store) },
                verify: { withExtendedLifetime(store) { Checksum.ofFile(path, Checksum.itemTableSQL) } })
        case .w1d:
            _ = try DatedItem.deleteAll(in: store)  // creates the table outside the timing (a write does)
            let items = Self.datedItems(data.items)
            return PreparedRun(
                timed: { try DatedItem.save(items, in: store) },
                verify: { withExtendedLifetime(store) { Checksum.ofFile(path, Checksum.itemTableSQL) } })
        case .w3d:
            try DatedItem.save(Self.datedItems(data.items), in: store)
            var loaded: [DatedItem] = []
            return PreparedRun(
                timed: { loaded = try DatedItem.findAll(in: store) },
                verify: {
                    var checksum = Checksum()
                    for item in loaded { checksum.add(key: item.id, text: item.name, price: item.price) }
                    return checksum
                })
        case .w1r:
            // The tags' join table and the item table are made outside the timing.
            _ = try TaggedItem.deleteAll(in: store)
            let items = data.items.map {
                TaggedItem(id: $0.id, name: $0.name, price: $0.price, quantity: $0.quantity, createdAt: $0.createdAt, note: $0.note)
            }
            return PreparedRun(
                timed: { try TaggedItem.save(items, in: store) },
                verify: { withExtendedLifetime(store) { Checksum.ofFile(path, Checksum.itemTableSQL) } })
        case .w2:
            try Item.save(Self.items(Array(data.items.prefix(data.rows / 2))), in: store)
            let upserts = Self.items(data.upserts)
            return PreparedRun(
                timed: { try Item.save(upserts, in: store) },
                verify: { withExtendedLifetime(store) { Checksum.ofFile(path, Checksum.itemTableSQL) } })
        case .w11:
            let items = Self.items(data.items)
            try Item.save(items, in: store)
            return PreparedRun(
                timed: { try Item.save(items, in: store) },
                verify: { withExtendedLifetime(store) { Checksum.ofFile(path, Checksum.itemTableSQL) } })
        case .w12:
            let named = { (data: [ItemData]) in
                data.map {
                    NamedItem(id: $0.id, name: $0.name, price: $0.price, quantity: $0.quantity, createdAt: $0.createdAt, note: $0.note)
                }
            }
            try NamedItem.save(named(Array(data.items.prefix(data.rows / 2))), in: store)
            let upserts = named(data.upserts)
            return PreparedRun(
                timed: { try NamedItem.save(upserts, matching: MatchKeys(varying: [\.name]), in: store) },
                verify: { withExtendedLifetime(store) { Checksum.ofFile(path, Checksum.itemTableSQL) } })
        case .w3r:
            // Every item carries one tag, so loading the relationship would read 100,000 links.
            let tag = Tag(id: 1, label: "all")
            try TaggedItem.save(
                data.items.map {
                    TaggedItem(
                        id: $0.id, name: $0.name, price: $0.price, quantity: $0.quantity, createdAt: $0.createdAt, note: $0.note,
                        tags: [tag])
                }, in: store)
            var loaded: [TaggedItem] = []
            return PreparedRun(
                timed: { loaded = try TaggedItem.findAll(in: store) },
                verify: {
                    var checksum = Checksum()
                    for item in loaded { checksum.add(key: item.id, text: item.name, price: item.price) }
                    return checksum
                })
        case .w3, .w4, .w4b, .w5, .w8, .w10:
            try Item.save(Self.items(data.items), in: store)
            return try readRun(workload, store: store, data: data, path: path)
        case .w8r:
            // The same rows as W8's, of a model whose many-to-many (no item holds a tag) has the
            // default rule, nullify: its join rows would go with each deleted item.
            try TaggedItem.save(
                data.items.map {
                    TaggedItem(id: $0.id, name: $0.name, price: $0.price, quantity: $0.quantity, createdAt: $0.createdAt, note: $0.note)
                }, in: store)
            let median = data.medianPrice
            return PreparedRun(
                timed: { try TaggedItem.deleteAll(where: \.price < median, in: store) },
                verify: { withExtendedLifetime(store) { Checksum.ofFile(path, Checksum.itemTableSQL) } })
        case .w6:
            try Team.save(Self.teams(data), in: store)
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
        case .w9:
            _ = try Team.deleteAll(in: store)  // creates the tables outside the timing (a write does)
            let teams = Self.teams(data)
            return PreparedRun(
                timed: { try Team.save(teams, in: store) },
                verify: { withExtendedLifetime(store) { Checksum.ofFile(path, Checksum.graphTableSQL) } })
        }
    }

    private func readRun(_ workload: Workload, store: ModelStore, data: Dataset, path: String) throws -> PreparedRun {
        var checksum = Checksum()
        switch workload {
        case .w3:
            var loaded: [Item] = []
            return PreparedRun(
                timed: { loaded = try Item.findAll(in: store) },
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
                        if let item = try Item.find(key: key, in: store) { checksum.add(key: item.id, text: item.name, price: item.price) }
                    }
                }, verify: { checksum })
        case .w4b:
            let keys = data.lookupKeys
            return PreparedRun(
                timed: {
                    checksum = Checksum()
                    try store.read {
                        for key in keys {
                            if let item = try Item.find(key: key, in: store) {
                                checksum.add(key: item.id, text: item.name, price: item.price)
                            }
                        }
                    }
                }, verify: { checksum })
        case .w5:
            let thresholds = data.thresholds
            return PreparedRun(
                timed: {
                    checksum = Checksum()
                    for threshold in thresholds {
                        let page = try Item.filter(\.price > threshold).order(.ascending(\.price)).limit(50, offset: 100).findAll(in: store)
                        for item in page { checksum.add(key: item.id, text: item.name, price: item.price) }
                    }
                }, verify: { checksum })
        case .w8:
            let median = data.medianPrice
            return PreparedRun(
                timed: { try Item.deleteAll(where: \.price < median, in: store) },
                verify: { withExtendedLifetime(store) { Checksum.ofFile(path, Checksum.itemTableSQL) } })
        default:
            let batch = Self.items(data.concurrentBatch)
            let keys = data.lookupKeys
            let fetches = Tally()
            return PreparedRun(
                timed: {
                    fetches.reset()
                    fetches.add(
                        try fetchesWhileWriting({ _ = try Item.save(batch, in: store) }) { done in
                            _ = try? Item.find(key: keys[done % keys.count], in: store)
                        })
                }, verify: { Checksum.ofFile(path, Checksum.itemTableSQL) }, operations: { fetches.value })
        }
    }
}
