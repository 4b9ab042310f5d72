extension SchemaMigrator {
    /// For a table this store has already checked, when the schema changed since: the table
    /// and every column of the model must still be there. A missing one was dropped or
    /// renamed by another program while the store was open; adding it back empty (as for a
    /// property the model gained) would hide the records' values, so it is an error instead.
    static func requireStillPresent(_ table: TableDescription, on connection: Connection) throws {
        guard let existing = try inspect(table, on: connection) else {
            throw ModelStoreError(
                .schemaMismatch,
                "\(table.modelName): the stored table \(table.tableName) no longer exists: another program dropped or renamed it while the store was open. Nothing was written.",
                model: table.modelName,
                suggestion: "Restore the table (rename it back, or from a backup); a store opened afterwards creates a missing table empty."
            )
        }
        for column in table.columns where existing.columns[column.name.lowercased()] == nil {
            throw ModelStoreError(
                .schemaMismatch,
                "\(table.modelName): the stored table \(table.tableName) has no column \(column.name) any more: another program renamed or dropped it while the store was open. Nothing was written.",
                model: table.modelName, column: column.name,
                suggestion:
                    "Rename the column back (ALTER TABLE \(table.quotedTable) RENAME COLUMN … TO \(quoted(column.name))) or restore it from a backup; a store opened afterwards adds a missing column empty."
            )
        }
    }
}

extension TableDescription {
    /// The join tables of the model's relationships that use one.
    var joinTables: [JoinTableDescription] {
        relationships.compactMap { relationship in
            if case .joinTable(let join) = relationship.storage { return join }
            return nil
        }
    }
}
