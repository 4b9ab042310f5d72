/// The operations the public calls run, each choosing once between two paths:
///
/// - the **plain path** (`Engine/`): the model's own record, in rows and tables;
/// - the **graph path** (`Relationships/`): the related models too — graph saves, bulk
///   loading, delete rules.
///
/// The choice is made here and nowhere else, so neither layer below asks "does this model
/// have relationships?", and the Engine never calls up into `Relationships/`.
extension Session {
    /// Saves `model` by the merge rule, with its graph when it has relationships.
    func save<M: StoredModel>(_ model: M, mode: SaveMode, clearing: [String] = [], related: RelatedRecords = .save) throws
        -> SaveOutcome
    {
        let table = try table(M.self)
        let chosen =
            clearing.isEmpty
            ? withUnsafePointer(to: model) { path(table, writing: UnsafeBufferPointer(start: $0, count: 1)) } : path(table)
        switch chosen {
        case .plain: return try saveRecord(model, into: table, mode: mode, clearing: clearing)
        case .graph: return try saveGraph(model, mode: mode, clearing: clearing, related: related)
        }
    }

    /// Upserts `models` in array order inside the caller's transaction; elements with the
    /// same key merge, later over earlier.
    func save<M: StoredModel>(_ models: [M], related: RelatedRecords = .save) throws -> BatchSaveOutcome {
        let table = try table(M.self)
        switch models.withUnsafeBufferPointer({ path(table, writing: $0) }) {
        case .plain: return try saveRecords(models, into: table)
        case .graph: return try saveGraphs(models, into: table, related: related)
        }
    }

    /// The model with `key`, or nil, with the relationships `loading` names.
    func find<M: StoredModel>(_ type: M.Type, key: KeyInput, loading: LoadOptions = .declared) throws -> M? {
        let table = try table(type)
        let values = try table.keyValues(key)
        switch path(table, loading: loading) {
        case .plain:
            try check(loading, for: type)
            return try findRecord(type, in: table, key: values)
        case .graph:
            let statement = try statement(.findByKey, table, owner: ObjectIdentifier(type))
            try statement.bind(values)
            return try readGraphs(type, from: statement, table: table, plan: loading.plan).first
        }
    }

    /// Every model, in primary-key order, with the relationships `loading` names.
    func findAll<M: StoredModel>(_ type: M.Type, loading: LoadOptions = .declared) throws -> [M] {
        let table = try table(type)
        switch path(table, loading: loading) {
        case .plain:
            try check(loading, for: type)
            return try findRecords(type, in: table)
        case .graph:
            let statement = try statement(.findAll, table, owner: ObjectIdentifier(type))
            return try readGraphs(type, from: statement, table: table, plan: loading.plan, wholeTable: true)
        }
    }

    /// Every model the query selects, in its order, with the relationships it loads.
    func findAll<M: StoredModel>(_ query: Query<M>) throws -> [M] {
        if let filter = query.memoryFilter { return try findAll(query, filteringInMemory: filter) }
        let table = try table(M.self)
        let statement = try select(query, in: table)
        switch path(table, loading: query.loadOptions) {
        case .plain:
            try check(query.loadOptions, for: M.self)
            return try decodeAll(M.self, from: statement, table: table)
        case .graph: return try readGraphs(M.self, from: statement, table: table, plan: query.loadOptions.plan)
        }
    }

    /// The query's records with its in-memory filter applied: SQL selects by the rest, in
    /// order and without a page; Swift keeps the records the filter accepts (their
    /// relationships loaded, so the filter may look at them), then takes the page.
    private func findAll<M: StoredModel>(_ query: Query<M>, filteringInMemory filter: MemoryFilter<M>) throws -> [M] {
        var selected = query
        selected.memoryFilter = nil
        selected.limit = nil
        selected.offset = nil
        if let failure = query.failure { throw failure }
        var kept: [M] = []
        for model in try findAll(selected) {
            let matches: Bool
            do {
                matches = try filter.matches(model)
            } catch {
                throw ModelStoreError(
                    .invalidQuery, "Evaluating a #Predicate on \(M.self) in memory failed: \(error). Nothing was returned.",
                    model: String(describing: M.self))
            }
            if matches { kept.append(model) }
        }
        let start = min(query.offset ?? 0, kept.count)
        let end = query.limit.map { min(kept.count, start + $0) } ?? kept.count
        return Array(kept[start..<end])
    }

