import BenchCore
import FluentKit
import FluentSQLiteDriver
import Foundation
import Logging
import NIOCore
import NIOPosix
import SQLKit

/// Fluent (vapor/fluent-kit with vapor/fluent-sqlite-driver), with models and queries as its
/// documentation shows, driven synchronously by waiting on its futures.
///
/// Fluent has no upsert, so W2, W11 and W12 (whose point is the upsert) are not expressed;
/// W7 would need a pivot model with an identifier of its own, which the shared schema's join
/// table (a composite key) does not have; W10's concurrent readers are not written.
public struct FluentContender: Contender {
    public let name = "Fluent"

    public init() {}

    public func supports(_ workload: Workload) -> Bool {
        ![.w2, .w7, .w10, .w11, .w12].contains(workload)
    }

    final class Item: Model, @unchecked Sendable {
        static let schema = "item"
        @ID(custom: "id", generatedBy: .user) var id: Int64?
        @Field(key: "name") var name: String
        @Field(key: "price") var price: Double
        @Field(key: "quantity") var quantity: Int64
        @Field(key: "createdAt") var createdAt: Double
        @OptionalField(key: "note") var note: String?
        init() {}
        init(_ data: ItemData) {
            id = data.id
            name = data.name
            price = data.price
            quantity = data.quantity
            createdAt = data.createdAt
            note = data.note
        }
    }

    final class Team: Model, @unchecked Sendable {
        static let schema = "team"
        @ID(custom: "id", generatedBy: .user) var id: Int64?
        @Field(key: "name") var name: String
        @Children(for: \.$team) var players: [Player]
        init() {}
        init(id: Int64, name: String) {
            self.id = id
            self.name = name
        }
    }

    final class Player: Model, @unchecked Sendable {
        static let schema = "player"
        @ID(custom: "id", generatedBy: .user) var id: Int64?
        @Field(key: "name") var name: String
        @OptionalParent(key: "team_id") var team: Team?
        init() {}
        init(id: Int64, name: String, team: Int64) {
            self.id = id
            self.name = name
            self.$team.id = team
        }
    }

    /// One Fluent setup per database file: its thread pool and event loops are the shared
    /// singletons, its connection pool its own.
    final class Setup: @unchecked Sendable {
        let databases: Databases
        let database: any Database

        init(path: String, schema: String) throws {
            databases = Databases(threadPool: NIOThreadPool.singleton, on: MultiThreadedEventLoopGroup.singleton)
            databases.use(.sqlite(.file(path)), as: .sqlite)
            database = databases.database(.sqlite, logger: Logger(label: "bench"), on: MultiThreadedEventLoopGroup.singleton.any())!
            let sql = database as! any SQLDatabase
            try sql.raw("PRAGMA journal_mode = WAL").run().wait()
            for statement in schema.split(separator: ";") where !statement.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                try sql.raw(SQLQueryString(String(statement))).run().wait()
            }
        }

