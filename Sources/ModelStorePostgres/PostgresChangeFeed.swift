#if PostgreSQL
    import Foundation
    import ModelStore

    /// A store's observation on a PostgreSQL server (see `ChangeFeed`): changes are recorded by
    /// the server, for every connection that writes, and read back with their keys.
    ///
    /// - Statement triggers on each observed table (`modelstore_record_insert`, `…_update`,
    ///   `…_delete`, with transition tables) write each row's change — its table,
    ///   insert/update/delete, and its primary key — into the schema's `modelstore_change_log`,
    ///   in the transaction that makes it: a rolled-back change is never recorded, and a
    ///   committed one always is, whoever wrote it (this store, another process or machine,
    ///   `psql`, logical replication). `modelstore_record_truncate` records a TRUNCATE.
    /// - The triggers also send `NOTIFY modelstore_changes` (the schema as payload), which the
    ///   server delivers at commit. The feed's own connection listens, and reads the log when
    ///   woken. A notification is only a wake-up: the log is read from where the feed last
    ///   read, so a notification lost with a connection costs nothing but time (each new
    ///   connection reads at once), and the feed also reads on a timer.
    /// - "Where it last read" is a snapshot of the server's transactions (`pg_current_snapshot`)
    ///   and the largest position read: a transaction's rows get their positions when written,
    ///   not when it commits, so a later-committing transaction can hold smaller positions —
    ///   but only one that was running at the snapshot (its xid in the snapshot's list, or at
    ///   or past its xmax, which the list leaves out). Read as two index scans (a union: an OR
    ///   of the two made the server scan the whole log).
    ///   The feed reads exactly the rows of transactions that were not visible in its last
    ///   snapshot and are in its new one, so none is skipped or read twice.
    /// - The triggers stay when observation ends (another process may rely on them). Rows
    ///   older than an hour are purged.
    /// - Nothing the feed does may fail or stall another writer: it makes triggers with a short
    ///   lock timeout (and tries again later), and the writer's own statements that make them
    ///   swallow a refusal (the feed then reports it to the observers that asked).
    final class PostgresChangeFeed: ChangeFeed, @unchecked Sendable {
        // @unchecked: every stored var is read and written only while `lock` is held (the
        // connection serves one statement at a time).
        private let lock = NSLock()
        private let connection: PostgresDriverConnection
        private let bell: Bell
        private let publish: @Sendable (CommittedChanges, String) -> Void
        /// The store's schema, as named and quoted.
        private let schemaName: String
        private let schema: String
        /// The snapshot after the last read of the log, and the largest position read.
        private var cursor: String
        private var maxPosition: Int64
        /// Tables with triggers, by exact name: the table's oid, the key columns the triggers
        /// record, and their types.
        private var recorded: [String: Recorded] = [:]
        /// What observers want recorded, by exact name, with the widest key order asked for.
        private var wanted: [String: ObservedTable] = [:]
        /// Wanted tables without (current) triggers — absent from the schema, made again
        /// behind the feed's back, or whose triggers could not be made yet — with when to try
        /// again. Their changes until they are recorded reach observers as unknown.
        private var absent: [String: Date] = [:]
        /// Why a wanted table cannot be recorded (the role may not make triggers on it): told
        /// to each observer that asks for it.
        private var failures: [String: ModelStoreError] = [:]
        /// Tables a write transaction began recording: recorded once it commits.
        private var awaitingCommit: Set<String> = []
        private var lastRead = Date()
        private var lastPurge = Date.distantPast
        /// How long a writer waits for the feed's lock (the store's busy timeout).
        private let writerWait: TimeInterval
        /// Closed: nothing runs on the connection again (a statement would reconnect it).
        private var isClosed = false

        private struct Recorded {
            let oid: Int64
            let columns: [String]
            let types: [String]
        }

        /// The channel every store's triggers notify; the payload is the schema.
        static let channel = "modelstore_changes"
        /// How long the log keeps a change: a feed that could not read for longer tells its
        /// observers that anything may have changed.
        static let retention: TimeInterval = 3600
        /// How long the feed's own DDL waits for a lock before it gives up and tries later: a
        /// CREATE TRIGGER waiting for a long transaction holds up every new writer of the table
        /// behind it, and the feed's lock (so every post-commit catch-up) meanwhile.
        static let ddlLockTimeout = "250ms"

        var transactionSQL: String { "SELECT pg_current_xact_id_if_assigned()::text" }

        init(
            server: PostgresConfiguration, settings: RemoteConnectionSettings, tick: TimeInterval,
            publish: @escaping @Sendable (CommittedChanges, String) -> Void
        ) throws {
            let bell = Bell()
            self.bell = bell
            self.publish = publish
            writerWait = settings.lockTimeout
            connection = try PostgresDriverConnection(
                server: server, settings: settings, listening: .init(channel: Self.channel, notified: { bell.ring(payload: $0) }))
            do {
                guard case .text(let name)? = try connection.run("SELECT current_schema()::text", []).rows.first?.first else {
                    throw ModelStoreError(
                        .cannotOpen, "Observing changes needs a schema to keep its change log in, and the connection has none.",
                        suggestion: "Set PostgresConfiguration.schema, or a search_path whose first schema exists.")
                }
                schemaName = name
                schema = Self.quoted(name)
                bell.listen(to: name)
                try Self.makeLog(on: connection, schemaName: name, schema: schema)
                let start = try connection.run(
                    "SELECT pg_current_snapshot()::text, (SELECT coalesce(max(position), 0) FROM \(schema).\(ChangeLogNames.table))", [])
                guard let row = start.rows.first, row.count == 2, case .text(let snapshot) = row[0], case .integer(let position) = row[1]
                else { throw ModelStoreError(.server, "The server did not give its snapshot.") }
                cursor = snapshot
                maxPosition = position
            } catch {
                connection.close()
                throw Self.explained(error, table: nil)
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

        /// Makes the log, its indexes and the triggers' function where they are missing or out
        /// of date. Looked for first: DDL on the log (even `CREATE INDEX IF NOT EXISTS`) locks
        /// it, so would wait for every open transaction that wrote an observed table and hold
        /// up every new one — and a second role, which does not own them, could not run it.
        private static func makeLog(on connection: PostgresDriverConnection, schemaName: String, schema: String) throws {
            let present = try connection.run(
                """
                SELECT to_regclass(format('%I.%I', $1::text, '\(ChangeLogNames.table)')) IS NOT NULL
                    AND to_regclass(format('%I.%I', $1::text, 'modelstore_change_log_txid')) IS NOT NULL
                    AND to_regclass(format('%I.%I', $1::text, 'modelstore_change_log_recorded')) IS NOT NULL
                    AND EXISTS (SELECT 1 FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
                        WHERE n.nspname = $1::text AND p.proname = '\(ChangeLogNames.function)' AND p.prosrc = $2::text)
                """, [.text(schemaName), .text(functionBody(schemaName: schemaName, schema: schema))])
            guard present.rows.first?.first != .integer(1) else { return }
            _ = try connection.run("BEGIN", [])
            do {
                // Stores starting at once make them one at a time.
                _ = try connection.run("SELECT 1 FROM pg_advisory_xact_lock(hashtext($1))", [.text("modelstore_change_log " + schemaName)])
                for sql in logSQL(schemaName: schemaName, schema: schema) { _ = try connection.run(sql, []) }
                _ = try connection.run("COMMIT", [])
            } catch {
                _ = try? connection.run("ROLLBACK", [])
                throw error
            }
        }

        deinit {
            bell.close()
        }

        func close() {
            bell.close()
            lock.lock()
            isClosed = true
            connection.close()
            lock.unlock()
        }

        // MARK: Recording

        func record(_ tables: [ObservedTable], execute: ((String) throws -> Void)?) throws -> Bool {
            lock.lock()
            defer { lock.unlock() }
            guard !isClosed else { return false }
            for table in tables where (wanted[table.name]?.keyColumns.count ?? -1) < table.keyColumns.count {
                wanted[table.name] = table
            }
            var began = false
            for table in tables where recorded[table.name] == nil && !awaitingCommit.contains(table.name) {
                do {
                    guard let found = try lookUp(table.name) else {
                        absent[table.name] = absent[table.name] ?? Date()
                        continue
                    }
                    if !found.current {
                        // Refused before: told again, until its owner makes the triggers (then
                        // the lookup finds them current).
                        if let failure = failures[table.name] { throw failure }
                        if let execute {
                            // In the writer's transaction (a lock it holds would stall the
                            // feed's own DDL): recorded once it commits.
                            try execute(Self.triggerSQL(schema: schema, table: table.name, keyColumns: found.recorded.columns))
                            awaitingCommit.insert(table.name)
                            began = true
                            continue
                        }
                        try makeTriggers(table.name, keyColumns: found.recorded.columns, replacing: found.triggered)
                        began = true
                    }
                    recorded[table.name] = found.recorded
                    absent[table.name] = nil
                    failures[table.name] = nil
                } catch let error as ModelStoreError where ["55P03", "42710"].contains(error.serverState ?? "") {
                    // A long transaction holds the table, or another process made its triggers
                    // at the same moment: looked at again by the feed, and its changes until
                    // then reach observers as unknown.
                    absent[table.name] = Date()
                    began = true
                } catch {
                    let failure = Self.explained(error, table: table.name)
                    if failure.serverState == "42501" { failures[table.name] = failure }
                    throw failure
                }
            }
            return began
        }

        func statementsRecording(table: String, keyColumns: [String]) -> [String] {
            // (As `catchUp`: without the lock in time, the feed records the table later, as an
            // absent one, and its first changes reach observers as unknown.)
            guard lock.lock(before: Date(timeIntervalSinceNow: writerWait)) else { return [] }
            defer { lock.unlock() }
            // (Also when a transaction that made it before rolled back: the statement makes the
            // triggers only where they are missing.)
            guard wanted[table] != nil, recorded[table] == nil, failures[table] == nil else { return [] }
            absent[table] = nil
            awaitingCommit.insert(table)
            return [Self.triggerSQL(schema: schema, table: table, keyColumns: keyColumns)]
        }

        /// The table's oid, key columns and their types, whether it has the triggers and
        /// whether they record its key as it is now; nil when the schema has no such table.
        private func lookUp(_ table: String) throws -> (recorded: Recorded, triggered: Bool, current: Bool)? {
            let keys = """
                FROM pg_catalog.pg_index i CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
                JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                WHERE i.indrelid = c.oid AND i.indisprimary
                """
            let result = try connection.run(
                """
                SELECT c.oid::int8, coalesce((SELECT json_agg(a.attname::text ORDER BY k.n) \(keys))::text, '[]'),
                    coalesce((SELECT json_agg(format_type(a.atttypid, NULL) ORDER BY k.n) \(keys))::text, '[]'),
                    (SELECT encode(g.tgargs, 'hex') FROM pg_catalog.pg_trigger g
                        WHERE g.tgrelid = c.oid AND g.tgname = '\(ChangeLogNames.triggers[0])')
                FROM pg_catalog.pg_class c
                WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND c.relname = $1::text
                """, [.text(table)])
            guard let row = result.rows.first, row.count == 4, case .integer(let oid) = row[0], case .text(let columns) = row[1],
                case .text(let types) = row[2]
            else { return nil }
            let keyColumns = JSONTextArray.strings(columns)?.compactMap { $0 } ?? []
            let recorded = Recorded(oid: oid, columns: keyColumns, types: JSONTextArray.strings(types)?.compactMap { $0 } ?? [])
            guard case .text(let arguments) = row[3] else { return (recorded, false, false) }
            return (recorded, true, arguments == Self.triggerArguments(keyColumns))
        }

        /// The key columns as `pg_trigger.tgargs` holds them (each name's bytes and a NUL),
        /// read with `encode(…, 'hex')` (`'escape'` writes bytes past ASCII as octal).
        static func triggerArguments(_ columns: [String]) -> String {
            columns.flatMap { Array($0.utf8) + [0] }.map { byte in
                let digits = String(byte, radix: 16)
                return byte < 16 ? "0" + digits : digits
            }.joined()
        }

        /// Makes `table`'s triggers on the feed's connection (replacing ones that record a key
        /// the table no longer has), waiting at most `ddlLockTimeout` for the table.
        private func makeTriggers(_ table: String, keyColumns: [String], replacing: Bool) throws {
            _ = try connection.run("BEGIN", [])
            do {
                _ = try connection.run("SET LOCAL lock_timeout = '\(Self.ddlLockTimeout)'", [])
                if replacing {
                    for name in ChangeLogNames.triggers {
                        _ = try connection.run("DROP TRIGGER IF EXISTS \(name) ON \(schema).\(Self.quoted(table))", [])
                    }
                }
                _ = try connection.run(Self.triggerSQL(schema: schema, table: table, keyColumns: keyColumns, swallowing: false), [])
                _ = try connection.run("COMMIT", [])
            } catch {
                _ = try? connection.run("ROLLBACK", [])
                throw error
            }
        }

        // MARK: Reading

        func catchUp() {
            // A writer never waits on the feed for longer than its own lock wait: a feed stuck
            // on a server that stopped answering must not hold up every commit. (The feed's
            // thread publishes what this catch-up would have, once it can.)
            guard lock.lock(before: Date(timeIntervalSinceNow: writerWait)) else { return }
            defer { lock.unlock() }
            guard !isClosed else { return }
            settleAwaitingCommit()
            try? read()
        }

        /// The tables the writer's transactions began recording, now that one ended: recorded
        /// when it committed them, waiting with the absent ones when it rolled back. Only the
        /// writer asks, after its transaction: asked while it runs, the catalog would not show
        /// its uncommitted table yet.
        private func settleAwaitingCommit() {
            for name in awaitingCommit {
                let found: (recorded: Recorded, triggered: Bool, current: Bool)?
                do { found = try lookUp(name) } catch { continue }  // (left waiting: the catalog cannot be read now)
                awaitingCommit.remove(name)
                if let found, found.current {
                    recorded[name] = found.recorded
                } else {
                    absent[name] = Date()
                }
            }
        }

        /// Woken by a notification, a new connection, or the timer: reads the log, and looks
        /// again at the tables' triggers (a table dropped and made again lost them).
        private func service() {
            lock.lock()
            defer { lock.unlock() }
            guard !isClosed else { return }
            var vanished: Set<String> = []
            try? verify(into: &vanished)
            try? read(vanished: vanished)
            if Date().timeIntervalSince(lastPurge) > 60 {
                lastPurge = Date()
                _ = try? connection.run(
                    "DELETE FROM \(schema).\(ChangeLogNames.table) WHERE recorded < now() - make_interval(secs => $1::text::float8)",
                    [.real(Self.retention)])
            }
        }

        /// Notices recorded tables whose triggers went (dropped with their table), whose table
        /// is another one now (made again, perhaps by another process's feed that made its
        /// triggers too), or whose triggers record a key the table no longer has (a renamed
        /// key column): each is recorded again, and its changes meanwhile are unknown.
        private func verify(into vanished: inout Set<String>) throws {
            guard !recorded.isEmpty else { return }
            let result = try connection.run(
                """
                SELECT c.relname::text, c.oid::int8, encode(g.tgargs, 'hex'),
                    coalesce((SELECT json_agg(a.attname::text ORDER BY k.n)
                        FROM pg_catalog.pg_index i CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
                        JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                        WHERE i.indrelid = c.oid AND i.indisprimary)::text, '[]')
                FROM pg_catalog.pg_trigger g JOIN pg_catalog.pg_class c ON c.oid = g.tgrelid
                WHERE g.tgname = '\(ChangeLogNames.triggers[0])' AND c.relnamespace = current_schema()::regnamespace
                """, [])
            var present: [String: Int64] = [:]
            for row in result.rows {
                // (A table whose triggers record a key it no longer has counts as gone.)
                guard row.count == 4, case .text(let name) = row[0], case .integer(let oid) = row[1],
                    case .text(let arguments) = row[2], case .text(let key) = row[3]
                else { continue }
                if arguments == Self.triggerArguments(JSONTextArray.strings(key)?.compactMap { $0 } ?? []) { present[name] = oid }
            }
            for (name, table) in recorded where present[name] != table.oid {
                recorded[name] = nil
                absent[name] = Date()
                vanished.insert(name.lowercased())
            }
        }

        /// Records the absent tables that exist now, then publishes every transaction committed
        /// since the cursor, in the order of its last recorded change (a transaction that wrote
        /// after another committed comes after it).
        ///
        /// - Parameter vanished: tables whose triggers went: what changed in them is unknown.
        private func read(vanished: Set<String> = []) throws {
            var unknown = vanished
            let now = Date()
            for (name, due) in absent where due <= now {
                // One table that cannot be recorded never holds up the others.
                do {
                    guard let found = try lookUp(name) else { continue }
                    if !found.current { try makeTriggers(name, keyColumns: found.recorded.columns, replacing: found.triggered) }
                    recorded[name] = found.recorded
                    absent[name] = nil
                    failures[name] = nil
                    // Written before the triggers were there: which rows changed is unknown.
                    unknown.insert(name.lowercased())
                } catch let error as ModelStoreError where ["55P03", "42710"].contains(error.serverState ?? "") {
                    absent[name] = now.addingTimeInterval(error.serverState == "42710" ? 0 : 1)
                } catch {
                    let failure = Self.explained(error, table: name)
                    if failure.serverState == "42501" { failures[name] = failure }
                    absent[name] = now.addingTimeInterval(30)
                }
            }
            let result = try connection.run(
                """
                SELECT pg_current_snapshot()::text, c.txid::text, c.table_name, c.operation::int8, c.key::text, c.position
                FROM (SELECT 1) AS one LEFT JOIN (
                        SELECT * FROM \(schema).\(ChangeLogNames.table) WHERE position > $2
                        UNION ALL
                        SELECT * FROM \(schema).\(ChangeLogNames.table)
                        WHERE (txid = ANY (ARRAY(SELECT pg_snapshot_xip($1::text::pg_snapshot)))
                                OR txid >= pg_snapshot_xmax($1::text::pg_snapshot))
                            AND position + 0 <= $2) AS c
                    ON NOT pg_visible_in_snapshot(c.txid, $1::text::pg_snapshot)
                    AND pg_visible_in_snapshot(c.txid, pg_current_snapshot())
                ORDER BY c.position
                """, [.text(cursor), .integer(maxPosition)])
            guard case .text(let snapshot)? = result.rows.first?.first else { return }
            let missedSome = Date().timeIntervalSince(lastRead) > Self.retention / 2
            cursor = snapshot
            lastRead = Date()
            // Rows of a table a write transaction began recording: it committed (its rows are
            // here), so its triggers are there — read now, the writer may not have said so yet.
            for row in result.rows {
                guard row.count == 6, case .text(let table) = row[2], awaitingCommit.contains(table) else { continue }
                if let found = try lookUp(table), found.current {
                    awaitingCommit.remove(table)
                    recorded[table] = found.recorded
                }
            }
            var last: [String: Int64] = [:]
            var transactions: [String: CommittedChanges] = [:]
            for row in result.rows {
                guard row.count == 6, case .text(let transaction) = row[1], case .text(let table) = row[2],
                    case .integer(let operation) = row[3], case .text(let key) = row[4], case .integer(let position) = row[5]
                else { continue }
                maxPosition = max(maxPosition, position)
                last[transaction] = position
                let lowered = table.lowercased()
                transactions[transaction, default: CommittedChanges()].tables.insert(lowered)
                guard let kind = CommittedChanges.Row.Operation(rawValue: operation) else {
                    // A TRUNCATE (or a key the triggers could not read): which rows is unknown.
                    transactions[transaction]?.unknownTables.insert(lowered)
                    continue
                }
                transactions[transaction]?.rows[lowered, default: []].append(.init(operation: kind, key: self.key(key, of: table)))
            }
            if missedSome {
                publish(CommittedChanges(isUnknown: true), "")
            } else if !unknown.isEmpty {
                publish(CommittedChanges(tables: unknown, unknownTables: unknown), "")
            }
            for (transaction, _) in last.sorted(by: { $0.value < $1.value }) { publish(transactions[transaction]!, transaction) }
        }

        /// A recorded key (a JSON array of the key columns' text) in the order observers of
        /// `table` asked for, each value as the store reads that column; empty (keys unknown)
        /// when a column they asked for is not recorded.
        private func key(_ json: String, of table: String) -> [SQLValue] {
            guard let wanted = wanted[table], !wanted.keyColumns.isEmpty, let recorded = recorded[table],
                let texts = JSONTextArray.strings(json), texts.count == recorded.columns.count
            else { return [] }
            var key: [SQLValue] = []
            key.reserveCapacity(wanted.keyColumns.count)
            for column in wanted.keyColumns {
                guard let index = recorded.columns.firstIndex(of: column) else { return [] }
                key.append(Self.value(texts[index], type: index < recorded.types.count ? recorded.types[index] : "text"))
            }
            return key
        }

        /// A key column's text (`column::text`, as the triggers write it) as the driver reads
        /// that type.
        static func value(_ text: String?, type: String) -> SQLValue {
            guard let text else { return .null }
            switch type {
            case "smallint", "integer", "bigint", "oid": return Int64(text).map { .integer($0) } ?? .text(text)
            // (A `real` as the driver reads it: the Float's own value, widened.)
            case "real": return Float(text).map { .real(Double($0)) } ?? .text(text)
            case "double precision": return Double(text).map { .real($0) } ?? .text(text)
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

        /// The body of the triggers' function. Statement triggers with transition tables: one
        /// call per statement writes every row's change with one set-based INSERT (100,000
        /// inserted rows cost 0.46 s against 0.15 s unrecorded, where a row trigger cost
        /// 1.52 s). An UPDATE is read as the sets of keys before and after: a key only before
        /// was deleted, only after inserted, in both updated — so an UPDATE that changes keys
        /// reports what the table lost and gained, in whatever order its rows changed. Keys are
        /// the columns' text (`bytea` in hex, doubles exact: the function's settings), as the
        /// driver reads them. A key column the table no longer has (renamed behind the triggers'
        /// back) is recorded as a change of unknown rows, never a failed write. Only triggers
        /// on the schema's own tables are heard: another schema's table cannot write here.
        static func functionBody(schemaName: String, schema: String) -> String {
            let insert = "INSERT INTO \(schema).\(ChangeLogNames.table) (table_name, operation, key)"
            // Inside format()'s literal: a % or a quote in the schema's name is text, not syntax.
            let formatted = insert.replacingOccurrences(of: "%", with: "%%").replacingOccurrences(of: "'", with: "''")
            return """

                DECLARE
                    key_of text;
                BEGIN
                    IF TG_TABLE_SCHEMA <> \(literal(schemaName)) THEN
                        RETURN NULL;
                    END IF;
                    -- The key of a transition row r: a JSON array of its key columns' text, the
                    -- types' own output (format's %s), which no cast a table's owner adds can replace.
                    SELECT coalesce('jsonb_build_array(' || string_agg(format('format(''%%s'', r.%I)', a.k), ', ' ORDER BY a.i) || ')',
                            '''[]''::jsonb')
                        INTO key_of FROM unnest(TG_ARGV) WITH ORDINALITY AS a(k, i);
                    -- A key column the table no longer has (renamed behind the triggers' back): a
                    -- change of unknown rows, never a failed write (looked up, not trapped: an
                    -- EXCEPTION block would open a subtransaction in every write statement).
                    IF EXISTS (SELECT 1 FROM unnest(TG_ARGV) AS a(k) WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute t
                            WHERE t.attrelid = TG_RELID AND t.attname = a.k AND t.attnum > 0 AND NOT t.attisdropped)) THEN
                        \(insert) VALUES (TG_TABLE_NAME, 0, '[]');
                    ELSE
                        IF TG_OP = 'INSERT' THEN
                            EXECUTE format('\(formatted) SELECT %L, 1, %s FROM new_rows AS r', TG_TABLE_NAME, key_of);
                        ELSIF TG_OP = 'DELETE' THEN
                            EXECUTE format('\(formatted) SELECT %L, 3, %s FROM old_rows AS r', TG_TABLE_NAME, key_of);
                        ELSIF TG_OP = 'UPDATE' THEN
                            EXECUTE format('\(formatted)
                                SELECT %1$L, CASE WHEN n.key IS NULL THEN 3 WHEN o.key IS NULL THEN 1 ELSE 2 END, coalesce(n.key, o.key)
                                FROM (SELECT DISTINCT %2$s AS key FROM old_rows AS r) AS o
                                    FULL JOIN (SELECT DISTINCT %2$s AS key FROM new_rows AS r) AS n ON o.key = n.key
                                ORDER BY n.key IS NOT NULL', TG_TABLE_NAME, key_of);
                        ELSE
                            -- TRUNCATE: every row went, which ones is not told.
                            \(insert) VALUES (TG_TABLE_NAME, 0, '[]');
                        END IF;
                    END IF;
                    PERFORM pg_notify('\(channel)', TG_TABLE_SCHEMA);
                    RETURN NULL;
                END

                """
        }

        /// The log, its indexes, and the triggers' function: SECURITY DEFINER (with fixed
        /// settings), so a role that may write a model's table but not the log — a tool's,
        /// another service's — still has its writes recorded, never refused; and executable by
        /// no one else, so no other role can attach it to a table of its own and write
        /// changes of its choosing into the log.
        static func logSQL(schemaName: String, schema: String) -> [String] {
            let log = "\(schema).\(ChangeLogNames.table)"
            let function = "\(schema).\(ChangeLogNames.function)()"
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
                // The purge's: a BRIN index is a few pages, and costs a write next to nothing.
                "CREATE INDEX IF NOT EXISTS modelstore_change_log_recorded ON \(log) USING brin (recorded)",
                """
                CREATE OR REPLACE FUNCTION \(function) RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
                SET search_path = pg_catalog, pg_temp SET bytea_output = 'hex' SET extra_float_digits = 1
                AS $modelstore$\(functionBody(schemaName: schemaName, schema: schema))$modelstore$
                """,
                "REVOKE EXECUTE ON FUNCTION \(function) FROM PUBLIC",
            ]
        }

        /// Makes `table`'s triggers unless it has them, enabled always (so changes applied by
        /// logical replication are recorded too). `swallowing`: as the writer runs it, inside a
        /// user's transaction — a refusal (no right to make triggers, another session making
        /// them at the same moment, a lock not free) must not fail the user's write: it is
        /// swallowed, and the feed finds the table unrecorded after the commit.
        static func triggerSQL(schema: String, table: String, keyColumns: [String], swallowing: Bool = true) -> String {
            let target = "\(schema).\(quoted(table))"
            let arguments = keyColumns.map(literal).joined(separator: ", ")
            let function = "\(schema).\(ChangeLogNames.function)"
            let names = ChangeLogNames.triggers
            // A dollar quote no table name can end.
            let tag = "$modelstore_\(UInt64.random(in: 0...UInt64.max))$"
            let make = """
                        CREATE TRIGGER \(names[0]) AFTER INSERT ON \(target) REFERENCING NEW TABLE AS new_rows
                            FOR EACH STATEMENT EXECUTE FUNCTION \(function)(\(arguments));
                        CREATE TRIGGER \(names[1]) AFTER UPDATE ON \(target) REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
                            FOR EACH STATEMENT EXECUTE FUNCTION \(function)(\(arguments));
                        CREATE TRIGGER \(names[2]) AFTER DELETE ON \(target) REFERENCING OLD TABLE AS old_rows
                            FOR EACH STATEMENT EXECUTE FUNCTION \(function)(\(arguments));
                        CREATE TRIGGER \(names[3]) AFTER TRUNCATE ON \(target) FOR EACH STATEMENT EXECUTE FUNCTION \(function)();
                """ + names.map { "\n            ALTER TABLE \(target) ENABLE ALWAYS TRIGGER \($0);" }.joined()
            // As the writer runs it: a short lock wait (its own setting restored after), and a
            // refusal, a duplicate, a lock not free or a deadlock swallowed (the subtransaction
            // takes the lock setting back with it).
            let guarded =
                swallowing
                ? """
                    BEGIN
                        PERFORM set_config('lock_timeout', '\(ddlLockTimeout)', true);
                \(make)
                        PERFORM set_config('lock_timeout', was, true);
                    EXCEPTION WHEN insufficient_privilege OR duplicate_object OR lock_not_available OR deadlock_detected THEN
                        NULL;
                    END;
                """ : make
            return """
                DO \(tag) DECLARE
                    was text := current_setting('lock_timeout');
                BEGIN
                    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_trigger WHERE tgrelid = \(literal(target))::regclass
                        AND tgname = '\(names[0])')
                    THEN
                \(guarded)
                    END IF;
                END \(tag)
                """
        }

        private static func quoted(_ name: String) -> String {
            "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }

        private static func literal(_ text: String) -> String {
            "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        }

        /// A failure to make the log or a table's triggers, saying what observing needs.
        private static func explained(_ error: any Error, table: String?) -> ModelStoreError {
            guard let failure = error as? ModelStoreError else { return ModelStoreError(.server, String(describing: error)) }
            guard failure.serverState == "42501" else { return failure }
            let what = table.map { "triggers on the table \($0)" } ?? "its change log and the log's function"
            return ModelStoreError(
                failure.code,
                "Observing changes on PostgreSQL records them in the store's schema (modelstore_change_log, and triggers on each observed table), and the server refused to make \(what): \(failure.message)",
                suggestion:
                    "Observe as the role that owns the table (triggers need its owner) and that may create in the schema, or have that role observe the table once: its triggers then serve every role."
            )
        }
    }

    /// Wakes the feed's thread: a notification rang it, or its timer ran out.
    private final class Bell: @unchecked Sendable {
        // @unchecked: `rung`, `closed` and `schema` are read and written only while `condition` is locked.
        private let condition = NSCondition()
        private var rung = false
        private var closed = false

        /// The schema whose notifications ring (every schema's triggers notify one channel).
        private var schema: String?

        func listen(to schema: String) {
            condition.lock()
            self.schema = schema
            condition.unlock()
        }

        /// Rings for a notification of the schema's, or a new connection's (nil).
        func ring(payload: String?) {
            condition.lock()
            if payload == nil || payload == schema {
                rung = true
                condition.signal()
            }
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
