/// A batch of graphs written level by level where a statement is a round trip (a server):
/// every root in multi-row upserts, then every related record of each to-many in multi-row
/// upserts, then one statement for the links the walk would have removed — instead of a
/// round trip per record. It gives the walk's answers: the same records, links and counts,
/// with elements merging in array order.
///
/// It takes only batches whose shape it can reproduce exactly: roots and related records
/// with keys of their own, no save callbacks, unique index, collated key or one-to-one held
/// there; roots carrying only to-manys stored in the related table, each to another model
/// and no two to the same one; related records carrying no relationship of their own. Any
/// other batch, and any batch whose encoding or validation fails (so the walk names the
/// failure as it always does), goes to the walk.
extension Session {
    func saveGraphsInLevels<M: StoredModel>(_ models: [M], into table: TableDescription) throws -> BatchSaveOutcome? {
        guard models.count > 1, connection.capabilities.rowLocksInKeyOrder, table.writesTogether(M.self), table.hasIntegerKeys
        else { return nil }
        let row = RowEncoder(layout: table.layout)
        let declarations = M.relationships
        var roots: [(values: [SQLValue], present: ColumnMask, offset: Int)] = []
        roots.reserveCapacity(models.count)
        var rootKeys: [[SQLValue]] = []
        rootKeys.reserveCapacity(models.count)
        // Per carried relationship (by index): each element's related models, in array order.
        var carried: [Int: [(element: Int, models: [any StoredModel])]] = [:]
        for (offset, model) in models.enumerated() {
            guard (try? row.encode(model)) != nil else { return nil }
            for (index, relationship) in table.relationships.enumerated() {
                guard row.carries(relationship.property), let related = declarations[index].read(model) else { continue }
                guard relationship.kind == .toMany, case .foreignKeyThere = relationship.storage,
                    ObjectIdentifier(relationship.target) != ObjectIdentifier(M.self)
                else { return nil }
                carried[index, default: []].append((offset, related))
            }
            guard let key = try? table.key(of: row), (try? prepareForWriting(model, into: row, table, callbacks: false)) != nil
            else { return nil }
            rootKeys.append(key)
            roots.append((row.values, row.present, offset))
        }
        let targets = carried.keys.map { ObjectIdentifier(table.relationships[$0].target) }
        guard Set(targets).count == targets.count else { return nil }

        var levels: [RelatedLevel] = []
        for index in carried.keys.sorted() {
            let relationship = table.relationships[index]
            guard case .foreignKeyThere(let columns) = relationship.storage,
                let level = try RelatedLevel.encode(carried[index]!, through: columns, of: rootKeys, relationship, self)
            else { return nil }
            levels.append(level)
        }

        // In a savepoint: where the server gives keys back otherwise than they were bound (a
        // column type another tool chose), the levels cannot tell the rows apart, and the
        // batch is undone and walked instead.
        do {
            return try connection.withSavepoint {
                // Level 0: the roots.
                var result = BatchSaveOutcome(inserted: 0, updated: 0)
                var rootOutcomes = Array(repeating: SaveOutcome.unchanged, count: models.count)
                _ = try upsertRowsInKeyOrder(
                    &roots, into: table, owner: ObjectIdentifier(M.self),
                    failure: { error, offset, key in error.inBatch(at: offset, of: models.count, table: table, key: key) },
                    outcome: { rootOutcomes[$0] = $1 })
                var relatedChanged = Array(repeating: false, count: models.count)
                for var level in levels {
                    try level.write(roots: rootKeys, rootOutcomes: rootOutcomes, changed: &relatedChanged, into: &result, self) {
                        error, element in
                        error.inBatch(at: element, of: models.count, table: table, key: rootKeys[element])
                    }
                }
                for (outcome, changed) in zip(rootOutcomes, relatedChanged) { result.count(outcome.counting(related: changed)) }
                return result
            }
        } catch is UnmatchedReturnedKeys {
            return nil
        }
    }
}

