import Foundation

/// What differs between the SQL of the backends ModelStore runs on: the one place the engine
/// asks, so its statements are written once.
///
/// The engine writes SQL with SQLite's placeholders (`?`, `?NNN`); a backend that numbers
/// them otherwise renumbers them when it prepares a statement (`SQLDialect.finish`).
/// Everything else that differs — identity tests, collations, column types, upsert details,
/// schema inspection, limits — the engine takes from here. Statements are cached per
/// connection once written, so none of this is on a hot path.
protocol SQLDialect: Sendable {
    /// The backend's name, for messages ("SQLite", "PostgreSQL").
    var name: String { get }
    /// Whether this is a server database reached through a driver (PostgreSQL): SQLite's
    /// file machinery (WAL, `PRAGMA`s, triggers calling Swift functions, FTS5) is absent.
    var isServer: Bool { get }
    /// The most parameters one statement may take.
    var maximumParameters: Int { get }
    /// Whether one INSERT may carry several `ON CONFLICT` clauses (one per unique index).
    var supportsMultipleUpsertClauses: Bool { get }
    /// `a IS b`: true when both are NULL or both are equal.
    func identical(_ left: String, _ right: String) -> String
    /// `a IS NOT b`: the negation of `identical`.
    func distinct(_ left: String, _ right: String) -> String
    /// The schema of a connection's temporary tables (`temp`, `pg_temp`).
    var temporarySchema: String { get }
    /// ` COLLATE BINARY` where the backend needs it to compare bytes, or "".
    var binaryCollation: String { get }
    /// The declared SQL type of a column SQLite declares as `sqliteType` (`INTEGER`, `REAL`,
    /// `TEXT`, `BLOB` or none); `isDecimal` for the text of a `Decimal`.
    func columnType(_ sqliteType: String, isDecimal: Bool) -> String
    /// The declared type of an integer key the database assigns (`var id: Int64?`).
    func assignedKeyColumnType() -> String?
    /// Appended to an INSERT (after any `RETURNING` list of its own, or as one) so the
    /// driver learns whether the row was inserted rather than updated, and its key.
    func insertedMarker(returning alreadyReturning: Bool, key: String?) -> String
    /// A query of one row per column of `table`: name, declared type, primary-key position
    /// (0 when not in the key). Takes the table's unquoted name as its one parameter.
    var tableColumnsSQL: String { get }
    /// A query returning a row when a table named by its one parameter exists.
    var tableExistsSQL: String { get }
    /// A query returning a row when an index named by its one parameter exists.
    var indexExistsSQL: String { get }
    /// Whether `CREATE INDEX IF NOT EXISTS` takes a lock that waits for open write
    /// transactions on the table even when the index exists (PostgreSQL's SHARE lock), so
    /// the engine asks `indexExistsSQL` first.
    var createIndexLocksTable: Bool { get }
    /// `sql` as the backend runs it (placeholders renumbered), and its parameter count.
    func finish(_ sql: String) -> (sql: String, parameterCount: Int)
    /// The statements of a script, each without its `;`.
    func split(_ sql: String) -> [String]
    /// Whether the database keeps a write-ahead log the store folds into its file on request
    /// (`store.checkpoint(_:)`); a server checkpoints its own files.
    var hasCheckpoints: Bool { get }
    /// Whether `VACUUM INTO` writes a compacted copy of the whole database to a new file
    /// (`store.vacuum(into:)`); a server's data is not one file.
    var canVacuumIntoFile: Bool { get }
    /// A query of the tables `vacuum()` names, each as a quoted, qualified name, when `VACUUM`
    /// alone would reach beyond the store (a server's database holds other schemas' tables);
    /// nil when `VACUUM` alone compacts exactly the store (SQLite: its file).
    var vacuumTablesSQL: String? { get }
    /// The statement that bounds how long each later statement on the connection may run
    /// (`milliseconds`), or lifts that bound (nil), when the database enforces it itself;
    /// nil when the store's own progress handler does (SQLite: see `Connection.running`).
    func statementTimeout(milliseconds: Int?) -> String?
}

extension SQLDialect {
    /// The SQL of `value` as a string literal.
    func literal(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
    }
}

/// SQLite's SQL: what the engine writes natively.
struct SQLiteDialect: SQLDialect {
    var name: String { "SQLite" }
    var isServer: Bool { false }
    var maximumParameters: Int { 32_766 }
    var supportsMultipleUpsertClauses: Bool { Connection.supportsMultipleUpsertClauses }
    func identical(_ left: String, _ right: String) -> String { "\(left) IS \(right)" }
    func distinct(_ left: String, _ right: String) -> String { "\(left) IS NOT \(right)" }
    var binaryCollation: String { " COLLATE BINARY" }
    var temporarySchema: String { "temp" }
    func columnType(_ sqliteType: String, isDecimal: Bool) -> String { sqliteType }
    func assignedKeyColumnType() -> String? { nil }
    func insertedMarker(returning alreadyReturning: Bool, key: String?) -> String { "" }
    var tableColumnsSQL: String { "SELECT name, type, pk FROM pragma_table_info(?)" }
    var tableExistsSQL: String { "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?" }
    var indexExistsSQL: String { "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?" }
    var createIndexLocksTable: Bool { false }
    func finish(_ sql: String) -> (sql: String, parameterCount: Int) { (sql, 0) }
    func split(_ sql: String) -> [String] { [sql] }
    var hasCheckpoints: Bool { true }
    var canVacuumIntoFile: Bool { true }
    var vacuumTablesSQL: String? { nil }
    func statementTimeout(milliseconds: Int?) -> String? { nil }
}

