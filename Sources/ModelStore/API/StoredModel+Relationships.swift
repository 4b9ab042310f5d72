extension StoredModel {
    /// This model with its relationships filled from the store, for a value read earlier
    /// without them (or whose relationships may have changed since).
    ///
    /// ```swift
    /// let bare = try Team.find(key: 1, loading: .none)!
    /// let team = try bare.loadingRelationships(.only("players"))
    /// ```
    /// Stored properties keep the values this model holds; only relationships are filled.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func loadingRelationships(_ options: LoadOptions = .direct, in store: ModelStore? = nil) throws -> Self {
        try ModelStore.resolve(store).read { try $0.loadRelationships(of: [self], loading: options)[0] }
    }

    /// `loadingRelationships(_:in:)`, delivered later on the completion queue.
    public func loadingRelationships(
        _ options: LoadOptions = .direct, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Self, ModelStoreError>) -> Void
    ) {
        ModelStore.resolve(store).read({ try $0.loadRelationships(of: [self], loading: options)[0] }, completion: completion)
    }

    /// `loadingRelationships(_:in:)` without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func loadingRelationships(_ options: LoadOptions = .direct, in store: ModelStore? = nil) async throws -> Self {
        try await ModelStore.resolve(store).read { try $0.loadRelationships(of: [self], loading: options)[0] }
    }

    /// `models` with their relationships filled, in bulk: one query per relationship.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func loadingRelationships(of models: [Self], _ options: LoadOptions = .direct, in store: ModelStore? = nil) throws
        -> [Self]
    {
        try ModelStore.resolve(store).read { try $0.loadRelationships(of: models, loading: options) }
    }

    /// `loadingRelationships(of:_:in:)`, delivered later on the completion queue.
    public static func loadingRelationships(
        of models: [Self], _ options: LoadOptions = .direct, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<[Self], ModelStoreError>) -> Void
    ) {
        ModelStore.resolve(store).read({ try $0.loadRelationships(of: models, loading: options) }, completion: completion)
    }

    /// `loadingRelationships(of:_:in:)` without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func loadingRelationships(of models: [Self], _ options: LoadOptions = .direct, in store: ModelStore? = nil) async throws
        -> [Self]
    {
        try await ModelStore.resolve(store).read { try $0.loadRelationships(of: models, loading: options) }
    }
}
