/// Saves a model with the related models it carries, and their links, inside the caller's
/// transaction. A relationship that is nil leaves stored links alone; one that is set (even
/// to `[]`) is the complete set, and links not in it are removed.
final class GraphSaver {
    private let session: Session
    /// Records this save has written (by model type and key), so a graph that refers back
    /// to itself terminates.
    @exclusivity(unchecked) private var visited: Set<Visit> = []

    private struct Visit: Hashable {
        let type: ObjectIdentifier
        let key: RecordKey
    }

    /// Frames by model type, reused (each keeps its encoder, whose keyed containers are
    /// cached) and taken out while in use: one per level of the graph being walked.
    @exclusivity(unchecked) private var spares: [ObjectIdentifier: [Frame]] = [:]

    /// The models being saved, innermost last. The walk keeps its own stack rather than
    /// recursing, so a graph 100,000 levels deep needs no more thread stack than a flat one.
    @exclusivity(unchecked) private var stack: [Frame] = []

    /// What happened to the related records (not the roots) this saver wrote: a batch adds
    /// them to its result, so it covers every record the save touched.
    private(set) var relatedOutcomes = BatchSaveOutcome(inserted: 0, updated: 0, unchanged: 0)

    /// Whether related models are saved, or only linked to when they exist.
    private let relatedRecords: RelatedRecords

    /// Whether the last root saved had no key, so SQLite assigned the one `save` returned.
    private(set) var rootKeyAssigned = false

    /// Keys of records `.mustExist` found missing, by model: reported together at the end.
    private(set) var missing: [(model: String, key: [SQLValue])] = []

    init(session: Session, related: RelatedRecords = .save) {
        self.session = session
        self.relatedRecords = related
    }

    /// Throws `.notFound` naming the records a `.mustExist` save found missing.
    func requireNothingMissing() throws {
        guard let first = missing.first else { return }
        let keys = missing.prefix(20).map {
            "\($0.model) \($0.key.count == 1 ? $0.key[0].description : "(" + $0.key.map(\.description).joined(separator: ", ") + ")")"
        }
        let more = missing.count > 20 ? " and \(missing.count - 20) more" : ""
        throw ModelStoreError(
            .notFound,
            "The save links to \(missing.count) record(s) that do not exist: \(keys.joined(separator: ", "))\(more). With related: .mustExist, related models must be stored already; nothing was saved.",
            model: first.model, value: keys.joined(separator: ", ") + more,
            suggestion: "Save those records first, or save with related: .skipMissing to leave their links out.")
    }

    /// Starts the next element of a batch: each element's graph is saved whole, so records
    /// written for an earlier element are written again (merging in array order).
    func startElement() {
        visited.removeAll(keepingCapacity: true)
    }

    /// Saves `model` and its graph.
    @discardableResult
    func save<M: StoredModel>(_ model: M, mode: SaveMode, clearing: [String] = []) throws -> (outcome: SaveOutcome, key: [SQLValue]) {
        rootKeyAssigned = false
        let root = try frame(M.self)
        root.begin(model, mode: mode, clearing: clearing, links: [:])
        stack.removeAll(keepingCapacity: true)
        stack.append(root)
        while let frame = stack.last {
            switch try frame.resume(self) {
            case .save(let related, let links):
                stack.append(try self.frame(for: related, links: links))
            case .done(let outcome, let key):
                stack.removeLast()
                recycle(frame)
                guard let parent = stack.last else { return (outcome, key) }
                relatedOutcomes.count(outcome)
                parent.receive(key)
            case .revisited(let key):
                stack.removeLast()
                recycle(frame)
                guard let parent = stack.last else { return (.unchanged, key) }
                parent.receive(key)
            case .missing(let key):
                // Only a related model is ever a reference, so a parent waits for it.
                stack.removeLast()
                recycle(frame)
                guard let parent = stack.last else { return (.unchanged, key) }
                parent.skip()
            }
        }
        preconditionFailure("The save stack emptied without finishing its root.")
    }

    // MARK: Frames

