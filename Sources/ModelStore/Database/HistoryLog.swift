import Foundation

/// Names the durable history keeps in the store's schema (ModelStore's own, never a model's).
package enum HistoryNames {
    /// The log of recorded changes.
    package static let log = "modelstore_history"
    /// The log's one row of bookkeeping: its identity, and how far purges have removed it.
    package static let horizon = "modelstore_history_horizon"
    /// The tables whose changes have been recorded, by name: one made again, or whose
    /// triggers went, has changes the history missed (a change of unknown rows says so).
    package static let recorded = "modelstore_history_tables"
    /// All three, lowercased.
    package static let tables = [log, horizon, recorded]
}

/// What a backend runs to keep and read the durable history (`StoredModel.keepsHistory`,
/// `ModelStore.history(since:)`): a log table that triggers on each history-keeping table
/// write in the transaction of the change, so a change is recorded exactly when it commits,
/// whoever makes it.
///
/// The engine writes none of this SQL itself; it runs these statements and keeps the token's
/// rules. A token is where a consumer stands: a position in the log, and where positions are
/// not commit order (a server gives them out before its transactions commit), the snapshot
/// of the transactions the consumer has seen. Queries take SQLite's numbered placeholders.
package struct HistorySQL: Sendable {
    /// A query answering a row when the log, its bookkeeping and whatever its triggers call
    /// exist as this version makes them.
    package var logCurrent: String
    /// The statements that make them (each idempotent), run in the writer's transaction.
    package var makeLog: [String]
    /// A query answering a row when `table`'s triggers exist and record `keyColumns`.
    package var triggersCurrent: @Sendable (_ table: String, _ keyColumns: [String]) -> (sql: String, values: [SQLValue])
    /// A query of the names of the history triggers on the table named by its one parameter.
    package var triggerNames: String
    /// The statement that drops the history trigger `name` of `table`.
    package var dropTrigger: @Sendable (_ name: String, _ table: String) -> String
    /// The statements that make `table`'s triggers, recording `keyColumns` in that order.
    package var makeTriggers: @Sendable (_ table: String, _ keyColumns: [String]) -> [String]
    /// A query of where the log stands now: the log's identity, the snapshot (NULL where
    /// positions are commit order) and the largest position a reader now sees.
    package var now: String
    /// A query taking a token's snapshot (?1) and position (?2), answering the log's identity,
    /// 1 when no change after the token was purged (else 0), and 1 when the token is not
    /// ahead of the log (a token of a copy or a backup restored since is; else 0).
    package var tokenWhole: String
    /// A query of the changes after a token, in position order, and never fewer than one row:
    /// ?1 the token's snapshot, ?2 its position, ?3 and ?4 the snapshot and position of a
    /// batch it is partway through (NULL when none), ?5 the most changes to answer. Columns:
    /// the snapshot the batch is read at, then (NULL when there is no change) position, table,
    /// operation (1 insert, 2 update, 3 delete, 0 unknown rows) and key (a JSON array of the
    /// key columns' values, each as its type's name, a colon and its text). A token whose
    /// snapshot is newer than the reading transaction's (one taken after a read block began)
    /// reads nothing and stays.
    package var read: String
    /// A statement recording a change of unknown rows of the table named by ?1, when the log
    /// holds changes of that table and its last one is not already such a change: where
    /// changes may have gone unrecorded (triggers made again; a table rewritten by a step).
    package var unknownRows: String
    /// The statements that remove the changes recorded before ?1 (seconds since 1970) that no
    /// transaction still running may need, and move the horizon past them; those that answer
    /// a row answer how many they removed.
    package var purge: [String]
    /// A key value's recorded text as the store reads a value of the type recorded with it.
    package var keyValue: @Sendable (_ text: String?, _ columnType: String) -> SQLValue

    package init(
        logCurrent: String, makeLog: [String],
        triggersCurrent: @escaping @Sendable (_ table: String, _ keyColumns: [String]) -> (sql: String, values: [SQLValue]),
        triggerNames: String, dropTrigger: @escaping @Sendable (_ name: String, _ table: String) -> String,
        makeTriggers: @escaping @Sendable (_ table: String, _ keyColumns: [String]) -> [String],
        now: String, tokenWhole: String, read: String, unknownRows: String, purge: [String],
        keyValue: @escaping @Sendable (_ text: String?, _ columnType: String) -> SQLValue
    ) {
        self.logCurrent = logCurrent
        self.makeLog = makeLog
        self.triggersCurrent = triggersCurrent
        self.triggerNames = triggerNames
        self.dropTrigger = dropTrigger
        self.makeTriggers = makeTriggers
        self.now = now
        self.tokenWhole = tokenWhole
        self.read = read
        self.unknownRows = unknownRows
        self.purge = purge
        self.keyValue = keyValue
    }
}

