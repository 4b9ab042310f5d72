extension MigrationContext {
    /// Rewrites every record of `Old`'s table as a `New`: reads each as `Old` (its own
    /// properties; relationships are not loaded), passes it to `body`, and stores what it
    /// returns (nil leaves that record out) in `New`'s table, rebuilt with `New`'s columns,
    /// types and key. For a type change, a split or merge of properties, a computed value.
    ///
    /// `Old` is a copy of the model as it was, declaring the same table (its `tableName` and
    /// `formerNames`); the table is first brought up to `Old`'s declaration. The transform
    /// then works in `New`'s names: it applies `New`'s renames (`formerNames`: its table, key,
    /// properties, links, join tables) and reads each of `Old`'s properties from its column,
    /// or from the column `New` declares was once called so — which also finds a column an
    /// earlier release already renamed. Link columns of `New`'s to-one relationships are
    /// copied from the same columns of the old table, and columns neither model has are kept
    /// as they are unless listed in `dropping`.
    ///
    /// ```swift
    /// // Release 2 renames Player to Athlete (playerId to athleteId) and prices in cents.
    /// try step.transform(V1.Player.self, to: Athlete.self) { old in
    ///     Athlete(athleteId: old.playerId, name: old.name, priceCents: old.cost.map { Int64(($0 * 100).rounded()) })
    /// }
    /// ```
    /// - Throws: what `body` throws; `ModelStoreError` `.decodingFailed` for a record that
    ///   is not an `Old`, `.constraintViolation` for records `New`'s key or NOT NULL refuse,
    ///   `.schemaMismatch` when `New`'s table is another, existing table.
    public func transform<Old: StoredModel, New: StoredModel>(
        _ old: Old.Type, to new: New.Type, dropping: [String] = [], _ body: (Old) throws -> New?
    ) throws {
        let connection = try active()
        // A savepoint: a helper that fails leaves nothing behind, even when the step
        // catches its error and goes on.
        try connection.inTransaction {
            let oldTable = try TableDescription.of(old)
            try SchemaRenamer.apply(oldTable, on: connection)
            let newTable = try TableDescription.of(new)
            let isRenamedTable = Self.isSameTable(newTable, renamedFrom: oldTable)
            var renamedEarlier: [String: String] = [:]
            if try SchemaRenamer.exists("table", oldTable.tableName, on: connection) {
                // A column of `Old`'s that an earlier release already renamed to `New`'s name is
                // read there: found before `Old`'s declaration adds an empty one under the old name.
                renamedEarlier = try renamedColumns(of: oldTable, by: newTable, in: columns(of: oldTable.tableName))
                try SchemaMigrator.prepare(oldTable, on: connection)
            } else {
                // No table, no records (`New`'s table is made in its new shape on first use) —
                // unless an earlier release already renamed it to `New`'s name.
                guard isRenamedTable, try SchemaRenamer.exists("table", newTable.tableName, on: connection) else { return }
            }
            // The transform works in `New`'s names; `Old`'s are found through its renames.
            if isRenamedTable { try SchemaRenamer.apply(newTable, on: connection) }
            try SchemaRenamer.applyToTargets(of: newTable, on: connection)
            let source =
                try SchemaRenamer.exists("table", oldTable.tableName, on: connection) ? oldTable.tableName : newTable.tableName
            let stored = try columns(of: source)
            // Each of `Old`'s columns as the table has it now; nil for one it never had.
            let read = oldTable.columns.map {
                renamedEarlier[$0.name] ?? SchemaRenamer.currentName(of: $0.name, in: stored, renamedBy: newTable)
            }
            // `Old`'s properties are what the closure turns into `New`; its link columns are not
            // (relationships are not loaded), so they are carried like any column `Old` lacks.
            let links = Set(oldTable.foreignKeyColumns.map { $0.name.lowercased() })
            var consumed = Set<String>()
            for (column, name) in zip(oldTable.columns, read) where !links.contains(column.name.lowercased()) {
                consumed.insert(column.name)
                if let name { consumed.insert(name) }
            }
            let rebuild = try TableRebuild(
                connection: connection, table: newTable, source: source, consumed: consumed, dropping: dropping, step: stepName)
            let carried = rebuild.oldColumns.map(\.name).filter { name in
                !consumed.contains { $0.lowercased() == name.lowercased() }
                    && !dropping.contains { $0.lowercased() == name.lowercased() }
            }
            try rebuild.run {
                let list = read.map { $0.map(quoted) ?? "NULL" } + carried.map(quoted)
                let select = try connection.makeStatement("SELECT " + list.joined(separator: ", ") + " FROM " + quoted(source))
                try copy(select, as: oldTable, into: rebuild, carried: carried, body)
            }
        }
    }

    /// Whether `New`'s table is `Old`'s, under the same name or one it declares it had.
    private static func isSameTable(_ newTable: TableDescription, renamedFrom oldTable: TableDescription) -> Bool {
        let oldName = oldTable.tableName.lowercased()
        return newTable.tableName.lowercased() == oldName || newTable.former.tables.contains { $0.lowercased() == oldName }
    }

    /// `Old`'s columns missing from `stored` that `New` has under a name it declares they had.
    private func renamedColumns(of oldTable: TableDescription, by newTable: TableDescription, in stored: [String]) -> [String: String] {
        var renamed: [String: String] = [:]
        let present = Set(stored.map { $0.lowercased() })
        for column in oldTable.columns where !present.contains(column.name.lowercased()) {
            if let current = SchemaRenamer.currentName(of: column.name, in: stored, renamedBy: newTable) {
                renamed[column.name] = current
            }
        }
        return renamed
    }

    /// Steps through `select` (`Old`'s columns, then the carried ones), passes each record to
    /// `body`, and inserts what it returns into the rebuild's new table.
    private func copy<Old: StoredModel, New: StoredModel>(
        _ select: Statement, as oldTable: TableDescription, into rebuild: TableRebuild, carried: [String],
        _ body: (Old) throws -> New?
    ) throws {
        let newTable = rebuild.table
        let targets = rebuild.targetColumns
        let insert = try connection.makeStatement(
            "INSERT INTO \(quoted(TableRebuild.temporaryName)) (" + targets.map(quoted).joined(separator: ", ") + ") VALUES ("
                + targets.map { _ in "?" }.joined(separator: ", ") + ")")
        let decoder = RowDecoder(statement: select, layout: oldTable.layout, keyPositions: oldTable.keyPositions)
        let encoder = RowEncoder(layout: newTable.layout)
        let carriedOffset = Int32(oldTable.columns.count)
        var carriedPosition: [String: Int32] = [:]
        for (index, name) in carried.enumerated() { carriedPosition[name.lowercased()] = carriedOffset + Int32(index) }
        try select.forEachRow {
            guard let model = try body(try decoder.decode(Old.self)) else { return }
            try encoder.encode(model)
            var values: [SQLValue] = []
            values.reserveCapacity(targets.count)
            for (position, column) in newTable.columns.enumerated() {
                if let value = encoder.value(at: position) {
                    values.append(value)
                } else if let index = carriedPosition[column.name.lowercased()] {
                    values.append(select.value(at: index))
                } else {
                    values.append(.null)
                }
            }
            for extra in rebuild.extras {
                values.append(carriedPosition[extra.name.lowercased()].map { select.value(at: $0) } ?? .null)
            }
            do {
                try insert.execute(values)
            } catch let error as ModelStoreError {
                throw error.naming(model: newTable.modelName)
            }
        }
    }
}
