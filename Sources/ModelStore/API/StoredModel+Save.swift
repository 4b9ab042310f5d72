extension StoredModel {
    /// Saves the model: updates the record with its key, or inserts one when none exists.
    ///
    /// The merge rule: properties the model carries are written; a `nil` optional leaves
    /// the stored value as it is; non-optional properties are always written. To set a
    /// stored value to NULL, set the property to `nil` and name it in `clearing`:
    ///
    /// ```swift
    /// try Snack(snackId: 123, name: "Pocky", price: 1.1).save()   // inserted
    /// try Snack(snackId: 123, size: 999).save()                  // updated: name, price stay
    /// try Snack(snackId: 123).save(clearing: [\.price])          // price becomes NULL
    /// ```
    ///
    /// Runs one `INSERT … ON CONFLICT DO UPDATE` statement, in a transaction of its own unless
    /// called inside `transaction {}`.
    /// - Parameters:
    ///   - clearing: Optional properties to store as NULL; each must be `nil` in the model.
    ///   - store: The store to use; `ModelStore.default` when nil.
    /// - Returns: Whether the record was inserted or updated.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.invalidQuery` for a bad `clearing` entry, `.constraintViolation`, `.invalidModel`.
    @discardableResult
    public func save(clearing: [PartialKeyPath<Self>] = [], in store: ModelStore? = nil) throws -> SaveOutcome {
        let names = clearing.map(PropertyName.of)
        return try ModelStore.resolve(store).write(isolation: Self.saveIsolation) { try $0.save(self, mode: .upsert, clearing: names) }
    }

    /// Saves the model later; `completion` gets the outcome on the store's completion queue.
    /// Reads submitted after this call see the saved values. See `save(clearing:in:)`.
    public func save(
        clearing: [PartialKeyPath<Self>] = [], in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<SaveOutcome, ModelStoreError>) -> Void
    ) {
        let names = clearing.map(PropertyName.of)
        ModelStore.resolve(store).write(
            isolation: Self.saveIsolation, { try $0.save(self, mode: .upsert, clearing: names) }, completion: completion)
    }

    /// Saves the model without blocking the calling task. See `save(clearing:in:)`.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    @discardableResult
    public func save(clearing: [PartialKeyPath<Self>] = [], in store: ModelStore? = nil) async throws -> SaveOutcome {
        let names = clearing.map(PropertyName.of)
        return try await ModelStore.resolve(store).write(isolation: Self.saveIsolation) {
            try $0.save(self, mode: .upsert, clearing: names)
        }
    }

    /// Inserts the model as a new record; never updates an existing one.
    /// - Throws: `ModelStoreError` with code `.alreadyExists` when a record has its key.
    public func insert(in store: ModelStore? = nil) throws {
        _ = try ModelStore.resolve(store).write { try $0.save(self, mode: .insert) }
    }

    /// Inserts the model later; `completion` gets the result on the completion queue.
    public func insert(
        in store: ModelStore? = nil, completion: @escaping @Sendable (Result<Void, ModelStoreError>) -> Void
    ) {
        ModelStore.resolve(store).write({ _ = try $0.save(self, mode: .insert) }, completion: completion)
    }

    /// Inserts the model without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    public func insert(in store: ModelStore? = nil) async throws {
        _ = try await ModelStore.resolve(store).write { try $0.save(self, mode: .insert) }
    }

    /// Updates the stored record with the model's key by the merge rule; never inserts.
    /// - Parameters:
    ///   - clearing: Optional properties to store as NULL; each must be `nil`.
    ///   - store: The store to update in; the default store when nil.
    /// - Throws: `ModelStoreError` with code `.notFound` when no record has its key.
    public func update(clearing: [PartialKeyPath<Self>] = [], in store: ModelStore? = nil) throws {
        let names = clearing.map(PropertyName.of)
        _ = try ModelStore.resolve(store).write { try $0.save(self, mode: .update, clearing: names) }
    }

    /// Updates the stored record later; `completion` gets the result on the completion queue.
    public func update(
        clearing: [PartialKeyPath<Self>] = [], in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Void, ModelStoreError>) -> Void
    ) {
        let names = clearing.map(PropertyName.of)
        ModelStore.resolve(store).write({ _ = try $0.save(self, mode: .update, clearing: names) }, completion: completion)
    }

    /// Updates the stored record without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    public func update(clearing: [PartialKeyPath<Self>] = [], in store: ModelStore? = nil) async throws {
        let names = clearing.map(PropertyName.of)
        _ = try await ModelStore.resolve(store).write { try $0.save(self, mode: .update, clearing: names) }
    }
}

/// Saves that hand back the record as stored.
extension StoredModel {
    /// Saves the model by the merge rule and returns the record as stored: the values a `nil`
    /// left in place, and the key SQLite assigned to a model whose key is an optional integer
    /// saved as `nil`.
    ///
    /// ```swift
    /// struct Note: StoredModel { var id: Int64?; var text: String; static let primaryKey = ["id"] }
    /// let note = try Note(id: nil, text: "hello").saved()      // note.id == 1
    /// let merged = try Snack(snackId: 1, price: 2).saved()     // name and the rest as stored
    /// ```
    ///
    /// A model without relationships is written and read back in one statement (`INSERT …
    /// RETURNING`); a model with relationships is saved with its graph, then read back with
    /// the relationships it declares eager, in the same transaction.
    /// - Throws: `ModelStoreError` — as `save(clearing:in:)`; nothing of the call is written.
    public func saved(clearing: [PartialKeyPath<Self>] = [], in store: ModelStore? = nil) throws -> Self {
        let names = clearing.map(PropertyName.of)
        return try ModelStore.resolve(store).write { try $0.saved(self, clearing: names) }
    }

    /// `saved(clearing:in:)`, later; `completion` gets the stored record on the completion queue.
    public func saved(
        clearing: [PartialKeyPath<Self>] = [], in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Self, ModelStoreError>) -> Void
    ) {
        let names = clearing.map(PropertyName.of)
        ModelStore.resolve(store).write({ try $0.saved(self, clearing: names) }, completion: completion)
    }

    /// `saved(clearing:in:)` without blocking the calling task.
    /// - Throws: as `saved(clearing:in:)`.
    public func saved(clearing: [PartialKeyPath<Self>] = [], in store: ModelStore? = nil) async throws -> Self {
        let names = clearing.map(PropertyName.of)
        return try await ModelStore.resolve(store).write { try $0.saved(self, clearing: names) }
    }
}
