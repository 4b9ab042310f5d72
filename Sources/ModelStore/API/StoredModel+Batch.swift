extension StoredModel {
    /// Saves an array of models in one transaction, each by the merge rule of `save()`.
    ///
    /// No lookup query runs per element: each is one reused `INSERT … ON CONFLICT DO UPDATE`.
    /// Elements with the same key merge in array order, later over earlier, into one record.
    /// If any element fails, nothing of the batch is saved.
    ///
    /// ```swift
    /// let result = try Snack.save(snacks)     // BatchSaveOutcome(inserted: 40, updated: 60)
    /// ```
    /// - Throws: `ModelStoreError` naming the failing element's position and key.
    @discardableResult
    public static func save(_ models: [Self], in store: ModelStore? = nil) throws -> BatchSaveOutcome {
        try ModelStore.resolve(store).write(isolation: saveIsolation) { try $0.save(models) }
    }

    /// Saves the batch later; `completion` gets the result on the completion queue. Reads
    /// submitted after this call see the batch (the original's fire-and-forget `saveObjects:`).
    public static func save(
        _ models: [Self], in store: ModelStore? = nil, completion: @escaping @Sendable (Result<BatchSaveOutcome, ModelStoreError>) -> Void
    ) {
        ModelStore.resolve(store).write(isolation: saveIsolation, { try $0.save(models) }, completion: completion)
    }

    /// Saves the batch without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    @discardableResult
    public static func save(_ models: [Self], in store: ModelStore? = nil) async throws -> BatchSaveOutcome {
        try await ModelStore.resolve(store).write(isolation: saveIsolation) { try $0.save(models) }
    }

    /// Saves an array of models, finding the record each stands for by `keys` instead of
    /// the primary key (the original's `saveObjects:checkByPredicate:`). See `MatchKeys`.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    @discardableResult
    public static func save(_ models: [Self], matching keys: MatchKeys<Self>, in store: ModelStore? = nil) throws -> BatchSaveOutcome {
        try ModelStore.resolve(store).write { try $0.save(models, matching: keys) }
    }

    /// `save(_:matching:in:)` later; `completion` gets the result on the completion queue.
    public static func save(
        _ models: [Self], matching keys: MatchKeys<Self>, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<BatchSaveOutcome, ModelStoreError>) -> Void
    ) {
        ModelStore.resolve(store).write({ try $0.save(models, matching: keys) }, completion: completion)
    }

    /// `save(_:matching:in:)` without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    @discardableResult
    public static func save(_ models: [Self], matching keys: MatchKeys<Self>, in store: ModelStore? = nil) async throws -> BatchSaveOutcome
    {
        try await ModelStore.resolve(store).write { try $0.save(models, matching: keys) }
    }

    /// Saves this model into the stored record `predicate` matches — the properties it
    /// carries are written, and the record keeps its key — or inserts it when none matches
    /// (the original's `saveWithPredicate:`).
    ///
    /// ```swift
    /// try Snack(snackId: 0, name: "Pocky", size: 999).save(matching: \.name == "Pocky")
    /// ```
    /// - Parameters:
    ///   - predicate: The condition that finds the record to save over.
    ///   - updatingAll: Update every matching record; otherwise more than one match
    ///     throws `.ambiguousMatch`.
    ///   - store: The store to save in; the default store when nil.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    @discardableResult
    public func save(matching predicate: Condition<Self>, updatingAll: Bool = false, in store: ModelStore? = nil) throws -> SaveOutcome {
        try ModelStore.resolve(store).write { try $0.save(self, matching: predicate.node, updatingAll: updatingAll) }
    }

    /// `save(matching:updatingAll:in:)` later; `completion` gets the outcome.
    public func save(
        matching predicate: Condition<Self>, updatingAll: Bool = false, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<SaveOutcome, ModelStoreError>) -> Void
    ) {
        ModelStore.resolve(store).write({ try $0.save(self, matching: predicate.node, updatingAll: updatingAll) }, completion: completion)
    }

    /// `save(matching:updatingAll:in:)` without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    @discardableResult
    public func save(matching predicate: Condition<Self>, updatingAll: Bool = false, in store: ModelStore? = nil) async throws
        -> SaveOutcome
    {
        try await ModelStore.resolve(store).write { try $0.save(self, matching: predicate.node, updatingAll: updatingAll) }
    }

    /// Saves this model into the stored record whose `properties` equal this model's values
    /// for them, or inserts it (the original's `saveWithEqualProperties:`).
    ///
    /// ```swift
    /// try Snack(snackId: 0, name: "Pocky", taste: "sweet", price: 2).save(matching: [\.name, \.taste])
    /// ```
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    @discardableResult
    public func save(matching properties: [PartialKeyPath<Self>], updatingAll: Bool = false, in store: ModelStore? = nil) throws
        -> SaveOutcome
    {
        let columns = properties.map { ColumnReference($0) }
        return try ModelStore.resolve(store).write { try $0.save(self, matchingProperties: columns, updatingAll: updatingAll) }
    }

    /// `save(matching:updatingAll:in:)` with properties, later; `completion` gets the outcome.
    public func save(
        matching properties: [PartialKeyPath<Self>], updatingAll: Bool = false, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<SaveOutcome, ModelStoreError>) -> Void
    ) {
        let columns = properties.map { ColumnReference($0) }
        ModelStore.resolve(store).write(
            { try $0.save(self, matchingProperties: columns, updatingAll: updatingAll) }, completion: completion)
    }

    /// `save(matching:updatingAll:in:)` with properties, without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    @discardableResult
    public func save(matching properties: [PartialKeyPath<Self>], updatingAll: Bool = false, in store: ModelStore? = nil) async throws
        -> SaveOutcome
    {
        let columns = properties.map { ColumnReference($0) }
        return try await ModelStore.resolve(store).write { try $0.save(self, matchingProperties: columns, updatingAll: updatingAll) }
    }
}

extension StoredModel {
    /// How a server isolates a save of this type's models made outside a block: a model with
    /// no relationship (whose links a graph save reads), no unique index (whose record a save
    /// looks up), no save callback (which may read) and no `updated` timestamp is saved by
    /// upserts alone, which need no serializable snapshot (`WriteIsolation.upserts`). The
    /// timestamp's date is taken before the write: a save that waited for another's row would
    /// write its older date over the newer one, where a serializable one runs again, later.
    /// Decided once per type (`ModelCallbacks`): every save asks, and the check alone cost
    /// about 16,600 instructions a call, most of them making the `\.isUnique` key path.
    static var saveIsolation: WriteIsolation { ModelCallbacks.saveIsolation(Self.self) }
}
