import BenchCore
import Foundation
import PostgresNIO

/// Hand-written postgres-nio: what a careful programmer writes with the driver alone — one
/// connection, binary typed parameters, multi-row INSERTs of 1,000 rows inside a transaction
/// for batches, one query per lookup, rows decoded straight into structs.
struct NIOContender: ServerContender {
    let name = "postgres-nio"

    struct Item {
        var id: Int64
        var name: String
        var price: Double
        var quantity: Int64
        var createdAt: Double
        var note: String?
    }

    static let columns = "id, name, price, quantity, \"createdAt\", note"
    static let chunk = 1_000

    func prepare(_ workload: Workload, data: Dataset, server: Server, schema: String) throws -> PreparedRun {
        try server.freshSchema(schema)
        let db = try server.open(schema: schema)
        let logger = Server.logger
        func run(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws -> PostgresQueryResult {
            try db.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger).wait()
        }
        func script(_ sql: String) throws { for part in sql.split(separator: ";") { _ = try run(String(part)) } }
        func insertItems(_ items: [ItemData], upsert: Bool) throws {
            _ = try run("BEGIN")
            for start in stride(from: 0, to: items.count, by: Self.chunk) {
                let slice = items[start..<min(start + Self.chunk, items.count)]
                var binds = PostgresBindings(capacity: slice.count * 6)
                var tuples: [String] = []
                tuples.reserveCapacity(slice.count)
                var index = 1
                for item in slice {
                    binds.append(item.id)
                    binds.append(item.name)
                    binds.append(item.price)
                    binds.append(item.quantity)
                    binds.append(item.createdAt)
                    binds.append(item.note)
                    tuples.append("($\(index), $\(index + 1), $\(index + 2), $\(index + 3), $\(index + 4), $\(index + 5))")
                    index += 6
                }
                var sql = "INSERT INTO item (\(Self.columns)) VALUES " + tuples.joined(separator: ", ")
                if upsert {
                    sql +=
                        " ON CONFLICT (id) DO UPDATE SET name = excluded.name, price = excluded.price, quantity = excluded.quantity, \"createdAt\" = excluded.\"createdAt\", note = excluded.note"
                }
                _ = try run(sql, binds)
            }
            _ = try run("COMMIT")
        }
        func decodeItem(_ row: PostgresRow) throws -> Item {
            let (id, name, price, quantity, createdAt, note) = try row.decode((Int64, String, Double, Int64, Double, String?).self)
            return Item(id: id, name: name, price: price, quantity: quantity, createdAt: createdAt, note: note)
        }
        func insertGraphs() throws {
            _ = try run("BEGIN")
            for start in stride(from: 0, to: data.teams.count, by: Self.chunk) {
                let slice = data.teams[start..<min(start + Self.chunk, data.teams.count)]
                var binds = PostgresBindings()
                var tuples: [String] = []
                for (offset, team) in slice.enumerated() {
                    binds.append(team.id)
                    binds.append(team.name)
                    tuples.append("($\(offset * 2 + 1), $\(offset * 2 + 2))")
                }
                _ = try run("INSERT INTO team (id, name) VALUES " + tuples.joined(separator: ", "), binds)
            }
            let players = zip(data.teams, data.players).flatMap { team, players in players.map { ($0.id, $0.name, team.id) } }
            for start in stride(from: 0, to: players.count, by: Self.chunk) {
                let slice = players[start..<min(start + Self.chunk, players.count)]
                var binds = PostgresBindings()
                var tuples: [String] = []
                for (offset, player) in slice.enumerated() {
                    binds.append(player.0)
                    binds.append(player.1)
                    binds.append(player.2)
                    tuples.append("($\(offset * 3 + 1), $\(offset * 3 + 2), $\(offset * 3 + 3))")
                }
                _ = try run("INSERT INTO player (id, name, team_id) VALUES " + tuples.joined(separator: ", "), binds)
            }
            _ = try run("COMMIT")
        }
        let itemChecksum = { try server.checksum(schema, Server.itemChecksumSQL) }
        var checksum = Checksum()
        switch workload {
        case .w1, .w1r:
            try script(Server.itemSchema)
            return PreparedRun(timed: { try insertItems(data.items, upsert: false) }, verify: itemChecksum)
        case .w2:
            try script(Server.itemSchema)
            try insertItems(Array(data.items.prefix(data.rows / 2)), upsert: false)
            return PreparedRun(timed: { try insertItems(data.upserts, upsert: true) }, verify: itemChecksum)
        case .w3:
            try script(Server.itemSchema)
            try insertItems(data.items, upsert: false)
            var loaded: [Item] = []
            return PreparedRun(
                timed: { loaded = try run("SELECT \(Self.columns) FROM item ORDER BY id").map(decodeItem) },
                verify: {
                    var checksum = Checksum()
                    for item in loaded { checksum.add(key: item.id, text: item.name, price: item.price) }
                    return checksum
                })
        case .w4:
            try script(Server.itemSchema)
            try insertItems(data.items, upsert: false)
            return PreparedRun(
                timed: {
                    checksum = Checksum()
                    for key in data.lookupKeys {
                        var binds = PostgresBindings()
                        binds.append(key)
                        if let row = try run("SELECT \(Self.columns) FROM item WHERE id = $1", binds).first {
                            let item = try decodeItem(row)
                            checksum.add(key: item.id, text: item.name, price: item.price)
                        }
                    }
                }, verify: { checksum })
        case .w5:
            try script(Server.itemSchema)
            try insertItems(data.items, upsert: false)
            return PreparedRun(
                timed: {
                    checksum = Checksum()
                    for threshold in data.thresholds {
                        var binds = PostgresBindings()
                        binds.append(threshold)
                        let rows = try run(
                            "SELECT \(Self.columns) FROM item WHERE price > $1 ORDER BY price, id LIMIT 50 OFFSET 100", binds)
                        for row in rows {
                            let item = try decodeItem(row)
                            checksum.add(key: item.id, text: item.name, price: item.price)
                        }
                    }
                }, verify: { checksum })
        case .w6:
            try script(Server.teamSchema)
            try insertGraphs()
            return PreparedRun(
                timed: {
                    checksum = Checksum()
                    let teams = try run("SELECT id, name FROM team ORDER BY id").map { try $0.decode((Int64, String).self) }
                    var players: [Int64: [(Int64, String)]] = [:]
                    for row in try run("SELECT id, name, team_id FROM player ORDER BY id") {
                        let (id, name, team) = try row.decode((Int64, String, Int64).self)
                        players[team, default: []].append((id, name))
                    }
                    for team in teams {
                        checksum.add(key: team.0, text: team.1)
                        for player in players[team.0] ?? [] { checksum.add(key: player.0, text: player.1) }
                    }
                }, verify: { checksum })
        case .w7:
            try script(Server.workerSchema)
            _ = try run("BEGIN")
            for (id, name) in data.snacks {
                var binds = PostgresBindings()
                binds.append(id)
                binds.append(name)
                _ = try run("INSERT INTO snack (id, name) VALUES ($1, $2)", binds)
            }
            for ((id, name), snacks) in zip(data.workers, data.workerSnacks) {
                var binds = PostgresBindings()
                binds.append(id)
                binds.append(name)
                _ = try run("INSERT INTO worker (id, name) VALUES ($1, $2)", binds)
                for snack in snacks {
                    var link = PostgresBindings()
                    link.append(id)
                    link.append(snack)
                    _ = try run("INSERT INTO worker_snack (worker_id, snack_id) VALUES ($1, $2)", link)
                }
            }
            _ = try run("COMMIT")
            return PreparedRun(
                timed: {
                    checksum = Checksum()
                    let workers = try run("SELECT id, name FROM worker ORDER BY id").map { try $0.decode((Int64, String).self) }
                    var snacks: [Int64: [(Int64, String)]] = [:]
                    let sql =
                        "SELECT j.worker_id, s.id, s.name FROM worker_snack j JOIN snack s ON s.id = j.snack_id ORDER BY j.worker_id, s.id"
                    for row in try run(sql) {
                        let (worker, id, name) = try row.decode((Int64, Int64, String).self)
                        snacks[worker, default: []].append((id, name))
                    }
                    for worker in workers {
                        checksum.add(key: worker.0, text: worker.1)
                        for snack in snacks[worker.0] ?? [] { checksum.add(key: snack.0, text: snack.1) }
                    }
                }, verify: { checksum })
        case .w8:
            try script(Server.itemSchema)
            try insertItems(data.items, upsert: false)
            return PreparedRun(
                timed: {
                    var binds = PostgresBindings()
                    binds.append(data.medianPrice)
                    _ = try run("DELETE FROM item WHERE price < $1", binds)
                }, verify: itemChecksum)
        case .w9:
            try script(Server.teamSchema)
            return PreparedRun(timed: { try insertGraphs() }, verify: { try server.checksum(schema, Server.graphChecksumSQL) })
        default:
            preconditionFailure("\(workload.rawValue) is not in the server benchmark")
        }
    }
}
