/// Identifies a record across tables: its model type and key.
struct RecordID: Hashable {
    let type: ObjectIdentifier
    let key: [SQLValue]
}

/// A decoded record with what the loader needs besides the model: its key and the values of
/// its link columns.
struct LoadedRecord<M: StoredModel> {
    var model: M
    let id: RecordID
    /// Link (foreign-key) column values, in layout order.
    let links: [SQLValue]
}

/// Fills the relationships of decoded records: one query (or one chunked query) per
/// relationship per path, never one per record.
final class GraphLoader {
    private let session: Session
    /// Every record decoded in this load, so each is decoded once and reused.
    private var decoded: [RecordID: (model: any StoredModel, links: [SQLValue])] = [:]
    /// Records whose relationships this load fills; reached again, they appear shallow.
    private var expanded: Set<RecordID> = []

    init(session: Session) {
        self.session = session
    }

    /// Fills the relationships `plan` names on `records` (the roots of this load).
    func load<M: StoredModel>(_ records: [LoadedRecord<M>], table: TableDescription, plan: LoadOptions.Plan) throws -> [M] {
        var records = records
        try Self.validate(plan, for: M.self, session: session)
        for record in records {
            decoded[record.id] = (record.model, record.links)
            expanded.insert(record.id)
        }
        try fill(&records, table: table, plan: plan, arrival: nil)
        return records.map(\.model)
    }

    /// The relationship by which records were reached: its inverse on them, and each
    /// record's parent.
    private struct Arrival {
        let inverse: String?
        let parents: [RecordID: RecordID]
    }

    private func fill<M: StoredModel>(
        _ records: inout [LoadedRecord<M>], table: TableDescription, plan: LoadOptions.Plan, arrival: Arrival?
    ) throws {
        guard !records.isEmpty else { return }
        let declarations = M.relationships
        for (index, relationship) in table.relationships.enumerated() {
            let declaration = declarations[index]
            if let arrival, arrival.inverse == relationship.property {
                // Never walk back: a to-one inverse is the parent's stored values.
                guard relationship.kind == .toOne else { continue }
                for position in records.indices {
                    if let parent = arrival.parents[records[position].id], let value = decoded[parent] {
                        declaration.write(&records[position].model, [value.model])
                    }
                }
                continue
            }
            guard let childPlan = plan.child(relationship.property) else { continue }
            try load(relationship, declaration, target: relationship.target, into: &records, table: table, plan: childPlan)
        }
    }

    private func load<M: StoredModel, T: StoredModel>(
        _ relationship: RelationshipDescription, _ declaration: Relationship<M>, target: T.Type,
        into records: inout [LoadedRecord<M>], table: TableDescription, plan: LoadOptions.Plan
    ) throws {
        let targetTable = try session.table(T.self)
        let childrenOf = try fetch(relationship, of: records, table: table, targetTable: targetTable, as: T.self)

        // Records reached for the first time are filled further; the rest appear shallow.
        var fresh: [LoadedRecord<T>] = []
        var parents: [RecordID: RecordID] = [:]
        for record in records {
            for child in childrenOf[record.id] ?? [] where !expanded.contains(child) {
                expanded.insert(child)
                let value = decoded[child]!
                fresh.append(LoadedRecord(model: value.model as! T, id: child, links: value.links))
                parents[child] = record.id
            }
        }
        if !fresh.isEmpty, !plan.isEmpty || targetTable.relationships.contains(where: { $0.property == relationship.inverse }) {
            try fill(&fresh, table: targetTable, plan: plan, arrival: Arrival(inverse: relationship.inverse, parents: parents))
        }
        var filled: [RecordID: T] = [:]
        filled.reserveCapacity(fresh.count)
        for record in fresh { filled[record.id] = record.model }

        for position in records.indices {
            let children = childrenOf[records[position].id] ?? []
            let values: [any StoredModel] = children.map { filled[$0] ?? (decoded[$0]!.model as! T) }
            if relationship.kind == .toMany || !values.isEmpty {
                declaration.write(&records[position].model, values)
            }
        }
    }

    // MARK: Fetching

