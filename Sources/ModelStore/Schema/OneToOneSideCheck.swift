/// Which side of a one-to-one holds the link is derived from the two models' names (the
/// smaller of `Table.property` holds it), so a rename can move it to the other side. A file
/// written before such a rename keeps its links in the other table: adding an empty link
/// column here would lose every link silently. The check refuses that, before anything is
/// written.
extension SchemaMigrator {
    /// Throws when a one-to-one that `table` holds lacks its link columns while the target's
    /// table holds links for the inverse.
    static func checkOneToOneSides(_ table: TableDescription, _ existing: ExistingTable, on connection: Connection) throws {
        for relationship in table.relationships {
            guard case .foreignKeyHere(let positions, true) = relationship.storage, let inverse = relationship.inverse else { continue }
            let columns = positions.map { table.layout.columns[$0].name }
            guard columns.contains(where: { existing.columns[$0.lowercased()] == nil }) else { continue }
            let target = try KeyInfo.of(relationship.target)
            let inverseNames = target.formerNames.names(of: inverse)
            for targetTable in target.tableNames {
                let statement = try connection.makeStatement("PRAGMA main.table_info(\(quoted(targetTable)))")
                var stored = Set<String>()
                try statement.forEachRow { stored.insert(statement.string(at: 1).lowercased()) }
                guard !stored.isEmpty else { continue }
                for name in inverseNames {
                    let there = table.keyNames.map { "\(name)_\($0)" }
                    guard there.allSatisfy({ stored.contains($0.lowercased()) }) else { continue }
                    throw ModelStoreError(
                        .schemaMismatch,
                        "\(table.modelName).\(relationship.property) and \(target.modelName).\(inverse) are a one-to-one whose links this file keeps in \(targetTable) (\(there.joined(separator: ", "))), but under the current names ModelStore keeps them in \(table.tableName) (\(columns.joined(separator: ", "))): the side is chosen from the names, and a rename moved it. Nothing was changed, so no link is lost.",
                        model: table.modelName, column: relationship.property,
                        suggestion:
                            "Keep the names that put the link on its old side, or move the links in a migration step (add the new column, copy the keys across with UPDATE, then drop the old column)."
                    )
                }
            }
        }
    }
}
