extension Session {
    /// Deletes the records of `M` that `condition` selects (SQL over `M`'s table, no
    /// `WHERE`), after applying each relationship's delete rule — all set-based, with
    /// subqueries, so no key is read into Swift. Returns how many `M` records went.
    ///
    /// `upstream` is the relationship a cascade arrived through (named on `M`) and the keys of
    /// the records it came from: they are being deleted too, so links to them deny nothing.
    func delete<M: StoredModel>(
        _ type: M.Type, where condition: SQLFragment, describing: @autoclosure () -> String, chain: Set<String> = [],
        upstream: (property: String, keys: SQLFragment)? = nil
    ) throws -> Int {
        let table = try table(type)
        let selected = SQLFragment("SELECT \(table.keyOrder) FROM \(table.quotedTable) WHERE ") + condition
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
        return connection.changes
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
