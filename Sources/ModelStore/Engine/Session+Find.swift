extension Session {
    /// The model with `key`, or nil, decoded from its own record alone.
    func findRecord<M: StoredModel>(_ type: M.Type, in table: TableDescription, key: [SQLValue]) throws -> M? {
        let statement = try statement(.findByKey, table, owner: ObjectIdentifier(type))
        defer { statement.reset() }
        try statement.bind(key)
        guard try statement.step() else { return nil }
        return try RowDecoder(statement: statement, layout: table.layout, keyPositions: table.keyPositions)
            .decode(type)
    }

    /// Every model, in primary-key order, decoded from their own records alone.
    func findRecords<M: StoredModel>(_ type: M.Type, in table: TableDescription) throws -> [M] {
        let statement = try statement(.findAll, table, owner: ObjectIdentifier(type))
        // Counting first (SQLite walks the b-tree without decoding) lets the rows decode
        // into an array of the right size: the peak is the result, not twice it. A server
        // has answered with every row already, so its count is known without another query.
        let expected = try statement.rowCountWithoutStepping() ?? count(table, owner: ObjectIdentifier(type))
        return try decodeAll(type, from: statement, table: table, expected: expected)
    }

    /// Decodes every row `statement` returns (already bound) and resets it. `expected`, when
    /// known (or when a server has answered with every row), sizes the result exactly; rows
    /// beyond it (a write committed in between) are still returned.
    func decodeAll<M: StoredModel>(_ type: M.Type, from statement: Statement, table: TableDescription, expected: Int? = nil) throws -> [M] {
        defer { statement.reset() }
        let decoder = RowDecoder(statement: statement, layout: table.layout, keyPositions: table.keyPositions)
        let rows = RowBuffer<M>()
        guard let expected = try expected ?? statement.rowCountWithoutStepping(), expected > 0 else {
            while try statement.step() { rows.append(try decoder.decode(type)) }
            return rows.finish()
        }
        var more = false
        var models = try [M](unsafeUninitializedCapacity: expected) { buffer, initialized in
            initialized = 0
            while initialized < expected {
                guard try statement.step() else { return }
                (buffer.baseAddress! + initialized).initialize(to: try decoder.decode(type))
                initialized += 1
            }
            more = true
        }
        if more {
            while try statement.step() { rows.append(try decoder.decode(type)) }
            models += rows.finish()
        }
        return models
    }

    /// How many records the table holds.
    func count<M: StoredModel>(_ type: M.Type) throws -> Int {
        try count(try table(type), owner: ObjectIdentifier(type))
    }

    private func count(_ table: TableDescription, owner: ObjectIdentifier) throws -> Int {
        let statement = try statement(.count, table, owner: owner)
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
