import Foundation

/// One named, versioned change of a store's schema or data, for what a model's declarations
/// cannot say: a type change, a computed value, a new primary key, a column dropped.
///
/// List the steps in `ModelStore.Configuration.migrations`, oldest first, and never
/// reorder, rename or remove one that has shipped. When the store opens, each step that the
/// file has not recorded runs once, in order, in its own transaction; the file records its
/// name in the same transaction. A step that throws rolls back completely and the store
/// does not open: the file is exactly as it was before that step.
///
/// ```swift
/// let store = try ModelStore(path: path, configuration: .init(migrations: [
///     MigrationStep("prices in cents") { step in
///         try step.transform(SnackV2.self, to: Snack.self) { old in
///             Snack(snackId: old.snackId, name: old.name, priceCents: old.price.map { Int64(($0 * 100).rounded()) })
///         }
///     },
///     .sql("drop legacy notes", "ALTER TABLE Snack DROP COLUMN notes"),
/// ]))
/// ```
///
/// Steps run before any model is used, on the file as it is: a step that names tables or
/// columns in SQL should first bring the models it relies on up to their declarations
/// (renames, new columns) with `MigrationContext.prepare(_:)`. The context's helpers do
/// nothing to a table the file does not have (a model never used): its table is made in the
/// new shape on first use. A new file runs no step: it records them all as done, since its
/// tables are made from the current models.
///
/// On a PostgreSQL store, "the file" is the store's schema: the steps run the same way, each
/// with its DDL in its transaction, and instances starting at once take turns through an
/// advisory lock; `rebuild` and `transform` carry the table's indexes and the foreign keys
/// that refer to it across, as on SQLite.
public struct MigrationStep: Sendable {
    /// The step's name, recorded in the file once it has run. Unique within the list.
    public let name: String
    let body: @Sendable (MigrationContext) throws -> Void

    /// A step that runs `body` once, in its own transaction.
    ///
    /// - Parameters:
    ///   - name: A name unique within the store's steps, kept forever once shipped.
    ///   - body: The work, through the context it is given (valid only while it runs).
    public init(_ name: String, _ body: @escaping @Sendable (MigrationContext) throws -> Void) {
        self.name = name
        self.body = body
    }

    /// A step that runs SQL: one statement with `arguments` bound to its `?` placeholders,
    /// or, without arguments, one or more statements separated by semicolons.
    ///
    /// ```swift
    /// .sql("backfill country", "UPDATE Customer SET country = ? WHERE country IS NULL", arguments: ["CH"])
    /// ```
    public static func sql(_ name: String, _ sql: String, arguments: [any SQLValueConvertible] = []) -> MigrationStep {
        MigrationStep(name) { try $0.execute(sql, arguments: arguments) }
    }
}

/// What a migration step can do, inside the step's transaction. Valid only while the step
/// runs; a context kept and used later throws `.invalidQuery`.
public final class MigrationContext {
    let connection: Connection
    /// The step's name, for messages.
    public let stepName: String
    var isActive = true
    /// The thread running the step: the connection serves one thread at a time.
    private let thread = ObjectIdentifier(Thread.current)

    init(connection: Connection, stepName: String) {
        self.connection = connection
        self.stepName = stepName
    }

    func active() throws -> Connection {
        guard isActive else {
            throw ModelStoreError(
                .invalidQuery, "The context of migration step '\(stepName)' was used after the step ended.",
                suggestion: "Do all of a step's work inside its closure.")
        }
        guard thread == ObjectIdentifier(Thread.current) else {
            throw ModelStoreError(
                .reentrancy, "The context of migration step '\(stepName)' was used from another thread than the step's.",
                suggestion: "Do a step's work on the thread that runs it; the step's connection serves one thread.")
        }
        return connection
    }

