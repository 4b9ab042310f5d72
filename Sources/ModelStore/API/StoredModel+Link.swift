/// Saves that link to related records only when they exist (`RelatedRecords`).
extension StoredModel {
    /// Saves the model by the merge rule, treating the related models it carries as `related` says.
    ///
    /// ```swift
    /// var player = Player(id: 4)
    /// player.team = Team(id: 99)                     // only the key
    /// try player.save(related: .mustExist)           // .notFound: no team 99, nothing saved
    /// try player.save(related: .skipMissing)         // saves the player, without the link
    /// ```
    /// - Throws: `ModelStoreError` — `.notFound` listing every missing related record under
    ///   `.mustExist`; otherwise as `save(clearing:in:)`. Nothing of the call is written.
    @discardableResult
    public func save(related: RelatedRecords, clearing: [PartialKeyPath<Self>] = [], in store: ModelStore? = nil) throws -> SaveOutcome {
        let names = clearing.map(PropertyName.of)
        return try ModelStore.resolve(store).write { try $0.save(self, mode: .upsert, clearing: names, related: related) }
    }

    /// `save(related:clearing:in:)`, later; `completion` gets the outcome on the completion queue.
    public func save(
        related: RelatedRecords, clearing: [PartialKeyPath<Self>] = [], in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<SaveOutcome, ModelStoreError>) -> Void
    ) {
        let names = clearing.map(PropertyName.of)
        ModelStore.resolve(store).write({ try $0.save(self, mode: .upsert, clearing: names, related: related) }, completion: completion)
    }

    /// `save(related:clearing:in:)` without blocking the calling task.
    /// - Throws: as `save(related:clearing:in:)`.
    @discardableResult
    public func save(related: RelatedRecords, clearing: [PartialKeyPath<Self>] = [], in store: ModelStore? = nil) async throws
        -> SaveOutcome
    {
        let names = clearing.map(PropertyName.of)
        return try await ModelStore.resolve(store).write { try $0.save(self, mode: .upsert, clearing: names, related: related) }
    }

    /// Saves a batch in one transaction, treating the related models its elements carry as
    /// `related` says. Under `.mustExist` the error lists every missing record of the batch.
    ///
    /// ```swift
    /// try Package.save(packages, related: .skipMissing)   // dependencies on unknown names are left out
    /// ```
    /// - Throws: `ModelStoreError` — `.notFound` listing every missing related record under
    ///   `.mustExist`; otherwise as `save(_:in:)`. Nothing of the batch is written.
    @discardableResult
    public static func save(_ models: [Self], related: RelatedRecords, in store: ModelStore? = nil) throws -> BatchSaveOutcome {
        try ModelStore.resolve(store).write { try $0.save(models, related: related) }
    }

    /// `save(_:related:in:)`, later; `completion` gets the result on the completion queue.
    public static func save(
        _ models: [Self], related: RelatedRecords, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<BatchSaveOutcome, ModelStoreError>) -> Void
    ) {
        ModelStore.resolve(store).write({ try $0.save(models, related: related) }, completion: completion)
    }

    /// `save(_:related:in:)` without blocking the calling task.
    /// - Throws: as `save(_:related:in:)`.
    @discardableResult
    public static func save(_ models: [Self], related: RelatedRecords, in store: ModelStore? = nil) async throws -> BatchSaveOutcome {
        try await ModelStore.resolve(store).write { try $0.save(models, related: related) }
    }
}
