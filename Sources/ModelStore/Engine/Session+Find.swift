extension Session {
    /// The model with `key`, or nil.
    func find<M: StoredModel>(_ type: M.Type, key: KeyInput, loading: LoadOptions = .direct) throws -> M? {
        let table = try table(type)
        let values = try table.keyValues(key)
        let statement = try statement(.findByKey, table, owner: ObjectIdentifier(type))
        guard table.relationships.isEmpty else {
            try statement.bind(values)
            return try readModels(type, from: statement, table: table, loading: loading).first
        }
        defer { statement.reset() }
        try statement.bind(values)
        guard try statement.step() else { return nil }
        return try RowDecoder(statement: statement, layout: table.layout, keyPositions: table.keyPositions)
            .decode(type)
    }

    /// Every model, in primary-key order.
    func findAll<M: StoredModel>(_ type: M.Type, loading: LoadOptions = .direct) throws -> [M] {
        let table = try table(type)
        let statement = try statement(.findAll, table, owner: ObjectIdentifier(type))
        return try readModels(type, from: statement, table: table, loading: loading)
    }

    /// Decodes every row `statement` returns (already bound) and resets it.
    func decodeAll<M: StoredModel>(_ type: M.Type, from statement: Statement, table: TableDescription) throws -> [M] {
        defer { statement.reset() }
        let decoder = RowDecoder(statement: statement, layout: table.layout, keyPositions: table.keyPositions)
        var rows = RowBuffer<M>()
        while try statement.step() {
            rows.append(try decoder.decode(type))
        }
        return rows.finish()
    }

    /// How many records the table holds.
    func count<M: StoredModel>(_ type: M.Type) throws -> Int {
        let table = try table(type)
        let statement = try statement(.count, table, owner: ObjectIdentifier(type))
        defer { statement.reset() }
        _ = try statement.step()
        return Int(statement.int64(at: 0))
    }

    /// Whether a record has `key`.
    func exists<M: StoredModel>(_ type: M.Type, key: KeyInput) throws -> Bool {
        let table = try table(type)
        return try exists(table, ObjectIdentifier(type), try table.keyValues(key))
    }
}
