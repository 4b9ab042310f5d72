/// Saves a model with the related models it carries, and their links, inside the caller's
/// transaction. A relationship that is nil leaves stored links alone; one that is set (even
/// to `[]`) is the complete set, and links not in it are removed.
final class GraphSaver {
    private let session: Session
    /// Records this save has written (by model type and key), so a graph that refers back
    /// to itself terminates.
    private var visited: Set<Visit> = []

    private struct Visit: Hashable {
        let type: ObjectIdentifier
        let key: RecordKey
    }

    /// Encoders by model type, reused (their keyed containers are cached) and taken out
    /// while in use, since a save of one type may recurse into another save of it.
    private var encoders: [ObjectIdentifier: [RowEncoder]] = [:]

    init(session: Session) {
        self.session = session
    }

    /// Starts the next element of a batch: each element's graph is saved whole, so records
    /// written for an earlier element are written again (merging in array order).
    func startElement() {
        visited.removeAll(keepingCapacity: true)
    }

    private func withEncoder<T>(_ table: TableDescription, _ type: ObjectIdentifier, _ body: (RowEncoder) throws -> T) rethrows -> T {
        let encoder = encoders[type]?.popLast() ?? RowEncoder(layout: table.layout)
        defer { encoders[type, default: []].append(encoder) }
        return try body(encoder)
    }

    /// Saves `model` and its graph. `links` are values for the model's link columns set by
    /// the parent that carries it (they win over the model's own).
    @discardableResult
    func save<M: StoredModel>(
        _ model: M, mode: SaveMode, clearing: [String] = [], links: [Int: SQLValue] = [:]
    ) throws -> (outcome: SaveOutcome, key: [SQLValue]) {
        let table = try session.table(M.self)
        let owner = ObjectIdentifier(M.self)
        return try withEncoder(table, owner) { row in
            try save(model, row: row, table: table, owner: owner, mode: mode, clearing: clearing, links: links)
        }
    }

    private func save<M: StoredModel>(
        _ model: M, row: RowEncoder, table: TableDescription, owner: ObjectIdentifier, mode: SaveMode,
        clearing: [String], links: [Int: SQLValue]
    ) throws -> (outcome: SaveOutcome, key: [SQLValue]) {
        try row.encode(model)
        let clearedRelationships = Set(clearing.filter { table.relationship(named: $0) != nil })
        for name in clearing where !clearedRelationships.contains(name) {
            row.setNull(at: try table.clearablePosition(name, carried: row))
        }
        let key = try table.key(of: row)
        let id = Visit(type: owner, key: RecordKey(key))
        let declarations = M.relationships

        guard visited.insert(id).inserted else {
            // Written earlier in this save: only a parent's link may still need writing.
            if !links.isEmpty { try writeLinks(links, key: key, table: table, owner: owner) }
            return (.updated, key)
        }

        // To-ones stored here: save the target first, then record its key in this row.
        for (index, relationship) in table.relationships.enumerated() {
            guard case .foreignKeyHere(let positions, _) = relationship.storage else { continue }
            let related = row.carries(relationship.property) ? declarations[index].read(model) : nil
            if clearedRelationships.contains(relationship.property) {
                try requireNil(related, relationship, table)
                for position in positions { row.setNull(at: position) }
            } else if let target = related?.first {
                let targetKey = try saveAny(target)
                for (position, value) in zip(positions, targetKey) { row.set(value, at: position) }
            }
        }
        for (position, value) in links { row.set(value, at: position) }
        let outcome = try session.write(row, into: table, owner: owner, mode: mode)

        // Relationships stored elsewhere: the targets' link columns or a join table. A record
        // this save inserted has no links yet, so there is nothing to unlink.
        let isNew = outcome == .inserted
        for (index, relationship) in table.relationships.enumerated() {
            var related = row.carries(relationship.property) ? declarations[index].read(model) : nil
            if clearedRelationships.contains(relationship.property) {
                try requireNil(related, relationship, table)
                related = []
            }
            guard let related else { continue }
            switch relationship.storage {
            case .foreignKeyHere:
                continue
            case .foreignKeyThere(let columns):
                try link(related, through: columns, to: key, relationship: relationship, isNew: isNew)
            case .joinTable(let join):
                try link(related, through: join, to: key, isNew: isNew)
            }
        }
        return (outcome, key)
    }

    /// Saves a model whose type is known only at run time, with values for its link
    /// columns; returns its key.
    private func saveAny(_ model: any StoredModel, links: [Int: SQLValue] = [:]) throws -> [SQLValue] {
        func open<T: StoredModel>(_ model: T) throws -> [SQLValue] {
            try save(model, mode: .upsert, links: links).key
        }
        return try open(model)
    }