extension TableDescription {
    /// Whether the key is integers, which the levels match as the server gives them back
    /// (checked again on every returned key).
    var hasIntegerKeys: Bool {
        keyPositions.allSatisfy { columns[$0].storage == .integer && !columns[$0].holdsDecimal }
    }

    /// Whether `M`'s records can be written in multi-row statements with the walk's answers:
    /// keys of their own, and nothing that needs a record at a time.
    func writesTogether<M: StoredModel>(_ type: M.Type) -> Bool {
        !assignsKeys && !hasUniqueIndex && !hasCollatedKey && !ModelCallbacks.of(M.self).save

            && !relationships.contains {
                if case .foreignKeyHere(_, unique: true) = $0.storage { return true }
                return false
            }
    }
}

/// The related records of one to-many, for every element of a batch.
private struct RelatedLevel {
    let table: TableDescription
    let owner: ObjectIdentifier
    /// The link columns in the related table, and their positions.
    let columns: [String]
    /// Rows to write, each with a running offset; `elements[offset]` is its element.
    var rows: [(values: [SQLValue], present: ColumnMask, offset: Int)]
    let elements: [Int]
    /// Per element carrying the relationship: the keys it lists, first listing first, and
    /// whether it lists one twice.
    let listed: [(element: Int, keys: [[SQLValue]], repeats: Bool)]

    /// The level, or nil when a related model needs the walk (or fails to encode, which the
    /// walk then reports).
    static func encode(
        _ carried: [(element: Int, models: [any StoredModel])], through columns: [String], of rootKeys: [[SQLValue]],
        _ relationship: RelationshipDescription, _ session: Session
    ) throws -> RelatedLevel? {
        func open<T: StoredModel>(_ type: T.Type) throws -> RelatedLevel? {
            let table = try session.table(T.self)
            // A change date the walk moves when it unlinks a record and a later element links
            // it again (the levels write it once, unchanged) needs the walk.
            guard table.writesTogether(T.self), table.hasIntegerKeys, table.updatedPosition == nil else { return nil }
            let positions = columns.map { table.layout.position(of: $0)! }
            let row = RowEncoder(layout: table.layout)
            var rows: [(values: [SQLValue], present: ColumnMask, offset: Int)] = []
            var elements: [Int] = []
            var listed: [(element: Int, keys: [[SQLValue]], repeats: Bool)] = []
            for (element, models) in carried {
                var keys: [[SQLValue]] = []
                var repeats = false
                var seen = Set<RecordKey>()
                for model in models {
                    guard let model = model as? T, (try? row.encode(model)) != nil else { return nil }
                    for (relationship, declaration) in zip(table.relationships, T.relationships)
                    where row.carries(relationship.property) && declaration.read(model) != nil {
                        return nil
                    }
                    guard let key = try? table.key(of: row) else { return nil }
                    // Listed twice in one element: the walk writes it once and only links the
                    // second listing, to the same record.
                    guard seen.insert(RecordKey(key)).inserted else {
                        repeats = true
                        continue
                    }
                    keys.append(key)
                    guard (try? session.prepareForWriting(model, into: row, table, callbacks: false)) != nil
                    else { return nil }
                    for (position, value) in zip(positions, rootKeys[element]) { row.set(value, at: position) }
                    rows.append((row.values, row.present, rows.count))
                    elements.append(element)
                }
                listed.append((element, keys, repeats))
            }
            return RelatedLevel(
                table: table, owner: ObjectIdentifier(T.self), columns: columns, rows: rows, elements: elements, listed: listed)
        }
        return try open(relationship.target)
    }

