extension StoredModel {
    /// Deletes the record with this single-property key.
    /// - Returns: How many records were deleted: 1, or 0 when none had the key.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    @discardableResult
    public static func delete(key: some SQLValueConvertible, in store: ModelStore? = nil) throws -> Int {
        try ModelStore.resolve(store).write { try $0.delete(Self.self, key: try .single(key, model: modelName)) }
    }

    /// Deletes the record with this composite key.
    /// - Returns: How many records were deleted: 1 or 0.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    @discardableResult
    public static func delete(key: [String: any SQLValueConvertible], in store: ModelStore? = nil) throws -> Int {
        try ModelStore.resolve(store).write { try $0.delete(Self.self, key: try .components(key, model: modelName)) }
    }

    /// Deletes by key later; `completion` gets the count on the completion queue.
    public static func delete(
        key: some SQLValueConvertible, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Int, ModelStoreError>) -> Void
    ) {
        ModelStore.resolve(store).write({ try $0.delete(Self.self, key: try .single(key, model: modelName)) }, completion: completion)
    }

    /// Deletes by key without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    @discardableResult
    public static func delete(key: some SQLValueConvertible, in store: ModelStore? = nil) async throws -> Int {
        try await ModelStore.resolve(store).write { try $0.delete(Self.self, key: try .single(key, model: modelName)) }
    }

    /// Deletes by composite key later; `completion` gets the count on the completion queue.
    ///
    /// ```swift
    /// Friendship.delete(key: ["userId": 1, "friendId": "b"]) { result in print(result) }
    /// ```
    public static func delete(
        key: [String: any SQLValueConvertible], in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Int, ModelStoreError>) -> Void
    ) {
        ModelStore.resolve(store).write({ try $0.delete(Self.self, key: try .components(key, model: modelName)) }, completion: completion)
    }

    /// Deletes by composite key without blocking the calling task.
    /// - Returns: How many records were deleted: 1 or 0.
    /// - Throws: `ModelStoreError` — `.invalidKey` when the key does not name every key property.
    @discardableResult
    public static func delete(key: [String: any SQLValueConvertible], in store: ModelStore? = nil) async throws -> Int {
        try await ModelStore.resolve(store).write { try $0.delete(Self.self, key: try .components(key, model: modelName)) }
    }

    /// Deletes the stored record with this model's key.
    /// - Returns: How many records were deleted: 1, or 0 when none had the key.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    @discardableResult
    public func delete(in store: ModelStore? = nil) throws -> Int {
        try ModelStore.resolve(store).write { try $0.delete(self) }
    }

    /// Deletes this model's record later; `completion` gets the count.
    public func delete(
        in store: ModelStore? = nil, completion: @escaping @Sendable (Result<Int, ModelStoreError>) -> Void
    ) {
        ModelStore.resolve(store).write({ try $0.delete(self) }, completion: completion)
    }

    /// Deletes this model's record without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    @discardableResult
    public func delete(in store: ModelStore? = nil) async throws -> Int {
        try await ModelStore.resolve(store).write { try $0.delete(self) }
    }

    /// Deletes every record of this model.
    /// - Returns: How many records were deleted.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    @discardableResult
    public static func deleteAll(in store: ModelStore? = nil) throws -> Int {
        try ModelStore.resolve(store).write { try $0.deleteAll(Self.self) }
    }

    /// Deletes every record later; `completion` gets the count.
    public static func deleteAll(
        in store: ModelStore? = nil, completion: @escaping @Sendable (Result<Int, ModelStoreError>) -> Void
    ) {
        ModelStore.resolve(store).write({ try $0.deleteAll(Self.self) }, completion: completion)
    }

    /// Deletes every record without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    @discardableResult
    public static func deleteAll(in store: ModelStore? = nil) async throws -> Int {
        try await ModelStore.resolve(store).write { try $0.deleteAll(Self.self) }
    }
}
