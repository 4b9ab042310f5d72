#if PostgreSQL
    import Foundation
    import ModelStore

    /// A store's observation on a PostgreSQL server (see `ChangeFeed`): changes are recorded by
    /// the server, for every connection that writes, and read back with their keys.
    ///
    /// - A row trigger on each observed table (`modelstore_record_change`) writes each row's
    ///   change — its table, insert/update/delete, and its primary key — into the schema's
    ///   `modelstore_change_log`, in the transaction that makes it: a rolled-back change is
    ///   never recorded, and a committed one always is, whoever wrote it (this store, another
    ///   process or machine, `psql`). A statement trigger records a TRUNCATE.
    /// - The trigger also sends `NOTIFY modelstore_changes`, which the server delivers at
    ///   commit. The feed's own connection listens, and reads the log when woken. A
    ///   notification is only a wake-up: the log is read from where the feed last read, so a
    ///   notification lost with a connection costs nothing but time (each new connection reads
    ///   at once), and the feed also reads on a timer.
    /// - "Where it last read" is a snapshot of the server's transactions (`pg_current_snapshot`),
    ///   not a position in the log: a transaction's rows get their positions when written,
    ///   not when it commits, so a later-committing transaction can hold smaller positions.
    ///   The feed reads exactly the rows of transactions that were not visible in its last
    ///   snapshot and are in its new one, so none is skipped or read twice.
    /// - The triggers stay when observation ends (another process may rely on them), and cost
    ///   every write to the table one log row. Rows older than an hour are purged.
    final class PostgresChangeFeed: ChangeFeed, @unchecked Sendable {
        // @unchecked: every stored var is read and written only while `lock` is held (the
        // connection serves one statement at a time).
        private let lock = NSLock()
        private let connection: PostgresDriverConnection
        private let bell: Bell
        private let publish: @Sendable (CommittedChanges, String) -> Void
        /// The store's schema, quoted.
        private let schema: String
        /// The snapshot after the last read of the log.
        private var cursor: String
        /// Tables with a trigger, by exact name: the key columns it records and their types.
        private var recorded: [String: Recorded] = [:]
        /// What observers want recorded, by exact name, with the widest key order asked for.
        private var wanted: [String: ObservedTable] = [:]
        /// Wanted tables the server did not have: recorded once it does (their changes until
        /// then reach observers as unknown).
        private var absent: Set<String> = []
        /// Tables a write transaction began recording: recorded once it commits.
        private var awaitingCommit: Set<String> = []
        private var lastRead = Date()
        private var lastPurge = Date.distantPast

        private struct Recorded {
            let columns: [String]
            let types: [String]
        }

        /// The channel every store's triggers notify; the payload is the schema.
        static let channel = "modelstore_changes"
        /// How long the log keeps a change: a feed that could not read for longer tells its
        /// observers that anything may have changed.
        static let retention: TimeInterval = 3600

        var transactionSQL: String { "SELECT pg_current_xact_id_if_assigned()::text" }

        init(
            server: PostgresConfiguration, settings: RemoteConnectionSettings, tick: TimeInterval,
            publish: @escaping @Sendable (CommittedChanges, String) -> Void
        ) throws {
            let bell = Bell()
            self.bell = bell
            self.publish = publish
            connection = try PostgresDriverConnection(
                server: server, settings: settings, listening: .init(channel: Self.channel, notified: { bell.ring() }))
            do {
                guard case .text(let name)? = try connection.run("SELECT current_schema()::text", []).rows.first?.first else {
                    throw ModelStoreError(
                        .cannotOpen, "Observing changes needs a schema to keep its change log in, and the connection has none.",
                        suggestion: "Set PostgresConfiguration.schema, or a search_path whose first schema exists.")
                }
                schema = Self.quoted(name)
                _ = try connection.run("BEGIN", [])
                do {
                    // Stores starting at once make the log and its function one at a time.
                    _ = try connection.run("SELECT 1 FROM pg_advisory_xact_lock(hashtext($1))", [.text("modelstore_change_log " + name)])
                    for sql in Self.logSQL(schema: schema) { _ = try connection.run(sql, []) }
                    _ = try connection.run("COMMIT", [])
                } catch {
                    _ = try? connection.run("ROLLBACK", [])
                    throw error
                }
                guard case .text(let snapshot)? = try connection.run("SELECT pg_current_snapshot()::text", []).rows.first?.first else {
                    throw ModelStoreError(.server, "The server did not give its snapshot.")
                }
                cursor = snapshot
            } catch {
                connection.close()
                throw Self.explained(error)
            }
            let interval = tick
            Thread { [weak self] in
                Thread.current.name = "ModelStore feed"
                while bell.wait(interval) != nil {
                    guard let feed = self else { return }
                    feed.service()
                }
            }.start()
        }

        deinit {
            bell.close()
        }

        func close() {
            bell.close()
            lock.lock()
            connection.close()
            lock.unlock()
        }

        // MARK: Recording

        func record(_ tables: [ObservedTable], execute: ((String) throws -> Void)?) throws -> Bool {
            lock.lock()
            defer { lock.unlock() }
            for table in tables where (wanted[table.name]?.keyColumns.count ?? -1) < table.keyColumns.count {
                wanted[table.name] = table
            }
            var began = false
            do {
                for table in tables where recorded[table.name] == nil && !awaitingCommit.contains(table.name) {
                    guard let found = try lookUp(table.name) else {
                        absent.insert(table.name)
                        continue
                    }
                    if !found.triggered {
                        let sql = Self.triggerSQL(schema: schema, table: table.name, keyColumns: found.recorded.columns)
                        if let execute {
                            // In the writer's transaction: recorded once it commits.
                            try execute(sql)
                            awaitingCommit.insert(table.name)
                            began = true
                            continue
                        }
                        try makeTrigger(sql)
                        began = true
                    }
                    recorded[table.name] = found.recorded
                    absent.remove(table.name)
                }
            } catch {
                throw Self.explained(error)
            }
            return began
        }

        func statementsRecording(table: String, keyColumns: [String]) -> [String] {
            lock.lock()
            defer { lock.unlock() }
            // (Also when a transaction that made it before rolled back: the statement makes the
            // triggers only where they are missing.)
            guard wanted[table] != nil, recorded[table] == nil else { return [] }
            absent.remove(table)
            awaitingCommit.insert(table)
            return [Self.triggerSQL(schema: schema, table: table, keyColumns: keyColumns)]
        }

        /// The table's key columns and their types, and whether it has the trigger; nil when
        /// the schema has no such table.
        private func lookUp(_ table: String) throws -> (recorded: Recorded, triggered: Bool)? {
            let keys = """
                FROM pg_catalog.pg_index i CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
                JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                WHERE i.indrelid = c.oid AND i.indisprimary
                """
            let result = try connection.run(
                """
                SELECT coalesce((SELECT json_agg(a.attname::text ORDER BY k.n) \(keys))::text, '[]'),
                    coalesce((SELECT json_agg(format_type(a.atttypid, NULL) ORDER BY k.n) \(keys))::text, '[]'),
                    EXISTS (SELECT 1 FROM pg_catalog.pg_trigger g WHERE g.tgrelid = c.oid AND g.tgname = '\(ChangeLogNames.function)')
                FROM pg_catalog.pg_class c
                WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND c.relname = $1::text
                """, [.text(table)])
            guard let row = result.rows.first, row.count == 3, case .text(let columns) = row[0], case .text(let types) = row[1]
            else { return nil }
            return (Recorded(columns: Self.strings(columns), types: Self.strings(types)), row[2] == .integer(1))
        }

        /// Makes a trigger on the feed's connection, one store at a time.
        private func makeTrigger(_ sql: String) throws {
            _ = try connection.run("BEGIN", [])
            do {
                _ = try connection.run(sql, [])
                _ = try connection.run("COMMIT", [])
            } catch {
                _ = try? connection.run("ROLLBACK", [])
                throw error
            }
        }

        // MARK: Reading

        func catchUp() {
            lock.lock()
            defer { lock.unlock() }
            try? settleAwaitingCommit()
            try? read()
        }

        /// The tables the writer's transactions began recording, now that one committed (or
        /// rolled back: a table without its trigger is then recorded as an absent one is).
        /// Only the writer asks, after its commit: asked while its transaction runs, the
        /// catalog would not show its uncommitted table yet.
        private func settleAwaitingCommit() throws {
            for name in awaitingCommit {
                awaitingCommit.remove(name)
                guard let found = try lookUp(name) else {
                    absent.insert(name)
                    continue
                }
                if found.triggered { recorded[name] = found.recorded } else { absent.insert(name) }
            }
        }

        /// Woken by a notification, a new connection, or the timer: reads the log, and looks
        /// again at the tables' triggers (a table dropped and made again lost its trigger).
        private func service() {
            lock.lock()
            defer { lock.unlock() }
            do {
                try read(vanished: verify())
                if Date().timeIntervalSince(lastPurge) > 60 {
                    lastPurge = Date()
                    _ = try connection.run(
                        "DELETE FROM \(schema).\(ChangeLogNames.table) WHERE recorded < now() - make_interval(secs => $1::text::float8)",
                        [.real(Self.retention)])
                }
            } catch {
                // The next wake-up tries again; a lost connection is replaced then, and the new
                // one reads everything since the cursor.
            }
        }

        /// Notices recorded tables whose trigger went (dropped with its table), and returns
        /// them, lowercased.
        private func verify() throws -> Set<String> {
            guard !recorded.isEmpty else { return [] }
            let result = try connection.run(
                """
                SELECT c.relname::text FROM pg_catalog.pg_trigger g JOIN pg_catalog.pg_class c ON c.oid = g.tgrelid
                WHERE g.tgname = '\(ChangeLogNames.function)' AND c.relnamespace = current_schema()::regnamespace
                """, [])
            var present: Set<String> = []
            for row in result.rows { if case .text(let name)? = row.first { present.insert(name) } }
            var vanished: Set<String> = []
            for name in recorded.keys where !present.contains(name) {
                recorded[name] = nil
                absent.insert(name)
                vanished.insert(name.lowercased())
            }
            return vanished
        }

        /// Records the absent tables that exist now, then publishes every transaction committed
        /// since the cursor, in the order of its first recorded change.
        /// - Parameter vanished: tables whose trigger went (dropped, perhaps made again): what
        ///   changed in them is unknown.
        private func read(vanished: Set<String> = []) throws {
            var unknown = vanished
            for name in absent {
                guard let found = try lookUp(name) else { continue }
                if !found.triggered {
                    try makeTrigger(Self.triggerSQL(schema: schema, table: name, keyColumns: found.recorded.columns))
                }
                recorded[name] = found.recorded
                absent.remove(name)
                // Written before the trigger was there: which rows changed is unknown.
                unknown.insert(name.lowercased())
            }
            let result = try connection.run(
                """
                SELECT pg_current_snapshot()::text, c.txid::text, c.table_name, c.operation::int8, c.key::text
                FROM (SELECT 1) AS one LEFT JOIN \(schema).\(ChangeLogNames.table) AS c
                    ON c.txid >= pg_snapshot_xmin($1::text::pg_snapshot) AND NOT pg_visible_in_snapshot(c.txid, $1::text::pg_snapshot)
                ORDER BY c.position
                """, [.text(cursor)])
            guard case .text(let snapshot)? = result.rows.first?.first else { return }
            let missedSome = Date().timeIntervalSince(lastRead) > Self.retention / 2
            cursor = snapshot
            lastRead = Date()
            // Rows of a table a write transaction began recording: it committed (its rows are
            // here), so its trigger is there — read now, the writer may not have said so yet.
            for row in result.rows {
                guard row.count == 5, case .text(let table) = row[2], awaitingCommit.contains(table) else { continue }
                if let found = try lookUp(table), found.triggered {
                    awaitingCommit.remove(table)
                    recorded[table] = found.recorded
                }
            }
            var order: [String] = []
            var transactions: [String: CommittedChanges] = [:]
            for row in result.rows {
                guard row.count == 5, case .text(let transaction) = row[1], case .text(let table) = row[2],
                    case .integer(let operation) = row[3], case .text(let key) = row[4]
                else { continue }
                if transactions[transaction] == nil {
                    order.append(transaction)
                    transactions[transaction] = CommittedChanges()
                }
                let lowered = table.lowercased()
                transactions[transaction]?.tables.insert(lowered)
                guard let kind = CommittedChanges.Row.Operation(rawValue: operation) else {
                    // A TRUNCATE: every row went, and which they were is unknown.
                    transactions[transaction]?.isUnknown = true
                    continue
                }
                transactions[transaction]?.rows[lowered, default: []].append(.init(operation: kind, key: self.key(key, of: table)))
            }
            if missedSome || !unknown.isEmpty {
                publish(CommittedChanges(tables: unknown, isUnknown: true), "")
            }
            for transaction in order { publish(transactions[transaction]!, transaction) }
        }

        /// A recorded key (a JSON array of the key columns' text) in the order observers of
        /// `table` asked for, each value as the store reads that column; empty (keys unknown)
        /// when a column they asked for is not recorded.
        private func key(_ json: String, of table: String) -> [SQLValue] {
            guard let wanted = wanted[table], !wanted.keyColumns.isEmpty, let recorded = recorded[table],
                let texts = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [Any], texts.count == recorded.columns.count
            else { return [] }
            var key: [SQLValue] = []
            key.reserveCapacity(wanted.keyColumns.count)
            for column in wanted.keyColumns {
                guard let index = recorded.columns.firstIndex(of: column) else { return [] }
                key.append(Self.value(texts[index] as? String, type: index < recorded.types.count ? recorded.types[index] : "text"))
            }
            return key
        }

        /// A key column's text (as `to_jsonb` writes it) as the driver reads that type.
        static func value(_ text: String?, type: String) -> SQLValue {
            guard let text else { return .null }
            switch type {
            case "smallint", "integer", "bigint", "oid": return Int64(text).map { .integer($0) } ?? .text(text)
            case "real", "double precision": return Double(text).map { .real($0) } ?? .text(text)
            case "boolean": return .integer(text == "true" ? 1 : 0)
            case "bytea":
                guard text.hasPrefix("\\x") else { return .text(text) }
                var bytes: [UInt8] = []
                var digits = text.utf8.dropFirst(2).makeIterator()
                while let high = digits.next(), let low = digits.next() {
                    guard let byte = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return .text(text) }
                    bytes.append(byte)
                }
                return .blob(Data(bytes))
            case "numeric":
                // As the driver writes NUMERIC: the scale's trailing zeros dropped.
                guard text.contains("."), !text.contains("e"), !text.contains("E") else { return .text(text) }
                var trimmed = Substring(text)
                while trimmed.last == "0" { trimmed.removeLast() }
                if trimmed.last == "." { trimmed.removeLast() }
                return .text(String(trimmed))
            default: return .text(text)
            }
        }

        // MARK: SQL

        /// The log, its index, and the function the triggers call: SECURITY DEFINER (with a
        /// fixed search path), so a role that may write a model's table but not the log — a
        /// tool's, another service's — still has its writes recorded, never refused.
        static func logSQL(schema: String) -> [String] {
            let log = "\(schema).\(ChangeLogNames.table)"
            let insert = "INSERT INTO \(log) (table_name, operation, key) VALUES"
            let key = { (row: String) in
                "SELECT coalesce(jsonb_agg(to_jsonb(\(row)) ->> a.k ORDER BY a.i), '[]') FROM unnest(TG_ARGV) WITH ORDINALITY AS a(k, i)"
            }
            return [
                """
                CREATE TABLE IF NOT EXISTS \(log) (
                    position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
                    table_name text NOT NULL,
                    operation smallint NOT NULL,
                    key jsonb NOT NULL,
                    recorded timestamptz NOT NULL DEFAULT now())
                """,
                "CREATE INDEX IF NOT EXISTS modelstore_change_log_txid ON \(log) (txid)",
                """
                CREATE OR REPLACE FUNCTION \(schema).\(ChangeLogNames.function)() RETURNS trigger
                LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $modelstore$
                DECLARE
                    old_key jsonb;
                    new_key jsonb;
                BEGIN
                    IF TG_OP = 'TRUNCATE' THEN
                        \(insert) (TG_TABLE_NAME, 0, '[]');
                    ELSE
                        IF TG_OP <> 'INSERT' THEN \(key("OLD")) INTO old_key; END IF;
                        IF TG_OP <> 'DELETE' THEN \(key("NEW")) INTO new_key; END IF;
                        IF TG_OP = 'INSERT' THEN
                            \(insert) (TG_TABLE_NAME, 1, new_key);
                        ELSIF TG_OP = 'DELETE' THEN
                            \(insert) (TG_TABLE_NAME, 3, old_key);
                        ELSIF old_key IS DISTINCT FROM new_key THEN
                            -- A changed key: the old record's delete and the new one's insert.
                            \(insert) (TG_TABLE_NAME, 3, old_key), (TG_TABLE_NAME, 1, new_key);
                        ELSE
                            \(insert) (TG_TABLE_NAME, 2, new_key);
                        END IF;
                    END IF;
                    PERFORM pg_notify('\(channel)', TG_TABLE_SCHEMA);
                    RETURN NULL;
                END
                $modelstore$
                """,
            ]
        }

        /// Makes `table`'s triggers unless it has them.
        static func triggerSQL(schema: String, table: String, keyColumns: [String]) -> String {
            let target = "\(schema).\(quoted(table))"
            let arguments = keyColumns.map(literal).joined(separator: ", ")
            let function = "\(schema).\(ChangeLogNames.function)"
            return """
                DO $modelstore$ BEGIN
                    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_trigger WHERE tgrelid = \(literal(target))::regclass
                        AND tgname = '\(ChangeLogNames.function)')
                    THEN
                        CREATE TRIGGER \(ChangeLogNames.function) AFTER INSERT OR UPDATE OR DELETE ON \(target)
                            FOR EACH ROW EXECUTE FUNCTION \(function)(\(arguments));
                        CREATE TRIGGER \(ChangeLogNames.truncateTrigger) AFTER TRUNCATE ON \(target)
                            FOR EACH STATEMENT EXECUTE FUNCTION \(function)();
                    END IF;
                END $modelstore$
                """
        }

        private static func quoted(_ name: String) -> String {
            "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }

        private static func literal(_ text: String) -> String {
            "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        }

        private static func strings(_ json: String) -> [String] {
            (try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String]) ?? []
        }

        /// A failure to make the log or a trigger, saying what observing needs.
        private static func explained(_ error: any Error) -> ModelStoreError {
            guard let failure = error as? ModelStoreError else { return ModelStoreError(.server, String(describing: error)) }
            guard failure.serverState == "42501" else { return failure }
            return ModelStoreError(
                failure.code,
                "Observing changes on PostgreSQL keeps a change log in the store's schema and a trigger on each observed table, and the server refused to make them: \(failure.message)",
                suggestion:
                    "Observe as a role that owns the model's tables and may create in its schema (the role that made the tables does), or have that role observe the tables once."
            )
        }
    }

    /// Wakes the feed's thread: a notification rang it, or its timer ran out.
    private final class Bell: @unchecked Sendable {
        // @unchecked: `rung` and `closed` are read and written only while `condition` is locked.
        private let condition = NSCondition()
        private var rung = false
        private var closed = false

        func ring() {
            condition.lock()
            rung = true
            condition.signal()
            condition.unlock()
        }

        func close() {
            condition.lock()
            closed = true
            condition.signal()
            condition.unlock()
        }

        /// Waits up to `interval` for a ring; nil once closed.
        func wait(_ interval: TimeInterval) -> Bool? {
            condition.lock()
            defer { condition.unlock() }
            let deadline = Date(timeIntervalSinceNow: interval)
            while !rung && !closed && condition.wait(until: deadline) {}
            if closed { return nil }
            let wasRung = rung
            rung = false
            return wasRung
        }
    }
#endif
