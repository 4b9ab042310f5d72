/// The graph path: saves and reads that follow relationships. Whether a call takes it is
/// decided once, above this layer and the Engine (`Operations/`).
extension Session {
    /// Saves `model`, the related models it carries and their links.
    func saveGraph<M: StoredModel>(_ model: M, mode: SaveMode, clearing: [String] = [], related: RelatedRecords = .save) throws
        -> SaveOutcome
    {
        let before = connection.totalChanges
        let graph = GraphSaver(session: self, related: related)
        let outcome = try graph.save(model, mode: mode, clearing: clearing).outcome
        try graph.requireNothingMissing()
        return outcome.counting(related: connection.totalChanges != before)
    }

    /// Upserts every model of a batch with its graph, in array order. Each element is encoded
    /// once, by the saver; the result counts related records too, so it covers every record
    /// the batch wrote.
    func saveGraphs<M: StoredModel>(_ models: [M], into table: TableDescription, related: RelatedRecords = .save) throws
        -> BatchSaveOutcome
    {
        if related == .save, let result = try saveGraphsInLevels(models, into: table) { return result }
        let graph = GraphSaver(session: self, related: related)
        var result = BatchSaveOutcome(inserted: 0, updated: 0)
        try models.withUnsafeBufferPointer { buffer in
            for offset in 0..<buffer.count {
                graph.startElement()
                let before = connection.totalChanges
                do {
                    let (outcome, key) = try graph.save(buffer[offset], mode: .upsert)
                    result.count(outcome.counting(related: connection.totalChanges != before))
                    if graph.rootKeyAssigned, case .integer(let assigned)? = key.first { result.assignedKeys.append(assigned) }
                } catch let error as ModelStoreError {
                    // Only a failing element is encoded a second time, to name its key.
                    throw error.inBatch(at: offset, of: models.count, table: table, key: try? key(of: buffer[offset], in: table))
                }
            }
        }
        try graph.requireNothingMissing()
        result.inserted += graph.relatedOutcomes.inserted
        result.updated += graph.relatedOutcomes.updated
        result.unchanged += graph.relatedOutcomes.unchanged
        return result
    }

    /// Decodes every row of `statement` (already bound) and fills relationships as `plan` says.
    ///
    /// `wholeTable` says the statement selects every record of the table, so their related
    /// records can be read by scanning instead of by a list of keys.
    func readGraphs<M: StoredModel>(
        _ type: M.Type, from statement: Statement, table: TableDescription, plan: LoadOptions.Plan, wholeTable: Bool = false
    ) throws -> [M] {
        // One snapshot for the roots and every relationship query.
        try connection.inReadTransaction {
            try GraphLoader(session: self).load(type, from: statement, table: table, plan: plan, wholeTable: wholeTable)
        }
    }

    /// Fills the relationships of models the caller already holds.
    func loadGraphs<M: StoredModel>(of models: [M], table: TableDescription, plan: LoadOptions.Plan) throws -> [M] {
        guard !models.isEmpty else { return models }
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
            for condition in GraphLoader.membership(table.keyNames.map(quoted), keys, dialect: connection.dialect) {
                let sql =
                    SQLFragment(
                        "SELECT \((table.keyNames.map(quoted) + linkColumns).joined(separator: ", ")) FROM \(table.quotedTable) WHERE ")
                    + condition
                let statement = try connection.cachedStatement(sql.sql)
                try statement.forEachRow(sql.values) {
                    let count = table.keyPositions.count
                    links[RecordKey(statement.values(count: count))] = statement.values(from: Int32(count), count: width)
                }
            }
            return try GraphLoader(session: self).load(
                models, keys: keys, links: keys.map { links[RecordKey($0)] ?? Array(repeating: .null, count: width) },
                table: table, plan: plan)
        }
    }
}
