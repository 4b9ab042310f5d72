/// The names a store's models give the tables and indexes ModelStore derives for them.
///
/// Derived names join parts with `_`, so different declarations can derive the same name:
/// `A.b_c ↔ Z.q_r` and `A_b.c ↔ Z_q.r` both make the join table `A_b_c__Z_q_r`, and their
/// links would mix. Names cannot be changed without breaking stored files, so each store
/// checks them instead: the first declaration to derive a name owns it, and any other that
/// derives it (SQLite compares names without case) is refused before anything is created.
struct SchemaNames {
    /// Lowercased name → what owns it, in words.
    private var owners: [String: String] = [:]
    /// Lowercased table name → the model whose table it is, or was (a former name).
    private var tables: [String: (model: String, id: ObjectIdentifier, qualified: String, isFormer: Bool)] = [:]

    /// Claims the join tables, their indexes and the declared indexes of `table`.
    mutating func claim(_ table: TableDescription) throws {
        try claimTableNames(table)
        var wanted: [(name: String, owner: String)] = table.indexes.map {
            ($0.name, "the index of \(table.modelName) on (\($0.columns.joined(separator: ", ")))")
        }
        for relationship in table.relationships {
            guard case .joinTable(let join) = relationship.storage else { continue }
            let sides = [
                join.ownerTable + "." + join.ownerColumns.joined(separator: ","),
                join.targetTable + "." + join.targetColumns.joined(separator: ","),
            ]
            // Both sides of one relationship derive the same owner, whichever is prepared first.
            let owner = "the join table linking \(sides.sorted().joined(separator: " and "))"
            let columns = join.ownerColumns + join.targetColumns
            if Set(columns.map { $0.lowercased() }).count != columns.count {
                throw ModelStoreError(
                    .invalidModel,
                    "\(table.modelName).\(relationship.property) derives a join table \(join.name) whose columns collide: \(columns.joined(separator: ", ")).",
                    model: table.modelName, column: relationship.property,
                    suggestion: "Rename the relationship's property (or the models' key properties) so the derived column names differ.")
            }
            wanted.append((join.name, owner))
            wanted.append(("index_" + join.name + "_target", owner))
        }
        var claimed = owners
        for (name, owner) in wanted {
            let key = name.lowercased()
            if let existing = claimed[key], existing != owner {
                throw ModelStoreError(
                    .invalidModel,
                    "\(table.modelName) derives the name \(name) for \(owner), but the store already uses it for \(existing): their records would mix.",
                    model: table.modelName, value: name,
                    suggestion:
                        "Rename one of the properties or tables involved (tableName, or the relationship's property) so the derived names differ."
                )
            }
            claimed[key] = owner
        }
        owners = claimed
    }

    /// A table belongs to one model: two models declaring it would mix their records, and a
    /// save of one would be refused for the other's columns. A former name must not be
    /// another model's table, current or former either: the store would hand one model's
    /// records to the other (whichever is used first).
    private mutating func claimTableNames(_ table: TableDescription) throws {
        var claimed = tables
        let names = [(table.tableName, false)] + table.former.tables.map { ($0, true) }
        for (name, isFormer) in names {
            let key = name.lowercased()
            if let existing = claimed[key], existing.id != table.modelID, !existing.isFormer, !isFormer {
                // Two types may share a name (nested in different scopes): then say which.
                let sameName = existing.model == table.modelName
                let first = sameName ? existing.qualified : existing.model
                let second = sameName ? table.qualifiedModelName : table.modelName
                throw ModelStoreError(
                    .invalidModel,
                    "\(second) declares the table \(name), which \(first) already declares in this store: their records would mix, and each would be refused for the other's columns.",
                    model: table.modelName, value: name,
                    suggestion:
                        "Give one of them its own tableName (static let tableName = \"…\"). To read the table in another shape, decode rows with store.findAll(_:sql:) into a Decodable type."
                )
            }
            if let existing = claimed[key], existing.id != table.modelID, existing.isFormer || isFormer {
                let mine = isFormer ? "a former name of \(table.modelName)'s table" : "the table of \(table.modelName)"
                let theirs = existing.isFormer ? "a former name of \(existing.model)'s table" : "the table of \(existing.model)"
                throw ModelStoreError(
                    .invalidModel,
                    "\(name) is \(mine) and \(theirs): a file holding \(name) could give one model's records to the other.",
                    model: table.modelName, value: name,
                    suggestion:
                        "Give the new model another tableName, or drop the formerNames declaration once no file under the old name remains."
                )
            }
            if claimed[key] == nil || !isFormer { claimed[key] = (table.modelName, table.modelID, table.qualifiedModelName, isFormer) }
        }
        tables = claimed
    }
}