    /// Makes `related` exactly the records whose `columns` hold `key`. A one-to-one's link
    /// is unique, so the others are unlinked first; a to-many saves and links the related
    /// records first and unlinks the rest after, knowing their keys without encoding twice.
    private func link(
        _ related: [any StoredModel], through columns: [String], to key: [SQLValue], relationship: RelationshipDescription,
        isNew: Bool
    ) throws {
        func targetTable<T: StoredModel>(_ type: T.Type) throws -> TableDescription { try session.table(type) }
        let target = try targetTable(relationship.target)
        var assigned: [Int: SQLValue] = [:]
        for (column, value) in zip(columns, key) { assigned[target.layout.position(of: column)!] = value }
        let linked = columns.map(quoted)
        func unlinkOthers(keeping keys: [[SQLValue]]) throws {
            guard !isNew else { return }
            var sql = SQLFragment(
                "UPDATE \(target.quotedTable) SET " + linked.map { "\($0) = NULL" }.joined(separator: ", ") + " WHERE "
                    + linked.map { "\($0) = ?" }.joined(separator: " AND "), key)
            if !keys.isEmpty {
                sql = sql + SQLFragment(" AND NOT (") + Self.anyOf(target.keyNames.map(quoted), keys) + SQLFragment(")")
            }
            try session.connection.cachedStatement(sql.sql).execute(sql.values)
        }
        if relationship.kind == .toOne {
            try unlinkOthers(keeping: try related.map(keyOf))
            for model in related { _ = try saveAny(model, links: assigned) }
        } else {
            var keys: [[SQLValue]] = []
            keys.reserveCapacity(related.count)
            for model in related { keys.append(try saveAny(model, links: assigned)) }
            try unlinkOthers(keeping: keys)
        }
    }

    /// Makes `related` exactly the records the join table links to `key`.
    private func link(_ related: [any StoredModel], through join: JoinTableDescription, to key: [SQLValue], isNew: Bool) throws {
        var targets: [[SQLValue]] = []
        for model in related { targets.append(try saveAny(model)) }
        let owner = join.ownerColumns.map(quoted)
        let target = join.targetColumns.map(quoted)
        if !isNew { try unlink(join, owner: owner, target: target, key: key, keeping: targets) }
        let insert = try session.connection.cachedStatement(
            "INSERT INTO \(quoted(join.name)) (" + (owner + target).joined(separator: ", ") + ") VALUES ("
                + Array(repeating: "?", count: owner.count + target.count).joined(separator: ", ") + ") ON CONFLICT DO NOTHING")
        for targetKey in targets { try insert.execute(key + targetKey) }
    }

    private func unlink(_ join: JoinTableDescription, owner: [String], target: [String], key: [SQLValue], keeping targets: [[SQLValue]]) throws {
        var remove = SQLFragment(
            "DELETE FROM \(quoted(join.name)) WHERE " + owner.map { "\($0) = ?" }.joined(separator: " AND "), key)
        if !targets.isEmpty {
            remove = remove + SQLFragment(" AND NOT (") + Self.anyOf(target, targets) + SQLFragment(")")
        }
        try session.connection.cachedStatement(remove.sql).execute(remove.values)
    }

    private func keyOf(_ model: any StoredModel) throws -> [SQLValue] {
        func open<T: StoredModel>(_ model: T) throws -> [SQLValue] {
            let table = try session.table(T.self)
            return try withEncoder(table, ObjectIdentifier(T.self)) { row in
                try row.encode(model)
                return try table.key(of: row)
            }
        }
        return try open(model)
    }

    private func writeLinks(_ links: [Int: SQLValue], key: [SQLValue], table: TableDescription, owner: ObjectIdentifier) throws {
        let positions = links.keys.sorted()
        let sql = "UPDATE \(table.quotedTable) SET "
            + positions.map { quoted(table.columns[$0].name) + " = ?" }.joined(separator: ", ") + " WHERE \(table.keyCondition)"
        try session.connection.cachedStatement(sql).execute(positions.map { links[$0]! } + key)
    }

    private func requireNil(_ related: [any StoredModel]?, _ relationship: RelationshipDescription, _ table: TableDescription) throws {
        guard let related, !related.isEmpty else { return }
        throw ModelStoreError(
            .invalidQuery,
            "\(table.modelName).\(relationship.property) is listed to be cleared, but the model carries \(related.count) related model(s) for it.",
            model: table.modelName, column: relationship.property,
            suggestion: "Set the relationship to nil, or do not list it in clearing:.")
    }

    /// `(columns) IN (VALUES …)` or `column IN (…)`, for the keys a link keeps.
    static func anyOf(_ columns: [String], _ keys: [[SQLValue]]) -> SQLFragment {
        let conditions = GraphLoader.membership(columns, keys)
        return SQLFragment(
            conditions.map { "(" + $0.sql + ")" }.joined(separator: " OR "), conditions.flatMap(\.values))
    }
}
