extension Query {
    /// Deletes every record the query selects, in one statement.
    ///
    /// ```swift
    /// try Snack.filter(\.price < 1).deleteAll()   // DELETE FROM "Snack" WHERE "price" < ?
    /// ```
    /// - Returns: How many records were deleted.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    @discardableResult
    public func deleteAll(in store: ModelStore? = nil) throws -> Int {
        try ModelStore.resolve(store).write { try $0.deleteAll(self) }
    }

    /// `deleteAll(in:)` later; `completion` gets the count on the completion queue.
    public func deleteAll(in store: ModelStore? = nil, completion: @escaping @Sendable (Result<Int, ModelStoreError>) -> Void) {
        ModelStore.resolve(store).write({ try $0.deleteAll(self) }, completion: completion)
    }

    /// `deleteAll(in:)` without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    @discardableResult
    public func deleteAll(in store: ModelStore? = nil) async throws -> Int {
        try await ModelStore.resolve(store).write { try $0.deleteAll(self) }
    }

    /// Sets properties on every record the query selects, in one statement (a batch
    /// update: no model is read or decoded).
    ///
    /// ```swift
    /// try Snack.filter(\.taste == "sweet").updateAll(.set(\.price, to: 0.99))
    /// // UPDATE "Snack" SET "price" = ? WHERE "taste" = ?
    /// ```
    /// - Returns: How many records were updated.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a property the model lacks or NULL
    ///   for a non-optional one, `.constraintViolation`.
    @discardableResult
    public func updateAll(_ assignments: Assignment<Model>..., in store: ModelStore? = nil) throws -> Int {
        try ModelStore.resolve(store).write { try $0.updateAll(self, assignments) }
    }

    /// `updateAll(_:in:)` with the assignments as an array: every form takes both shapes.
    /// - Throws: As `updateAll(_:in:)`.
    @discardableResult
    public func updateAll(_ assignments: [Assignment<Model>], in store: ModelStore? = nil) throws -> Int {
        try ModelStore.resolve(store).write { try $0.updateAll(self, assignments) }
    }

    /// `updateAll(_:in:)` later; `completion` gets the count on the completion queue.
    public func updateAll(
        _ assignments: [Assignment<Model>], in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Int, ModelStoreError>) -> Void
    ) {
        ModelStore.resolve(store).write({ try $0.updateAll(self, assignments) }, completion: completion)
    }

    /// `updateAll(_:in:)` later, with the assignments listed; `completion` gets the count.
    public func updateAll(
        _ assignments: Assignment<Model>..., in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Int, ModelStoreError>) -> Void
    ) {
        updateAll(assignments, in: store, completion: completion)
    }

    /// `updateAll(_:in:)` without blocking the calling task.
    /// - Throws: As `updateAll(_:in:)`.
    @discardableResult
    public func updateAll(_ assignments: Assignment<Model>..., in store: ModelStore? = nil) async throws -> Int {
        try await updateAll(assignments, in: store)
    }

    /// `updateAll(_:in:)` without blocking the calling task, with the assignments as an array.
    /// - Throws: As `updateAll(_:in:)`.
    @discardableResult
    public func updateAll(_ assignments: [Assignment<Model>], in store: ModelStore? = nil) async throws -> Int {
        try await ModelStore.resolve(store).write { try $0.updateAll(self, assignments) }
    }
}