extension SQLiteDialect {
    /// SQLite's history: one writer at a time, so positions are commit order, and a token is a
    /// position alone. Row triggers (`modelstore_history_<table>_insert`, `_update`, `_delete`)
    /// write each change. A position is the largest one plus one (the rowid's rule; AUTOINCREMENT
    /// cost each recorded row a read and a write of `sqlite_sequence`, 20 of the 43 ms that
    /// recording 20,000 inserted rows cost), so a purge never removes the newest change: it
    /// marks it purged (`operation` -1), and a position is never given twice — also when
    /// another program deletes the log's rows: a trigger puts the newest one back, marked
    /// purged, and every deleted position moves the horizon, so a consumer behind them is
    /// refused.
    static let history: HistorySQL = {
        let log = HistoryNames.log
        let horizon = HistoryNames.horizon
        let recorded = HistoryNames.recorded
        let now = recordedNow
        return HistorySQL(
            logCurrent: """
                SELECT 1 WHERE (SELECT count(*) FROM main.sqlite_master
                    WHERE (type = 'table' AND name IN ('\(log)', '\(horizon)', '\(recorded)'))
                        OR (type = 'trigger' AND name = 'modelstore_history_deleted')) = 4
                """,
            makeLog: [
                "CREATE TABLE IF NOT EXISTS main.\(horizon) (id TEXT NOT NULL, purged_position INTEGER NOT NULL)",
                // A log made again under a horizon that outlived it: another history, which
                // no earlier token may read.
                """
                UPDATE main.\(horizon) SET id = lower(hex(randomblob(16)))
                WHERE NOT EXISTS (SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = '\(log)')
                """,
                """
                CREATE TABLE IF NOT EXISTS main.\(log) (
                    position INTEGER PRIMARY KEY,
                    table_name TEXT NOT NULL,
                    operation INTEGER NOT NULL,
                    key TEXT NOT NULL,
                    recorded REAL NOT NULL)
                """,
                "CREATE TABLE IF NOT EXISTS main.\(recorded) (name TEXT PRIMARY KEY) WITHOUT ROWID",
                """
                INSERT INTO main.\(horizon) (id, purged_position)
                SELECT lower(hex(randomblob(16))), 0 WHERE NOT EXISTS (SELECT 1 FROM main.\(horizon))
                """,
                // Whoever deletes the log's rows: every deleted position moves the horizon, and
                // the newest comes back marked purged (the next position follows it).
                """
                CREATE TRIGGER IF NOT EXISTS main.modelstore_history_deleted AFTER DELETE ON \(log)
                BEGIN
                    UPDATE \(horizon) SET purged_position = max(purged_position, OLD.position);
                    INSERT INTO \(log) (position, table_name, operation, key, recorded)
                    SELECT OLD.position, OLD.table_name, -1, '[]', OLD.recorded
                    WHERE OLD.position > coalesce((SELECT max(position) FROM \(log)), 0);
                END
                """,
            ],
            triggersCurrent: { table, keyColumns in
                let made = triggers(table: table, keyColumns: keyColumns)
                return (
                    "SELECT 1 WHERE (SELECT count(*) FROM main.sqlite_master WHERE type = 'trigger' AND tbl_name = ?1 AND ((name = ?2 AND sql = ?3) OR (name = ?4 AND sql = ?5) OR (name = ?6 AND sql = ?7))) = 3",
                    [.text(table)] + made.flatMap { [SQLValue.text($0.name), .text($0.sql)] }
                )
            },
            triggerNames:
                "SELECT name FROM main.sqlite_master WHERE type = 'trigger' AND tbl_name = ? AND name GLOB 'modelstore_history_*'",
            dropTrigger: { name, _ in "DROP TRIGGER IF EXISTS main.\(quoted(name))" },
            makeTriggers: { table, keyColumns in
                triggers(table: table, keyColumns: keyColumns).map(\.sql) + [
                    "INSERT OR IGNORE INTO main.\(recorded) (name) VALUES ('\(table.replacingOccurrences(of: "'", with: "''"))')"
                ]
            },
            now: """
                SELECT id, NULL, max(purged_position, coalesce((SELECT max(position) FROM main.\(log)), 0))
                FROM main.\(horizon)
                """,
            tokenWhole: """
                SELECT id, ?2 >= purged_position,
                    ?2 <= max(purged_position, coalesce((SELECT max(position) FROM main.\(log)), 0))
                FROM main.\(horizon)
                """,
            read: """
                SELECT NULL, c.position, c.table_name, c.operation, c.key
                FROM (SELECT 1) AS one LEFT JOIN (
                    SELECT position, table_name, operation, key FROM main.\(log) WHERE position > ?2 AND operation >= 0
                    ORDER BY position LIMIT ?5
                ) AS c ON 1
                ORDER BY c.position
                """,
            unknownRows: """
                INSERT INTO main.\(log) (table_name, operation, key, recorded)
                SELECT ?1, 0, '[]', \(now) WHERE EXISTS (SELECT 1 FROM main.\(recorded) WHERE name = ?1)
                """,
            purge: [
                // (The log's triggers keep the newest change, marked purged, and move the horizon.)
                """
                SELECT count(*) FROM main.\(log)
                WHERE position <= (SELECT max(position) FROM main.\(log) WHERE recorded < ?1) AND operation >= 0
                """,
                "DELETE FROM main.\(log) WHERE position <= (SELECT max(position) FROM main.\(log) WHERE recorded < ?1)",
            ],
            keyValue: { text, type in
                guard let text else { return .null }
                switch type {
                case "integer": return Int64(text).map { .integer($0) } ?? .text(text)
                case "real": return Double(text).map { .real($0) } ?? .text(text)
                case "blob": return hexBytes(Substring(text)).map { .blob($0) } ?? .text(text)
                default: return .text(text)
                }
            })
    }()

    /// A table's three row triggers. Each key value is written as its type (`typeof`), a
    /// colon and its text — a BLOB in hex digits, a REAL with 17 digits (exact but for
    /// magnitudes past about 1e±100, where SQLite's printf may miss by a unit in the last
    /// place) — so it reads back as stored whatever becomes of the table; NULL as null. An UPDATE that changes the
    /// key is the old key's delete and the new key's insert.
    private static func triggers(table: String, keyColumns: [String]) -> [(name: String, sql: String)] {
        let name = table.replacingOccurrences(of: "\"", with: "\"\"")
        let literal = "'" + table.replacingOccurrences(of: "'", with: "''") + "'"
        let now = recordedNow
        func key(_ row: String) -> String {
            let texts = keyColumns.map { column in
                let value = "\(row).\(quoted(column))"
                return
                    "typeof(\(value)) || ':' || CASE typeof(\(value)) WHEN 'blob' THEN hex(\(value)) WHEN 'real' THEN printf('%!.17g', \(value)) ELSE CAST(\(value) AS TEXT) END"
            }
            return "json_array(\(texts.joined(separator: ", ")))"
        }
        let moved = keyColumns.map { "OLD.\(quoted($0)) IS NOT NEW.\(quoted($0))" }.joined(separator: " OR ")
        let insert = "INSERT INTO \(HistoryNames.log) (table_name, operation, key, recorded)"
        return [
            (
                "modelstore_history_\(table)_insert",
                "CREATE TRIGGER \"modelstore_history_\(name)_insert\" AFTER INSERT ON \(quoted(table)) BEGIN \(insert) VALUES (\(literal), 1, \(key("NEW")), \(now)); END"
            ),
            (
                "modelstore_history_\(table)_update",
                "CREATE TRIGGER \"modelstore_history_\(name)_update\" AFTER UPDATE ON \(quoted(table)) BEGIN \(insert) SELECT \(literal), 3, \(key("OLD")), \(now) WHERE \(moved); \(insert) VALUES (\(literal), CASE WHEN \(moved) THEN 1 ELSE 2 END, \(key("NEW")), \(now)); END"
            ),
            (
                "modelstore_history_\(table)_delete",
                "CREATE TRIGGER \"modelstore_history_\(name)_delete\" AFTER DELETE ON \(quoted(table)) BEGIN \(insert) VALUES (\(literal), 3, \(key("OLD")), \(now)); END"
            ),
        ]
    }

    /// Seconds since 1970, as a trigger computes it.
    private static let recordedNow = "(julianday('now') - 2440587.5) * 86400.0"

    private static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    private static func hexBytes(_ digits: Substring) -> Data? {
        var bytes = Data()
        bytes.reserveCapacity(digits.utf8.count / 2)
        var iterator = digits.utf8.makeIterator()
        while let high = iterator.next() {
            guard let low = iterator.next(), let h = hexDigit(high), let l = hexDigit(low) else { return nil }
            bytes.append(h << 4 | l)
        }
        return bytes
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
