/// A table rebuild where the backend's catalog is not SQLite's (`SQLDialect.rebuildCatalog`,
/// PostgreSQL's). The procedure is SQLite's — a new table under a temporary name, the rows
/// copied, the old table dropped and the new one renamed — with what a server ties to the
/// table itself rather than to its name carried across by hand: the indexes and the foreign
/// keys of other tables that refer to it are read first and made again on the new table
/// (the server checks each against the copied rows, as SQLite's check before commit does),
/// and the primary key's constraint and an assigned key's sequence take up where the old
/// table's left off. Whatever a rebuild from the model would lose is refused first.
extension TableRebuild {
    private struct Reference {
        let table: String
        let name: String
        let definition: String
    }

    private struct SavedIndex {
        let name: String
        let sql: String
        let columns: [String]
    }

    /// Refuses, before anything changes, a table with what a rebuild from the model would
    /// drop without a word: CHECK, UNIQUE or EXCLUDE constraints, triggers, views on it,
    /// generated or sequence-fed columns, identity columns other than the model's assigned
    /// key, and foreign keys ModelStore did not make.
    func refuseWhatCannotBeCarried(_ catalog: RebuildCatalog) throws {
        let statement = try connection.makeStatement(catalog.parts)
        let own = ownForeignKeyNames(of: source)
        let assignedKey = table.assignsKeys ? table.keyNames[0].lowercased() : nil
        var found: [String] = []
        try statement.forEachRow([.text(source)]) {
            let kind = statement.string(at: 0)
            let name = statement.string(at: 1)
            let detail = statement.isNull(at: 2) ? "" : statement.string(at: 2)
            switch kind {
            case "foreignKey" where own.contains(name): break
            case "identity" where name.lowercased() == assignedKey: break
            case "constraint": found.append("the constraint \(name) (\(detail))")
            case "foreignKey": found.append("the foreign key \(name) (\(detail))")
            case "view": found.append("the view \(name) on it")
            case "rule": found.append("the rule \(name)")
            case "policy": found.append("the row-level security policy \(name)")
            case "setting": found.append(name)
            case "partitioned":
                found.append(
                    name == "partitions" ? "partitions (a partitioned table)" : "a parent table \(name) (a partition or inheritance)")
            case "publication": found.append("membership in the publication \(name)")
            case "statistics": found.append("the statistics object \(name)")
            case "ownedSequence": found.append("the sequence \(name) it owns")
            case "sequence": found.append("the column \(name) fed by a sequence")
            case "trigger": found.append("the trigger \(name)")
            default: found.append("the \(kind) column \(name)")
            }
        }
        guard !found.isEmpty else { return }
        throw ModelStoreError(
            .schemaMismatch,
            "Migration step '\(step)' cannot rebuild \(source) into \(table.modelName): the table has \(found.joined(separator: ", ")), which a rebuild from the model would not keep. Nothing was changed.",
            model: table.modelName, value: source,
            suggestion:
                "Change the table in place with step.execute (ALTER TABLE … ALTER COLUMN … TYPE … USING …), or drop those first and make them again after the rebuild."
        )
    }

    /// The names ModelStore gives the foreign keys of `tableName`'s links (`linkAfterTables`),
    /// as many as the table could have.
    private func ownForeignKeyNames(of tableName: String) -> Set<String> {
        let limit = connection.dialect.maximumNameLength
        return Set((0..<max(table.foreignKeyConstraints.count, 64)).map { SchemaMigrator.shortened("fk_\(tableName)_\($0)", to: limit) })
    }

    func run(_ catalog: RebuildCatalog, fill: () throws -> Void) throws {
        // The indexes name the table: kept only when it keeps its name (as on SQLite).
        var indexes: [SavedIndex] = []
        // (Exactly: a server's names differ by case.)
        if source == table.tableName {
            let statement = try connection.makeStatement(catalog.indexes)
            try statement.forEachRow([.text(source)]) {
                let columns = statement.string(at: 2).split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                indexes.append(SavedIndex(name: statement.string(at: 0), sql: statement.string(at: 1), columns: columns))
            }
        }
        // Privileges, comments and the owner belong to the table itself: read to give them to
        // the new one.
        var carried: [(sql: String, column: String)] = []
        let carriedStatement = try connection.makeStatement(catalog.carried)
        try carriedStatement.forEachRow([.text(source)]) {
            carried.append((carriedStatement.string(at: 1), carriedStatement.string(at: 2)))
        }
        // An assigned key's sequence went past keys since deleted: the new one continues from
        // there, so no key is given twice.
        var lastKey: SQLValue?
        if table.assignsKeys {
            lastKey = try connection.scalar(catalog.keySequence.lastValue, [.text(source), .text(table.keyNames[0])])
        }
        var references: [Reference] = []
        let statement = try connection.makeStatement(catalog.references)
        try statement.forEachRow([.text(source)]) {
            references.append(Reference(table: statement.string(at: 0), name: statement.string(at: 1), definition: statement.string(at: 2)))
        }
        // Other tables' foreign keys hold on to the old table itself, not its name: set aside
        // so it can go, and made again once the new one holds the rows.
        for reference in references { try connection.execute("ALTER TABLE \(reference.table) DROP CONSTRAINT \(quoted(reference.name))") }
        try createTemporaryTable()
        try fill()
        try connection.execute("DROP TABLE \(quoted(source))")
        try connection.execute("ALTER TABLE \(quoted(Self.temporaryName)) RENAME TO \(table.quotedTable)")
        for sql in try SchemaRenamer.constraintRenames(from: Self.temporaryName, to: table.tableName, on: connection) {
            try connection.execute(sql)
        }
        // The copied keys were given, not drawn: the next assigned key comes after them.
        if table.assignsKeys,
            let sql = connection.dialect.advanceKeySequenceSQL(table: table.quotedTable, key: quoted(table.keyNames[0]))
        {
            _ = try connection.scalar(sql, [.text(table.quotedTable), .text(table.keyNames[0])])
        }
        if case .integer? = lastKey {
            _ = try connection.scalar(catalog.keySequence.raise, [.text(table.tableName), .text(table.keyNames[0]), lastKey!])
        }
        let kept = Set(targetColumns.map { $0.lowercased() })
        for index in indexes where index.columns.allSatisfy({ $0.isEmpty || kept.contains($0.lowercased()) }) {
            try recreate(index.sql, index.name)
        }
        for (sql, column) in carried where column.isEmpty || kept.contains(column.lowercased()) {
            guard let placeholder = sql.range(of: "%s") else { continue }
            try recreate(sql.replacingCharacters(in: placeholder, with: table.quotedTable), sql)
        }
        try SchemaMigrator.prepareWithLinks(table, on: connection)
        for reference in references {
            try recreate("ALTER TABLE \(reference.table) ADD CONSTRAINT \(quoted(reference.name)) \(reference.definition)", reference.name)
        }
    }
}