    /// What a frame needs next.
    private enum Step {
        /// Save this related model first (with values for its link columns), then resume.
        case save(any StoredModel, links: [Int: SQLValue])
        /// The model is saved.
        case done(SaveOutcome, [SQLValue])
        /// The model was saved earlier in this graph; only a parent's link was written.
        case revisited([SQLValue])
        /// The model is a reference to a record that does not exist: no link to it.
        case missing([SQLValue])
    }

    /// One model being saved: the state a recursive save would keep in its stack frame.
    private class Frame {
        let owner: ObjectIdentifier
        init(owner: ObjectIdentifier) { self.owner = owner }
        /// Runs the save on until it needs a related model saved first, or is done.
        func resume(_ saver: GraphSaver) throws -> Step { preconditionFailure("abstract") }
        /// The key of the related model the last `.save` step asked for.
        func receive(_ key: [SQLValue]) {}
        /// The related model the last `.save` step asked for is not linked to.
        func skip() {}
        /// Drops the model and what it carried before the frame waits for reuse.
        func clear() {}
    }

    /// The save of one model of type `M`.
    ///
    /// Its state is touched many times per model, so it is kept out of the runtime's
    /// exclusivity checks (`@exclusivity(unchecked)`: only the saver's one thread uses a
    /// frame, never reentrantly), and the model is kept in memory of its own type rather
    /// than as an Optional, whose metadata unspecialized code would look up on every use.
    private final class ModelFrame<M: StoredModel>: Frame {
        let table: TableDescription
        let row: RowEncoder
        /// Whether the model holds the key of a one-to-one (whose link is unique).
        private let holdsUniqueLinks: Bool

        private enum Stage {
            /// Encoding, and skipping a record this save already wrote.
            case start
            /// To-ones stored here: each target is saved first, then its key goes in the row.
            case targets
            /// Relationships stored elsewhere, after the row is written.
            case links
        }

        /// The model, when `hasModel`.
        private let model = UnsafeMutablePointer<M>.allocate(capacity: 1)
        @exclusivity(unchecked) private var hasModel = false
        @exclusivity(unchecked) private var mode = SaveMode.upsert
        @exclusivity(unchecked) private var clearing: [String] = []
        @exclusivity(unchecked) private var cleared: Set<String> = []
        /// Values for link columns set by the parent that carries the model (they win over
        /// the model's own).
        @exclusivity(unchecked) private var links: [Int: SQLValue] = [:]
        @exclusivity(unchecked) private var stage = Stage.start
        @exclusivity(unchecked) private var key: [SQLValue] = []
        @exclusivity(unchecked) private var outcome = SaveOutcome.updated
        /// Whether `M` has save callbacks.
        private let callbacks = ModelCallbacks.of(M.self).save
        /// The next relationship to look at.
        @exclusivity(unchecked) private var index = 0
        /// Row positions waiting for the key of the to-one target being saved.
        @exclusivity(unchecked) private var awaiting: [Int] = []
        /// The relationship stored elsewhere being linked, its related models, the next one
        /// to save, the keys of those saved (when the link needs them), and the link values
        /// they get.
        @exclusivity(unchecked) private var linking: RelationshipDescription?
        @exclusivity(unchecked) private var related: [any StoredModel] = []
        @exclusivity(unchecked) private var next = 0
        @exclusivity(unchecked) private var collectsKeys = false
        @exclusivity(unchecked) private var keys: [[SQLValue]] = []
        @exclusivity(unchecked) private var assigned: [Int: SQLValue] = [:]

        init(table: TableDescription) {
            self.table = table
            row = RowEncoder(layout: table.layout)
            holdsUniqueLinks = table.relationships.contains {
                if case .foreignKeyHere(_, unique: true) = $0.storage { return true }
                return false
            }
            super.init(owner: ObjectIdentifier(M.self))
        }

        deinit {
            if hasModel { model.deinitialize(count: 1) }
            model.deallocate()
        }

        func begin(_ model: M, mode: SaveMode, clearing: [String], links: [Int: SQLValue]) {
            if hasModel { self.model.pointee = model } else { self.model.initialize(to: model) }
            hasModel = true
            self.mode = mode
            self.clearing = clearing
            self.links = links
            stage = .start
            index = 0
            linking = nil
            next = 0
        }