        deinit { databases.shutdown() }
    }

    public func prepare(_ workload: Workload, data: Dataset, path: String) throws -> PreparedRun {
        switch workload {
        case .w1, .w1r:
            let setup = try Setup(path: path, schema: Schema.item)
            let db = setup.database
            return PreparedRun(
                timed: {
                    let items = data.items.map(Item.init)
                    try db.transaction { db in Self.createInChunks(items, on: db) }.wait()
                },
                verify: { withExtendedLifetime(setup) { Checksum.ofFile(path, Checksum.itemTableSQL) } })
        case .w3, .w3r, .w4, .w4b, .w5, .w8, .w8r:
            let setup = try Setup(path: path, schema: Schema.item)
            let db = setup.database
            let items = data.items.map(Item.init)
            try db.transaction { db in Self.createInChunks(items, on: db) }.wait()
            return readRun(workload, setup: setup, data: data, path: path)
        case .w6:
            let setup = try Setup(path: path, schema: Schema.teams)
            try insertGraphs(setup.database, data)
            var loaded: [Team] = []
            return PreparedRun(
                timed: { loaded = try Team.query(on: setup.database).with(\.$players).sort(\.$id).all().wait() },
                verify: {
                    var checksum = Checksum()
                    for team in loaded {
                        checksum.add(key: team.id!, text: team.name)
                        for player in team.players.sorted(by: { $0.id! < $1.id! }) { checksum.add(key: player.id!, text: player.name) }
                    }
                    return checksum
                })
        case .w9:
            let setup = try Setup(path: path, schema: Schema.teams)
            return PreparedRun(
                timed: { try insertGraphs(setup.database, data) },
                verify: { withExtendedLifetime(setup) { Checksum.ofFile(path, Checksum.graphTableSQL) } })
        default:
            preconditionFailure("\(workload.rawValue) is not expressed with Fluent")
        }
    }

    private func readRun(_ workload: Workload, setup: Setup, data: Dataset, path: String) -> PreparedRun {
        // The closures hold the setup, and so its connection pool, for as long as the run.
        var checksum = Checksum()
        switch workload {
        case .w3, .w3r:
            var loaded: [Item] = []
            return PreparedRun(
                timed: { loaded = try Item.query(on: setup.database).sort(\.$id).all().wait() },
                verify: {
                    var checksum = Checksum()
                    for item in loaded { checksum.add(key: item.id!, text: item.name, price: item.price) }
                    return checksum
                })
        case .w4:
            let keys = data.lookupKeys
            return PreparedRun(
                timed: {
                    checksum = Checksum()
                    for key in keys {
                        if let item = try Item.find(key, on: setup.database).wait() {
                            checksum.add(key: item.id!, text: item.name, price: item.price)
                        }
                    }
                }, verify: { checksum })
        case .w4b:
            let keys = data.lookupKeys
            return PreparedRun(
                timed: {
                    checksum = Checksum()
                    let found = try setup.database.transaction { db in
                        keys.map { Item.find($0, on: db) }.flatten(on: db.eventLoop)
                    }.wait()
                    for item in found.compactMap({ $0 }) { checksum.add(key: item.id!, text: item.name, price: item.price) }
                }, verify: { checksum })
        case .w5:
            let thresholds = data.thresholds
            return PreparedRun(
                timed: {
                    checksum = Checksum()
                    for threshold in thresholds {
                        let page = try Item.query(on: setup.database).filter(\.$price > threshold).sort(\.$price).sort(\.$id).range(
                            100..<150
                        ).all()
                            .wait()
                        for item in page { checksum.add(key: item.id!, text: item.name, price: item.price) }
                    }
                }, verify: { checksum })
        default:  // .w8
            let median = data.medianPrice
            return PreparedRun(
                timed: { try Item.query(on: setup.database).filter(\.$price < median).delete().wait() },
                verify: { withExtendedLifetime(setup) { Checksum.ofFile(path, Checksum.itemTableSQL) } })
        }
    }

    /// Fluent creates a batch as one INSERT, whose parameters must stay within SQLite's
    /// limit: a Fluent program inserts a large array in chunks, in one transaction.
    private static func createInChunks<M: Model>(_ models: [M], on db: any Database) -> EventLoopFuture<Void> {
        var future = db.eventLoop.makeSucceededVoidFuture()
        for start in stride(from: 0, to: models.count, by: 1_000) {
            let chunk = Array(models[start..<min(start + 1_000, models.count)])
            future = future.flatMap { chunk.create(on: db) }
        }
        return future
    }

    private func insertGraphs(_ db: any Database, _ data: Dataset) throws {
        let teams = data.teams.map { Team(id: $0.id, name: $0.name) }
        let players = zip(data.teams, data.players).flatMap { team, players in
            players.map { Player(id: $0.id, name: $0.name, team: team.id) }
        }
        try db.transaction { db in
            Self.createInChunks(teams, on: db).flatMap { Self.createInChunks(players, on: db) }
        }.wait()
    }
}
