import Foundation
import ModelStore
import PostgresNIO

/// One connection to the server, used synchronously by the store's engine.
///
/// The engine runs on the store's dispatch queue (or the caller's thread for a synchronous
/// call), never on an event loop: each statement waits for postgres-nio's future there. The
/// event loops are NIO's shared group; the cooperative pool is never blocked.
///
/// A lost connection is replaced at the next statement that may run on a new one: one
/// outside a transaction, or a `BEGIN`. Inside a transaction every statement fails with
/// `.connectionLost` until the engine ends it (the server rolled it back already), so no
/// statement of a half-done transaction ever runs on its own on the new connection.
final class PostgresDriverConnection: RemoteConnection {
    private let server: PostgresConfiguration
    private var connection: PostgresConnection?
    /// Whether the engine opened a transaction the server has not ended yet.
    private var inTransaction = false
    private static let logger: Logger = {
        var logger = Logger(label: "ModelStorePostgres")
        logger.logLevel = .critical
        return logger
    }()

    var location: String { server.description }

    init(server: PostgresConfiguration) throws {
        self.server = server
        self.connection = try connect()
    }

    deinit {
        close()
    }

    func close() {
        let closing = connection
        connection = nil
        _ = try? closing?.close().wait()
    }

    private func connect() throws -> PostgresConnection {
        do {
            let connection = try PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.any(), configuration: server.connection,
                id: Int.random(in: 0..<Int.max), logger: Self.logger
            ).wait()
            if let schema = server.schema {
                let name = "\"" + schema.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                do {
                    _ = try connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(name)"), logger: Self.logger).wait()
                } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
                    // Another connection created it at the same moment.
                }
                _ = try connection.query(PostgresQuery(unsafeSQL: "SET search_path TO \(name)"), logger: Self.logger).wait()
            }
            return connection
        } catch {
            var failure = Self.mapped(error, sql: nil)
            if failure.code == .server || failure.code == .connectionLost {
                failure = ModelStoreError(
                    .cannotOpen, "Cannot connect to the PostgreSQL server at \(server.description): \(Self.describe(error)).",
                    suggestion: "Check that the server runs, and the address, user, password and database.")
            }
            throw failure
        }
    }

    func run(_ sql: String, _ values: [SQLValue]) throws -> RemoteResult {
        let begins = sql.hasPrefix("BEGIN")
        let ends = sql == "COMMIT" || sql == "ROLLBACK"
        if connection == nil || connection?.isClosed == true {
            if inTransaction && !begins {
                // The server rolled the transaction back when the connection went; a ROLLBACK
                // has nothing left to do.
                if sql == "ROLLBACK" || sql.hasPrefix("ROLLBACK TO") || sql.hasPrefix("RELEASE") {
                    if sql == "ROLLBACK" { inTransaction = false }
                    return RemoteResult(columns: [], rows: [], changes: 0)
                }
                throw Self.lost(sql)
            }
            connection = nil
            connection = try connect()
            inTransaction = false
        }
        guard let connection else { throw Self.lost(sql) }
        var bindings = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .null: bindings.appendNull()
            case .integer(let integer): bindings.append(Untyped(String(integer)))
            case .real(let real): bindings.append(Untyped(Self.text(of: real)))
            case .text(let text): bindings.append(Untyped(text))
            case .blob(let data): bindings.append(Untyped(bytes: data))
            }
        }
        let result: PostgresQueryResult
        do {
            result = try connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: Self.logger).wait()
        } catch {
            let failure = Self.mapped(error, sql: sql)
            if failure.code == .connectionLost {
                self.connection = nil
                _ = try? connection.close().wait()
            }
            if ends { inTransaction = false }
            throw failure
        }
        if begins { inTransaction = true } else if ends { inTransaction = false }
        var columns: [String] = []
        var rows: [[SQLValue]] = []
        rows.reserveCapacity(result.rows.count)
        for row in result.rows {
            var values: [SQLValue] = []
            if columns.isEmpty { columns = row.map(\.columnName) }
            for cell in row { values.append(try Self.value(of: cell, sql: sql)) }
            rows.append(values)
        }
        let command = result.metadata.command
        let changes = ["INSERT", "UPDATE", "DELETE", "MERGE"].contains(command) ? (result.metadata.rows ?? 0) : 0
        return RemoteResult(columns: columns, rows: rows, changes: changes)
    }

    // MARK: Values

    /// A cell as SQLite would hold it: integers (and booleans, as 0 and 1), doubles, text
    /// (NUMERIC as its exact decimal text, JSON and UUIDs as text) and bytes.
    private static func value(of cell: PostgresCell, sql: String) throws -> SQLValue {
        guard let bytes = cell.bytes else { return .null }
        do {
            switch cell.dataType {
            case .int2, .int4, .int8, .oid: return .integer(try cell.decode(Int64.self))
            case .float4, .float8: return .real(try cell.decode(Double.self))
            case .bool: return .integer(try cell.decode(Bool.self) ? 1 : 0)
            case .bytea where cell.format == .binary: return .blob(Data(bytes.readableBytesView))
            case .numeric: return .text(try cell.decode(Decimal.self).description)
            default: return .text(try cell.decode(String.self))
            }
        } catch {
            throw ModelStoreError.server(
                state: nil,
                message: "the value of column \(cell.columnName), of PostgreSQL type \(cell.dataType), cannot be read: \(describe(error))",
                sql: sql)
        }
    }

    /// A Double as PostgreSQL reads it back exactly (Swift's shortest round-trip digits).
    private static func text(of real: Double) -> String {
        if real.isNaN { return "NaN" }
        if real.isInfinite { return real < 0 ? "-Infinity" : "Infinity" }
        return "\(real)"
    }

    // MARK: Errors

    private static func lost(_ sql: String) -> ModelStoreError {
        .server(state: "08006", message: "the connection was lost inside a transaction, which the server rolled back", sql: sql)
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            if let underlying = error.underlying { return "\(error.code): \(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }

    /// postgres-nio's error as a `ModelStoreError`, its code from the SQLSTATE.
    static func mapped(_ error: any Error, sql: String?) -> ModelStoreError {
        if let error = error as? ModelStoreError { return error }
        guard let error = error as? PSQLError else {
            return .server(state: "08000", message: "\(error)", sql: sql)
        }
        if let info = error.serverInfo {
            var message = info[.message] ?? "\(error.code)"
            if let detail = info[.detail] { message += " (\(detail))" }
            return .server(state: info[.sqlState], message: message, sql: sql)
        }
        switch error.code {
        case .serverClosedConnection, .connectionError, .uncleanShutdown, .queryCancelled:
            return .server(state: "08006", message: describe(error), sql: sql)
        default:
            return .server(state: nil, message: describe(error), sql: sql)
        }
    }
}

/// A parameter sent as text with no type: the server gives it the type the statement needs
/// (the column's, the operator's), as it does for a literal written in the SQL.
private struct Untyped: PostgresDynamicTypeEncodable {
    let bytes: [UInt8]

    init(_ text: String) {
        self.bytes = Array(text.utf8)
    }

    /// BYTEA's text form: `\x` and two hex digits per byte.
    init(bytes data: Data) {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = [UInt8(ascii: "\\"), UInt8(ascii: "x")]
        bytes.reserveCapacity(2 + data.count * 2)
        for byte in data {
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 0x0F)])
        }
        self.bytes = bytes
    }

    var psqlType: PostgresDataType { .null }
    var psqlFormat: PostgresFormat { .text }

    func encode<JSONEncoder: PostgresJSONEncoder>(into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        byteBuffer.writeBytes(bytes)
    }
}