    /// The target records of each parent, decoded (or taken from this load's cache).
    private func fetch<M: StoredModel, T: StoredModel>(
        _ relationship: RelationshipDescription, of records: [LoadedRecord<M>], table: TableDescription,
        targetTable: TableDescription, as type: T.Type
    ) throws -> [RecordID: [RecordID]] {
        var childrenOf: [RecordID: [RecordID]] = [:]
        let targetType = ObjectIdentifier(T.self)
        let targetKey = targetTable.keyNames.map { "t." + quoted($0) }
        switch relationship.storage {
        case .foreignKeyHere(let positions, _):
            let first = table.columns.count - table.foreignKeyColumns.count
            var wanted = Set<[SQLValue]>()
            for record in records {
                let link = positions.map { record.links[$0 - first] }
                guard !link.contains(where: \.isNull) else { continue }
                childrenOf[record.id] = [RecordID(type: targetType, key: link)]
                if decoded[RecordID(type: targetType, key: link)] == nil { wanted.insert(link) }
            }
            for condition in Self.membership(targetKey, Array(wanted)) {
                let sql = SQLFragment("SELECT \(targetTable.prefixedSelectList("t")) FROM \(targetTable.quotedTable) t WHERE ") + condition
                _ = try readRows(T.self, sql, targetTable, prefix: 0)
            }
        case .foreignKeyThere(let columns):
            let links = columns.map { "t." + quoted($0) }
            for condition in Self.membership(links, records.map(\.id.key)) {
                let sql = SQLFragment("SELECT \(links.joined(separator: ", ")), \(targetTable.prefixedSelectList("t")) FROM \(targetTable.quotedTable) t WHERE ")
                    + condition + SQLFragment(" ORDER BY " + targetKey.joined(separator: ", "))
                for (parentKey, child) in try readRows(T.self, sql, targetTable, prefix: columns.count) {
                    childrenOf[RecordID(type: ObjectIdentifier(M.self), key: parentKey), default: []].append(child)
                }
            }
        case .joinTable(let join):
            let owner = join.ownerColumns.map { "j." + quoted($0) }
            let on = zip(join.targetColumns, targetTable.keyNames).map { "t.\(quoted($1)) = j.\(quoted($0))" }
                .joined(separator: " AND ")
            for condition in Self.membership(owner, records.map(\.id.key)) {
                let sql = SQLFragment(
                    "SELECT \(owner.joined(separator: ", ")), \(targetTable.prefixedSelectList("t")) FROM \(quoted(join.name)) j JOIN \(targetTable.quotedTable) t ON \(on) WHERE ")
                    + condition + SQLFragment(" ORDER BY " + targetKey.joined(separator: ", "))
                for (parentKey, child) in try readRows(T.self, sql, targetTable, prefix: join.ownerColumns.count) {
                    childrenOf[RecordID(type: ObjectIdentifier(M.self), key: parentKey), default: []].append(child)
                }
            }
        }
        return childrenOf
    }

    /// Runs a query whose rows are `prefix` extra columns followed by the target table's
    /// columns; decodes each target record unless this load already has it.
    private func readRows<T: StoredModel>(
        _ type: T.Type, _ sql: SQLFragment, _ table: TableDescription, prefix: Int
    ) throws -> [(prefix: [SQLValue], child: RecordID)] {
        let statement = try session.connection.cachedStatement(sql.sql)
        defer { statement.reset() }
        try statement.bind(sql.values)
        let offset = Int32(prefix)
        let mapping = prefix == 0 ? nil : (0..<table.columns.count).map { Int32($0) + offset }
        let decoder = RowDecoder(statement: statement, layout: table.layout, keyPositions: table.keyPositions, mapping: mapping)
        let first = table.columns.count - table.foreignKeyColumns.count
        var rows: [(prefix: [SQLValue], child: RecordID)] = []
        while try statement.step() {
            let key = table.keyPositions.map { statement.value(at: offset + Int32($0)) }
            let id = RecordID(type: ObjectIdentifier(T.self), key: key)
            if decoded[id] == nil {
                let links = (first..<table.columns.count).map { statement.value(at: offset + Int32($0)) }
                decoded[id] = (try decoder.decode(T.self), links)
            }
            rows.append(((0..<offset).map { statement.value(at: $0) }, id))
        }
        return rows
    }

    /// `(columns) IN (…)` conditions covering `keys`, chunked to stay within SQLite's limits.
    static func membership(_ columns: [String], _ keys: [[SQLValue]]) -> [SQLFragment] {
        guard !keys.isEmpty else { return [] }
        if columns.count == 1 {
            let values = keys.map { $0[0] }
            if values.count > QueryCompiler.inlineListLimit, let json = try? QueryCompiler.jsonArray(values) {
                return [SQLFragment("\(columns[0]) IN (SELECT value FROM json_each(?))", [.text(json)])]
            }
            return stride(from: 0, to: values.count, by: QueryCompiler.inlineListLimit).map { start in
                let chunk = Array(values[start..<min(start + QueryCompiler.inlineListLimit, values.count)])
                return SQLFragment("\(columns[0]) IN (" + Array(repeating: "?", count: chunk.count).joined(separator: ", ") + ")", chunk)
            }
        }
        let tuple = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        let chunkSize = max(1, 900 / columns.count)
        return stride(from: 0, to: keys.count, by: chunkSize).map { start in
            let chunk = keys[start..<min(start + chunkSize, keys.count)]
            return SQLFragment(
                "(\(columns.joined(separator: ", "))) IN (VALUES " + Array(repeating: tuple, count: chunk.count).joined(separator: ", ") + ")",
                chunk.flatMap { $0 })
        }
    }

    // MARK: Checking paths

    /// Throws `.invalidQuery` for a path naming a relationship the model does not declare.
    static func validate<M: StoredModel>(_ plan: LoadOptions.Plan, for type: M.Type, session: Session) throws {
        guard case .paths(let children) = plan else { return }
        let table = try session.table(type)
        for (name, child) in children {
            guard let relationship = table.relationship(named: name) else {
                let known = table.relationships.map(\.property).joined(separator: ", ")
                throw ModelStoreError(
                    .invalidQuery,
                    "\(table.modelName) has no relationship '\(name)' to load (its relationships: \(known.isEmpty ? "none" : known)).",
                    model: table.modelName, column: name)
            }
            func check<T: StoredModel>(_ target: T.Type) throws { try validate(child, for: target, session: session) }
            try check(relationship.target)
        }
    }
}

extension TableDescription {
    /// `t."a", t."b", …` — every column, prefixed with a table alias.
    func prefixedSelectList(_ alias: String) -> String {
        columns.map { alias + "." + quoted($0.name) }.joined(separator: ", ")
    }
}