/// PostgreSQL's SQL (version 12 and later).
///
/// Types: `Int64` BIGINT, `Double` DOUBLE PRECISION, text TEXT, bytes BYTEA, `Decimal`
/// NUMERIC (exact, ordered as a number). Nested values stay JSON text, and a `Date` stays
/// seconds since 1970 as DOUBLE PRECISION, exactly as on SQLite: TIMESTAMPTZ holds
/// microseconds and would not give back the `Date` saved.
struct PostgresDialect: SQLDialect {
    var name: String { "PostgreSQL" }
    var isServer: Bool { true }
    var maximumParameters: Int { 65_535 }
    var supportsMultipleUpsertClauses: Bool { false }
    func identical(_ left: String, _ right: String) -> String { "\(left) IS NOT DISTINCT FROM \(right)" }
    func distinct(_ left: String, _ right: String) -> String { "\(left) IS DISTINCT FROM \(right)" }
    // Deterministic collations (every one but ICU's nondeterministic ones) call two texts
    // equal only when their bytes are: no collation is needed to see a change.
    var binaryCollation: String { "" }
    var temporarySchema: String { "pg_temp" }
    func columnType(_ sqliteType: String, isDecimal: Bool) -> String {
        switch sqliteType {
        case "INTEGER": return "BIGINT"
        case "REAL": return "DOUBLE PRECISION"
        case "BLOB": return "BYTEA"
        case "TEXT": return isDecimal ? "NUMERIC" : "TEXT"
        default: return "TEXT"
        }
    }

    /// The SQLite type whose affinity matches a PostgreSQL column's `data_type`, for the
    /// checks that a stored column keeps what a property stores.
    static func sqliteType(of dataType: String) -> String {
        switch dataType.lowercased() {
        case "bigint", "integer", "smallint", "boolean": return "INTEGER"
        case "double precision", "real": return "REAL"
        case "text", "character varying", "character", "numeric", "jsonb", "json", "uuid": return "TEXT"
        case "bytea": return "BLOB"
        default: return ""
        }
    }
    func assignedKeyColumnType() -> String? { "BIGINT GENERATED BY DEFAULT AS IDENTITY" }
    func insertedMarker(returning alreadyReturning: Bool, key: String?) -> String {
        // xmax is 0 on a row this statement inserted, and set on one ON CONFLICT updated.
        let columns = (key.map { ["\($0) AS modelstore_rowid"] } ?? []) + ["(xmax::text = '0') AS modelstore_inserted"]
        return (alreadyReturning ? ", " : " RETURNING ") + columns.joined(separator: ", ")
    }
    var tableColumnsSQL: String {
        """
        SELECT c.column_name::text, c.data_type::text,
            coalesce((SELECT k.ordinal_position FROM information_schema.key_column_usage k
                JOIN information_schema.table_constraints t ON t.constraint_name = k.constraint_name
                    AND t.table_schema = k.table_schema AND t.constraint_type = 'PRIMARY KEY'
                WHERE k.table_schema = c.table_schema AND k.table_name = c.table_name
                    AND k.column_name = c.column_name), 0)::bigint
        FROM information_schema.columns c
        WHERE c.table_schema = current_schema() AND c.table_name = ?
        ORDER BY c.ordinal_position
        """
    }
    var tableExistsSQL: String {
        "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = ?"
    }
    var createIndexLocksTable: Bool { true }
    var indexExistsSQL: String {
        "SELECT 1 FROM pg_catalog.pg_indexes WHERE schemaname = current_schema() AND indexname = ?"
    }
    var hasCheckpoints: Bool { false }
    var canVacuumIntoFile: Bool { false }
    var vacuumTablesSQL: String? {
        "SELECT format('%I.%I', schemaname, tablename) FROM pg_catalog.pg_tables WHERE schemaname = current_schema() ORDER BY tablename"
    }
    /// A session setting, set before the call's first statement (outside its transaction) and
    /// reset after its last: a statement past it fails with 57014, "canceling statement due
    /// to statement timeout". `RESET` returns to the role's or database's own setting.
    func statementTimeout(milliseconds: Int?) -> String? {
        milliseconds.map { "SET statement_timeout = \($0)" } ?? "RESET statement_timeout"
    }

