/// Fills the relationships of decoded records: one query (or one chunked query) per
/// relationship per path, never one per record. See `LoadOptions` for what loads.
final class GraphLoader {
    private let session: Session
    /// One `RecordCache<T>` per model type this load touches.
    private var caches: [ObjectIdentifier: AnyObject] = [:]

    init(session: Session) {
        self.session = session
    }

    private func cache<T: StoredModel>(_ type: T.Type, _ table: TableDescription) -> RecordCache<T> {
        let id = ObjectIdentifier(type)
        if let existing = caches[id] { return unsafeDowncast(existing, to: RecordCache<T>.self) }
        let created = RecordCache<T>(table: table)
        caches[id] = created
        return created
    }

    // MARK: Entry points

    /// Whether the records being filled are every record of their table (an unfiltered
    /// `findAll`): their children then need no `IN` list of parent keys, just a scan.
    private var parentsAreWholeTable = false

    /// Work still to do, last first. Filling walks the graph depth first with this stack
    /// rather than by recursion, so a chain of records 100,000 long needs no more thread
    /// stack than a chain of two.
    @exclusivity(unchecked) private var pending: [() throws -> Void] = []

    /// Numbers each bulk load of related records, so a record can tell which load reached
    /// it first (see `RecordCache.expandedIn`).
    @exclusivity(unchecked) private var loads: Int32 = 0

    /// Decodes every row of `statement` (bound) and fills the relationships `plan` names.
    /// `wholeTable` says the statement selects every record of the table.
    func load<M: StoredModel>(
        _ type: M.Type, from statement: Statement, table: TableDescription, plan: LoadOptions.Plan, wholeTable: Bool = false
    ) throws -> [M] {
        parentsAreWholeTable = wholeTable
        try Self.validate(plan, for: type, session: session)
        let roots = cache(type, table)
        defer { statement.reset() }
        let decoder = RowDecoder(statement: statement, layout: table.layout, keyPositions: table.keyPositions)
        let first = table.columns.count - table.foreignKeyColumns.count
        var positions: [Int] = []
        while try statement.step() {
            let model = try decoder.decode(type)
            let key = RecordKey(statement.values(at: table.keyPositions))
            positions.append(roots.add(model, key: key) { statement.value(at: Int32(first + $0)) })
        }
        return try fillRoots(roots, positions, plan: plan)
    }

    /// Fills the relationships of models the caller holds, given their keys and link values.
    func load<M: StoredModel>(_ models: [M], keys: [[SQLValue]], links: [[SQLValue]], table: TableDescription, plan: LoadOptions.Plan)
        throws -> [M]
    {
        try Self.validate(plan, for: M.self, session: session)
        let roots = cache(M.self, table)
        // A model passed twice is one record: it is filled once and returned for both.
        let positions = zip(models, zip(keys, links)).map { model, keyAndLinks in
            let key = RecordKey(keyAndLinks.0)
            return roots.position(of: key) ?? roots.add(model, key: key) { keyAndLinks.1[$0] }
        }
        return try fillRoots(roots, positions, plan: plan)
    }

    private func fillRoots<M: StoredModel>(_ roots: RecordCache<M>, _ positions: [Int], plan: LoadOptions.Plan) throws -> [M] {
        var distinct: [Int] = []
        for position in positions where !roots.isExpanded(position) {
            roots.markExpanded(position, in: 0)
            distinct.append(position)
        }
        pending.removeAll(keepingCapacity: true)
        try fill(roots, distinct, plan: plan, arrival: nil, wholeTable: parentsAreWholeTable)
        while let task = pending.popLast() { try task() }
        let result = RowBuffer<M>(capacity: positions.count)
        for position in positions { result.append(roots.model(position)) }
        return result.finish()
    }

    // MARK: Filling

    /// The relationship by which records were reached: its inverse on them, and for each
    /// record (in the same order) its parent's stored values as a one-element array.
    private struct Arrival {
        let inverse: String?
        /// Nil where the record was decoded with its parent already in place.
        let parents: [Any?]
    }

