extension Session {
    /// Deletes the record with `key` by itself, with no delete rules to apply; returns how
    /// many went (0 or 1). Delete rules are the graph path's (`Relationships/DeleteRules.swift`),
    /// chosen above both (`Operations/`).
    func deleteRecord(_ table: TableDescription, owner: ObjectIdentifier, key: [SQLValue]) throws -> Int {
        do {
            try statement(.deleteByKey, table, owner: owner).execute(key)
        } catch let error as ModelStoreError {
            throw error.naming(model: table.modelName, key: table.describeKey(key))
        }
        return connection.changes
    }

    /// Deletes every record of the table, with no delete rules to apply; returns how many went.
    func deleteRecords(_ table: TableDescription, owner: ObjectIdentifier) throws -> Int {
        try statement(.deleteAll, table, owner: owner).execute()
        return connection.changes
    }
}