    /// SQLite's refusal of `BEGIN`, `COMMIT` or `ROLLBACK`, said in the step's terms.
    private func explained(_ error: any Error) -> any Error {
        guard var error = error as? ModelStoreError, error.sqliteCode == 23 else { return error }  // SQLITE_AUTH
        error.message = transactionControlMessage
        error.suggestion = "Remove the statement; throw from the step to roll it back."
        return error
    }

    private var transactionControlMessage: String {
        "Migration step '\(stepName)' tried to begin, commit or roll back a transaction; each step runs in its own transaction, which only the store ends."
    }

    /// Refuses a statement that would end or nest the step's transaction, before it runs: a
    /// server has no authorizer to refuse it as SQLite's does, and would commit the step half
    /// done.
    private func refuseTransactionControl(_ sql: String) throws {
        let first = Self.firstKeyword(of: sql)
        guard ["BEGIN", "START", "COMMIT", "END", "ROLLBACK", "ABORT", "SAVEPOINT", "RELEASE", "PREPARE"].contains(first)
        else { return }
        throw ModelStoreError(
            .invalidQuery, transactionControlMessage, value: sql, suggestion: "Remove the statement; throw from the step to roll it back.")
    }

    /// Runs SQL: one statement with `arguments` bound to its `?` placeholders, or, without
    /// arguments, one or more statements separated by semicolons.
    ///
    /// ```swift
    /// try step.execute("UPDATE Team SET name = upper(name) WHERE league = ?", arguments: ["A"])
    /// ```
    /// - Throws: `ModelStoreError` from SQLite, which rolls the step back when it escapes.
    public func execute(_ sql: String, arguments: [any SQLValueConvertible] = []) throws {
        let connection = try active()
        let values = try arguments.map { try $0.sqlValue }
        var count = 0
        do {
            // All or nothing, also when the step catches the error and goes on.
            try connection.inTransaction {
                try connection.forEachStatement(in: sql) { statement in
                    count += 1
                    guard values.isEmpty || count == 1 else {
                        throw ModelStoreError(
                            .invalidQuery,
                            "Migration step '\(stepName)' gives arguments to SQL of several statements; values bind to one statement only, so the others would not get them: \(sql)",
                            suggestion: "Run one statement per execute call when it takes values.")
                    }
                    try refuseTransactionControl(statement.sql)
                    guard !values.isEmpty || statement.parameterCount == 0 else {
                        throw ModelStoreError(
                            .invalidQuery,
                            "Migration step '\(stepName)' runs SQL with \(statement.parameterCount) ? placeholder(s) but gives no arguments; SQLite would bind NULL to them: \(statement.sql)",
                            suggestion: "Pass the values as arguments.")
                    }
                    try statement.execute(values)
                }
            }
        } catch {
            throw explained(error)
        }
    }

    /// The first word of `sql`, upper-cased, after whitespace, parentheses and comments (`--`
    /// to the end of the line, `/* … */`, nested as PostgreSQL nests them).
    static func firstKeyword(of sql: String) -> String {
        var rest = Substring(sql)
        while true {
            rest = rest.drop { $0.isWhitespace || $0 == "(" }
            if rest.hasPrefix("--") {
                rest = rest.drop { $0 != "\n" }
            } else if rest.hasPrefix("/*") {
                var depth = 0
                while !rest.isEmpty {
                    if rest.hasPrefix("/*") {
                        depth += 1
                        rest = rest.dropFirst(2)
                    } else if rest.hasPrefix("*/") {
                        depth -= 1
                        rest = rest.dropFirst(2)
                        if depth == 0 { break }
                    } else {
                        rest = rest.dropFirst()
                    }
                }
            } else {
                return rest.prefix { $0.isLetter }.uppercased()
            }
        }
    }

    /// The rows of a query, each as its column values, for a step that decides by data.
    ///
    /// ```swift
    /// let duplicates = try step.rows("SELECT email FROM User GROUP BY email HAVING count(*) > 1")
    /// ```
    /// - Throws: `ModelStoreError` from SQLite.
    public func rows(_ sql: String, arguments: [any SQLValueConvertible] = []) throws -> [[SQLValue]] {
        try refuseTransactionControl(sql)
        let statement = try active().makeStatement(sql)
        var rows: [[SQLValue]] = []
        // Read per row: a server's statement knows its columns once it has run.
        try statement.forEachRow(arguments.map { try $0.sqlValue }) { rows.append(statement.values(count: Int(statement.columnCount))) }
        return rows
    }

