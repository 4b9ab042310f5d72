extension Session {
    /// Decodes every row of `statement` (already bound) and fills relationships as `loading`
    /// says. Models without relationships take the plain path.
    ///
    /// `wholeTable` says the statement selects every record of the table, so their related
    /// records can be read by scanning instead of by a list of keys.
    func readModels<M: StoredModel>(
        _ type: M.Type, from statement: Statement, table: TableDescription, loading: LoadOptions, wholeTable: Bool = false
    ) throws -> [M] {
        guard !table.relationships.isEmpty, !loading.plan.isEmpty else {
            return try decodeAll(type, from: statement, table: table)
        }
        // One snapshot for the roots and every relationship query.
        return try connection.inReadTransaction {
            try GraphLoader(session: self).load(type, from: statement, table: table, plan: loading.plan, wholeTable: wholeTable)
        }
    }

    /// Fills the relationships of models the caller already holds.
    func loadRelationships<M: StoredModel>(of models: [M], loading: LoadOptions) throws -> [M] {
        let table = try table(M.self)
        guard !table.relationships.isEmpty, !models.isEmpty, !loading.plan.isEmpty else { return models }
        return try connection.inReadTransaction {
            // The link columns are not in the models; read them by key.
            let row = RowEncoder(layout: table.layout)
            var keys: [[SQLValue]] = []
            for model in models {
                try row.encode(model)
                keys.append(try table.key(of: row))
            }
            let width = table.foreignKeyColumns.count
            var links: [RecordKey: [SQLValue]] = [:]
            let linkColumns = table.foreignKeyColumns.map { quoted($0.name) }
            for condition in GraphLoader.membership(table.keyNames.map(quoted), keys) {
                let sql =
                    SQLFragment(
                        "SELECT \((table.keyNames.map(quoted) + linkColumns).joined(separator: ", ")) FROM \(table.quotedTable) WHERE ")
                    + condition
                let statement = try connection.cachedStatement(sql.sql)
                try statement.forEachRow(sql.values) {
                    let count = Int32(table.keyPositions.count)
                    let key = (0..<count).map { statement.value(at: $0) }
                    links[RecordKey(key)] = (0..<Int32(width)).map { statement.value(at: count + $0) }
                }
            }
            return try GraphLoader(session: self).load(
                models, keys: keys, links: keys.map { links[RecordKey($0)] ?? Array(repeating: .null, count: width) },
                table: table, plan: loading.plan)
        }
    }
}
