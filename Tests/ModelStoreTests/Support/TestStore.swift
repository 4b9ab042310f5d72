import Foundation
import Testing
@testable import ModelStore

/// Where a test's store lives; tests that care run against both.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory
    case file
    /// A PostgreSQL store in a schema of its own (see `BackendStore`).
    case postgres

    var testDescription: String { rawValue }

    /// SQLite's two kinds of store: in memory and in a file.
    static var allCases: [StoreKind] { [.memory, .file] }

    /// SQLite's two kinds of store, and PostgreSQL when `Backend.available` has it: the
    /// shared behaviour suite's form for tests that also run on a file.
    static var everywhere: [StoreKind] { allCases + (Backend.available.contains(.postgres) ? [.postgres] : []) }

    /// This kind on SQLite, or PostgreSQL when `backend` is the server.
    func or(_ backend: Backend) -> StoreKind { backend == .sqlite ? self : .postgres }
}

/// A fresh store for one test, recording every SQL statement it runs.
final class TestStore: @unchecked Sendable {
    // @unchecked: `recorded` is Locked; the rest is immutable.
    let store: ModelStore
    let directory: URL
    private let recorded = Locked<[String]>([])
    /// The PostgreSQL store's owner (it drops the store's schema), nil on SQLite.
    private let server: BackendStore?

    /// A fresh store on `backend`: an in-memory SQLite store, or a PostgreSQL store in a
    /// schema of its own.
    convenience init(_ backend: Backend, configuration: ModelStore.Configuration = .init()) throws {
        try self.init(backend == .sqlite ? .memory : .postgres, configuration: configuration)
    }

    /// A fresh store of `kind` on SQLite, or a PostgreSQL store when `backend` is the server:
    /// for shared tests that want SQLite's file store (separate readers and writer).
    convenience init(_ kind: StoreKind, or backend: Backend, configuration: ModelStore.Configuration = .init()) throws {
        try self.init(backend == .sqlite ? kind : .postgres, configuration: configuration)
    }

    /// Another store on the same data, as another process opens it: the file, or the schema.
    func another(configuration: ModelStore.Configuration = .init()) throws -> ModelStore {
        if let server { return try server.another(configuration: configuration) }
        guard let path = store.path else { throw ModelStoreError(.invalidQuery, "in-memory SQLite stores are private") }
        return try ModelStore(path: path, configuration: configuration)
    }

    /// What a helper process (ReliabilityHelper) opens to reach the same data: the file's
    /// path, or `postgres|URL|schema`.
    func processArgument() throws -> String {
        if let server { return ["postgres", Backend.postgresURL ?? "", server.schemaName ?? ""].joined(separator: "|") }
        guard let path = store.path else { throw ModelStoreError(.invalidQuery, "in-memory SQLite stores are private") }
        return path
    }

    init(_ kind: StoreKind = .memory, configuration: ModelStore.Configuration = .init()) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ModelStoreTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        switch kind {
        case .memory:
            store = ModelStore.inMemory(configuration: configuration)
            server = nil
        case .file:
            store = try ModelStore(path: directory.appendingPathComponent("store.sqlite").path, configuration: configuration)
            server = nil
        case .postgres:
            let owner = try BackendStore(.postgres, configuration: configuration)
            store = owner.store
            server = owner
        }
        let recorded = self.recorded
        store.setTrace { sql in recorded.withLock { $0.append(sql) } }
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Another store on this test's file, or on its PostgreSQL schema: the program after its
    /// models changed (one store refuses two models that declare one table).
    func later(configuration: ModelStore.Configuration = .init()) throws -> ModelStore {
        if let server { return try server.another(configuration: configuration) }
        guard let path = store.path else { throw ModelStoreError(.invalidQuery, "an in-memory store has no file to open again") }
        return try ModelStore(path: path, configuration: configuration)
    }

    /// The backend the store is on.
    var backend: Backend { server == nil ? .sqlite : .postgres }

    /// The statements run since the last `resetSQL()`.
    var sql: [String] { recorded.current }

    func resetSQL() {
        recorded.withLock { $0.removeAll() }
    }

