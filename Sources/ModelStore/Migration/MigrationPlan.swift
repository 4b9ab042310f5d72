import Foundation

/// What a store would do to a file for a set of models, worked out without changing it:
/// the migration steps still to run, the statements that would run (steps' and the models'
/// own: renames, new tables, columns and indexes), and what the file holds that no model
/// uses — columns and tables that stay, since nothing is dropped unless a step says so.
///
/// ```swift
/// let plan = try ModelStore.migrationPlan(at: shippedCopy, configuration: config, for: [Athlete.self, Team.self])
/// #expect(plan.pendingSteps == ["prices in cents"])
/// print(plan.statements.joined(separator: ";\n"))
/// ```
public struct MigrationPlan: Sendable, CustomStringConvertible {
    /// A column of a stored table.
    public struct StoredColumn: Sendable, Hashable, CustomStringConvertible {
        /// The table's name.
        public let table: String
        /// The column's name.
        public let column: String
        /// `table.column`.
        public var description: String { "\(table).\(column)" }
    }

    /// The names of the migration steps the file has not run, in the order they would run.
    public let pendingSteps: [String]
    /// The statements the steps and the models' first use would run, in order.
    public let statements: [String]
    /// Columns of the models' tables that no model has: kept, unused.
    public let unusedColumns: [StoredColumn]
    /// Tables no model (or their relationships) uses: kept, unused.
    public let unusedTables: [String]

    /// Whether opening and using the models would change nothing.
    public var changesNothing: Bool { pendingSteps.isEmpty && statements.isEmpty }

    /// A readable summary, one item per line.
    public var description: String {
        var lines = ["MigrationPlan:"]
        lines += pendingSteps.map { "  step: \($0)" }
        lines += statements.map { "  sql: \($0)" }
        lines += unusedColumns.map { "  unused column: \($0)" }
        lines += unusedTables.map { "  unused table: \($0)" }
        if lines.count == 1 { lines.append("  nothing to do") }
        return lines.joined(separator: "\n")
    }
}

/// Works out a `MigrationPlan` by doing the work inside a transaction that is rolled back.
enum MigrationPlanner {
    /// Runs `steps` and prepares `models` (and the models their relationships reach) on
    /// `connection`, recording what changes, then undoes everything.
    static func plan(_ steps: [MigrationStep], models: [any StoredModel.Type], on connection: Connection) throws -> MigrationPlan {
        try MigrationRunner.validate(steps)
        let tables = try descriptions(of: models)
        let collector = Collector()
        // Steps run as they would at open, foreign keys off (see `MigrationRunner.run`).
        let switchesForeignKeys = connection.capabilities.sqliteCatalog
        let foreignKeys = switchesForeignKeys ? try connection.scalar("PRAGMA foreign_keys") : nil
        if switchesForeignKeys { try connection.execute("PRAGMA foreign_keys = OFF") }
        defer {
            if switchesForeignKeys { try? connection.execute("PRAGMA foreign_keys = \(foreignKeys == .integer(1) ? "ON" : "OFF")") }
        }
        struct Undo: Error {}
        var plan: MigrationPlan?
        defer { connection.setTrace(nil) }
        do {
            // The whole plan in one transaction that is always rolled back.
            try connection.inTransaction {
                connection.setTrace { collector.add($0) }
                let applied = try MigrationRunner.applied(on: connection)
                var pending = try MigrationRunner.pending(steps, applied: applied, place: MigrationRunner.place(of: connection))
                // A new file runs no step (see `MigrationRunner.run`).
                if applied.isEmpty, try MigrationRunner.isNew(connection) { pending = [] }
                try connection.execute(MigrationRunner.createVersionTableSQL(connection.dialect))
                var position = steps.count - pending.count
                for step in pending {
                    try MigrationRunner.runStep(step, position: position, on: connection, backup: nil)
                    position += 1
                }
                // What exists now decides which `IF NOT EXISTS` statements of the models would act.
                collector.existing = try names(on: connection)
                collector.filtersExisting = true
                var claimed = SchemaNames()
                for table in tables {
                    try claimed.claim(table)
                    try SchemaMigrator.prepare(table, on: connection)
                }
                connection.setTrace(nil)
                let (unusedColumns, unusedTables) = try unused(by: tables, on: connection)
                plan = MigrationPlan(
                    pendingSteps: pending.map(\.name), statements: collector.statements, unusedColumns: unusedColumns,
                    unusedTables: unusedTables)
                throw Undo()
            }
        } catch is Undo {}
        return plan!
    }

