extension Session {
    /// Saves `model` into the record `predicate` matches (merge rules; the record keeps its
    /// key), or inserts it when none does. Several matches are an error unless
    /// `updatingAll`, which updates each of them.
    func save<M: StoredModel>(_ model: M, matching predicate: PredicateNode, updatingAll: Bool) throws -> SaveOutcome {
        let table = try table(M.self)
        let owner = ObjectIdentifier(M.self)
        let row = RowEncoder(layout: table.layout)
        let callbacks = ModelCallbacks.of(M.self).save
        try encodeForWriting(model, into: row, table, callbacks: callbacks)
        let outcome = try save(row, table: table, owner: owner, matching: predicate, updatingAll: updatingAll)
        if callbacks { try didSave(model, outcome: outcome, table, row) }
        return outcome
    }

    /// Saves `model` into the record whose `properties` equal the model's values.
    func save<M: StoredModel>(_ model: M, matchingProperties properties: [ColumnReference], updatingAll: Bool) throws -> SaveOutcome {
        let table = try table(M.self)
        let compiler = compiler(table)
        let row = RowEncoder(layout: table.layout)
        let callbacks = ModelCallbacks.of(M.self).save
        try encodeForWriting(model, into: row, table, callbacks: callbacks)
        guard !properties.isEmpty else {
            throw ModelStoreError(.invalidQuery, "A save of \(table.modelName) by matching properties names none.", model: table.modelName)
        }
        var conditions: [PredicateNode] = []
        for property in properties {
            _ = try compiler.column(property)
            let position = table.layout.position(of: property.name)!
            guard let value = row.value(at: position), !value.isNull else {
                throw ModelStoreError(
                    .invalidQuery, "\(table.modelName).\(property.name) is nil in the model, so it cannot identify the record to update.",
                    model: table.modelName, column: property.name, suggestion: "Give the matching properties values.")
            }
            conditions.append(.compare(property, .equal, value))
        }
        let outcome = try save(row, table: table, owner: ObjectIdentifier(M.self), matching: .and(conditions), updatingAll: updatingAll)
        if callbacks { try didSave(model, outcome: outcome, table, row) }
        return outcome
    }

    private func save(
        _ row: RowEncoder, table: TableDescription, owner: ObjectIdentifier, matching predicate: PredicateNode, updatingAll: Bool
    ) throws -> SaveOutcome {
        let compiler = compiler(table)
        let condition = try compiler.whereClause(predicate)
        let lookup =
            SQLFragment("SELECT \(table.keyOrder) FROM \(table.quotedTable)") + condition
            + SQLFragment(updatingAll ? "" : " LIMIT 2")
        let statement = try connection.cachedStatement(lookup.sql)
        var keys: [[SQLValue]] = []
        try statement.forEachRow(lookup.values) {
            keys.append(statement.values(count: table.keyPositions.count))
        }
        guard !keys.isEmpty else {
            try insertUnmatched(row, table, owner)
            return .inserted
        }
        guard keys.count == 1 || updatingAll else {
            throw ModelStoreError(
                .ambiguousMatch,
                "More than one \(table.modelName) record matches (\(keys.map(table.describeKey).joined(separator: "; ")), …); a save updates one.",
                model: table.modelName, suggestion: "Narrow the match, or pass updatingAll: true to update every matching record.")
        }
        let columns = table.updatable(row.present)
        guard table.changesSomething(columns) else { return .updated }
        for key in keys {
            _ = try update(row, columns: columns, key: key, table, owner)
        }
        return .updated
    }
}
