/// Creates a model's table, or brings an existing one up to the model: adds the columns the
/// model gained, leaves alone the ones it dropped, and refuses a different primary key.
enum SchemaMigrator {
    /// What an existing table has: its columns (lowercased name → declared type) and key.
    struct ExistingTable {
        var columns: [String: String]
        var primaryKey: [String]
        /// Where the schema is read without SQLite's catalog: each column's type in the
        /// backend's own words (lowercased name → type), for messages.
        var backendTypes: [String: String] = [:]
        /// Columns with a DEFAULT (lowercased names): an insert that leaves one out gets it.
        var defaulted: Set<String> = []
    }

    /// Makes the table match `table`; runs inside the caller's transaction.
    static func prepare(_ table: TableDescription, on connection: Connection) throws {
        try refuseUnsupported(table, connection.dialect)
        if let lock = connection.dialect.tablePreparationLockSQL {
            // Stores in other processes may prepare the same table at the same moment: one at
            // a time, until the transaction ends.
            _ = try connection.scalar(lock, [.text("modelstore " + table.tableName)])
        }
        // Declared renames first, so the checks below see the names the model uses. A check
        // that fails then throws inside the caller's transaction, which undoes the renames.
        try SchemaRenamer.applyWithTargets(table, on: connection)
        // Every check comes before the first write: a table that does not fit is left as it was.
        let existing = try inspect(table, on: connection)
        // The store's own tables have no DEFAULT; a table another tool made may.
        connection.columnsWithDefaults[table.tableName] = existing?.defaulted ?? []
        var moves: [LinkMove] = []
        if let existing {
            try checkPrimaryKey(table, existing)
            try checkColumnTypes(table, existing, on: connection)
            try checkCollations(table, existing, on: connection)
            moves = try oneToOneMoves(table, existing, on: connection)
        }
        try checkJoinTables(table, on: connection)
        let dialect = connection.dialect
        if let existing {
            try addMissingColumns(table, existing, on: connection)
            for move in moves { try connection.execute(move.sql) }
        } else {
            try connection.execute(createTableSQL(table, dialect: dialect))
        }
        try createIndexes(table, on: connection)
        try prepareSearchIndex(table, on: connection)
        if table.keepsHistory { try prepareHistory(table, on: connection) }
        if dialect.capabilities.foreignKeysAfterTables {
            // The backend checks a foreign key's table when the key is declared: the links and
            // join tables come in `linkAfterTables`, once the related tables exist.
            return
        }
        for relationship in table.relationships {
            if case .joinTable(let join) = relationship.storage {
                for sql in join.createSQL { try connection.execute(sql) }
            }
        }
    }

    /// `prepare`, and where foreign keys come after their tables, the tables `table` links to
    /// (when absent) and then its links: what a store's first use of the model does, for a
    /// migration step that prepares or rebuilds one table.
    static func prepareWithLinks(_ table: TableDescription, on connection: Connection) throws {
        try prepare(table, on: connection)
        guard connection.capabilities.foreignKeysAfterTables else { return }
        for relationship in table.relationships {
            func prepareTarget<T: StoredModel>(_ type: T.Type) throws {
                let target = try TableDescription.of(type)
                guard try !SchemaRenamer.exists("table", target.tableName, on: connection) else { return }
                try prepare(target, on: connection)
            }
            try prepareTarget(relationship.target)
        }
        try linkAfterTables(table, on: connection)
    }

    /// Where foreign keys come after their tables (`foreignKeysAfterTables`), once the tables
    /// `table` links to exist: its join tables, and foreign keys on its link columns (added
    /// once, by name).
    static func linkAfterTables(_ table: TableDescription, on connection: Connection) throws {
        for relationship in table.relationships {
            if case .joinTable(let join) = relationship.storage {
                for sql in join.createSQL(dialect: connection.dialect) { try connection.execute(sql) }
            }
        }
        for (offset, constraint) in table.foreignKeyConstraints.enumerated() {
            let name = shortened("fk_\(table.tableName)_\(offset)", to: connection.dialect.maximumNameLength)
            if let exists = connection.dialect.constraintExistsSQL, try connection.scalar(exists, [.text(name)]) != nil { continue }
            try connection.execute("ALTER TABLE \(table.quotedTable) ADD CONSTRAINT \(quoted(name)) \(constraint)")
        }
    }

