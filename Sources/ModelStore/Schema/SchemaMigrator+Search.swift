/// Creates, checks and re-creates a model's full-text index through the backend's
/// `FullTextSQL` (SQLite: `SQLiteFullText`), which knows how it keeps one.
extension SchemaMigrator {
    /// Brings the model's full-text index up to its declaration; runs inside the caller's
    /// transaction, after the table itself is ready.
    static func prepareSearchIndex(_ table: TableDescription, on connection: Connection) throws {
        try connection.dialect.fullText.prepare(
            table.search, table: table.tableName, model: table.modelName, on: connection.fullTextDatabase)
    }

    /// Whether the stored index is exactly the declared one; false when only the writer can
    /// make it so. A model without `searchable` has nothing to check (a leftover index is
    /// the writer's to drop, and changes no read).
    static func searchIndexIsComplete(_ table: TableDescription, on connection: Connection) throws -> Bool {
        guard let search = table.search else { return true }
        return try connection.dialect.fullText.isComplete(search, on: connection.fullTextDatabase)
    }

    /// Drops the full-text index that maintains itself from `tableName`, if any: before a
    /// table rebuild; the next `prepare` makes it again from the rows.
    static func dropSearchIndex(ofTable tableName: String, on connection: Connection) throws {
        try connection.dialect.fullText.drop(ofTable: tableName, on: connection.fullTextDatabase)
    }

    /// The names of the tables that make up full-text indexes (SQLite's FTS5 tables and their
    /// shadow tables): part of a model's storage, not tables of their own.
    static func searchIndexTables(on connection: Connection) throws -> Set<String> {
        try connection.dialect.fullText.indexTables(on: connection.fullTextDatabase)
    }
}