        override func clear() {
            if hasModel {
                model.deinitialize(count: 1)
                hasModel = false
            }
            if !related.isEmpty { related.removeAll(keepingCapacity: true) }
            if !keys.isEmpty { keys.removeAll(keepingCapacity: true) }
            links = [:]
            assigned = [:]
        }

        override func receive(_ key: [SQLValue]) {
            if stage == .targets {
                for (position, value) in zip(awaiting, key) { row.set(value, at: position) }
            } else if collectsKeys {
                keys.append(key)
            }
        }

        override func resume(_ saver: GraphSaver) throws -> Step {
            let declarations = M.relationships
            let relationships = table.relationships
            if stage == .start {
                try row.encode(model.pointee)
                cleared = clearing.isEmpty ? [] : Set(clearing.filter { table.relationship(named: $0) != nil })
                for name in clearing where !cleared.contains(name) {
                    row.setNull(at: try table.clearablePosition(name, carried: row))
                }
                if table.assignsKeys, (row.value(at: table.keyPositions[0]) ?? .null).isNull {
                    if saver.relatedRecords != .save, saver.stack.count > 1 {
                        // A reference without a key names no stored record.
                        if saver.relatedRecords == .mustExist { saver.missing.append((table.modelName, [.null])) }
                        return .missing([])
                    }
                    // A new record whose key SQLite assigns when it is written: it cannot
                    // have been saved earlier in this graph, nor be a reference.
                    key = []
                    try saver.session.prepareForWriting(model.pointee, into: row, table, callbacks: callbacks)
                    stage = .targets
                } else {
                    key = try table.key(of: row)
                }
            }
            if stage == .start {
                if saver.relatedRecords != .save, saver.stack.count > 1 {
                    // A reference: nothing of it is written, and it has no graph to walk.
                    guard let stored = try saver.storedKey(key, in: table) else {
                        if saver.relatedRecords == .mustExist { saver.missing.append((table.modelName, key)) }
                        return .missing(key)
                    }
                    key = stored
                    if !links.isEmpty { try saver.writeLinks(links, key: key, table: table, owner: owner) }
                    return .revisited(key)
                }
                guard saver.visited.insert(Visit(type: owner, key: RecordKey(key))).inserted else {
                    // Written earlier in this save: only a parent's link may still need writing.
                    if !links.isEmpty { try saver.writeLinks(links, key: key, table: table, owner: owner) }
                    return .revisited(key)
                }
                // Its values will be written: validated, stamped and announced now.
                try saver.session.prepareForWriting(model.pointee, into: row, table, callbacks: callbacks)
                stage = .targets
            }

            if stage == .targets {
                while index < relationships.count {
                    let relationship = relationships[index]
                    let declaration = declarations[index]
                    index += 1
                    guard case .foreignKeyHere(let positions, _) = relationship.storage else { continue }
                    let targets = row.carries(relationship.property) ? declaration.read(model.pointee) : nil
                    if cleared.contains(relationship.property) {
                        try saver.requireNil(targets, relationship, table)
                        for position in positions { row.setNull(at: position) }
                    } else if let target = targets?.first {
                        awaiting = positions
                        return .save(target, links: [:])
                    }
                }
                if holdsUniqueLinks { try saver.releasePartners(of: row, key: key, table: table, links: links) }
                for (position, value) in links { row.set(value, at: position) }
                outcome = try saver.session.write(row, into: table, owner: owner, mode: mode)
                if callbacks { try saver.session.didSave(model.pointee, outcome: outcome, table, row) }
                // Links hold the key as stored: under a collation, "ROCKETS" may have matched
                // "rockets", and loading matches links to keys byte for byte.
                if table.hasCollatedKey, let stored = try saver.storedKey(key, in: table) { key = stored }
                if key.isEmpty {
                    key = try table.key(of: row)
                    saver.visited.insert(Visit(type: owner, key: RecordKey(key)))
                    if saver.stack.count == 1 { saver.rootKeyAssigned = true }
                }
                stage = .links
                index = 0
            }

            // Relationships stored elsewhere: the targets' link columns or a join table. A
            // record this save inserted has no links yet, so there is nothing to unlink.
            let isNew = outcome == .inserted
            while true {
                if next < related.count {
                    next += 1
                    return .save(related[next - 1], links: assigned)
                }
                if let relationship = linking {
                    linking = nil
                    try finishLinking(relationship, saver, isNew: isNew)
                }
                guard index < relationships.count else { break }
                let relationship = relationships[index]
                let declaration = declarations[index]
                index += 1
                var carried = row.carries(relationship.property) ? declaration.read(model.pointee) : nil
                if cleared.contains(relationship.property) {
                    try saver.requireNil(carried, relationship, table)
                    carried = []
                }
                guard let models = carried else { continue }
                switch relationship.storage {
                case .foreignKeyHere:
                    continue
                case .foreignKeyThere(let columns):
                    let target = try saver.targetTable(relationship)
                    assigned = [:]
                    for (column, value) in zip(columns, key) { assigned[target.layout.position(of: column)!] = value }
                    if relationship.kind == .toOne {
                        // A one-to-one's link is unique, so the others are unlinked first.
                        if !isNew {
                            try saver.unlinkOthers(of: target, through: columns, from: key, keeping: try models.map(saver.keyOf))
                        }
                        collectsKeys = false
                    } else {
                        // A to-many saves and links the related records first and unlinks
                        // the rest after, knowing their keys without encoding twice.
                        collectsKeys = true
                    }
                case .joinTable:
                    assigned = [:]
                    collectsKeys = true
                }
                keys.removeAll(keepingCapacity: true)
                keys.reserveCapacity(models.count)
                next = 0
                linking = relationship
                if collectsKeys, let saved = try saver.saveTogether(models, links: assigned) {
                    // Written in multi-row statements: nothing to walk one at a time.
                    keys = saved
                    continue
                }
                related = models
            }
            return .done(outcome, key)
        }

