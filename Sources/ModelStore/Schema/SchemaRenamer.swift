/// Renames what an older file stores under a model's former names (`formerNames`): its
/// table, columns, join tables and their columns, in place with `ALTER TABLE … RENAME`, so
/// data, indexes, foreign keys and triggers follow. Indexes ModelStore derived from the old
/// names are dropped, to be created again under the new ones.
///
/// A current name that already exists wins: the rename ran before (or the data was never
/// under the old name), so a declaration whose old name is gone, or left beside the new one,
/// does nothing. Two former names both present, with the current one missing, are refused:
/// the store cannot tell which holds the data.
enum SchemaRenamer {
    /// Whether any rename would run for `table` (a reader hands such a table to the writer).
    static func isPending(_ table: TableDescription, on connection: Connection) throws -> Bool {
        guard !table.former.isEmpty, connection.capabilities.renames else { return false }
        return try !plan(table, on: connection).isEmpty
    }

    /// Renames what needs renaming; runs inside the caller's transaction.
    static func apply(_ table: TableDescription, on connection: Connection) throws {
        guard !table.former.isEmpty, connection.capabilities.renames else { return }
        for sql in try plan(table, on: connection) { try connection.execute(sql) }
    }

    /// `apply` for `table` and for the models its relationships point at, whose tables its
    /// links name: a link written into a table still under its old name would dangle.
    static func applyWithTargets(_ table: TableDescription, on connection: Connection) throws {
        try apply(table, on: connection)
        try applyToTargets(of: table, on: connection)
    }

    /// `apply` for the models `table`'s relationships point at, other than `table`'s own.
    static func applyToTargets(of table: TableDescription, on connection: Connection) throws {
        for relationship in table.relationships {
            func renameTarget<T: StoredModel>(_ type: T.Type) throws {
                let target = try TableDescription.of(type)
                guard target.tableName.lowercased() != table.tableName.lowercased() else { return }
                try apply(target, on: connection)
            }
            try renameTarget(relationship.target)
        }
    }

    /// The current name of the column `name` of `table`'s stored table (`stored`, its columns
    /// now): `name` itself when stored, else the column `table` declares was once called
    /// `name` (a rename that has run), else nil.
    static func currentName(of name: String, in stored: [String], renamedBy table: TableDescription) -> String? {
        let lowered = name.lowercased()
        if let found = stored.first(where: { $0.lowercased() == lowered }) { return found }
        for (current, formers) in table.former.columns.sorted(by: { $0.key < $1.key })
        where formers.contains(where: { $0.lowercased() == lowered }) {
            if let found = stored.first(where: { $0.lowercased() == current.lowercased() }) { return found }
        }
        return nil
    }

    /// The statements that bring the file's names up to `table`'s, worked out without
    /// writing. Columns are looked up under the table's name after its rename.
    private static func plan(_ table: TableDescription, on connection: Connection) throws -> [String] {
        let former = table.former
        var statements: [String] = []
        let model = table.modelName
        var tableFound = try exists("table", table.tableName, on: connection)
        if !tableFound, let old = try present(former.tables, as: "table", on: connection, model: model, current: table.tableName) {
            statements.append("ALTER TABLE \(quoted(old)) RENAME TO \(table.quotedTable)")
            statements += try constraintRenames(from: old, to: table.tableName, on: connection)
            tableFound = true
            statements += try columnRenames(
                in: old, renamedTo: table.tableName, former.columns, on: connection, model: model)
        } else if tableFound {
            statements += try columnRenames(
                in: table.tableName, renamedTo: table.tableName, former.columns, on: connection, model: model)
        }
        for join in table.joinTables {
            guard let formerJoin = former.joinTables[join.name] else { continue }
            var source = join.name
            if let current = try storedName("table", join.name, on: connection) {
                source = current
            } else {
                guard let old = try present(formerJoin.names, as: "table", on: connection, model: model, current: join.name) else {
                    continue
                }
                statements.append("ALTER TABLE \(quoted(old)) RENAME TO \(quoted(join.name))")
                source = old
            }
            statements += try columnRenames(in: source, renamedTo: join.name, formerJoin.columns, on: connection, model: model)
        }
        for (current, formers) in former.indexes.sorted(by: { $0.key < $1.key }) {
            guard !(try exists("index", current, on: connection)) else { continue }
            for old in formers where try exists("index", old, on: connection) {
                statements.append("DROP INDEX \(quoted(old))")
            }
        }
        return statements
    }

