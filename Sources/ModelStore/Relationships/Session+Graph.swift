extension Session {
    /// Decodes every row of `statement` (already bound) and fills relationships as `loading`
    /// says. Models without relationships take the plain path.
    func readModels<M: StoredModel>(_ type: M.Type, from statement: Statement, table: TableDescription, loading: LoadOptions) throws -> [M] {
        guard !table.relationships.isEmpty, !loading.plan.isEmpty else {
            return try decodeAll(type, from: statement, table: table)
        }
        // One snapshot for the roots and every relationship query.
        return try connection.inReadTransaction {
            let records = try readRecords(type, from: statement, table: table)
            return try GraphLoader(session: self).load(records, table: table, plan: loading.plan)
        }
    }

    /// Every row of `statement` as a record with its key and link values; resets it.
    func readRecords<M: StoredModel>(_ type: M.Type, from statement: Statement, table: TableDescription) throws -> [LoadedRecord<M>] {
        defer { statement.reset() }
        let decoder = RowDecoder(statement: statement, layout: table.layout, keyPositions: table.keyPositions)
        let first = table.columns.count - table.foreignKeyColumns.count
        var records: [LoadedRecord<M>] = []
        while try statement.step() {
            let model = try decoder.decode(type)
            let key = table.keyPositions.map { statement.value(at: Int32($0)) }
            let links = (first..<table.columns.count).map { statement.value(at: Int32($0)) }
            records.append(LoadedRecord(model: model, id: RecordID(type: ObjectIdentifier(type), key: key), links: links))
        }
        return records
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
            let first = table.columns.count - table.foreignKeyColumns.count
            var links: [[SQLValue]: [SQLValue]] = [:]
            let linkColumns = table.foreignKeyColumns.map { quoted($0.name) }
            for condition in GraphLoader.membership(table.keyNames.map(quoted), keys) {
                let sql = SQLFragment("SELECT \((table.keyNames.map(quoted) + linkColumns).joined(separator: ", ")) FROM \(table.quotedTable) WHERE ") + condition
                let statement = try connection.cachedStatement(sql.sql)
                try statement.forEachRow(sql.values) {
                    let count = Int32(table.keyPositions.count)
                    let key = (0..<count).map { statement.value(at: $0) }
                    links[key] = (0..<Int32(table.columns.count - first)).map { statement.value(at: count + $0) }
                }
            }
            let records = zip(models, keys).map { model, key in
                LoadedRecord(
                    model: model, id: RecordID(type: ObjectIdentifier(M.self), key: key),
                    links: links[key] ?? Array(repeating: .null, count: table.columns.count - first))
            }
            return try GraphLoader(session: self).load(records, table: table, plan: loading.plan)
        }
    }
}