    /// How many records the query selects, its in-memory filter included.
    func countMatching<M: StoredModel>(_ query: Query<M>) throws -> Int {
        guard query.memoryFilter != nil else { return try count(query) }
        return try findAll(query).count
    }

    /// Whether the query selects any record, its in-memory filter included.
    func existsMatching<M: StoredModel>(_ query: Query<M>) throws -> Bool {
        guard query.memoryFilter != nil else { return try exists(query) }
        return try findFirst(query) != nil
    }

    /// The first model the query selects, or nil.
    func findFirst<M: StoredModel>(_ query: Query<M>) throws -> M? {
        try findAll(query.limit == 0 ? query : query.limit(1, offset: query.offset ?? 0)).first
    }

    /// Fills the relationships `loading` names on models the caller already holds.
    func loadRelationships<M: StoredModel>(of models: [M], loading: LoadOptions) throws -> [M] {
        let table = try table(M.self)
        switch path(table, loading: loading) {
        case .plain:
            try check(loading, for: M.self)
            return models
        case .graph: return try loadGraphs(of: models, table: table, plan: loading.plan)
        }
    }

    /// Deletes the record with `key`, applying delete rules; returns how many `M` records went.
    func delete<M: StoredModel>(_ type: M.Type, key: KeyInput) throws -> Int {
        let table = try table(type)
        return try delete(type, table, key: try table.keyValues(key))
    }

    /// Deletes the record with `model`'s key, applying delete rules.
    func delete<M: StoredModel>(_ model: M) throws -> Int {
        let table = try table(M.self)
        return try delete(M.self, table, key: try key(of: model, in: table))
    }

    /// Deletes every record of the table, applying delete rules.
    func deleteAll<M: StoredModel>(_ type: M.Type) throws -> Int {
        let table = try table(type)
        switch path(table) {
        case .plain:
            return try deleteWithCallbacks(type, table, where: SQLFragment("TRUE")) ?? deleteRecords(table, owner: ObjectIdentifier(type))
        case .graph: return try delete(type, where: SQLFragment("TRUE"), describing: "All \(table.modelName) records", selectsByKey: true)
        }
    }

    /// Deletes the records the query selects, applying delete rules.
    func deleteAll<M: StoredModel>(_ query: Query<M>) throws -> Int {
        let table = try table(M.self)
        switch path(table) {
        case .plain:
            guard ModelCallbacks.of(M.self).delete else { return try deleteRecords(query, in: table) }
            let selection = try selection(query, table)
            let condition =
                selection.sql.isEmpty
                ? SQLFragment("TRUE") : SQLFragment(String(selection.sql.dropFirst(" WHERE ".count)), selection.values)
            return try deleteWithCallbacks(M.self, table, where: condition) ?? 0
        case .graph:
            let selection = try selection(query, table)
            let condition =
                selection.sql.isEmpty
                ? SQLFragment("TRUE") : SQLFragment(String(selection.sql.dropFirst(" WHERE ".count)), selection.values)
            return try delete(M.self, where: condition, describing: "\(table.modelName) records matching the query")
        }
    }

    private func delete<M: StoredModel>(_ type: M.Type, _ table: TableDescription, key: [SQLValue]) throws -> Int {
        switch path(table) {
        case .plain:
            return try withDeleteCallbacks(type, table, where: SQLFragment(table.keyCondition, key)) {
                try deleteRecord(table, owner: ObjectIdentifier(type), key: key)
            }
        case .graph:
            do {
                return try delete(
                    type, where: SQLFragment(table.keyCondition, key), describing: "\(table.modelName) (\(table.describeKey(key)))",
                    selectsByKey: true)
            } catch let error as ModelStoreError {
                throw error.naming(model: table.modelName, key: table.describeKey(key))
            }
        }
    }

