#if PostgreSQL
    import Foundation
    import Logging
    import Metrics
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
    final class PostgresDriverConnection: InterruptibleRemoteConnection {
        private let server: PostgresConfiguration
        private let settings: RemoteConnectionSettings
        private var connection: PostgresConnection?
        /// Wakes a statement's wait when the connection closes under it (see `Wait`).
        private var wakeup = Wakeup()
        /// Whether the engine opened a transaction the server has not ended yet.
        private var inTransaction = false
        /// Whether this connection reached the server once: failing to reach it again means the
        /// server went away (`.connectionLost`), not a wrong address.
        private var connectedOnce = false
        /// What may stop the call running on this connection (set by the store around the call).
        var interruption: Interruption?
        var statementTimeout: TimeInterval? { server.statementTimeout }
        private static let logger: Logger = {
            var logger = Logger(label: "ModelStorePostgres")
            logger.logLevel = .critical
            return logger
        }()

        /// The statements' timers by their first word, and the counters, made once.
        private let metrics: DriverMetrics
        /// `server.logger`, kept apart: asked once per statement.
        private let logger: Logger

        var location: String { server.description }
        var tablesIdentity: String { server.description + " " + (server.schema ?? "") }

        /// A connection that listens (a change feed's): the channel, and what a notification
        /// on it — or a new connection, which may have missed some — calls.
        struct Listening {
            let channel: String
            /// Called with a notification's payload, or nil for a new connection.
            let notified: @Sendable (String?) -> Void
        }
        private let listening: Listening?

        init(server: PostgresConfiguration, settings: RemoteConnectionSettings, listening: Listening? = nil) throws {
            self.server = server
            self.settings = settings
            self.listening = listening
            self.metrics = DriverMetrics(factory: server.metricsFactory ?? MetricsSystem.factory)
            self.logger = server.logger
            self.connection = try connect()
        }

        deinit {
            close()
        }

        func close() {
            guard let closing = connection else { return }
            connection = nil
            Self.release(closing)
        }

        /// Closes `connection` without waiting: closing one the server already dropped may never
        /// report back. The connection is kept alive until it does (postgres-nio requires a
        /// connection to be closed before it goes).
        private static func release(_ connection: PostgresConnection) {
            connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
        }

        /// The parameters every connection starts with: how long a statement waits for another
        /// connection's lock (the store's busy timeout), the statement time limit, the schema, and
        /// a name that tells the server's administrators (and `pg_stat_activity`) whose it is.
        private var startupParameters: [(String, String)] {
            var parameters = [
                ("application_name", server.applicationName),
                ("lock_timeout", "\(Self.milliseconds(settings.lockTimeout))"),
            ]
            if let limit = server.statementTimeout { parameters.append(("statement_timeout", "\(Self.milliseconds(limit))")) }
            if let schema = server.schema { parameters.append(("search_path", Self.quoted(schema))) }
            return parameters
        }

        private static func milliseconds(_ interval: TimeInterval) -> Int {
            // 0 means "no limit" to PostgreSQL: the shortest limit is one millisecond.
            max(1, Int((interval * 1000).rounded(.up).clamped(to: 1...Double(Int32.max))))
        }

        private static func quoted(_ name: String) -> String {
            "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }

        private func connect() throws -> PostgresConnection {
            var configuration = server.connection
            configuration.options.additionalStartupParameters += startupParameters
            let wakeup = Wakeup()
            do {
                // postgres-nio enforces the connect timeout itself; the wait's own limit is a
                // safety net a little past it, so that no connect waits forever.
                let connecting = PostgresConnection.connect(
                    on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration,
                    id: Int.random(in: 0..<Int.max), logger: Self.logger)
                let limit = TimeInterval(configuration.options.connectTimeout.nanoseconds) / 1e9 + 5
                let connection: PostgresConnection
                do {
                    connection = try Wait.for(connecting, wakeup: nil, limit: limit)
                } catch {
                    // A connection that arrives after the wait gave up is closed, never dropped
                    // open (postgres-nio requires a connection to be closed before it goes).
                    connecting.whenSuccess { Self.release($0) }
                    throw error
                }
                connection.closeFuture.whenComplete { _ in wakeup.closed() }
                if let schema = server.schema {
                    do {
                        _ = try Wait.for(
                            connection.query(
                                PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(Self.quoted(schema))"), logger: Self.logger),
                            wakeup: wakeup, limit: limit)
                    } catch let error as PSQLError where ["23505", "42P06"].contains(error.serverInfo?[.sqlState] ?? "") {
                        // Another connection created it at the same moment.
                    } catch {
                        Self.release(connection)
                        throw error
                    }
                }
                do {
                    // A statement whose client went away (a cancelled call closes its connection)
                    // is stopped by the server within a second, not run to its end for nobody:
                    // PostgreSQL 14 and later check the client while a statement runs when asked.
                    _ = try Wait.for(
                        connection.query(
                            PostgresQuery(
                                unsafeSQL:
                                    "SELECT set_config('client_connection_check_interval', '1000', false) WHERE current_setting('server_version_num')::int >= 140000"
                            ), logger: Self.logger),
                        wakeup: wakeup, limit: limit)
                } catch {
                    Self.release(connection)
                    throw error
                }
                if let listening {
                    // Each new connection listens again, and is told to read what it may have
                    // missed while there was none.
                    connection.addListener(channel: listening.channel) { _, notification in listening.notified(notification.payload) }
                    do {
                        _ = try Wait.for(
                            connection.query(PostgresQuery(unsafeSQL: "LISTEN \(Self.quoted(listening.channel))"), logger: Self.logger),
                            wakeup: wakeup, limit: limit)
                    } catch {
                        Self.release(connection)
                        throw error
                    }
                    listening.notified(nil)
                }
                self.wakeup = wakeup
                server.logger.info(
                    connectedOnce ? "reconnected" : "connected",
                    metadata: ["server": "\(server.description)", "schema": "\(server.schema ?? "")"])
                metrics.connectionsOpened.increment()
                connectedOnce = true
                return connection
            } catch {
                var failure = Self.mapped(error, sql: nil)
                // A login the server refuses, or a database it does not have, is the
                // configuration's fault whenever it happens: never "try again later".
                let refusedLogin = ["28", "3D"].contains(failure.serverState?.prefix(2) ?? "")
                if failure.code == .server || failure.code == .connectionLost {
                    if (settings.storeIsOpen || connectedOnce) && !refusedLogin {
                        failure = ModelStoreError.server(
                            state: "08001",
                            message:
                                "the PostgreSQL server at \(server.description) cannot be reached\(connectedOnce ? " again" : "") (\(Self.describe(error))); the store stays open and connects at its next call",
                            sql: nil)
                    } else {
                        failure = ModelStoreError(
                            .cannotOpen, "Cannot connect to the PostgreSQL server at \(server.description): \(Self.describe(error)).",
                            suggestion: Self.openingSuggestion(for: Self.describe(error)))
                    }
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
                    // A COMMIT ends the engine's transaction even though nothing is left to commit.
                    if ends { inTransaction = false }
                    throw Self.lost(sql)
                }
                connection = nil
                connection = try connect()
                inTransaction = false
            }
            guard let connection else { throw Self.lost(sql) }
            if values.count > 65_535 {
                throw ModelStoreError.server(
                    state: "54000",
                    message:
                        "a statement of \(values.count) values is more than PostgreSQL's 65,535 parameters; split the list or the batch into several calls",
                    sql: sql)
            }
            var bindings = PostgresBindings(capacity: values.count)
            for value in values {
                switch value {
                case .null: bindings.appendNull()
                // Integers and bytes go typed and binary (a raw `? - ?` then means numbers; the
                // server converts an integer exactly where a column is TEXT or NUMERIC). Doubles
                // and text go untyped, so the server types them by context (a column's type, an
                // array literal for `= ANY(?)`): a Double bound where a BIGINT column changed
                // behind the store's back is refused, where a typed one would be rounded.
                case .integer(let integer): bindings.append(integer)
                case .real(let real): bindings.append(Untyped(Self.text(of: real)))
                case .text(let text):
                    if text.utf8.contains(0) {
                        throw ModelStoreError(
                            .encodingFailed, "PostgreSQL text cannot hold a NUL character (U+0000); the value was not written.",
                            value: SQLValue.text(text).description, suggestion: "Remove the NUL characters, or store the bytes as Data.")
                    }
                    bindings.append(Untyped(text))
                case .blob(let data): bindings.append(ByteBuffer(bytes: data))
                }
            }
            let result: PostgresQueryResult
            // A task cancelled while the server runs its statement: postgres-nio sends no cancel
            // request, so the connection is closed, which ends the wait at once (the statement
            // fails, the call answers `.cancelled`, the store connects again for the next call).
            // The server stops the statement within a second (client_connection_check_interval).
            let stopping = interruption.map { interruption in
                interruption.whenCancelled { [connection] in let _: EventLoopFuture<Void> = connection.close() }
            }
            defer { if let stopping { interruption?.forget(stopping) } }
            if let interruption, interruption.isCancelled { let _: EventLoopFuture<Void> = connection.close() }
            let started = DispatchTime.now().uptimeNanoseconds
            do {
                // Woken by an answer or by the connection's close, whichever comes first: a
                // connection the server terminated never leaves a call waiting.
                result = try Wait.for(
                    connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: Self.logger), wakeup: wakeup,
                    limit: server.statementTimeout.map { $0 + Wait.grace })
            } catch {
                let failure = Self.mapped(error, sql: sql)
                let cancelled = interruption?.isCancelled == true
                if !cancelled { metrics.errors(state: failure.serverState ?? "none").increment() }
                // At debug, and without the server's message: its DETAIL quotes values ("Key
                // (email)=(…)", "Failing row contains …"). Many failures are routine and handled
                // by the engine (a conflict retried, a batch's merge on a unique index), and the
                // caller gets every other one as an error.
                logger.debug(
                    "statement failed",
                    metadata: ["sql": "\(sql)", "sqlstate": "\(failure.serverState ?? "none")", "code": "\(failure.code)"])
                if failure.code == .connectionLost && !cancelled {
                    // (A cancelled call closes its own connection: not a lost one.)
                    metrics.connectionsLost.increment()
                    logger.info("connection lost", metadata: ["server": "\(server.description)"])
                    self.connection = nil
                    Self.release(connection)
                }
                if ends { inTransaction = false }
                throw failure
            }
            let elapsed = DispatchTime.now().uptimeNanoseconds &- started
            metrics.timer(for: sql).recordNanoseconds(Int64(clamping: elapsed))
            if logger.logLevel <= .debug {
                logger.debug("statement", metadata: ["sql": "\(sql)", "microseconds": "\(elapsed / 1000)"])
            }
            if begins { inTransaction = true } else if ends { inTransaction = false }
            if sql == "COMMIT", result.metadata.command == "ROLLBACK" {
                // The server had aborted the transaction at an earlier failed statement, and
                // answers COMMIT by rolling back: nothing was written, and the caller must know.
                throw ModelStoreError.server(
                    state: "25P02",
                    message: "the transaction failed at an earlier statement and was rolled back at COMMIT; nothing of it was written",
                    sql: sql)
            }
            var columns: [String] = []
            var rows: [[SQLValue]] = []
            rows.reserveCapacity(result.rows.count)
            for row in result.rows {
                if columns.isEmpty { columns = row.map(\.columnName) }
                // Sized once: growing by appends would allocate three times for six columns.
                var values: [SQLValue] = []
                values.reserveCapacity(columns.count)
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
            if cell.format == .binary, let value = binaryValue(bytes, type: cell.dataType) { return value }
            do {
                switch cell.dataType {
                case .int2, .int4, .int8, .oid: return .integer(try cell.decode(Int64.self))
                case .float4, .float8: return .real(try cell.decode(Double.self))
                case .bool: return .integer(try cell.decode(Bool.self) ? 1 : 0)
                case .bytea where cell.format == .binary: return .blob(Data(bytes.readableBytesView))
                case .numeric where cell.format == .binary:
                    guard let text = numericText(bytes) else { throw ModelStoreError(.decodingFailed, "malformed NUMERIC") }
                    return .text(text)
                default: return .text(try cell.decode(String.self))
                }
            } catch {
                throw ModelStoreError.server(
                    state: nil,
                    message:
                        "the value of column \(cell.columnName), of PostgreSQL type \(cell.dataType), cannot be read: \(describe(error))",
                    sql: sql)
            }
        }

        /// The common types read straight from their binary form, as `cell.decode` reads them:
        /// `cell.decode` finds its decoding context's generic metadata on every cell, which cost
        /// more than reading the value (about a third of a server `findAll`'s own work). Nil for
        /// any other type or an unexpected length, which `value(of:sql:)` then reads the usual way.
        @inline(__always)
        private static func binaryValue(_ bytes: ByteBuffer, type: PostgresDataType) -> SQLValue? {
            let start = bytes.readerIndex
            switch (type, bytes.readableBytes) {
            case (.int8, 8): return bytes.getInteger(at: start, as: Int64.self).map { .integer($0) }
            case (.int4, 4): return bytes.getInteger(at: start, as: Int32.self).map { .integer(Int64($0)) }
            case (.int2, 2): return bytes.getInteger(at: start, as: Int16.self).map { .integer(Int64($0)) }
            case (.float8, 8): return bytes.getInteger(at: start, as: UInt64.self).map { .real(Double(bitPattern: $0)) }
            case (.float4, 4):
                return bytes.getInteger(at: start, as: UInt32.self).map { .real(Double(Float(bitPattern: $0))) }
            case (.bool, 1):
                let byte = bytes.getInteger(at: start, as: UInt8.self)
                return byte == 0 || byte == 1 ? .integer(Int64(byte!)) : nil
            case (.text, _), (.varchar, _), (.name, _), (.bpchar, _):
                return .text(String(decoding: bytes.readableBytesView, as: UTF8.self))
            default: return nil
            }
        }

        /// NUMERIC's binary form as its exact decimal text (`-12.34` for -12.3400, `NaN`): every
        /// significant digit kept, so the engine's Decimal reader refuses what a Decimal cannot
        /// hold rather than reading a rounded number; the scale's trailing zeros dropped.
        static func numericText(_ buffer: ByteBuffer) -> String? {
            var buffer = buffer
            guard let count = buffer.readInteger(as: Int16.self), let weight = buffer.readInteger(as: Int16.self),
                let sign = buffer.readInteger(as: UInt16.self), let scale = buffer.readInteger(as: UInt16.self), count >= 0
            else { return nil }
            switch sign {
            case 0xC000: return "NaN"
            case 0xD000: return "Infinity"
            case 0xF000: return "-Infinity"
            case 0x0000, 0x4000: break
            default: return nil
            }
            var digits: [Int] = []
            for _ in 0..<count {
                guard let digit = buffer.readInteger(as: Int16.self), (0..<10_000).contains(digit) else { return nil }
                digits.append(Int(digit))
            }
            func group(_ index: Int) -> Int { index >= 0 && index < digits.count ? digits[index] : 0 }
            func padded(_ digit: Int) -> String {
                let text = String(digit)
                return String(repeating: "0", count: 4 - text.count) + text
            }
            var integer = ""
            if weight >= 0 {
                for index in 0...Int(weight) { integer += index == 0 ? String(group(index)) : padded(group(index)) }
            } else {
                integer = "0"
            }
            var fraction = ""
            var index = Int(weight) + 1
            while fraction.count < Int(scale) {
                fraction += padded(group(index))
                index += 1
            }
            fraction = String(fraction.prefix(Int(scale)))
            // The scale's trailing zeros are no digits of the number (a sum of 0.1, 0.2 and -0.3
            // is 0.0 at scale 1): dropped, the text is the one a Decimal writes, which the
            // engine's reader demands.
            while fraction.last == "0" { fraction.removeLast() }
            let negative = sign == 0x4000 && !(integer.allSatisfy { $0 == "0" } && fraction.isEmpty)
            return (negative ? "-" : "") + integer + (fraction.isEmpty ? "" : "." + fraction)
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

        /// What to check when a connection cannot be made, by what failed: a TLS handshake or
        /// certificate is not a wrong password.
        static func openingSuggestion(for description: String) -> String {
            let lowered = description.lowercased()
            if ["certificate", "tls", "ssl", "handshake"].contains(where: lowered.contains) {
                return
                    "The TLS connection failed: check that the server offers TLS, that its certificate is trusted (the trust roots in the TLS configuration) and names the host you connect to."
            }
            if ["password", "authentication"].contains(where: lowered.contains) {
                return "The server refused the login: check the user and password (and the server's pg_hba.conf)."
            }
            return "Check that the server runs, and the address, user, password and database."
        }

        /// The name in `column "name"` of a server's message ("column "price" is of type bigint …").
        static func quotedColumn(in message: String) -> String? {
            guard let start = message.range(of: "column \"") else { return nil }
            let rest = message[start.upperBound...]
            guard let end = rest.firstIndex(of: "\"") else { return nil }
            return String(rest[..<end])
        }

        /// The column of a one-column unique violation's detail (`Key (id)=(5) already exists.`,
        /// `Key ("Odd name")=(…)`), which the server does not report as the error's column: for
        /// the message alone (a server speaking another language words it otherwise).
        static func uniqueColumn(inDetail detail: String?) -> String? {
            guard let detail, detail.hasPrefix("Key ("), let end = detail.range(of: ")=(") else { return nil }
            let names = detail[detail.index(detail.startIndex, offsetBy: 5)..<end.lowerBound]
            if names.hasPrefix("\""), names.hasSuffix("\""), names.count >= 2 {
                let inner = names.dropFirst().dropLast()
                // A quote inside a quoted name is doubled; a `", "` means several columns.
                guard !inner.replacingOccurrences(of: "\"\"", with: "").contains("\"") else { return nil }
                return inner.replacingOccurrences(of: "\"\"", with: "\"")
            }
            return names.contains(",") || names.contains("(") ? nil : String(names)
        }

        /// postgres-nio's error as a `ModelStoreError`, its code from the SQLSTATE.
        static func mapped(_ error: any Error, sql: String?) -> ModelStoreError {
            if let error = error as? ModelStoreError { return error }
            guard let error = error as? PSQLError else {
                return .server(state: "08000", message: "\(error)", sql: sql)
            }
            if let info = error.serverInfo {
                let noSystemColumn =
                    info[.sqlState] == "0A000" && info[.message]?.contains("system column") == true
                    || info[.sqlState] == "42703" && info[.message]?.contains("\"xmax\"") == true
                if noSystemColumn, sql?.contains("modelstore_inserted") == true {
                    // The upsert's RETURNING reads xmax to tell an insert from an update; a
                    // partitioned table (its rows live in the partitions) or a view has none.
                    return .backend(
                        .unsupported,
                        "A save into a partitioned table or a view is not supported on PostgreSQL yet: the upsert tells an insert from an update by the row's xmax, which neither returns. Nothing was written.",
                        message: info[.message] ?? "", state: "0A000", sql: sql,
                        suggestion:
                            "Save through a model whose tableName is the table itself (for a partitioned table, its partition), or keep the model's table unpartitioned."
                    )
                }
                var message = info[.message] ?? "\(error.code)"
                if let detail = info[.detail] { message += " (\(detail))" }
                let unique = info[.sqlState] == "23505"
                let column = info[.columnName] ?? quotedColumn(in: message) ?? (unique ? uniqueColumn(inDetail: info[.detail]) : nil)
                var mapped = ModelStoreError.server(state: info[.sqlState], message: message, sql: sql, column: column)
                if unique, let table = info[.tableName], let constraint = info[.constraintName] {
                    mapped.violatedUniqueConstraint = (table, constraint)
                }
                return mapped
            }
            switch error.code {
            case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown, .queryCancelled,
                .messageDecodingFailure, .unexpectedBackendMessage:
                return .server(state: "08006", message: describe(error), sql: sql)
            case .tooManyParameters:
                return .server(state: "54000", message: "more than 65,535 values in one statement", sql: sql)
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
        var psqlType: PostgresDataType { .null }
        var psqlFormat: PostgresFormat { .text }

        func encode<JSONEncoder: PostgresJSONEncoder>(into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
            byteBuffer.writeBytes(bytes)
        }
    }

    /// One connection's metrics (see `PostgresConfiguration.metricsFactory`): handles made once,
    /// a statement's timer looked up by its first word.
    final class DriverMetrics {
        let factory: any MetricsFactory
        let connectionsOpened: Counter
        let connectionsLost: Counter
        /// By the statement's first word, packed (see `timer(for:)`).
        private var timers: [UInt64: Metrics.Timer] = [:]
        private var errorCounters: [String: Counter] = [:]

        init(factory: any MetricsFactory) {
            self.factory = factory
            connectionsOpened = Counter(label: "modelstore_connections_opened_total", factory: factory)
            connectionsLost = Counter(label: "modelstore_connections_lost_total", factory: factory)
        }

        func timer(for sql: String) -> Metrics.Timer {
            // The first word names few kinds of statement, so the dimension stays small. Looked
            // up by its first eight ASCII letters, upper-cased and packed into an integer: every
            // statement passes here, and a String key (made, upper-cased, hashed) cost more
            // than the rest of the bookkeeping together.
            var packed: UInt64 = 0
            var length = 0
            for byte in sql.utf8 {
                let upper = byte & 0xDF
                guard length < 8, upper >= UInt8(ascii: "A"), upper <= UInt8(ascii: "Z") else { break }
                packed = packed << 8 | UInt64(upper)
                length += 1
            }
            if let timer = timers[packed] { return timer }
            let word = String(sql.prefix(while: \.isLetter)).uppercased()
            let verb = word.isEmpty ? "OTHER" : word
            let timer = Metrics.Timer(label: "modelstore_statement_duration_seconds", dimensions: [("statement", verb)], factory: factory)
            timers[packed] = timer
            return timer
        }

        /// By SQLSTATE (`23505`, `40001`, …; `08006` for a lost connection): few, and what an
        /// operator looks up.
        func errors(state: String) -> Counter {
            if let counter = errorCounters[state] { return counter }
            let counter = Counter(label: "modelstore_statement_errors_total", dimensions: [("sqlstate", state)], factory: factory)
            errorCounters[state] = counter
            return counter
        }
    }
#endif
