extension Session {
    /// Deletes the record with `key`; returns how many went (0 or 1).
    func delete<M: StoredModel>(_ type: M.Type, key: KeyInput) throws -> Int {
        let table = try table(type)
        return try delete(table, owner: type, key: try table.keyValues(key))
    }

    /// Deletes the record with `model`'s key; returns how many went (0 or 1).
    func delete<M: StoredModel>(_ model: M) throws -> Int {
        let table = try table(M.self)
        let row = RowEncoder(layout: table.layout)
        try row.encode(model)
        return try delete(table, owner: M.self, key: try table.key(of: row))
    }

    private func delete<M: StoredModel>(_ table: TableDescription, owner: M.Type, key: [SQLValue]) throws -> Int {
        let statement = try statement(.deleteByKey, table, owner: ObjectIdentifier(owner))
        do {
            guard table.relationships.isEmpty else {
                return try delete(
                    owner, where: SQLFragment(table.keyCondition, key), describing: "\(table.modelName) (\(table.describeKey(key)))")
            }
            try statement.execute(key)
        } catch var error as ModelStoreError {
            error.model = error.model ?? table.modelName
            error.key = error.key ?? table.describeKey(key)
            throw error
        }
        return connection.changes
    }

    /// Deletes every record of the table; returns how many went.
    func deleteAll<M: StoredModel>(_ type: M.Type) throws -> Int {
        let table = try table(type)
        guard table.relationships.isEmpty else {
            return try delete(type, where: SQLFragment("1"), describing: "All \(table.modelName) records")
        }
        try statement(.deleteAll, table, owner: ObjectIdentifier(type)).execute()
        return connection.changes
    }
}