    /// A name of ModelStore's own making, cut to the backend's limit (`maximumNameLength`)
    /// with a hash of the whole kept in it, so two long names never become one.
    static func shortened(_ name: String, to limit: Int?) -> String {
        guard let limit, name.utf8.count > limit else { return name }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        var prefix = ""
        for character in name where prefix.utf8.count + character.utf8.count <= limit - 17 { prefix.append(character) }
        return prefix + "_" + String(hash, radix: 16)
    }

    /// What a backend refuses in a model: names it would cut (two models, or two properties,
    /// would become one), and what its capabilities lack — renames, SQLite's own collations,
    /// full-text search.
    static func refuseUnsupported(_ table: TableDescription, _ dialect: any SQLDialect) throws {
        let capabilities = dialect.capabilities
        var names: [(String, String?)] = [(table.tableName, nil)] + table.columns.map { (table.tableName, $0.name) }
        names += table.indexes.map { (table.tableName, $0.name) }
        for relationship in table.relationships {
            if case .joinTable(let join) = relationship.storage {
                names.append((join.name, nil))
                names += (join.ownerColumns + join.targetColumns).map { (join.name, $0) }
            }
        }
        for (owner, column) in names where (column ?? owner).utf8.count > dialect.maximumNameLength ?? .max {
            let name = column ?? owner
            throw ModelStoreError(
                .invalidModel,
                "The name '\(name)' (of \(table.modelName)) is \(name.utf8.count) bytes long; \(dialect.name) cuts names to \(dialect.maximumNameLength ?? 0) bytes, so two names sharing their start would become one.",
                model: table.modelName, column: column, value: name,
                suggestion: "Give it a shorter name (a shorter type name, or CodingKeys for a property).")
        }
        if !capabilities.renames, !table.former.isEmpty {
            throw ModelStoreError(
                .unsupported,
                "\(table.modelName) declares former names (renames); renaming stored tables and columns runs on SQLite only for now.",
                model: table.modelName,
                suggestion: "Rename with SQL on the server (ALTER TABLE … RENAME), then drop the former-name declarations.")
        }
        if let search = table.search, let refusal = dialect.fullText.refusal(of: search, model: table.modelName) {
            throw ModelStoreError(.unsupported, refusal.message, model: table.modelName, suggestion: refusal.suggestion)
        }
        if !capabilities.columnCollations, let column = table.columns.first(where: { $0.collation != nil && $0.collation != .binary }) {
            throw ModelStoreError(
                .unsupported,
                "\(table.modelName).\(column.name) declares the collation \(column.collation!.rawValue), which is SQLite's; \(dialect.name) compares text by its own collations.",
                model: table.modelName, column: column.name, value: column.collation!.rawValue,
                suggestion: "Remove the collation from columnStorage for this store (compare lowercased copies instead).")
        }
    }

    private static func createIndexes(_ table: TableDescription, on connection: Connection) throws {
        for index in table.indexes {
            // Where CREATE INDEX locks the table before it looks (a SHARE lock), asked first: a
            // store preparing a table that has its index would otherwise wait for every open
            // write transaction on it, and make later writers wait behind it.
            if connection.dialect.createIndexLocksTable,
                try connection.scalar(connection.dialect.indexExistsSQL, [.text(index.name)]) != nil
            {
                continue
            }
            do {
                try connection.execute(index.createSQL(on: table, dialect: connection.dialect))
            } catch var error as ModelStoreError where error.code == .constraintViolation {
                error.model = table.modelName
                error.message =
                    "The unique index on \(table.modelName) (\(index.columns.joined(separator: ", "))) cannot be created: stored records share values for it."
                error.suggestion = "Remove the duplicates first, or declare the index without unique."
                throw error
            }
        }
    }

    private static func addMissingColumns(_ table: TableDescription, _ existing: ExistingTable, on connection: Connection) throws {
        for column in table.columns where existing.columns[column.name.lowercased()] == nil {
            // SQLite cannot add a NOT NULL column without a default, and ModelStore will not
            // invent values for stored records; the column is nullable and the decoder says
            // clearly when an older record has no value for a non-optional property.
            var sql = "ALTER TABLE \(table.quotedTable) ADD COLUMN \(quoted(column.name))"
            let dialect = connection.dialect
            if column.storage != .untyped || dialect.capabilities.typesEveryColumn {
                let type = dialect.columnType(column.storage.rawValue, isDecimal: column.holdsDecimal)
                sql += " " + type + dialect.byteOrderCollation(forDeclaredType: type)
            }
            if dialect.capabilities.columnCollations, let collation = column.collation { sql += " COLLATE \(collation.rawValue)" }
            if !dialect.capabilities.foreignKeysAfterTables, let reference = table.singleColumnReference(for: column.name) {
                sql += " " + reference
            }
            try connection.execute(sql)
        }
    }