        /// Completes a relationship stored elsewhere once its related models are saved.
        private func finishLinking(_ relationship: RelationshipDescription, _ saver: GraphSaver, isNew: Bool) throws {
            switch relationship.storage {
            case .foreignKeyHere:
                break
            case .foreignKeyThere(let columns):
                if relationship.kind == .toMany, !isNew {
                    try saver.unlinkOthers(of: try saver.targetTable(relationship), through: columns, from: key, keeping: keys)
                }
            case .joinTable(let join):
                try saver.link(keys, through: join, to: key, isNew: isNew)
            }
            related.removeAll(keepingCapacity: true)
            next = 0
        }
    }

    // MARK: Related records together

    /// Saves the related models of a to-many (or many-to-many) in multi-row statements,
    /// where a round trip per record is the cost (a server: `rowLocksInKeyOrder`) and nothing
    /// about them needs a record at a time: saved, not referenced; keys of their own; no save
    /// callbacks, unique index, collated key or one-to-one held here; and no relationship of
    /// their own carried (a set one, even `[]`, has links to write). Returns their keys in
    /// order (revisits included, as the walk would collect them), or nil when the walk must
    /// save them one by one. Written in key order, so it takes row locks as a batch does.
    fileprivate func saveTogether(_ models: [any StoredModel], links: [Int: SQLValue]) throws -> [[SQLValue]]? {
        guard models.count > 1, relatedRecords == .save, session.connection.capabilities.rowLocksInKeyOrder,
            let first = models.first
        else { return nil }
        func open<T: StoredModel>(_ first: T) throws -> [[SQLValue]]? {
            let table = try session.table(T.self)
            guard table.writesTogether(T.self) else { return nil }
            let frame = try frame(T.self)
            defer { recycle(frame) }
            let row = frame.row
            let declarations = T.relationships
            var rows: [(values: [SQLValue], present: ColumnMask, offset: Int)] = []
            rows.reserveCapacity(models.count)
            var keys: [[SQLValue]] = []
            keys.reserveCapacity(models.count)
            var firsts: [Bool] = []
            firsts.reserveCapacity(models.count)
            var fresh = Set<RecordKey>()
            // Encoding writes nothing: a model that needs the walk sends them all to it.
            for (offset, model) in models.enumerated() {
                guard let model = model as? T else { return nil }
                try row.encode(model)
                for (relationship, declaration) in zip(table.relationships, declarations)
                where row.carries(relationship.property) && declaration.read(model) != nil {
                    return nil
                }
                let key = try table.key(of: row)
                keys.append(key)
                let visit = Visit(type: ObjectIdentifier(T.self), key: RecordKey(key))
                // A record this save wrote already (earlier in the graph, or earlier in this
                // list) only gets the link, as the walk gives it.
                let isFirst = !visited.contains(visit) && fresh.insert(visit.key).inserted
                firsts.append(isFirst)
                guard isFirst else { continue }
                try session.prepareForWriting(model, into: row, table, callbacks: false)
                for (position, value) in links { row.set(value, at: position) }
                rows.append((row.values, row.present, offset))
            }
            for (key, isFirst) in zip(keys, firsts) where isFirst {
                visited.insert(Visit(type: ObjectIdentifier(T.self), key: RecordKey(key)))
            }
            let outcome = try session.upsertRowsInKeyOrder(&rows, into: table, owner: ObjectIdentifier(T.self)) { error, _, key in
                error.explainingDrift(of: table).naming(model: table.modelName, key: key.map(table.describeKey))
            }
            relatedOutcomes.inserted += outcome.inserted
            relatedOutcomes.updated += outcome.updated
            relatedOutcomes.unchanged += outcome.unchanged
            if !links.isEmpty {
                for (key, isFirst) in zip(keys, firsts) where !isFirst {
                    try writeLinks(links, key: key, table: table, owner: ObjectIdentifier(T.self))
                }
            }
            return keys
        }
        return try open(first)
    }

