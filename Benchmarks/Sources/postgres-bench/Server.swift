import BenchCore
import Foundation
import Logging
import PostgresNIO

/// The server every contender runs on, and a plain connection to it for setup and for the
/// checksums of the tables a write workload leaves (the same query for every contender).
final class Server: @unchecked Sendable {
    let url: String
    let connection: PostgresConnection
    static let logger: Logger = {
        var logger = Logger(label: "postgres-bench")
        logger.logLevel = .critical
        return logger
    }()

    /// Connections the contenders opened, closed at the end (postgres-nio wants each closed).
    private var opened: [PostgresConnection] = []

    init(url: String) throws {
        self.url = url
        connection = try Self.connect(url: url, schema: nil)
    }

    /// A connection of a contender's, closed by `closeAll`.
    func open(schema: String) throws -> PostgresConnection {
        let connection = try Self.connect(url: url, schema: schema)
        opened.append(connection)
        return connection
    }

    func closeAll() {
        for connection in opened + [connection] { try? connection.close().wait() }
        opened = []
    }

    /// A connection whose tables are those of `schema`.
    static func connect(url: String, schema: String?) throws -> PostgresConnection {
        let components = URLComponents(string: url)!
        let database = String(components.path.drop(while: { $0 == "/" }))
        let port = components.port ?? 5432
        let configuration: PostgresConnection.Configuration
        if let directory = components.queryItems?.first(where: { $0.name == "host" })?.value {
            configuration = .init(
                unixSocketPath: directory + "/.s.PGSQL.\(port)", username: components.user!, password: components.password,
                database: database)
        } else {
            configuration = .init(
                host: components.host ?? "localhost", port: port, username: components.user!, password: components.password,
                database: database, tls: .disable)
        }
        let connection = try PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: 1, logger: logger
        ).wait()
        if let schema {
            _ = try connection.query(PostgresQuery(unsafeSQL: "SET search_path TO \"\(schema)\""), logger: logger).wait()
        }
        return connection
    }

    func run(_ sql: String) throws {
        for statement in sql.split(separator: ";") where !statement.allSatisfy(\.isWhitespace) {
            _ = try connection.query(PostgresQuery(unsafeSQL: String(statement)), logger: Self.logger).wait()
        }
    }

    /// A new, empty schema.
    func freshSchema(_ name: String) throws {
        try run("DROP SCHEMA IF EXISTS \"\(name)\" CASCADE; CREATE SCHEMA \"\(name)\"")
    }

    func drop(_ name: String) {
        try? run("DROP SCHEMA IF EXISTS \"\(name)\" CASCADE")
    }

    /// (count, sum of keys, sum of text lengths, sum of cents) of `sql` in `schema`.
    func checksum(_ schema: String, _ sql: String) throws -> Checksum {
        let rows = try connection.query(
            PostgresQuery(unsafeSQL: sql.replacingOccurrences(of: "FROM ", with: "FROM \"\(schema)\".")), logger: Self.logger
        ).wait()
        var checksum = Checksum()
        guard let row = rows.first else { return checksum }
        let values = try row.decode((Int64, Int64, Int64, Int64).self)
        checksum.count = Int(values.0)
        checksum.keys = values.1
        checksum.text = values.2
        checksum.cents = values.3
        return checksum
    }

    static let itemChecksumSQL =
        "SELECT count(*)::int8, coalesce(sum(id), 0)::int8, coalesce(sum(length(name)), 0)::int8, coalesce(sum(round(price * 100)::int8), 0)::int8 FROM item"
    static let graphChecksumSQL =
        "SELECT (SELECT count(*) FROM player)::int8, (SELECT coalesce(sum(id + team_id), 0) FROM player)::int8, (SELECT coalesce(sum(length(name)), 0) FROM team)::int8, (SELECT count(*) FROM team)::int8"

    /// The tables the hand-written and Fluent contenders use: what ModelStore derives.
    static let itemSchema = """
        CREATE TABLE item (id BIGINT PRIMARY KEY, name TEXT NOT NULL, price DOUBLE PRECISION NOT NULL, \
        quantity BIGINT NOT NULL, "createdAt" DOUBLE PRECISION NOT NULL, note TEXT);
        CREATE INDEX index_item_price ON item (price)
        """
    static let teamSchema = """
        CREATE TABLE team (id BIGINT PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE player (id BIGINT PRIMARY KEY, name TEXT NOT NULL, team_id BIGINT REFERENCES team (id) DEFERRABLE INITIALLY DEFERRED);
        CREATE INDEX index_player_team_id ON player (team_id)
        """
    static let workerSchema = """
        CREATE TABLE worker (id BIGINT PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE snack (id BIGINT PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE worker_snack (worker_id BIGINT NOT NULL REFERENCES worker (id), snack_id BIGINT NOT NULL REFERENCES snack (id), \
        PRIMARY KEY (worker_id, snack_id));
        CREATE INDEX index_worker_snack_snack ON worker_snack (snack_id)
        """
}

/// A contender on the server: prepares a workload in a schema of its own.
protocol ServerContender {
    var name: String { get }
    func supports(_ workload: Workload) -> Bool
    func prepare(_ workload: Workload, data: Dataset, server: Server, schema: String) throws -> PreparedRun
}

extension ServerContender {
    func supports(_ workload: Workload) -> Bool { true }
}