    /// The descriptions of `models` and every model their relationships reach, each once.
    static func descriptions(of models: [any StoredModel.Type]) throws -> [TableDescription] {
        var seen = Set<ObjectIdentifier>()
        var work = models
        var tables: [TableDescription] = []
        while let model = work.popLast() {
            guard seen.insert(ObjectIdentifier(model)).inserted else { continue }
            func describe<M: StoredModel>(_ type: M.Type) throws -> TableDescription { try TableDescription.of(type) }
            let table = try describe(model)
            tables.append(table)
            work += table.relationships.map(\.target)
        }
        return tables.sorted { $0.tableName < $1.tableName }
    }

    /// Columns and tables of the file that none of `tables` uses.
    static func unused(by tables: [TableDescription], on connection: Connection) throws -> (
        columns: [MigrationPlan.StoredColumn], tables: [String]
    ) {
        var used: [String: Set<String>] = [:]
        for table in tables {
            used[table.tableName.lowercased(), default: []].formUnion(table.columns.map { $0.name.lowercased() })
            for join in table.joinTables {
                used[join.name.lowercased(), default: []].formUnion((join.ownerColumns + join.targetColumns).map { $0.lowercased() })
            }
        }
        var columns: [MigrationPlan.StoredColumn] = []
        var unusedTables: [String] = []
        let names = try MigrationRunner.userTables(on: connection).sorted()
        // A model's full-text index is part of its storage.
        let searchIndexes = try SchemaMigrator.searchIndexTables(on: connection)
        for name in names where !searchIndexes.contains(name.lowercased()) {
            guard let usedColumns = used[name.lowercased()] else {
                unusedTables.append(name)
                continue
            }
            for column in try MigrationContext.columns(of: name, on: connection)
            where !usedColumns.contains(column.lowercased()) {
                columns.append(.init(table: name, column: column))
            }
        }
        return (columns, unusedTables)
    }

    private static func names(on connection: Connection) throws -> Set<String> {
        let statement = try connection.makeStatement(connection.dialect.schemaObjectNamesSQL)
        var names = Set<String>()
        try statement.forEachRow { names.insert(statement.string(at: 0).lowercased()) }
        return names
    }

    /// Collects the statements that change the file, from SQLite's trace of the connection.
    private final class Collector: @unchecked Sendable {
        // @unchecked: used only on the planning thread, inside the trace callback it set up.
        var statements: [String] = []
        var existing = Set<String>()
        var filtersExisting = false

        func add(_ sql: String) {
            let trimmed = sql.trimmingCharacters(in: .whitespacesAndNewlines)
            let verb = trimmed.prefix { $0.isLetter }.uppercased()
            guard
                ["CREATE", "ALTER", "DROP", "INSERT", "UPDATE", "DELETE", "REPLACE", "WITH"].contains(verb)
                    || (verb == "PRAGMA" && trimmed.contains("="))
            else { return }
            guard !trimmed.contains(MigrationRunner.versionTable) else { return }
            if filtersExisting, let range = trimmed.range(of: "IF NOT EXISTS ", options: .caseInsensitive) {
                let rest = trimmed[range.upperBound...]
                let name =
                    rest.hasPrefix("\"")
                    ? String(rest.dropFirst().prefix { $0 != "\"" }) : String(rest.prefix { !$0.isWhitespace && $0 != "(" })
                if existing.contains(name.lowercased()) { return }
                existing.insert(name.lowercased())
            }
            statements.append(trimmed)
        }
    }
}
