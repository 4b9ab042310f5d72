extension Session {
    /// Deletes the records of `M` that `condition` selects (SQL over `M`'s table, no
    /// `WHERE`), after applying each relationship's delete rule — all set-based, with
    /// subqueries, so no key is read into Swift. Returns how many `M` records went.
    ///
    /// `upstream` is the relationship a cascade arrived through (named on `M`) and the keys of
    /// the records it came from: they are being deleted too, so links to them deny nothing.
    func delete<M: StoredModel>(
        _ type: M.Type, where condition: SQLFragment, describing: @autoclosure () -> String, chain: Set<String> = [],
        upstream: (property: String, keys: SQLFragment)? = nil, selectsByKey: Bool = false
    ) throws -> Int {
        let table = try table(type)
        // The rules below change rows (a nullify clears links, a cascade deletes records,
        // even of this table), and a condition evaluated again after them could select other
        // records than before: a paged selection would slide onto records it never chose,
        // and one on a link column would lose records whose link a rule cleared. So the
        // selection is read once into a temp table and every later step uses that list. A
        // condition on the key alone selects the same records whatever the rules do.
        var condition = condition
        var scratch: String?
        // Delete callbacks may add or change records of this table: the set they saw is fixed too.
        // A delete whose rules change no row before the DELETE (none declared, or nullifies whose
        // links go with the record) needs no list: one DELETE on the condition's own index.
        let callbacks = ModelCallbacks.of(type).delete
        let rulesChangeRows = table.relationships.contains(where: \.ruleChangesRowsBeforeDelete)
        if !selectsByKey && (rulesChangeRows || callbacks) || callbacks && condition.sql == "TRUE" {
            // A name of its own: a callback's delete inside this one must not reuse (and drop) it.
            let name = "modelstore_deleting_\(Self.scratchTables.next())"
            let temp = connection.dialect.temporarySchema
            try connection.execute("DROP TABLE IF EXISTS \(temp).\(quoted(name))")
            if !connection.capabilities.createTableAsTakesParameters {
                // No parameters in CREATE TABLE … AS: make it empty, then fill it.
                try connection.execute(
                    "CREATE TEMP TABLE \(quoted(name)) AS SELECT \(table.keyOrder) FROM \(table.quotedTable) WITH NO DATA")
                let fill = SQLFragment("INSERT INTO \(quoted(name)) SELECT \(table.keyOrder) FROM \(table.quotedTable) WHERE ") + condition
                try connection.cachedStatement(fill.sql).execute(fill.values)
            } else {
                let fill =
                    SQLFragment("CREATE TEMP TABLE \(quoted(name)) AS SELECT \(table.keyOrder) FROM \(table.quotedTable) WHERE ")
                    + condition
                try connection.cachedStatement(fill.sql).execute(fill.values)
            }
            condition = SQLFragment("(\(table.keyOrder)) IN (SELECT * FROM \(temp).\(quoted(name)))")
            scratch = name
        }
        defer {
            if let scratch { try? connection.execute("DROP TABLE IF EXISTS \(connection.dialect.temporarySchema).\(quoted(scratch))") }
        }
        let selected = SQLFragment("SELECT \(table.keyOrder) FROM \(table.quotedTable) WHERE ") + condition
        // Delete callbacks see each record before its rules run and after it is gone.
        return try withDeleteCallbacks(type, table, where: condition) {
            try deleteSelected(type, table, selected, condition, describing: describing(), chain: chain, upstream: upstream)
        }
    }

    /// The rules and the DELETE of `delete(_:where:…)`, once the selection is fixed.
    private func deleteSelected<M: StoredModel>(
        _ type: M.Type, _ table: TableDescription, _ selected: SQLFragment, _ condition: SQLFragment,
        describing: @autoclosure () -> String, chain: Set<String>, upstream: (property: String, keys: SQLFragment)?
    ) throws -> Int {
        // Every selected record is gone at the end — a cascade back into this table may take
        // some before the final DELETE does — so the count is taken now. Where no rule changes
        // a row first, the DELETE's own count is that number.
        guard table.relationships.contains(where: \.ruleChangesRowsBeforeDelete) else {
            let delete = SQLFragment("DELETE FROM \(table.quotedTable) WHERE ") + condition
            try connection.cachedStatement(delete.sql).execute(delete.values)
            return connection.changes
        }
        let count = try scalar(SQLFragment("SELECT count(*) FROM (") + selected + SQLFragment(") AS \"modelstore_selected\""))
        for relationship in table.relationships {
            let edge = "\(table.modelName).\(relationship.property)"
            guard !chain.contains(edge) else { continue }
            func apply<T: StoredModel>(_ target: T.Type) throws {
                let excluded = upstream?.property == relationship.property ? upstream?.keys : nil
                try applyRule(
                    relationship, of: table, to: target, selected: selected, condition: condition,
                    describing: describing(), chain: chain.union([edge]), excluding: excluded)
            }
            try apply(relationship.target)
        }
        let delete = SQLFragment("DELETE FROM \(table.quotedTable) WHERE ") + condition
        try connection.cachedStatement(delete.sql).execute(delete.values)
        guard case .integer(let selectedCount)? = count else { return connection.changes }
        return Int(selectedCount)
    }

    private func applyRule<T: StoredModel>(
        _ relationship: RelationshipDescription, of table: TableDescription, to target: T.Type,
        selected: SQLFragment, condition: SQLFragment, describing: @autoclosure () -> String, chain: Set<String>,
        excluding upstreamKeys: SQLFragment?
    ) throws {
        guard relationship.deleteRule != .noAction else { return }
        let targetTable = try self.table(target)
        let targetKey = "(" + targetTable.keyOrder + ")"
        // The target records this relationship links to the selected records.
        let linked: SQLFragment
        switch relationship.storage {
        case .foreignKeyHere(let positions, _):
            guard relationship.deleteRule != .nullify else { return }  // the link goes with the record
            let columns = positions.map { quoted(table.columns[$0].name) }.joined(separator: ", ")
            linked =
                SQLFragment("\(targetKey) IN (SELECT \(columns) FROM \(table.quotedTable) WHERE ") + condition
                + SQLFragment(")")
        case .foreignKeyThere(let columns):
            linked = SQLFragment("(" + columns.map(quoted).joined(separator: ", ") + ") IN (") + selected + SQLFragment(")")
        case .joinTable(let join):
            guard relationship.deleteRule != .nullify else { return }  // join rows cascade away
            linked =
                SQLFragment(
                    "\(targetKey) IN (SELECT " + join.targetColumns.map(quoted).joined(separator: ", ")
                        + " FROM \(quoted(join.name)) WHERE ("
                        + join.ownerColumns.map(quoted).joined(separator: ", ") + ") IN (") + selected + SQLFragment("))")
        }
        switch relationship.deleteRule {
        case .deny:
            var exists = SQLFragment("SELECT EXISTS (SELECT 1 FROM \(targetTable.quotedTable) WHERE ") + linked
            if let upstreamKeys {
                exists = exists + SQLFragment(" AND NOT (\(targetKey) IN (") + upstreamKeys + SQLFragment("))")
            }
            exists = exists + SQLFragment(")")
            if try scalar(exists) == .integer(1) {
                throw ModelStoreError(
                    .constraintViolation,
                    "\(describing()) cannot be deleted: \(table.modelName).\(relationship.property) has delete rule deny, and related \(targetTable.modelName) records exist.",
                    model: table.modelName, column: relationship.property,
                    suggestion: "Unlink or delete the related \(targetTable.modelName) records first.")
            }
        case .cascade:
            _ = try delete(
                target, where: linked, describing: "\(targetTable.modelName) records", chain: chain,
                upstream: relationship.inverse.map { ($0, selected) })
        case .nullify:
            guard case .foreignKeyThere(let columns) = relationship.storage else { return }
            let update =
                SQLFragment(
                    "UPDATE \(targetTable.quotedTable) SET " + columns.map { "\(quoted($0)) = NULL" }.joined(separator: ", ") + " WHERE ")
                + linked
            try connection.cachedStatement(update.sql).execute(update.values)
        case .noAction:
            return
        }
    }
}

extension RelationshipDescription {
    /// Whether this relationship's delete rule reads or writes rows before the record's own
    /// DELETE: a cascade, a deny's check (a second statement must see the same selection) or a
    /// nullify that clears a column on the other side. A nullify whose link is on this record,
    /// or in a join table whose rows the record's foreign key takes along, does nothing until
    /// the DELETE itself.
    var ruleChangesRowsBeforeDelete: Bool {
        switch (deleteRule, storage) {
        case (.noAction, _), (.nullify, .foreignKeyHere), (.nullify, .joinTable): return false
        default: return true
        }
    }
}

extension Session {
    /// Numbers the scratch tables of deletes, which nest when a callback deletes.
    static let scratchTables = Counter()
}
