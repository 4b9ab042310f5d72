#if PostgreSQL
    import Foundation
    import ModelStore

    /// The durable history on a PostgreSQL server (see `HistorySQL`).
    ///
    /// - The log `modelstore_history` (and `modelstore_history_horizon`) lives in the store's
    ///   schema, beside the tables it records. Statement triggers with transition tables
    ///   (`modelstore_history_insert`, `…_update`, `…_delete`, `…_truncate`) call one function,
    ///   `modelstore_record_history`, which writes each row's change with one set-based INSERT,
    ///   in the transaction of the change — as the change feed's triggers do (see
    ///   `PostgresChangeFeed`), into a log of its own: the feed's keeps an hour, the history
    ///   keeps what `purgeHistory(olderThan:)` leaves.
    /// - Positions are given when a change is written, not when its transaction commits, so a
    ///   token is a snapshot of the server's transactions and the largest position read: a
    ///   page reads exactly the changes of transactions not visible in the token's snapshot
    ///   and visible now (the feed's cursor), in position order.
    /// - A purge removes only changes of transactions older than every one still running, and
    ///   keeps the largest transaction it removed. A token lost nothing when every transaction
    ///   its snapshot did not see is newer than that one; any other is refused by name — also
    ///   one whose unseen transaction wrote no history at all (the server does not say which
    ///   did), so a token is refused when a purge reaches past a transaction that was writing
    ///   when the token was read. With purges of changes days old, only a consumer that far
    ///   behind meets it.
    enum PostgresHistory {
        static let function = "modelstore_record_history"
        static let triggers = [
            "modelstore_history_insert", "modelstore_history_update", "modelstore_history_delete", "modelstore_history_truncate",
        ]
        static let log = HistoryNames.log
        static let horizon = HistoryNames.horizon

        /// The log and the horizon of the connection's current schema, qualified.
        private static let here = "format('%I.%I', current_schema(), "

        static let sql = HistorySQL(
            logCurrent: """
                SELECT 1 WHERE to_regclass(\(here)'\(log)')) IS NOT NULL AND to_regclass(\(here)'\(horizon)')) IS NOT NULL
                    AND to_regclass(\(here)'\(HistoryNames.recorded)')) IS NOT NULL
                    AND EXISTS (SELECT 1 FROM pg_catalog.pg_trigger g WHERE g.tgrelid = to_regclass(\(here)'\(log)'))
                        AND g.tgname = 'modelstore_history_deleted')
                    AND EXISTS (SELECT 1 FROM pg_catalog.pg_proc p
                        WHERE p.pronamespace = (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = current_schema())
                        AND p.proname = '\(function)' AND p.prosrc = $modelstore$\(functionBody)$modelstore$)
                """,
            makeLog: [
                // Stores starting at once make them one at a time.
                "SELECT 1 FROM pg_advisory_xact_lock(hashtext('modelstore_history ' || current_schema()))",
                "CREATE TABLE IF NOT EXISTS \(horizon) (id text NOT NULL, purged_position bigint NOT NULL, purged_txid bigint NOT NULL)",
                // A log made again under a horizon that outlived it: another history, which no
                // earlier token may read.
                """
                UPDATE \(horizon) SET id = md5(random()::text || clock_timestamp()::text)
                WHERE to_regclass(\(here)'\(log)')) IS NULL
                """,
                """
                CREATE TABLE IF NOT EXISTS \(log) (
                    position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
                    table_name text NOT NULL,
                    operation smallint NOT NULL,
                    key jsonb NOT NULL,
                    recorded timestamptz NOT NULL DEFAULT now())
                """,
                "CREATE INDEX IF NOT EXISTS modelstore_history_txid ON \(log) (txid)",
                "CREATE INDEX IF NOT EXISTS modelstore_history_recorded ON \(log) USING brin (recorded)",
                "CREATE TABLE IF NOT EXISTS \(HistoryNames.recorded) (name text PRIMARY KEY)",
                """
                INSERT INTO \(horizon) (id, purged_position, purged_txid)
                SELECT md5(random()::text || clock_timestamp()::text), 0, 0 WHERE NOT EXISTS (SELECT 1 FROM \(horizon))
                """,
                // SECURITY DEFINER (fixed settings): a role that may write a model's table but
                // not the log still has its writes recorded; executable by no one else, so no
                // other role can attach it to a table of its own.
                """
                CREATE OR REPLACE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
                SET search_path = pg_catalog, pg_temp SET bytea_output = 'hex' SET extra_float_digits = 1
                SET DateStyle = 'ISO, YMD' SET TimeZone = 'UTC' SET IntervalStyle = 'postgres'
                AS $modelstore$\(functionBody)$modelstore$
                """,
                "REVOKE EXECUTE ON FUNCTION \(function)() FROM PUBLIC",
                // Whoever deletes the log's rows moves the horizon past them, so a consumer
                // behind them is refused rather than silently skipping them.
                """
                CREATE OR REPLACE FUNCTION modelstore_history_deleted() RETURNS trigger LANGUAGE plpgsql
                SET search_path = pg_catalog, pg_temp
                AS $modelstore$
                BEGIN
                    EXECUTE format('UPDATE %I.\(horizon) SET
                        purged_position = greatest(purged_position, (SELECT max(position) FROM old_rows)),
                        purged_txid = greatest(purged_txid, (SELECT max(txid::text::bigint) FROM old_rows))', TG_TABLE_SCHEMA);
                    RETURN NULL;
                END
                $modelstore$
                """,
                "DROP TRIGGER IF EXISTS modelstore_history_deleted ON \(log)",
                """
                CREATE TRIGGER modelstore_history_deleted AFTER DELETE ON \(log) REFERENCING OLD TABLE AS old_rows
                    FOR EACH STATEMENT EXECUTE FUNCTION modelstore_history_deleted()
                """,
            ],
            triggersCurrent: { table, keyColumns in
                (
                    """
                    SELECT 1 FROM pg_catalog.pg_trigger g WHERE g.tgrelid = to_regclass(\(here)?1::text))
                        AND g.tgname = '\(triggers[0])'
                        AND encode(g.tgargs, 'hex') = encode(convert_to(current_schema(), 'UTF8'), 'hex') || '00' || ?2::text
                        AND (SELECT count(*) FROM pg_catalog.pg_trigger t WHERE t.tgrelid = g.tgrelid AND t.tgenabled = 'A'
                            AND t.tgname IN (\(triggers.map { "'\($0)'" }.joined(separator: ", ")))) = \(triggers.count)
                    """,
                    [.text(table), .text(PostgresChangeFeed.triggerArguments(keyColumns))]
                )
            },
            triggerNames: """
                SELECT g.tgname::text FROM pg_catalog.pg_trigger g WHERE g.tgrelid = to_regclass(\(here)?::text))
                    AND g.tgname IN (\(triggers.map { "'\($0)'" }.joined(separator: ", ")))
                """,
            dropTrigger: { name, table in "DROP TRIGGER IF EXISTS \(quoted(name)) ON \(quoted(table))" },
            makeTriggers: { table, keyColumns in
                // The schema's name is the function's first argument (it records only that
                // schema's tables, into that schema's log): written by the server, in a DO block.
                let arguments = (["%1$L"] + keyColumns.map { inFormat(literal($0)) }).joined(separator: ", ")
                let target = "%1$I.%2$I"
                let call = "%1$I.\(function)"
                let statements =
                    [
                        "CREATE TRIGGER \(triggers[0]) AFTER INSERT ON \(target) REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION \(call)(\(arguments))",
                        "CREATE TRIGGER \(triggers[1]) AFTER UPDATE ON \(target) REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION \(call)(\(arguments))",
                        "CREATE TRIGGER \(triggers[2]) AFTER DELETE ON \(target) REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION \(call)(\(arguments))",
                        "CREATE TRIGGER \(triggers[3]) AFTER TRUNCATE ON \(target) FOR EACH STATEMENT EXECUTE FUNCTION \(call)(%1$L)",
                    ] + triggers.map { "ALTER TABLE \(target) ENABLE ALWAYS TRIGGER \($0)" }
                // A dollar quote no name can end.
                let tag = "$modelstore_\(UInt64.random(in: 0...UInt64.max))$"
                let registered = "INSERT INTO %1$I.\(HistoryNames.recorded) (name) VALUES (%2$L) ON CONFLICT DO NOTHING"
                let body = (statements + [registered]).map { "EXECUTE format('\($0)', current_schema(), \(literal(table)));" }
                return ["DO \(tag) BEGIN\n" + body.joined(separator: "\n") + "\nEND \(tag)"]
            },
            now: """
                SELECT (SELECT id FROM \(horizon) LIMIT 1), pg_current_snapshot()::text,
                    coalesce((SELECT max(position) FROM \(log)), 0)::int8
                """,
            tokenWhole: """
                SELECT id, (CASE WHEN ?1::text IS NULL THEN purged_txid = 0
                    ELSE purged_txid < pg_snapshot_xmax(?1::text::pg_snapshot)::text::bigint
                        AND NOT EXISTS (SELECT 1 FROM pg_snapshot_xip(?1::text::pg_snapshot) AS x
                            WHERE x::text::bigint <= purged_txid) END)::int::int8,
                    (?2::int8 <= greatest(purged_position, (SELECT coalesce(max(position), 0) FROM \(log)))
                        -- A snapshot no transaction of this server has reached yet: another
                        -- server's (a dump restored), or a copy's from before it was restored.
                        AND (?1::text IS NULL
                            OR pg_snapshot_xmax(?1::text::pg_snapshot) <= pg_snapshot_xmax(pg_current_snapshot())))::int::int8
                FROM \(horizon) LIMIT 1
                """,
            // The two index scans of the feed's cursor (position past the token's, or a
            // transaction running at its snapshot), kept to what the snapshot the batch is read
            // at sees and the token's did not.
            read: """
                WITH s AS (SELECT coalesce(?3::text::pg_snapshot, pg_current_snapshot()) AS now, ?1::text::pg_snapshot AS old)
                SELECT s.now::text, c.position, c.table_name, c.operation::int8, c.key::text
                FROM s LEFT JOIN LATERAL (
                    SELECT h.position, h.table_name, h.operation, h.key FROM (
                        SELECT * FROM \(log) WHERE position > ?2::int8
                        UNION ALL
                        SELECT * FROM \(log) WHERE s.old IS NOT NULL
                            AND (txid = ANY (ARRAY(SELECT pg_snapshot_xip(s.old))) OR txid >= pg_snapshot_xmax(s.old))
                            AND position + 0 <= ?2::int8) AS h
                    WHERE (s.old IS NULL OR NOT pg_visible_in_snapshot(h.txid, s.old))
                        AND pg_visible_in_snapshot(h.txid, s.now) AND h.position > coalesce(?4::int8, 0)
                    ORDER BY h.position LIMIT ?5::int8) AS c ON true
                ORDER BY c.position
                """,
            unknownRows: """
                INSERT INTO \(log) (table_name, operation, key)
                SELECT ?1::text, 0, '[]' WHERE EXISTS (SELECT 1 FROM \(HistoryNames.recorded) WHERE name = ?1::text)
                """,
            purge: [
                """
                -- (The log's delete trigger moves the horizon.)
                WITH gone AS (
                        DELETE FROM \(log) WHERE recorded < to_timestamp(?1::float8)
                            AND txid < pg_snapshot_xmin(pg_current_snapshot())
                        RETURNING 1)
                SELECT count(*)::int8 FROM gone
                """
            ],
            keyValue: { text, type in PostgresChangeFeed.value(text, type: type) })

        /// The triggers' function: the change feed's (`PostgresChangeFeed.functionBody`), into
        /// the history's log of the table's own schema, and without a notification.
        static let functionBody = """

            DECLARE
                key_of text;
                log text;
            BEGIN
                -- Only a table of the schema the triggers were made in (the first argument),
                -- into that schema's log: a table moved to another schema is not recorded,
                -- never a failed write.
                IF TG_NARGS = 0 OR TG_TABLE_SCHEMA <> TG_ARGV[0] THEN
                    RETURN NULL;
                END IF;
                log := format('%I.\(log)', TG_ARGV[0]);
                -- The key of a transition row r: a JSON array of its key values, each its
                -- column's type (a domain's base type), a colon and its text — the type's own
                -- output (format's %s), which no cast a table's owner adds can replace.
                SELECT coalesce('jsonb_build_array('
                        || string_agg(format('CASE WHEN r.%1$I IS NULL THEN NULL ELSE %2$L || '':'' || format(''%%s'', r.%1$I) END',
                            a.k, b.base), ', ' ORDER BY a.i)
                        || ')', '''[]''::jsonb')
                    INTO key_of FROM unnest(TG_ARGV[1:]) WITH ORDINALITY AS a(k, i)
                    LEFT JOIN LATERAL (SELECT pg_catalog.format_type(coalesce(nullif(t.typbasetype, 0), t.oid), NULL) AS base
                        FROM pg_catalog.pg_attribute c JOIN pg_catalog.pg_type t ON t.oid = c.atttypid
                        WHERE c.attrelid = TG_RELID AND c.attname = a.k AND c.attnum > 0 AND NOT c.attisdropped) AS b ON true;
                -- A key column the table no longer has (renamed behind the triggers' back): a
                -- change of unknown rows, never a failed write.
                IF TG_OP = 'TRUNCATE' OR EXISTS (SELECT 1 FROM unnest(TG_ARGV[1:]) AS a(k) WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute t
                        WHERE t.attrelid = TG_RELID AND t.attname = a.k AND t.attnum > 0 AND NOT t.attisdropped)) THEN
                    EXECUTE format('INSERT INTO %s (table_name, operation, key) VALUES (%L, 0, ''[]'')', log, TG_TABLE_NAME);
                ELSIF TG_OP = 'INSERT' THEN
                    EXECUTE format('INSERT INTO %s (table_name, operation, key) SELECT %L, 1, %s FROM new_rows AS r', log, TG_TABLE_NAME, key_of);
                ELSIF TG_OP = 'DELETE' THEN
                    EXECUTE format('INSERT INTO %s (table_name, operation, key) SELECT %L, 3, %s FROM old_rows AS r', log, TG_TABLE_NAME, key_of);
                ELSE
                    EXECUTE format('INSERT INTO %1$s (table_name, operation, key)
                        SELECT %2$L, CASE WHEN n.key IS NULL THEN 3 WHEN o.key IS NULL THEN 1 ELSE 2 END, coalesce(n.key, o.key)
                        FROM (SELECT DISTINCT %3$s AS key FROM old_rows AS r) AS o
                            FULL JOIN (SELECT DISTINCT %3$s AS key FROM new_rows AS r) AS n ON o.key = n.key
                        ORDER BY n.key IS NOT NULL', log, TG_TABLE_NAME, key_of);
                END IF;
                RETURN NULL;
            END

            """

        private static func quoted(_ name: String) -> String {
            "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }

        /// `literal` inside the literal of a `format` string.
        private static func inFormat(_ literal: String) -> String {
            literal.replacingOccurrences(of: "'", with: "''").replacingOccurrences(of: "%", with: "%%")
        }

        private static func literal(_ text: String) -> String {
            "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        }
    }
#endif
