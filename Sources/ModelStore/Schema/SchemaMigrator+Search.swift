/// Creates, checks and re-creates a model's full-text index (see `SearchIndexDescription`).
///
/// The index is recognised by its SQL, not trusted by its name: when the FTS5 table or any
/// of its triggers differs from what the model's declaration makes (a property added to or
/// removed from `searchable`, a column or table renamed, a table rebuilt, a trigger dropped
/// by another tool), the whole index is dropped, made again and rebuilt from the table's
/// rows, inside the caller's transaction. An index that is as declared costs one query.
extension SchemaMigrator {
    /// What of a full-text index the file holds for one table.
    struct StoredSearchIndex {
        /// Triggers on the table that maintain an FTS5 table of ModelStore's: name → SQL.
        var triggers: [String: String] = [:]
        /// ModelStore's FTS5 tables those triggers feed, or that index the table: name → SQL.
        var indexes: [String: String] = [:]

        var isEmpty: Bool { triggers.isEmpty && indexes.isEmpty }

        /// Whether it is exactly `search`, with nothing left over from an older declaration.
        func matches(_ search: SearchIndexDescription) -> Bool {
            indexes == [search.name: search.createSQL]
                && triggers == Dictionary(uniqueKeysWithValues: zip(search.triggerNames, search.triggerSQL))
        }
    }

    /// Brings the model's full-text index up to its declaration; runs inside the caller's
    /// transaction, after the table itself is ready.
    static func prepareSearchIndex(_ table: TableDescription, on connection: Connection) throws {
        guard let search = table.search else {
            // The declaration was removed: triggers maintaining an index nobody reads would
            // only slow every write down. Asked without a statement (most models never had
            // an index, and their first use should run no more SQL than before).
            guard tableExists(table.tableName + "_fts", on: connection) else { return }
            try drop(try storedSearchIndex(ofTable: table.tableName, on: connection), on: connection)
            return
        }
        let stored = try storedSearchIndex(ofTable: table.tableName, on: connection)
        guard !stored.matches(search) else { return }
        try checkRowid(table, on: connection)
        if stored.indexes[search.name] == nil, try SchemaRenamer.exists("table", search.name, on: connection) {
            throw ModelStoreError(
                .schemaMismatch,
                "\(table.modelName) declares searchable properties, but the file already has a table \(search.name) that is not its full-text index. Nothing was written.",
                model: table.modelName, value: search.name,
                suggestion: "Rename or drop the table \(search.name), or give \(table.modelName) another tableName.")
        }
        try drop(stored, on: connection)
        try connection.execute(search.createSQL)
        for sql in search.triggerSQL { try connection.execute(sql) }
        // Index the records the table already holds (none, for a table created just now).
        try connection.execute("INSERT INTO \(search.quotedName)(\(search.quotedName)) VALUES ('rebuild')")
    }

    /// Whether the file's index is exactly the declared one; false when only the writer can
    /// make it so. A model without `searchable` has nothing to check (a leftover index is
    /// the writer's to drop, and changes no read).
    static func searchIndexIsComplete(_ table: TableDescription, on connection: Connection) throws -> Bool {
        guard let search = table.search else { return true }
        return try storedSearchIndex(ofTable: table.tableName, on: connection).matches(search)
    }

    /// Drops the full-text index that maintains itself from `tableName`, if any: before a
    /// table rebuild (which renumbers rowids the index refers to, and would carry its
    /// triggers over unchanged); the next `prepare` makes it again from the rows.
    static func dropSearchIndex(ofTable tableName: String, on connection: Connection) throws {
        guard connection.capabilities.fullTextSearch else { return }
        try drop(try storedSearchIndex(ofTable: tableName, on: connection), on: connection)
    }

    /// The names of the tables that make up full-text indexes in the file (the FTS5 tables
    /// and their shadow tables): part of a model's storage, not tables of their own.
    static func searchIndexTables(on connection: Connection) throws -> Set<String> {
        guard connection.capabilities.fullTextSearch else { return [] }
        var names = Set<String>()
        let statement = try connection.makeStatement(
            "SELECT name, sql FROM main.sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE %USING fts5(%'")
        try statement.forEachRow {
            let name = statement.string(at: 0)
            guard name.hasSuffix("_fts") else { return }
            names.insert(name.lowercased())
            for suffix in SearchIndexDescription.shadowSuffixes { names.insert((name + suffix).lowercased()) }
        }
        return names
    }

    private static func storedSearchIndex(ofTable tableName: String, on connection: Connection) throws -> StoredSearchIndex {
        var stored = StoredSearchIndex()
        var feeds = Set<String>([tableName + "_fts"])
        let triggers = try connection.makeStatement(
            "SELECT name, sql FROM main.sqlite_master WHERE type = 'trigger' AND tbl_name = ? COLLATE NOCASE AND sql IS NOT NULL")
        try triggers.forEachRow([.text(tableName)]) {
            let name = triggers.string(at: 0)
            let sql = triggers.string(at: 1)
            // `<index>_ai`, `_ad`, `_au`, writing into `<index>`: an index made for this table
            // under its current name or a former one (a rename keeps trigger names).
            guard let suffix = SearchIndexDescription.triggerSuffixes.first(where: { name.hasSuffix($0) }) else { return }
            let index = String(name.dropLast(suffix.count))
            guard index.hasSuffix("_fts"), sql.contains("INSERT INTO \(quoted(index))(") else { return }
            stored.triggers[name] = sql
            feeds.insert(index)
        }
        for index in feeds {
            guard
                case .text(let sql)? = try connection.scalar(
                    "SELECT sql FROM main.sqlite_master WHERE type = 'table' AND name = ?", [.text(index)]),
                sql.hasPrefix("CREATE VIRTUAL TABLE"), sql.contains("USING fts5(")
            else { continue }
            // The current name's index counts only if it indexes this table (content=…).
            if index == tableName + "_fts", stored.triggers.isEmpty,
                !sql.contains("content='" + tableName.replacingOccurrences(of: "'", with: "''") + "'")
            {
                continue
            }
            stored.indexes[index] = sql
        }
        return stored
    }

    private static func drop(_ stored: StoredSearchIndex, on connection: Connection) throws {
        for name in stored.triggers.keys.sorted() { try connection.execute("DROP TRIGGER IF EXISTS main.\(quoted(name))") }
        // Dropping an FTS5 table drops its shadow tables too.
        for name in stored.indexes.keys.sorted() { try connection.execute("DROP TABLE IF EXISTS main.\(quoted(name))") }
    }

    /// An external-content index finds records by rowid: a WITHOUT ROWID table (which another
    /// tool may have made) has none.
    private static func checkRowid(_ table: TableDescription, on connection: Connection) throws {
        do {
            _ = try connection.makeStatement("SELECT rowid FROM main.\(table.quotedTable) LIMIT 0")
        } catch {
            throw ModelStoreError(
                .schemaMismatch,
                "\(table.modelName) declares searchable properties, but its stored table \(table.tableName) has no rowid (WITHOUT ROWID), which a full-text index needs to find records. Nothing was written.",
                model: table.modelName, value: table.tableName,
                suggestion: "Rebuild the table as an ordinary rowid table (a migration step can), or remove \(table.modelName).searchable.")
        }
    }

    /// Whether the main schema has a table `name` (`Connection.hasTable`: it runs no
    /// statement, so a store's trace and statement counts do not change).
    private static func tableExists(_ name: String, on connection: Connection) -> Bool {
        connection.hasTable(name)
    }
}
