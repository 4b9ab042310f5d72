#if FLUENT_POSTGRES
    import BenchCore
    import FluentKit
    import FluentPostgresDriver
    import Foundation
    import Logging
    import NIOCore
    import NIOPosix
    import PostgresNIO

    /// Fluent (fluent-kit with fluent-postgres-driver), with models and queries as its
    /// documentation shows, driven synchronously by waiting on its futures; the same shape as
    /// the SQLite benchmark's Fluent contender.
    ///
    /// Fluent has no upsert (W2) and its pivots need an identifier of their own (W7): those
    /// are not expressed.
    struct FluentServerContender: ServerContender {
        let name = "Fluent"

        func supports(_ workload: Workload) -> Bool { ![.w2, .w7].contains(workload) }

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

        /// One Fluent setup per run: its own connection pool on the shared event loops.
        final class Setup: @unchecked Sendable {
            let databases: Databases
            let database: any Database

            init(url: String, schema: String) throws {
                let components = URLComponents(string: url)!
                let port = components.port ?? 5432
                let core: PostgresConnection.Configuration
                if let directory = components.queryItems?.first(where: { $0.name == "host" })?.value {
                    core = .init(
                        unixSocketPath: directory + "/.s.PGSQL.\(port)", username: components.user!, password: components.password,
                        database: String(components.path.dropFirst()))
                } else {
                    core = .init(
                        host: components.host ?? "localhost", port: port, username: components.user!, password: components.password,
                        database: String(components.path.dropFirst()), tls: .disable)
                }
                databases = Databases(threadPool: NIOThreadPool.singleton, on: MultiThreadedEventLoopGroup.singleton)
                databases.use(
                    .postgres(configuration: SQLPostgresConfiguration(coreConfiguration: core, searchPath: [schema])), as: .psql)
                database = databases.database(.psql, logger: Logger(label: "bench"), on: MultiThreadedEventLoopGroup.singleton.any())!
            }

            deinit { databases.shutdown() }
        }

        func prepare(_ workload: Workload, data: Dataset, server: Server, schema: String) throws -> PreparedRun {
            try server.freshSchema(schema)
            let itemChecksum = { try server.checksum(schema, Server.itemChecksumSQL) }
            var checksum = Checksum()
            switch workload {
            case .w1, .w1r:
                try server.run(
                    Server.itemSchema.replacingOccurrences(of: "TABLE item", with: "TABLE \"\(schema)\".item")
                        .replacingOccurrences(of: "ON item", with: "ON \"\(schema)\".item"))
                let setup = try Setup(url: server.url, schema: schema)
                let items = data.items.map(Item.init)
                return PreparedRun(
                    timed: { try setup.database.transaction { db in Self.createInChunks(items, on: db) }.wait() },
                    verify: { try withExtendedLifetime(setup) { try itemChecksum() } })
            case .w3, .w4, .w5, .w8:
                try server.run(
                    Server.itemSchema.replacingOccurrences(of: "TABLE item", with: "TABLE \"\(schema)\".item")
                        .replacingOccurrences(of: "ON item", with: "ON \"\(schema)\".item"))
                let setup = try Setup(url: server.url, schema: schema)
                let items = data.items.map(Item.init)
                try setup.database.transaction { db in Self.createInChunks(items, on: db) }.wait()
                // The closures reach the database through the setup, so its pool lives as long.
                switch workload {
                case .w3:
                    var loaded: [Item] = []
                    return PreparedRun(
                        timed: { loaded = try Item.query(on: setup.database).sort(\.$id).all().wait() },
                        verify: {
                            var checksum = Checksum()
                            for item in loaded { checksum.add(key: item.id!, text: item.name, price: item.price) }
                            return checksum
                        })
                case .w4:
                    return PreparedRun(
                        timed: {
                            checksum = Checksum()
                            for key in data.lookupKeys {
                                if let item = try Item.find(key, on: setup.database).wait() {
                                    checksum.add(key: item.id!, text: item.name, price: item.price)
                                }
                            }
                        }, verify: { checksum })
                case .w5:
                    return PreparedRun(
                        timed: {
                            checksum = Checksum()
                            for threshold in data.thresholds {
                                let page = try Item.query(on: setup.database).filter(\.$price > threshold).sort(\.$price).sort(\.$id).range(
                                    100..<150
                                )
                                .all().wait()
                                for item in page { checksum.add(key: item.id!, text: item.name, price: item.price) }
                            }
                        }, verify: { checksum })
                default:
                    let median = data.medianPrice
                    return PreparedRun(
                        timed: { try Item.query(on: setup.database).filter(\.$price < median).delete().wait() },
                        verify: { try withExtendedLifetime(setup) { try itemChecksum() } })
                }
            case .w6, .w9:
                try server.run(
                    Server.teamSchema.replacingOccurrences(of: "TABLE team", with: "TABLE \"\(schema)\".team")
                        .replacingOccurrences(of: "TABLE player", with: "TABLE \"\(schema)\".player")
                        .replacingOccurrences(of: "REFERENCES team", with: "REFERENCES \"\(schema)\".team")
                        .replacingOccurrences(of: "ON player", with: "ON \"\(schema)\".player"))
                let setup = try Setup(url: server.url, schema: schema)
                if workload == .w9 {
                    return PreparedRun(
                        timed: { try Self.insertGraphs(setup.database, data) },
                        verify: { try withExtendedLifetime(setup) { try server.checksum(schema, Server.graphChecksumSQL) } })
                }
                try Self.insertGraphs(setup.database, data)
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
            default:
                preconditionFailure("\(workload.rawValue) is not expressed with Fluent")
            }
        }

        /// Fluent creates a batch as one INSERT; a Fluent program inserts a large array in
        /// chunks, in one transaction.
        private static func createInChunks<M: Model>(_ models: [M], on db: any Database) -> EventLoopFuture<Void> {
            var future = db.eventLoop.makeSucceededVoidFuture()
            for start in stride(from: 0, to: models.count, by: 1_000) {
                let chunk = Array(models[start..<min(start + 1_000, models.count)])
                future = future.flatMap { chunk.create(on: db) }
            }
            return future
        }

        private static func insertGraphs(_ db: any Database, _ data: Dataset) throws {
            let teams = data.teams.map { Team(id: $0.id, name: $0.name) }
            let players = zip(data.teams, data.players).flatMap { team, players in
                players.map { Player(id: $0.id, name: $0.name, team: team.id) }
            }
            try db.transaction { db in
                createInChunks(teams, on: db).flatMap { createInChunks(players, on: db) }
            }.wait()
        }
    }
#endif