    /// Statements run, without transaction control (BEGIN, COMMIT, …).
    var dataSQL: [String] {
        sql.filter { !["BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "PRAGMA schema_version"].contains(where: $0.hasPrefix) }
    }

    /// Runs one SQL query on a read connection and returns the rows as values: a view of the
    /// file that does not go through ModelStore's mapping.
    func rawRows(_ sql: String) throws -> [[SQLValue]] {
        try store.rawRows(sql)
    }

    /// Runs raw SQL on the writer (to set up states ModelStore itself would never write).
    func rawExecute(_ sql: String) throws {
        try store.rawExecute(sql)
    }

    /// The declared type of each of `table`'s columns, by column name: SQLite's declared
    /// type (`INTEGER`, `REAL`, …), or PostgreSQL's `data_type` (`bigint`, `double precision`, …).
    func declaredTypes(_ table: String) throws -> [String: String] {
        try declaredColumns(table).mapValues(\.type)
    }

    /// `declaredTypes`, with whether each column is NOT NULL.
    func declaredColumns(_ table: String) throws -> [String: (type: String, notNull: Bool)] {
        var columns: [String: (type: String, notNull: Bool)] = [:]
        for column in try tableColumns(table) { columns[column.name] = (column.type, column.notNull) }
        return columns
    }

    /// `table`'s columns in their order: name, declared type (as `declaredTypes` names it),
    /// whether NOT NULL, and the column's place in the primary key (1, 2, …; 0 when not in it).
    func tableColumns(_ table: String) throws -> [(name: String, type: String, notNull: Bool, pk: Int64)] {
        let literal = table.replacingOccurrences(of: "'", with: "''")
        let sql =
            backend == .sqlite
            ? #"SELECT name, type, "notnull", pk FROM pragma_table_info('\#(literal)') ORDER BY cid"#
            : """
            SELECT c.column_name, c.data_type, CASE WHEN c.is_nullable = 'NO' THEN 1 ELSE 0 END, COALESCE(k.ordinal_position, 0)
            FROM information_schema.columns c
            LEFT JOIN information_schema.table_constraints t ON t.table_schema = c.table_schema
                AND t.table_name = c.table_name AND t.constraint_type = 'PRIMARY KEY'
            LEFT JOIN information_schema.key_column_usage k ON k.constraint_schema = t.constraint_schema
                AND k.constraint_name = t.constraint_name AND k.column_name = c.column_name
            WHERE c.table_schema = current_schema() AND c.table_name = '\(literal)'
            ORDER BY c.ordinal_position
            """
        return try rawRows(sql).map { row in
            guard case .text(let name) = row[0], case .text(let type) = row[1], case .integer(let notNull) = row[2],
                case .integer(let pk) = row[3]
            else { return ("?", "?", false, 0) }
            return (name, type, notNull == 1, pk)
        }
    }

    /// The names of the store's tables, sorted: SQLite's `sqlite_master` (without its own
    /// `sqlite_` tables), or the tables of the store's schema on a server.
    func tableNames() throws -> [String] {
        let sql =
            backend == .sqlite
            ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
            : "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = current_schema() ORDER BY tablename"
        return try rawRows(sql).compactMap { row in
            if case .text(let name)? = row.first { return name }
            return nil
        }
    }

    /// The definitions of `table`'s indexes by name, without the primary key's: SQLite's
    /// `CREATE INDEX` text, or the server's `pg_indexes.indexdef`.
    func indexDefinitions(_ table: String) throws -> [String: String] {
        let literal = table.replacingOccurrences(of: "'", with: "''")
        let sql =
            backend == .sqlite
            ? "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = '\(literal)' AND sql IS NOT NULL"
            : "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = '\(literal)' "
                + "AND indexname NOT LIKE '%\\_pkey' ESCAPE '\\'"
        var found: [String: String] = [:]
        for row in try rawRows(sql) {
            if case .text(let name) = row[0], case .text(let definition) = row[1] { found[name] = definition }
        }
        return found
    }

    /// `table`'s foreign keys, one row per column: the table it refers to, the column, and the
    /// column it refers to.
    func foreignKeys(_ table: String) throws -> [[SQLValue]] {
        let literal = table.replacingOccurrences(of: "'", with: "''")
        return try rawRows(
            backend == .sqlite
                ? #"SELECT "table", "from", "to" FROM pragma_foreign_key_list('\#(literal)')"#
                : """
                SELECT u.table_name, k.column_name, u.column_name FROM information_schema.table_constraints c
                JOIN information_schema.key_column_usage k ON k.constraint_schema = c.constraint_schema
                    AND k.constraint_name = c.constraint_name
                JOIN information_schema.constraint_column_usage u ON u.constraint_schema = c.constraint_schema
                    AND u.constraint_name = c.constraint_name
                WHERE c.constraint_type = 'FOREIGN KEY' AND c.table_schema = current_schema() AND c.table_name = '\(literal)'
                """)
    }

    /// SQL for the JSON value at `path` (SQLite's form: `$.a[0].b`) in `column`'s JSON text,
    /// as text, NULL for a JSON null or nothing: SQLite's json_extract, PostgreSQL's `#>>`.
    func jsonText(_ column: String, _ path: String) -> String {
        if backend == .sqlite { return "CAST(json_extract(\(quoted(column)), '\(path)') AS TEXT)" }
        return "CAST(\(quoted(column)) AS jsonb) #>> '{\(Self.jsonPathKeys(path).joined(separator: ","))}'"
    }

    /// SQL for the JSON type name of the value at `path` in `column` (`null`, `object`,
    /// `array` on both backends; the others are named differently).
    func jsonType(_ column: String, _ path: String) -> String {
        if backend == .sqlite { return "json_type(\(quoted(column)), '\(path)')" }
        return "jsonb_typeof(CAST(\(quoted(column)) AS jsonb) #> '{\(Self.jsonPathKeys(path).joined(separator: ","))}')"
    }

    /// `$.a[0].b` as its keys and indices: `a`, `0`, `b`.
    private static func jsonPathKeys(_ path: String) -> [String] {
        path.dropFirst().split(whereSeparator: { ".[]".contains($0) }).map(String.init)
    }
}

extension ModelStore {
    /// Runs one SQL query on a read connection and returns the rows as values.
    func rawRows(_ sql: String) throws -> [[SQLValue]] {
        try read { session in
            let statement = try session.connection.makeStatement(sql)
            var rows: [[SQLValue]] = []
            try statement.forEachRow {
                rows.append((0..<statement.columnCount).map { statement.value(at: $0) })
            }
            return rows
        }
    }

    /// Runs raw SQL on the writer connection.
    func rawExecute(_ sql: String) throws {
        try write { session in try session.connection.execute(sql) }
    }

    /// `PRAGMA integrity_check`'s verdict: "ok" for an intact file.
    func integrityCheck() throws -> String {
        try rawRows("PRAGMA integrity_check").map { row in
            if case .text(let line)? = row.first { return line }
            return row.first?.description ?? ""
        }.joined(separator: "; ")
    }
}