    /// Whether the file has a table named `name`.
    /// - Throws: `ModelStoreError` from SQLite.
    public func tableExists(_ name: String) throws -> Bool {
        try SchemaRenamer.exists("table", name, on: active())
    }

    /// The columns of the table `name`, in order; empty when there is no such table.
    /// - Throws: `ModelStoreError` from SQLite.
    public func columns(of table: String) throws -> [String] {
        try Self.columns(of: table, on: active())
    }

    /// The columns of the table `table` (its name matched ignoring case, as `tableExists`
    /// does), in order, as the backend's catalog lists them.
    static func columns(of table: String, on connection: Connection) throws -> [String] {
        guard let stored = try SchemaRenamer.storedName("table", table, on: connection) else { return [] }
        return try connection.columnNames(ofTable: stored)
    }

    /// Brings `M`'s table up to its declaration as a store would on first use: declared
    /// renames, new tables and columns, indexes, join tables. Never drops anything.
    ///
    /// ```swift
    /// try step.prepare(Athlete.self)   // Player → Athlete, cost → price, …
    /// try step.execute("UPDATE Athlete SET price = 0 WHERE price IS NULL")
    /// ```
    /// - Throws: `ModelStoreError` `.invalidModel` for a declaration that cannot work, or
    ///   `.schemaMismatch` for a stored table that does not fit.
    public func prepare<M: StoredModel>(_ type: M.Type) throws {
        let connection = try active()
        try connection.inTransaction { try SchemaMigrator.prepareWithLinks(TableDescription.of(type), on: connection) }
    }

    /// Rebuilds `M`'s table with `M`'s columns, types, NOT NULLs and key, copying every row
    /// with SQL: for each of `M`'s columns the expression in `values` (over the old table's
    /// columns), else the old column of the same name, else NULL. For a new primary key, a
    /// column's new type, NOT NULL, or a dropped column that is indexed or referenced.
    /// Columns `M` does not have are kept as they are unless listed in `dropping`.
    ///
    /// ```swift
    /// // Contract's key was (athleteId, season); it is now contractId.
    /// try step.rebuild(Contract.self, values: ["contractId": "rowid"])
    /// ```
    /// - Throws: `ModelStoreError` `.constraintViolation` for rows the new key or NOT NULL
    ///   refuse, `.invalidQuery` for a `values` or `dropping` name that does not fit.
    public func rebuild<M: StoredModel>(_ type: M.Type, values: [String: String] = [:], dropping: [String] = []) throws {
        let connection = try active()
        // A savepoint: a helper that fails leaves nothing behind, even when the step
        // catches its error and goes on.
        try connection.inTransaction {
            let table = try TableDescription.of(type)
            try SchemaRenamer.applyWithTargets(table, on: connection)
            // The stored spelling: a server compares quoted names by their case.
            guard let source = try SchemaRenamer.storedName("table", table.tableName, on: connection) else { return }
            let rebuild = try TableRebuild(connection: connection, table: table, source: source, dropping: dropping, step: stepName)
            let targets = rebuild.targetColumns
            for name in values.keys where !targets.contains(name) {
                throw ModelStoreError(
                    .invalidQuery,
                    "Migration step '\(stepName)' gives a value for \(name), which is not a column of \(table.modelName) (its columns: \(targets.joined(separator: ", "))).",
                    model: table.modelName, column: name)
            }
            let expressions = targets.map { name in
                values[name] ?? rebuild.oldColumns.first { $0.name.lowercased() == name.lowercased() }.map { quoted($0.name) } ?? "NULL"
            }
            try rebuild.run {
                do {
                    try connection.execute(
                        "INSERT INTO \(quoted(TableRebuild.temporaryName)) (" + targets.map(quoted).joined(separator: ", ")
                            + ") SELECT " + expressions.joined(separator: ", ") + " FROM " + quoted(source))
                } catch let error as ModelStoreError {
                    throw error.naming(model: table.modelName)
                }
            }
        }
    }