    /// Fills the relationships of `records` from the one at `start` on. Loading one of them
    /// schedules its records' own filling and the rest of this one's on `pending`.
    private func fill<M: StoredModel>(
        _ records: RecordCache<M>, _ positions: [Int], plan: LoadOptions.Plan, arrival: Arrival?, wholeTable: Bool = false,
        from start: Int = 0
    ) throws {
        guard !positions.isEmpty else { return }
        let declarations = M.relationships
        let relationships = records.table.relationships
        for index in start..<relationships.count {
            let relationship = relationships[index]
            let declaration = declarations[index]
            if let arrival, arrival.inverse == relationship.property {
                // Never walk back: a to-one inverse is the parent's stored values.
                guard relationship.kind == .toOne else { continue }
                for (offset, position) in positions.enumerated() {
                    guard let parent = arrival.parents[offset] else { continue }
                    records.fill(position) { declaration.assign(&$0, parent) }
                }
                continue
            }
            guard let childPlan = plan.child(relationship) else { continue }
            // The later relationships wait until this one's records are filled, as in a
            // recursive walk: the path that reaches a record first is where it is filled.
            if index + 1 < relationships.count {
                pending.append { [unowned self] in
                    try self.fill(records, positions, plan: plan, arrival: arrival, wholeTable: wholeTable, from: index + 1)
                }
            }
            func load<T: StoredModel>(_ target: T.Type) throws {
                try self.load(
                    relationship, declaration, target: target, parents: records, positions, plan: childPlan, wholeTable: wholeTable)
            }
            try load(relationship.target)
            return
        }
    }

    private func load<M: StoredModel, T: StoredModel>(
        _ relationship: RelationshipDescription, _ declaration: Relationship<M>, target: T.Type,
        parents: RecordCache<M>, _ positions: [Int], plan: LoadOptions.Plan, wholeTable: Bool
    ) throws {
        let children = cache(T.self, try session.table(T.self))
        let childrenOf = try fetch(relationship, parents: parents, positions, into: children, wholeTable: wholeTable)

        // Records reached for the first time are filled further; the rest appear shallow.
        // They are marked with this load's number, which tells them apart without an array
        // the size of the cache (that would make a long chain quadratic).
        loads += 1
        let number = loads
        var fresh: [Int] = []
        var freshParents: [Any?] = []
        for (offset, position) in positions.enumerated() where !childrenOf[offset].isEmpty {
            var parent: Any?
            for child in childrenOf[offset] where !children.isExpanded(child) {
                children.markExpanded(child, in: number)
                fresh.append(child)
                if children.wasDecodedWithParent(child) {
                    freshParents.append(nil)  // decoded with its parent already
                } else {
                    if parent == nil { parent = [parents.parentValues(position)] }
                    freshParents.append(parent)
                }
            }
        }
        // The parents take their related records once those are filled: scheduled before
        // the filling, so it runs after it (the stack runs last first).
        let walksBack = children.table.relationship(named: relationship.inverse ?? "") != nil
        guard !fresh.isEmpty, !plan.isEmpty || walksBack else {
            assign(declaration, kind: relationship.kind, parents: parents, positions, childrenOf, children, freshIn: number)
            return
        }
        pending.append { [unowned self] in
            self.assign(declaration, kind: relationship.kind, parents: parents, positions, childrenOf, children, freshIn: number)
        }
        let arrival = Arrival(inverse: relationship.inverse, parents: freshParents)
        pending.append { [unowned self] in try self.fill(children, fresh, plan: plan, arrival: arrival) }
    }

    /// Stores each parent's related records: filled where this load reached them first,
    /// their stored values elsewhere.
    private func assign<M: StoredModel, T: StoredModel>(
        _ declaration: Relationship<M>, kind: RelationshipKind, parents: RecordCache<M>, _ positions: [Int], _ childrenOf: [[Int]],
        _ children: RecordCache<T>, freshIn load: Int32
    ) {
        for (offset, position) in positions.enumerated() {
            let list = childrenOf[offset]
            guard kind == .toMany || !list.isEmpty else { continue }
            // An empty list must not go through the initializer: with capacity 0 it writes
            // into the shared empty-array singleton, which the thread sanitizer reports.
            let values =
                list.isEmpty
                ? []
                : [T](unsafeUninitializedCapacity: list.count) { buffer, initialized in
                    for (slot, child) in list.enumerated() {
                        (buffer.baseAddress! + slot).initialize(
                            to: children.expandedIn(child) == load ? children.model(child) : children.storedValues(child))
                    }
                    initialized = list.count
                }
            parents.fill(position) { declaration.assign(&$0, values) }
        }
    }