    /// A frame for `type`, reused when one is free.
    private func frame<T: StoredModel>(_ type: T.Type) throws -> ModelFrame<T> {
        if let spare = spares[ObjectIdentifier(type)]?.popLast() { return unsafeDowncast(spare, to: ModelFrame<T>.self) }
        return ModelFrame<T>(table: try session.table(type))
    }

    /// A frame saving a model whose type is known only at run time, with values for its link columns.
    private func frame(for model: any StoredModel, links: [Int: SQLValue]) throws -> Frame {
        func open<T: StoredModel>(_ model: T) throws -> Frame {
            let frame = try frame(T.self)
            frame.begin(model, mode: .upsert, clearing: [], links: links)
            return frame
        }
        return try open(model)
    }

    private func recycle(_ frame: Frame) {
        frame.clear()
        spares[frame.owner, default: []].append(frame)
    }

    private func targetTable(_ relationship: RelationshipDescription) throws -> TableDescription {
        func table<T: StoredModel>(_ type: T.Type) throws -> TableDescription { try session.table(type) }
        return try table(relationship.target)
    }

    // MARK: Links

    /// A one-to-one's link is unique, and the row is about to take the partner its model
    /// names: whoever holds that partner now lets go first, in the same transaction, so the
    /// link moves — as it does when the other side is saved — instead of failing on the
    /// unique index. A link set by the parent needs nothing: the parent has unlinked the
    /// others already.
    private func releasePartners(of row: RowEncoder, key: [SQLValue], table: TableDescription, links: [Int: SQLValue]) throws {
        for relationship in table.relationships {
            guard case .foreignKeyHere(let positions, unique: true) = relationship.storage,
                !positions.contains(where: { links[$0] != nil })
            else { continue }
            var partner: [SQLValue] = []
            for position in positions {
                guard let value = row.value(at: position), !value.isNull else { break }
                partner.append(value)
            }
            guard partner.count == positions.count else { continue }
            try unlinkOthers(of: table, through: positions.map { table.columns[$0].name }, from: partner, keeping: key.isEmpty ? [] : [key])
        }
    }

    /// Clears `columns` (a link to `key`) on every record of `target` but those with the keys kept.
    private func unlinkOthers(of target: TableDescription, through columns: [String], from key: [SQLValue], keeping keys: [[SQLValue]])
        throws
    {
        let linked = columns.map(quoted)
        var sql = SQLFragment(
            "UPDATE \(target.quotedTable) SET " + linked.map { "\($0) = NULL" }.joined(separator: ", ") + " WHERE "
                + linked.map { "\($0) = ?" }.joined(separator: " AND "), key)
        if !keys.isEmpty {
            sql = sql + SQLFragment(" AND NOT (") + anyOf(target.keyNames.map(quoted), keys) + SQLFragment(")")
        }
        try session.connection.cachedStatement(sql.sql).execute(sql.values)
    }