    /// Named load paths are checked on the plain path too: a name the model does not
    /// declare is a mistake whether or not anything else is loaded. (The graph path checks
    /// them as it loads.)
    private func check<M: StoredModel>(_ loading: LoadOptions, for type: M.Type) throws {
        guard case .paths = loading.plan else { return }
        try GraphLoader.validate(loading.plan, for: type, session: self)
    }

    // MARK: The decision

    private enum Path {
        /// The model's own record only: `Engine/`.
        case plain
        /// The record with its relationships: `Relationships/`.
        case graph
    }

    /// The one place that decides. A write (and a delete, whose rules follow relationships)
    /// takes the graph path when the model declares relationships; a read takes it only when
    /// its load options load some of them from this model's records — by default, only the
    /// relationships declared `.eager`.
    private func path(_ table: TableDescription, loading: LoadOptions? = nil) -> Path {
        guard !table.relationships.isEmpty else { return .plain }
        if let loading, loading.plan.loadsNothing(from: table) { return .plain }
        return .graph
    }

    /// The path of a save of `models`: the graph path only when one of them holds a related
    /// model. A save whose every relationship is nil leaves every link as stored (the merge
    /// rule), so it is its records alone, which the plain path writes without the graph's
    /// bookkeeping (a quarter of a batch's work) and, on a server, in multi-row statements.
    /// A model that stores a one-to-one's link takes the graph path always: saving it releases
    /// the link from the link's other holders.
    ///
    /// A buffer, not the array: this generic code is not specialised for the model type, and
    /// an array's iterator would look up metadata on every element.
    private func path<M: StoredModel>(_ table: TableDescription, writing models: UnsafeBufferPointer<M>) -> Path {
        guard !table.relationships.isEmpty else { return .plain }
        for relationship in table.relationships {
            if case .foreignKeyHere(_, unique: true) = relationship.storage { return .graph }
        }
        // The questions taken out once: iterating the declarations themselves would look up
        // their array's iterator metadata for every element.
        let holds = M.relationships.map { $0.holdsValue }  // a closure: `\.holdsValue` on a generic type makes its key path every call
        return holds.withUnsafeBufferPointer { holds in
            for model in models {
                for index in 0..<holds.count where holds[index](model) { return .graph }
            }
            return .plain
        }
    }
}

extension Session {
    /// Saves `model` by the merge rule and returns its record as stored — merged values and
    /// an assigned key included. A model without relationships is written and read back in
    /// one statement (`RETURNING`); a graph is saved, then its root read with the
    /// relationships it declares eager, in the same transaction.
    func saved<M: StoredModel>(_ model: M, clearing: [String]) throws -> M {
        let table = try table(M.self)
        let owner = ObjectIdentifier(M.self)
        switch path(table) {
        case .plain:
            let row = RowEncoder(layout: table.layout)
            let callbacks = ModelCallbacks.of(M.self).save
            try encodeForWriting(model, into: row, table, callbacks: callbacks)
            for name in clearing { row.setNull(at: try table.clearablePosition(name, carried: row)) }
            let (outcome, stored) = try saveReturning(row, table, owner, mode: .upsert) { statement in
                try RowDecoder(statement: statement, layout: table.layout, keyPositions: table.keyPositions).decode(M.self)
            }
            if callbacks { try didSave(model, outcome: outcome, table, row) }
            if let stored { return stored }
            return try require(findRecord(M.self, in: table, key: try table.key(of: row)), table)
        case .graph:
            let saver = GraphSaver(session: self)
            let key = try saver.save(model, mode: .upsert, clearing: clearing).key
            let statement = try statement(.findByKey, table, owner: owner)
            try statement.bind(key)
            return try require(readGraphs(M.self, from: statement, table: table, plan: LoadOptions.declared.plan).first, table)
        }
    }

    private func require<M>(_ model: M?, _ table: TableDescription) throws -> M {
        guard let model else {
            throw ModelStoreError(
                .notFound, "The \(table.modelName) record just saved could not be read back.", model: table.modelName)
        }
        return model
    }
}