    /// Drops the column `column` of `table` (with any index on it), keeping every other
    /// column and row; nothing when the file has no table `table`. A column SQLite cannot drop in place (part of the key, a unique
    /// constraint or a foreign key) needs `rebuild(_:values:dropping:)`.
    ///
    /// ```swift
    /// try step.dropColumn("city", from: "Team")
    /// ```
    /// - Throws: `ModelStoreError` `.invalidQuery` when the table has no such column.
    public func dropColumn(_ column: String, from table: String) throws {
        let connection = try active()
        // A savepoint: a helper that fails leaves nothing behind, even when the step
        // catches its error and goes on.
        try connection.inTransaction {
            // The names as stored: a server compares quoted names by their case.
            guard let table = try SchemaRenamer.storedName("table", table, on: connection) else { return }
            let columns = try connection.columnNames(ofTable: table)
            guard let column = columns.first(where: { $0.lowercased() == column.lowercased() }) else {
                throw ModelStoreError(
                    .invalidQuery, "Migration step '\(stepName)' drops column \(column) of \(table), which has no such column.",
                    column: column, value: table)
            }
            // PostgreSQL would drop a key, unique or foreign-key constraint on the column with
            // it, silently; SQLite refuses. Refused on both.
            if let query = connection.dialect.rebuildCatalog?.columnConstraints {
                let statement = try connection.makeStatement(query)
                var held: [String] = []
                try statement.forEachRow([.text(table), .text(column)]) {
                    held.append("\(statement.string(at: 0)) (\(statement.string(at: 1)))")
                }
                if !held.isEmpty {
                    throw ModelStoreError(
                        .invalidQuery,
                        "Migration step '\(stepName)' drops column \(column) of \(table), which the constraint \(held.joined(separator: ", ")) holds; dropping it in place would drop the constraint too.",
                        column: column, value: table,
                        suggestion:
                            "Rebuild the table without it (step.rebuild(_:dropping:)), or drop the constraint first with step.execute.")
                }
            }
            // SQLite refuses to drop an indexed column; the index has no use without it. (A
            // server drops such indexes with the column.)
            if connection.capabilities.sqliteCatalog {
                let indexes = try connection.makeStatement(
                    "SELECT DISTINCT i.name FROM main.sqlite_master AS i, pragma_index_info(i.name) AS c WHERE i.type = 'index' AND i.tbl_name = ? COLLATE NOCASE AND i.sql IS NOT NULL AND c.name = ? COLLATE NOCASE"
                )
                var names: [String] = []
                try indexes.forEachRow([.text(table), .text(column)]) { names.append(indexes.string(at: 0)) }
                for name in names { try connection.execute("DROP INDEX \(quoted(name))") }
            }
            // Nor a column a trigger names: the full-text index's triggers may; the model's
            // next use makes the index again from what it declares then.
            try SchemaMigrator.dropSearchIndex(ofTable: table, on: connection)
            try connection.execute("ALTER TABLE \(quoted(table)) DROP COLUMN \(quoted(column))")
        }
    }

    /// Drops the table `name` and everything in it; nothing when the file has no such table.
    /// - Throws: `ModelStoreError` from SQLite.
    public func dropTable(_ name: String) throws {
        let connection = try active()
        guard let name = try SchemaRenamer.storedName("table", name, on: connection) else { return }
        try connection.inTransaction {
            // Its full-text index (an FTS5 table apart from it) goes with it.
            try SchemaMigrator.dropSearchIndex(ofTable: name, on: connection)
            try connection.execute("DROP TABLE \(quoted(name))")
        }
    }
}