    /// Checks, without writing, that the table exists and has every column: true when it
    /// can be used as it is.
    /// What a reader can do with the stored table, checked without writing.
    enum Readiness {
        /// No such table: nothing has written the model yet (or it was dropped).
        case absent
        /// Lacking a column the model has: only the writer can add it.
        case needsWriter
        /// Every column is there, but a join table or an index is missing: reads work (a
        /// missing join table holds no links), writes need the writer first.
        case readable(missingJoinTables: [JoinTableDescription])
        /// Readable, but the full-text index is not exactly the declared one (another program
        /// dropped a trigger, say) and may lag the table: the writer rebuilds it; a read that
        /// cannot hand over searches a copy made from the rows.
        case searchIndexLags(missingJoinTables: [JoinTableDescription])
        /// Exactly as the writer would leave it.
        case complete
    }

    static func readiness(_ table: TableDescription, on connection: Connection) throws -> Readiness {
        try refuseUnsupported(table, connection.dialect)
        // A table, column or join table still under a former name holds data a read must see.
        if try SchemaRenamer.isPending(table, on: connection) { return .needsWriter }
        guard let existing = try inspect(table, on: connection) else { return .absent }
        try checkPrimaryKey(table, existing)
        try checkColumnTypes(table, existing, on: connection)
        try checkCollations(table, existing, on: connection)
        try checkJoinTables(table, on: connection)
        guard table.columns.allSatisfy({ existing.columns[$0.name.lowercased()] != nil }) else { return .needsWriter }
        var missing: [JoinTableDescription] = []
        for relationship in table.relationships {
            if case .joinTable(let join) = relationship.storage,
                try connection.scalar(connection.dialect.tableExistsSQL, [.text(join.name)]) == nil
            {
                missing.append(join)
            }
        }
        var indexed = true
        for index in table.indexes {
            guard try connection.scalar(connection.dialect.indexExistsSQL, [.text(index.name)]) != nil
            else { indexed = false; break }
        }
        // A search must not read an index that lags its table.
        guard try searchIndexIsComplete(table, on: connection) else { return .searchIndexLags(missingJoinTables: missing) }
        return missing.isEmpty && indexed ? .complete : .readable(missingJoinTables: missing)
    }

    static func inspect(_ table: TableDescription, on connection: Connection) throws -> ExistingTable? {
        try inspect(quotedTable: table.quotedTable, on: connection)
    }

    /// A table read through the dialect's `tableColumnsSQL`, by its name: columns with
    /// SQLite's type names for their types.
    private static func inspectThroughQuery(_ name: String, on connection: Connection) throws -> ExistingTable? {
        let statement = try connection.cachedStatement(connection.dialect.tableColumnsSQL)
        var columns: [String: String] = [:]
        var backendTypes: [String: String] = [:]
        var keyed: [(order: Int64, name: String)] = []
        var defaulted: Set<String> = []
        try statement.forEachRow([.text(name)]) {
            let column = statement.string(at: 0)
            if statement.int64(at: 3) != 0 { defaulted.insert(column.lowercased()) }
            let type = statement.string(at: 1)
            columns[column.lowercased()] = connection.dialect.affinity(ofDeclaredType: type)
            backendTypes[column.lowercased()] = type
            let order = statement.int64(at: 2)
            if order > 0 { keyed.append((order, column)) }
        }
        guard !columns.isEmpty else { return nil }
        return ExistingTable(
            columns: columns, primaryKey: keyed.sorted { $0.order < $1.order }.map(\.name), backendTypes: backendTypes,
            defaulted: defaulted)
    }