    // MARK: Fetching

    /// For each parent (in `positions` order), the positions of its related records in
    /// `children`, fetched in bulk and decoded once.
    ///
    /// Where the children hold the link (`parent.children` with a to-one inverse), each
    /// new child is decoded with its parent's stored values already in the inverse property.
    private func fetch<M: StoredModel, T: StoredModel>(
        _ relationship: RelationshipDescription, parents: RecordCache<M>, _ positions: [Int], into children: RecordCache<T>,
        wholeTable: Bool
    ) throws -> [[Int]] {
        // Every parent is loaded: select children by scanning rather than by a key list.
        func parentsIn(_ columns: [String]) -> [SQLFragment] {
            wholeTable
                ? [SQLFragment("TRUE")]
                : Self.membership(columns, positions.map { parents.key($0).values }, dialect: session.connection.dialect)
        }
        var childrenOf = Array(repeating: [Int](), count: positions.count)
        let target = children.table
        let targetKey = target.keyNames.map { "t." + quoted($0) }
        switch relationship.storage {
        case .foreignKeyHere(let columns, _):
            let first = parents.table.columns.count - parents.table.foreignKeyColumns.count
            var links: [RecordKey?] = []
            var wanted = Set<RecordKey>()
            for position in positions {
                let values = columns.map { parents.link(position, $0 - first) }
                let link = values.contains(where: \.isNull) ? nil : RecordKey(values)
                links.append(link)
                if let link, children.position(of: link) == nil { wanted.insert(link) }
            }
            for condition in Self.membership(targetKey, wanted.map(\.values), dialect: session.connection.dialect) {
                let sql = SQLFragment("SELECT \(target.prefixedSelectList("t")) FROM \(target.quotedTable) t WHERE ") + condition
                _ = try read(sql, into: children, prefix: 0)
            }
            for (offset, link) in links.enumerated() {
                if let link, let child = children.position(of: link) { childrenOf[offset] = [child] }
            }
        case .foreignKeyThere(let columns):
            let linked = columns.map { "t." + quoted($0) }
            let inject = relationship.inverse.map { inverse in
                Injection(property: inverse, index: Int16(target.relationships.firstIndex { $0.property == inverse } ?? -1)) { key in
                    guard let position = parents.position(of: key) else { return nil }
                    let parent = parents.parentValues(position)
                    return (InjectedValue(Related(wrappedValue: parent)), InjectedValue(parent))
                }
            }
            // Ordered by link, so a parent's children arrive together and its value is made
            // once; the link's index serves this order.
            try collect(
                positions, parents, into: &childrenOf, injection: inject,
                parentsIn(linked).map { condition in
                    SQLFragment(
                        "SELECT \(linked.joined(separator: ", ")), \(target.prefixedSelectList("t")) FROM \(target.quotedTable) t WHERE ")
                        + condition + SQLFragment(" ORDER BY " + (linked + targetKey).joined(separator: ", "))
                }, children, prefix: columns.count)
        case .joinTable(let join):
            let owner = join.ownerColumns.map { "j." + quoted($0) }
            let on = zip(join.targetColumns, target.keyNames).map { "t.\(quoted($1)) = j.\(quoted($0))" }
                .joined(separator: " AND ")
            try collect(
                positions, parents, into: &childrenOf, injection: nil,
                parentsIn(owner).map { condition in
                    // Ordered by parent, so a parent's children arrive together (the join
                    // table's key serves this order), then by child key.
                    SQLFragment(
                        "SELECT \(owner.joined(separator: ", ")), \(target.prefixedSelectList("t")) FROM \(quoted(join.name)) j JOIN \(target.quotedTable) t ON \(on) WHERE "
                    )
                        + condition + SQLFragment(" ORDER BY " + (owner + targetKey).joined(separator: ", "))
                }, children, prefix: join.ownerColumns.count)
        }
        return childrenOf
    }