    /// Makes `targets` (saved already) exactly the records the join table links to `key`.
    private func link(_ targets: [[SQLValue]], through join: JoinTableDescription, to key: [SQLValue], isNew: Bool) throws {
        let owner = join.ownerColumns.map(quoted)
        let target = join.targetColumns.map(quoted)
        if !isNew { try unlink(join, owner: owner, target: target, key: key, keeping: targets) }
        let width = owner.count + target.count
        // The statement of the last chunk size, kept: on SQLite every link is one row, and its
        // text is built and looked up once per call, as before chunks.
        var last: (rows: Int, statement: Statement)?
        func insert(rows: Int) throws -> Statement {
            if let last, last.rows == rows { return last.statement }
            let tuple = "(" + Array(repeating: "?", count: width).joined(separator: ", ") + ")"
            let statement = try session.connection.cachedStatement(
                "INSERT INTO \(quoted(join.name)) (" + (owner + target).joined(separator: ", ") + ") VALUES "
                    + Array(repeating: tuple, count: rows).joined(separator: ", ") + " ON CONFLICT DO NOTHING")
            last = (rows, statement)
            return statement
        }
        // Where a statement is a round trip (a server), the links go in chunks of rows; on
        // SQLite one reused statement per link costs less than building longer ones.
        let chunk =
            session.connection.capabilities.rowLocksInKeyOrder
            ? max(1, min(Session.serverChunkRows, session.connection.maximumParameters / width)) : 1
        var start = 0
        while start < targets.count {
            let end = min(targets.count, start + chunk)
            var values = targets[start..<end].flatMap { key + $0 }
            // A short chunk is padded to a power of two by repeating its last link (DO NOTHING
            // takes a row twice), so a few statement shapes serve every count.
            var rows = end - start
            if rows > 1, rows < chunk {
                let padded = min(chunk, 1 << (Int.bitWidth - (rows - 1).leadingZeroBitCount))
                for _ in rows..<padded { values += key + targets[end - 1] }
                rows = padded
            }
            try insert(rows: rows).execute(values)
            start = end
        }
    }

    private func unlink(_ join: JoinTableDescription, owner: [String], target: [String], key: [SQLValue], keeping targets: [[SQLValue]])
        throws
    {
        var remove = SQLFragment(
            "DELETE FROM \(quoted(join.name)) WHERE " + owner.map { "\($0) = ?" }.joined(separator: " AND "), key)
        if !targets.isEmpty {
            remove = remove + SQLFragment(" AND NOT (") + anyOf(target, targets) + SQLFragment(")")
        }
        try session.connection.cachedStatement(remove.sql).execute(remove.values)
    }

    /// The key of the stored record `key` matches (spelled as stored), or nil when none does.
    private func storedKey(_ key: [SQLValue], in table: TableDescription) throws -> [SQLValue]? {
        guard !key.isEmpty else { return key }
        let statement = try session.connection.cachedStatement(
            "SELECT \(table.keyNames.map(quoted).joined(separator: ", ")) FROM \(table.quotedTable) WHERE \(table.keyCondition)")
        defer { statement.reset() }
        try statement.bind(key)
        return try statement.step() ? statement.values(count: key.count) : nil
    }

    private func keyOf(_ model: any StoredModel) throws -> [SQLValue] {
        func open<T: StoredModel>(_ model: T) throws -> [SQLValue] {
            let frame = try frame(T.self)
            defer { recycle(frame) }
            try frame.row.encode(model)
            return try frame.table.key(of: frame.row)
        }
        return try open(model)
    }

    private func writeLinks(_ links: [Int: SQLValue], key: [SQLValue], table: TableDescription, owner: ObjectIdentifier) throws {
        let positions = links.keys.sorted()
        let sql =
            "UPDATE \(table.quotedTable) SET "
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
    func anyOf(_ columns: [String], _ keys: [[SQLValue]]) -> SQLFragment {
        let conditions = GraphLoader.membership(columns, keys, dialect: session.connection.dialect)
        return SQLFragment(
            conditions.map { "(" + $0.sql + ")" }.joined(separator: " OR "), conditions.flatMap(\.values))
    }
}