    /// Where foreign keys are constraints named after their table (`linkAfterTables`), those
    /// named after the table's old name take its new one: under the old names the store would
    /// not find them, and would add each link's constraint a second time.
    static func constraintRenames(from old: String, to new: String, on connection: Connection) throws -> [String] {
        guard let exists = connection.dialect.constraintExistsSQL else { return [] }
        let limit = connection.dialect.maximumNameLength
        var statements: [String] = []
        // The primary key's, named by the server after the table: tidy, and free for a new
        // table of the old name.
        let oldKey = SchemaMigrator.shortened("\(old)_pkey", to: limit)
        let newKey = SchemaMigrator.shortened("\(new)_pkey", to: limit)
        if try connection.scalar(exists, [.text(oldKey)]) != nil, try connection.scalar(exists, [.text(newKey)]) == nil {
            statements.append("ALTER TABLE \(quoted(new)) RENAME CONSTRAINT \(quoted(oldKey)) TO \(quoted(newKey))")
        }
        var offset = 0
        while true {
            let oldName = SchemaMigrator.shortened("fk_\(old)_\(offset)", to: limit)
            guard try connection.scalar(exists, [.text(oldName)]) != nil else { break }
            let newName = SchemaMigrator.shortened("fk_\(new)_\(offset)", to: limit)
            if try connection.scalar(exists, [.text(newName)]) == nil {
                statements.append("ALTER TABLE \(quoted(new)) RENAME CONSTRAINT \(quoted(oldName)) TO \(quoted(newName))")
            }
            offset += 1
        }
        return statements
    }

    /// `RENAME COLUMN` for each current column missing from `source` whose former name it has.
    private static func columnRenames(
        in source: String, renamedTo target: String, _ formers: [String: [String]], on connection: Connection, model: String
    ) throws -> [String] {
        guard !formers.isEmpty else { return [] }
        // Each stored column by its lowercased name: the statements use the stored spelling.
        var stored: [String: String] = [:]
        for column in try connection.columnNames(ofTable: source) { stored[column.lowercased()] = column }
        var statements: [String] = []
        for (column, names) in formers.sorted(by: { $0.key < $1.key }) where stored[column.lowercased()] == nil {
            let found = names.compactMap { stored[$0.lowercased()] }
            guard !found.isEmpty else { continue }
            guard found.count == 1 else {
                throw ModelStoreError(
                    .schemaMismatch,
                    "\(model): the stored table \(source) has columns \(found.joined(separator: " and ")), all former names of \(column); the store cannot tell which holds its values. Nothing was changed.",
                    model: model, column: column,
                    suggestion: "Drop or rename all but one of them (a migration step can), or remove the extra formerNames declaration.")
            }
            statements.append("ALTER TABLE \(quoted(target)) RENAME COLUMN \(quoted(found[0])) TO \(quoted(column))")
        }
        return statements
    }

    /// The one of `names` the file has, or nil; several present is ambiguous.
    private static func present(_ names: [String], as type: String, on connection: Connection, model: String, current: String)
        throws -> String?
    {
        var found: [String] = []
        for name in names { if let stored = try storedName(type, name, on: connection) { found.append(stored) } }
        guard found.count <= 1 else {
            throw ModelStoreError(
                .schemaMismatch,
                "\(model): the file has tables \(found.joined(separator: " and ")), all former names of \(current); the store cannot tell which holds its records. Nothing was changed.",
                model: model, value: found.joined(separator: ", "),
                suggestion: "Drop or rename all but one of them (a migration step can), or remove the extra formerNames declaration.")
        }
        return found.first
    }

    /// Whether the main schema has a table or index named `name`, ignoring case as SQLite's
    /// names do.
    static func exists(_ type: String, _ name: String, on connection: Connection) throws -> Bool {
        try storedName(type, name, on: connection) != nil
    }

    /// The name under which the main schema has the table or index `name`, ignoring case; nil
    /// when it has none. A server compares quoted names by their case: statements must use
    /// this spelling, not the declared one.
    static func storedName(_ type: String, _ name: String, on connection: Connection) throws -> String? {
        guard
            case .text(let stored)? = try connection.scalar(connection.dialect.existsIgnoringCaseSQL(index: type == "index"), [.text(name)])
        else { return nil }
        return stored
    }
}