    /// A parent value to decode into a child's inverse property, found by the parent's key.
    private struct Injection {
        let property: String
        /// The index of `property` among the child's relationships.
        let index: Int16
        /// The parent as `Related<Parent>` and as `Parent`, by the parent's key.
        let parent: (RecordKey) -> (wrapper: InjectedValue, plain: InjectedValue)?
    }

    /// Runs queries whose rows start with a parent key, and files each child under its parent.
    private func collect<M: StoredModel, T: StoredModel>(
        _ positions: [Int], _ parents: RecordCache<M>, into childrenOf: inout [[Int]], injection: Injection?,
        _ queries: [SQLFragment], _ children: RecordCache<T>, prefix: Int
    ) throws {
        var parentOffset: [RecordKey: Int] = [:]
        parentOffset.reserveCapacity(positions.count)
        for (offset, position) in positions.enumerated() { parentOffset[parents.key(position)] = offset }
        var last: (key: RecordKey, offset: Int)?
        for sql in queries {
            for (parentKey, child) in try read(sql, into: children, prefix: prefix, injection: injection) {
                guard let parentKey else { continue }
                if let last, last.key == parentKey {
                    childrenOf[last.offset].append(child)
                } else if let offset = parentOffset[parentKey] {
                    childrenOf[offset].append(child)
                    last = (parentKey, offset)
                }
            }
        }
    }

    /// Runs a query whose rows are `prefix` key columns followed by the table's columns;
    /// decodes each record unless this load already has it. Returns (prefix key, position).
    private func read<T: StoredModel>(
        _ sql: SQLFragment, into cache: RecordCache<T>, prefix: Int, injection: Injection? = nil
    ) throws -> [(RecordKey?, Int)] {
        let table = cache.table
        let statement = try session.connection.cachedStatement(sql.sql)
        defer { statement.reset() }
        try statement.bind(sql.values)
        let offset = Int32(prefix)
        let mapping = prefix == 0 ? nil : (0..<table.columns.count).map { Int32($0) + offset }
        let decoder = RowDecoder(statement: statement, layout: table.layout, keyPositions: table.keyPositions, mapping: mapping)
        let first = table.columns.count - table.foreignKeyColumns.count
        var rows: [(RecordKey?, Int)] = []
        // A one-column key is read straight into a RecordKey, without an array per row.
        let singleKey = table.keyPositions.count == 1 ? offset + Int32(table.keyPositions[0]) : nil
        // Children arrive grouped by parent: the parent is handed to the decoder once per
        // group, not copied per row.
        var currentParent: RecordKey?
        // Read once: copying the optional injection on every row costs more than the rest
        // of its handling.
        let injects = injection != nil
        let injectedIndex = injection?.index ?? -1
        defer {
            decoder.injectedKey = nil
            decoder.injectedWrapper = nil
            decoder.injectedPlain = nil
        }
        while try statement.step() {
            let key =
                singleKey.flatMap { RecordKey(statement, at: $0, count: 1) }
                ?? RecordKey(statement.values(at: table.keyPositions, offset: offset))
            let parentKey = prefix == 0 ? nil : RecordKey(statement, at: 0, count: prefix)
            if injects, parentKey != currentParent, let injection {
                currentParent = parentKey
                let parent = parentKey.flatMap(injection.parent)
                decoder.injectedKey = parent == nil ? nil : injection.property
                decoder.injectedWrapper = parent?.wrapper
                decoder.injectedPlain = parent?.plain
            }
            let position: Int
            if let known = cache.position(of: key) {
                position = known
            } else {
                let model = try decoder.decode(T.self)
                position = cache.add(model, key: key, injected: decoder.injectedKey != nil ? injectedIndex : -1) {
                    statement.value(at: offset + Int32(first + $0))
                }
            }
            rows.append((parentKey, position))
        }
        return rows
    }

    /// `(columns) IN (…)` conditions covering `keys`, chunked to stay within SQLite's limits.
    static func membership(_ columns: [String], _ keys: [[SQLValue]], dialect: any SQLDialect) -> [SQLFragment] {
        QueryCompiler.keyMembership(columns, keys, dialect: dialect)
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
