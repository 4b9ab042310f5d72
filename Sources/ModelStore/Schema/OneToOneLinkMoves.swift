/// Which side of a one-to-one holds the link is derived from the two models' names (the
/// smaller of `Table.property` holds it, unless one side names its columns), so a rename can
/// move it to the other side. A file written before such a rename keeps its links in the
/// other table: the store moves them across, in the transaction that adds the new link
/// columns — an empty new column would lose every link silently. The old column stays, as
/// every column the model no longer uses does (the migration plan lists it).
extension SchemaMigrator {
    /// Links of a one-to-one to copy from the other side's old columns into `table`'s new ones.
    struct LinkMove {
        let sql: String
    }

    /// The moves `table` needs: for each one-to-one it holds whose link columns it lacks,
    /// while the target's table still has link columns for the inverse (under current or
    /// former names). Several candidate old columns are refused: the store cannot tell which.
    static func oneToOneMoves(_ table: TableDescription, _ existing: ExistingTable, on connection: Connection) throws -> [LinkMove] {
        // Moving links between sides is a SQLite-file migration; a server store's tables
        // were made by this version's declarations (renames are refused there).
        guard connection.capabilities.sqliteCatalog else { return [] }
        var moves: [LinkMove] = []
        for relationship in table.relationships {
            guard case .foreignKeyHere(let positions, true) = relationship.storage, let inverse = relationship.inverse else { continue }
            let columns = positions.map { table.layout.columns[$0].name }
            guard columns.allSatisfy({ existing.columns[$0.lowercased()] == nil }) else { continue }
            let target = try KeyInfo.of(relationship.target)
            // The old link columns: the inverse's name (or a former one) and this model's key
            // names (or former ones).
            let ownKeys = table.keyNames.map { [$0] + (table.former.columns[$0] ?? []) }
            let inverseNames = target.formerNames.names(of: inverse)
            var candidates: [(table: String, links: [String], key: [String])] = []
            for targetTable in target.tableNames {
                let statement = try connection.makeStatement("PRAGMA main.table_info(\(quoted(targetTable)))")
                var stored: [String: String] = [:]
                try statement.forEachRow { stored[statement.string(at: 1).lowercased()] = statement.string(at: 1) }
                guard !stored.isEmpty else { continue }
                // The target's key as stored (it may still have a former name).
                let key = target.keyNames.indices.compactMap { index in
                    target.keyNames(at: index).first { stored[$0.lowercased()] != nil }
                }
                guard key.count == target.keyNames.count else { continue }
                var combinations: [[String]] = [[]]
                for options in [inverseNames] + ownKeys {
                    combinations = combinations.flatMap { prefix in options.map { prefix + [$0] } }
                }
                for combination in combinations {
                    let links = combination.dropFirst().map { "\(combination[0])_\($0)" }
                    if links.allSatisfy({ stored[$0.lowercased()] != nil }), !candidates.contains(where: { $0.links == links }) {
                        candidates.append((targetTable, links, key))
                    }
                }
            }
            guard let found = candidates.first else { continue }
            guard candidates.count == 1 else {
                throw ModelStoreError(
                    .schemaMismatch,
                    "\(table.modelName).\(relationship.property) and \(target.modelName).\(inverse) are a one-to-one whose links, after a rename, move to \(table.tableName); but the file has several old link columns (\(candidates.map { $0.table + "." + $0.links.joined(separator: ",") }.joined(separator: "; "))) and the store cannot tell which holds them. Nothing was changed.",
                    model: table.modelName, column: relationship.property,
                    suggestion: "Drop the stale columns in a migration step, or move the links there yourself.")
            }
            let match = zip(found.links, table.keyNames).map { "o.\(quoted($0)) = \(table.quotedTable).\(quoted($1))" }
                .joined(separator: " AND ")
            let from = "FROM \(quoted(found.table)) AS o WHERE \(match)"
            moves.append(
                LinkMove(
                    sql: "UPDATE \(table.quotedTable) SET (\(columns.map(quoted).joined(separator: ", "))) = (SELECT "
                        + found.key.map { "o.\(quoted($0))" }.joined(separator: ", ") + " \(from)) WHERE EXISTS (SELECT 1 \(from))"))
        }
        return moves
    }
}