    private static func inspect(quotedTable: String, on connection: Connection) throws -> ExistingTable? {
        if !connection.capabilities.sqliteCatalog {
            // quotedTable is `"name"` with doubled quotes inside.
            let name = String(quotedTable.dropFirst().dropLast()).replacingOccurrences(of: "\"\"", with: "\"")
            return try inspectThroughQuery(name, on: connection)
        }
        let statement = try connection.makeStatement("PRAGMA table_info(\(quotedTable))")
        var columns: [String: String] = [:]
        var keyed: [(order: Int64, name: String)] = []
        var defaulted: Set<String> = []
        try statement.forEachRow {
            let name = statement.string(at: 1)
            columns[name.lowercased()] = statement.string(at: 2)
            if !statement.isNull(at: 4) { defaulted.insert(name.lowercased()) }
            let order = statement.int64(at: 5)
            if order > 0 { keyed.append((order, name)) }
        }
        guard !columns.isEmpty else { return nil }
        return ExistingTable(
            columns: columns, primaryKey: keyed.sorted { $0.order < $1.order }.map(\.name), defaulted: defaulted)
    }

    /// Refuses a stored column that compares differently from the collation its property
    /// declares: keys, unique indexes and conditions would silently follow the stored one.
    /// SQLite cannot change a column's collation in place; a rebuild step can. Columns whose
    /// property declares none are taken as they are (a table another tool made).
    private static func checkCollations(_ table: TableDescription, _ existing: ExistingTable, on connection: Connection) throws {
        guard connection.capabilities.sqliteCatalog else { return }
        for column in table.columns {
            guard let declared = column.collation, existing.columns[column.name.lowercased()] != nil else { continue }
            let stored = connection.collation(ofColumn: column.name, inTable: table.tableName) ?? "BINARY"
            guard stored.uppercased() != declared.rawValue else { continue }
            throw ModelStoreError(
                .schemaMismatch,
                "\(table.modelName).\(column.name) declares the collation \(declared.rawValue), but the stored column compares with \(stored); SQLite cannot change a column's collation in place.",
                model: table.modelName, column: column.name, value: stored,
                suggestion:
                    "Add a migration step that rebuilds the table (`MigrationStep(\"collate \(column.name)\") { try $0.rebuild(\(table.modelName).self) }`); records that the new collation makes equal in a key or unique index must be merged first."
            )
        }
    }

    private static func checkPrimaryKey(_ table: TableDescription, _ existing: ExistingTable) throws {
        let expected = table.keyNames.map { $0.lowercased() }
        guard existing.primaryKey.map({ $0.lowercased() }) == expected else {
            let stored = existing.primaryKey.isEmpty ? "none" : existing.primaryKey.joined(separator: ", ")
            throw ModelStoreError(
                .schemaMismatch,
                "The stored table \(table.quotedTable) has primary key (\(stored)), but \(table.modelName).primaryKey is (\(table.keyNames.joined(separator: ", "))).",
                model: table.modelName,
                suggestion:
                    "Keep the model's primaryKey as it was, or migrate the table (copy its records into a new table with the new key).")
        }
    }

    /// Refuses a stored column whose declared type would make SQLite change the values the
    /// property stores (see `ColumnAffinity`). A table ModelStore created always passes: it
    /// declares each column with its storage's own type. Columns the table lacks are skipped:
    /// ModelStore adds them itself, with the right type.
    private static func checkColumnTypes(_ table: TableDescription, _ existing: ExistingTable, on connection: Connection) throws {
        try checkTypes(
            of: table.columns.map { ($0.name, $0.checkedStorage, "\(table.modelName).\($0.name)", $0.typeName) },
            in: table.tableName, existing, modelName: table.modelName, on: connection)
    }

    /// The same check for the join tables of the model's many-to-many relationships, which
    /// hold the two models' keys.
    private static func checkJoinTables(_ table: TableDescription, on connection: Connection) throws {
        for relationship in table.relationships {
            guard case .joinTable(let join) = relationship.storage,
                let existing = try inspect(quotedTable: quoted(join.name), on: connection)
            else { continue }
            let owner = zip(join.ownerColumns, join.ownerStorage).map {
                ($0, $1, "the key of \(join.ownerTable) in \(table.modelName).\(relationship.property)", $1.rawValue)
            }
            let target = zip(join.targetColumns, join.targetStorage).map {
                ($0, $1, "the key of \(join.targetTable) in \(table.modelName).\(relationship.property)", $1.rawValue)
            }
            try checkTypes(of: owner + target, in: join.name, existing, modelName: table.modelName, on: connection)
            // Then whether it can hold the links at all (declared join tables are often not ours).
            try checkJoinTableShape(join, of: relationship.property, modelName: table.modelName, on: connection)
        }
    }