    /// Writes the level: the related records (linked to their element's root), then clears
    /// the links the walk would have removed, noting which elements wrote something.
    mutating func write(
        roots: [[SQLValue]], rootOutcomes: [SaveOutcome], changed: inout [Bool], into result: inout BatchSaveOutcome,
        _ session: Session, failure: (ModelStoreError, _ element: Int) -> ModelStoreError
    ) throws {
        let table = self.table
        let elements = self.elements
        // Before writing: which stored records are linked to a root that carries the list
        // (a root just inserted has none).
        let linkedRoots = listed.map(\.element).filter { rootOutcomes[$0] != .inserted }.map { roots[$0] }
        var linkOf: [RecordKey: RecordKey] = [:]
        var valuesOf: [RecordKey: [SQLValue]] = [:]
        var linkedTo: [RecordKey: Set<RecordKey>] = [:]
        let keyCount = table.keyPositions.count
        let linkList = columns.map(quoted).joined(separator: ", ")
        let keyList = table.keyNames.map(quoted).joined(separator: ", ")
        for condition in GraphLoader.membership(columns.map(quoted), linkedRoots, dialect: session.connection.dialect) {
            let sql = SQLFragment("SELECT \(keyList), \(linkList) FROM \(table.quotedTable) WHERE ") + condition
            let statement = try session.connection.cachedStatement(sql.sql)
            try statement.forEachRow(sql.values) {
                let values = statement.values(count: keyCount)
                // Integers as bound, or a column type another tool chose: the walk then.
                for value in statement.values(count: keyCount + columns.count) {
                    guard case .integer = value else { throw Session.UnmatchedReturnedKeys() }
                }
                let key = RecordKey(values)
                valuesOf[key] = values
                let link = RecordKey(statement.values(from: Int32(keyCount), count: columns.count))
                linkOf[key] = link
                linkedTo[link, default: []].insert(key)
            }
        }

        var outcomes = Array(repeating: SaveOutcome.unchanged, count: rows.count)
        let written = try session.upsertRowsInKeyOrder(
            &rows, into: table, owner: owner,
            failure: { error, offset, key in
                failure(error.explainingDrift(of: table).naming(model: table.modelName, key: key.map(table.describeKey)), elements[offset])
            },
            outcome: { outcomes[$0] = $1 })
        result.inserted += written.inserted
        result.updated += written.updated
        result.unchanged += written.unchanged

        // The walk, replayed on the links alone: each element links what it lists, then
        // unlinks what is still linked to its root and not listed. Where the walk unlinked a
        // record that a later element links again, its write changed the record (the link
        // went from NULL back), which one statement for both could not see; and the walk
        // counts an element listing a record twice as writing (it writes the link again).
        var offset = 0
        var unlinked: [RecordKey: [SQLValue]] = [:]
        for (element, listedKeys, repeats) in listed {
            let root = RecordKey(roots[element])
            let keys = listedKeys.map(RecordKey.init)
            if repeats { changed[element] = true }
            for (key, values) in zip(keys, listedKeys) {
                valuesOf[key] = values
                if outcomes[offset] == .unchanged, unlinked[key] != nil {
                    result.unchanged -= 1
                    result.updated += 1
                    outcomes[offset] = .updated
                }
                if outcomes[offset] != .unchanged { changed[element] = true }
                offset += 1
                if let old = linkOf[key] { linkedTo[old]?.remove(key) }
                linkOf[key] = root
                linkedTo[root, default: []].insert(key)
                unlinked[key] = nil
            }
            let kept = Set(keys)
            for key in linkedTo[root] ?? [] where !kept.contains(key) {
                linkOf[key] = nil
                linkedTo[root]?.remove(key)
                unlinked[key] = valuesOf[key]
                changed[element] = true
            }
        }
        guard !unlinked.isEmpty else { return }
        let clear = "UPDATE \(table.quotedTable) SET " + columns.map { "\(quoted($0)) = NULL" }.joined(separator: ", ") + " WHERE "
        for condition in GraphLoader.membership(table.keyNames.map(quoted), Array(unlinked.values), dialect: session.connection.dialect) {
            let sql = SQLFragment(clear) + condition
            try session.connection.cachedStatement(sql.sql).execute(sql.values)
        }
    }
}
