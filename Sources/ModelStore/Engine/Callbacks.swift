// The callbacks take the store and report a SaveOutcome, so they live with the Engine that
// calls them; `validate()` and `Timestamps` need neither and live in Schema/.

/// Code a model runs around its saves, inside the write's transaction. A throwing
/// `willSave` aborts the whole call (nothing of it is written); `didSave` runs after the
/// record is written and may write other records through `store` — they commit or roll back
/// with the call.
///
/// ```swift
/// extension Order: SaveCallbacks {
///     func didSave(in store: ModelStore, outcome: SaveOutcome) throws {
///         try AuditEntry(order: id, outcome: "\(outcome)").save(in: store)
///     }
/// }
/// ```
///
/// Called by every path that writes a model: save, insert, update, batches, match-key
/// batches, save-matching and graph saves (for each model whose values are written).
/// `updateAll`, `deleteAll(where:)` on the plain path and raw SQL change rows without
/// decoding models and call no hook.
public protocol SaveCallbacks: StoredModel {
    /// Before the record is written. Throw to refuse the whole call.
    /// - Throws: anything; ModelStore reports it as `.callbackFailed` with it as `underlying`
    ///   (a `ModelStoreError` from a store call inside passes through as it is).
    func willSave(in store: ModelStore) throws
    /// After the record is written, with what the write did.
    /// - Throws: anything; the whole call is rolled back (`.callbackFailed`).
    func didSave(in store: ModelStore, outcome: SaveOutcome) throws
}

extension SaveCallbacks {
    /// Does nothing.
    public func willSave(in store: ModelStore) throws {}
    /// Does nothing.
    public func didSave(in store: ModelStore, outcome: SaveOutcome) throws {}
}

/// Code a model runs around the deletion of each of its records, inside the delete's
/// transaction: for `delete()`, `delete(key:)`, `deleteAll()` and `deleteAll(where:)`, and
/// for records a cascade delete rule removes. The store reads the records about to go to
/// call it, so a model with delete callbacks pays one read per delete. Raw SQL calls none.
///
/// ```swift
/// extension Photo: DeleteCallbacks {
///     func didDelete(in store: ModelStore) throws { try FileManager.default.removeItem(atPath: path) }
/// }
/// ```
public protocol DeleteCallbacks: StoredModel {
    /// Before the record is deleted (and before its delete rules run). Throw to refuse the
    /// whole call.
    /// - Throws: anything; the whole call is rolled back (`.callbackFailed`).
    func willDelete(in store: ModelStore) throws
    /// After the record is deleted.
    /// - Throws: anything; the whole call is rolled back (`.callbackFailed`).
    func didDelete(in store: ModelStore) throws
}

extension DeleteCallbacks {
    /// Does nothing.
    public func willDelete(in store: ModelStore) throws {}
    /// Does nothing.
    public func didDelete(in store: ModelStore) throws {}
}