    private static func checkTypes(
        of columns: [(name: String, storage: StorageType, owner: String, typeName: String)], in tableName: String,
        _ existing: ExistingTable, modelName: String, on connection: Connection
    ) throws {
        var isStrict: Bool?
        for column in columns {
            guard let declared = existing.columns[column.name.lowercased()] else { continue }
            // In a STRICT table `ANY` keeps values as given; elsewhere it is NUMERIC. Ask only then.
            if isStrict == nil, declared.uppercased() == "ANY" {
                isStrict = try Self.isStrict(tableName, on: connection)
            }
            let affinity = ColumnAffinity(declaredType: declared, isStrict: isStrict ?? false)
            guard !affinity.keeps(column.storage) else { continue }
            if let backendType = existing.backendTypes[column.name.lowercased()] {
                // Without SQLite's catalog, in the backend's own words: no affinity, no rebuild.
                let wanted = connection.dialect.columnType(column.storage.rawValue, isDecimal: false)
                throw ModelStoreError(
                    .schemaMismatch,
                    "The stored table \(quoted(tableName)) on \(connection.dialect.name) has column \(quoted(column.name)) of type \(backendType), but \(column.owner) is \(column.typeName), stored as \(column.storage.displayName), which that type does not keep exactly. Nothing was written.",
                    model: modelName, column: column.name, value: backendType,
                    suggestion:
                        "Change the column's type (ALTER TABLE \(quoted(tableName)) ALTER COLUMN \(quoted(column.name)) TYPE \(wanted) USING …), or give the property a type that the column keeps exactly."
                )
            }
            let shown = declared.isEmpty ? "no type" : declared
            throw ModelStoreError(
                .schemaMismatch,
                "The stored table \(quoted(tableName)) declares column \(quoted(column.name)) as \(shown) (\(affinity.rawValue) affinity), but \(column.owner) is \(column.typeName), stored as \(column.storage.displayName): \(affinity.damage(to: column.storage)). Nothing was written.",
                model: modelName, column: column.name,
                suggestion:
                    "Declare the column as \(column.storage.acceptableDeclarations) — SQLite cannot change a column's type, so create the table anew and copy the rows into it — or give the property a type that the column keeps exactly."
            )
        }
    }

    /// Whether `tableName` is a STRICT table; false where SQLite predates them (3.37).
    private static func isStrict(_ tableName: String, on connection: Connection) throws -> Bool {
        guard connection.capabilities.sqliteCatalog else { return true }
        let strict = try? connection.scalar("SELECT strict FROM pragma_table_list WHERE name = ?", [.text(tableName)])
        return strict == .integer(1)
    }

    static func createTableSQL(
        _ table: TableDescription, named name: String? = nil, extraColumns: [String] = [], dialect: any SQLDialect = SQLiteDialect()
    ) -> String {
        var definitions = table.columns.enumerated().map { position, column -> String in
            var definition = quoted(column.name)
            if table.assignsKeys, position == table.keyPositions[0], let assigned = dialect.assignedKeyColumnType() {
                return definition + " " + assigned
            }
            if column.storage != .untyped || dialect.capabilities.typesEveryColumn {
                // Text compares by its bytes on every backend (see `byteOrderCollation`): declared
                // on the column, its indexes serve the queries, which name that collation.
                let type = dialect.columnType(column.storage.rawValue, isDecimal: column.holdsDecimal)
                definition += " " + type + dialect.byteOrderCollation(forDeclaredType: type)
            }
            if dialect.capabilities.columnCollations, let collation = column.collation { definition += " COLLATE " + collation.rawValue }
            if !column.isOptional { definition += " NOT NULL" }
            return definition
        }
        // Columns kept from an older table that the model no longer has (see `TableRebuild`).
        definitions += extraColumns
        // A single INTEGER key declared this way becomes the rowid itself: the fastest lookup.
        definitions.append("PRIMARY KEY (" + table.keyNames.map(quoted).joined(separator: ", ") + ")")
        // Where a foreign key's table is checked when declared, they come later (`linkAfterTables`).
        if !dialect.capabilities.foreignKeysAfterTables { definitions += table.foreignKeyConstraints }
        return "CREATE TABLE IF NOT EXISTS \(name.map(quoted) ?? table.quotedTable) (" + definitions.joined(separator: ", ") + ")"
    }
}