    /// `sql` with SQLite's placeholders renumbered as PostgreSQL's (`?` → `$n` counting on
    /// from the highest so far, `?NNN` → `$NNN`), and the statements SQLite spells
    /// differently (`BEGIN IMMEDIATE`) in PostgreSQL's words; and how many parameters it takes.
    func finish(_ sql: String) -> (sql: String, parameterCount: Int) {
        switch sql {
        // Every write is serializable: a block that reads, computes and writes (a transfer
        // between two balances) cannot lose another connection's update, as it cannot on
        // SQLite, where one writer runs at a time. The server reports what it cannot order
        // (40001), and the store runs the call or block again.
        case "BEGIN IMMEDIATE", "BEGIN EXCLUSIVE": return ("BEGIN ISOLATION LEVEL SERIALIZABLE", 0)
        // A read block sees one snapshot, as a SQLite read transaction does. (Not READ ONLY:
        // a read may create a temporary stand-in table.)
        case "BEGIN DEFERRED": return ("BEGIN ISOLATION LEVEL REPEATABLE READ", 0)
        default: break
        }
        let scanned = Self.scan(sql, renumbering: true)
        return (scanned.statements.joined(separator: ";"), scanned.highest)
    }

    func split(_ sql: String) -> [String] {
        Self.scan(sql, renumbering: false).statements.filter {
            !Self.scan($0, renumbering: false, strippingComments: true).statements.joined().allSatisfy(\.isWhitespace)
        }
    }

    /// Walks `sql` as PostgreSQL reads it — quoted text (`'…'`, `E'…'` with backslash escapes,
    /// `$tag$…$tag$`), quoted names, `--` and nested `/* */` comments — and splits it at the
    /// semicolons outside them, renumbering `?` placeholders outside them when asked.
    static func scan(_ sql: String, renumbering: Bool, strippingComments: Bool = false) -> (statements: [String], highest: Int) {
        let scalars = Array(sql.unicodeScalars)
        var statements: [String] = []
        var current = String.UnicodeScalarView()
        var next = 1
        var highest = 0
        var index = 0
        func isIdentifier(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "_" || scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
        }
        func copy(_ end: Int) {
            current.append(contentsOf: scalars[index..<min(end, scalars.count)])
            index = min(end, scalars.count)
        }
        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar {
            case "'":
                let escapes =
                    index > 0 && (scalars[index - 1] == "E" || scalars[index - 1] == "e")
                    && (index < 2 || !isIdentifier(scalars[index - 2]))
                var end = index + 1
                while end < scalars.count {
                    if escapes && scalars[end] == "\\" {
                        end += 2
                        continue
                    }
                    if scalars[end] == "'" {
                        if end + 1 < scalars.count, scalars[end + 1] == "'" {
                            end += 2
                            continue
                        }
                        break
                    }
                    end += 1
                }
                copy(end + 1)
            case "\"":
                var end = index + 1
                while end < scalars.count {
                    if scalars[end] == "\"" {
                        if end + 1 < scalars.count, scalars[end + 1] == "\"" {
                            end += 2
                            continue
                        }
                        break
                    }
                    end += 1
                }
                copy(end + 1)
            case "-" where index + 1 < scalars.count && scalars[index + 1] == "-":
                var end = index
                while end < scalars.count, scalars[end] != "\n" { end += 1 }
                if strippingComments { index = end } else { copy(end) }
            case "/" where index + 1 < scalars.count && scalars[index + 1] == "*":
                var depth = 0
                var end = index
                repeat {
                    if end + 1 < scalars.count, scalars[end] == "/", scalars[end + 1] == "*" {
                        depth += 1
                        end += 2
                    } else if end + 1 < scalars.count, scalars[end] == "*", scalars[end + 1] == "/" {
                        depth -= 1
                        end += 2
                    } else {
                        end += 1
                    }
                } while depth > 0 && end < scalars.count
                if strippingComments { index = end } else { copy(end) }
            case "$" where index == 0 || !isIdentifier(scalars[index - 1]):
                // `$tag$ … $tag$` (a tag never starts with a digit: `$1` is a parameter).
                var tagEnd = index + 1
                while tagEnd < scalars.count, isIdentifier(scalars[tagEnd]), !(tagEnd == index + 1 && ("0"..."9").contains(scalars[tagEnd]))
                {
                    tagEnd += 1
                }
                guard tagEnd < scalars.count, scalars[tagEnd] == "$" else {
                    copy(index + 1)
                    continue
                }
                let tag = Array(scalars[index...tagEnd])
                var end = tagEnd + 1
                while end < scalars.count {
                    if scalars[end] == "$", end + tag.count <= scalars.count, Array(scalars[end..<end + tag.count]) == tag {
                        end += tag.count
                        break
                    }
                    end += 1
                }
                copy(end)
            case "?" where renumbering:
                var end = index + 1
                var number = 0
                while end < scalars.count, let digit = Int(String(scalars[end])), ("0"..."9").contains(scalars[end]) {
                    number = number * 10 + digit
                    end += 1
                }
                if end == index + 1 { number = next }
                highest = max(highest, number)
                next = highest + 1
                current.append(contentsOf: "$\(number)".unicodeScalars)
                index = end
            case ";":
                statements.append(String(current))
                current = String.UnicodeScalarView()
                index += 1
            default:
                current.append(scalar)
                index += 1
            }
        }
        if !String(current).allSatisfy(\.isWhitespace) || statements.isEmpty { statements.append(String(current)) }
        return (statements, highest)
    }
}
