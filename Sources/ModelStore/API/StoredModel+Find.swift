extension StoredModel {
    static var modelName: String { String(describing: Self.self) }

    /// The model whose single-property primary key is `key`, or nil, with the relationships
    /// `loading` names (by default those declared `.loading(.eager)`, one level deep; see `LoadOptions`).
    ///
    /// ```swift
    /// let snack = try Snack.find(key: 123)   // SELECT … FROM "Snack" WHERE "snackId" = ?
    /// ```
    /// - Throws: `ModelStoreError` — `.invalidKey` when the model's key has several
    ///   properties or `key` can never match its column, `.decodingFailed` when the stored
    ///   record does not decode.
    public static func find(key: some SQLValueConvertible, loading: LoadOptions = .declared, in store: ModelStore? = nil) throws -> Self? {
        try ModelStore.resolve(store).read { try $0.find(Self.self, key: try .single(key, model: modelName), loading: loading) }
    }

    /// The model whose composite primary key has these components, or nil.
    ///
    /// ```swift
    /// let link = try Friendship.find(key: ["userId": 1, "friendId": 2])
    /// ```
    /// - Throws: `ModelStoreError` with code `.invalidKey` when a component is missing,
    ///   extra, or of a type its column can never match.
    public static func find(key: [String: any SQLValueConvertible], loading: LoadOptions = .declared, in store: ModelStore? = nil) throws
        -> Self?
    {
        try ModelStore.resolve(store).read { try $0.find(Self.self, key: try .components(key, model: modelName), loading: loading) }
    }

    /// Finds by key later; `completion` gets the model or nil on the completion queue.
    public static func find(
        key: some SQLValueConvertible, loading: LoadOptions = .declared, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Self?, ModelStoreError>) -> Void
    ) {
        ModelStore.resolve(store).read(
            { try $0.find(Self.self, key: try .single(key, model: modelName), loading: loading) }, completion: completion)
    }

    /// Finds by composite key later; `completion` gets the model or nil.
    public static func find(
        key: [String: any SQLValueConvertible], loading: LoadOptions = .declared, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Self?, ModelStoreError>) -> Void
    ) {
        ModelStore.resolve(store).read(
            { try $0.find(Self.self, key: try .components(key, model: modelName), loading: loading) }, completion: completion)
    }

    /// Finds by key without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func find(key: some SQLValueConvertible, loading: LoadOptions = .declared, in store: ModelStore? = nil) async throws
        -> Self?
    {
        try await ModelStore.resolve(store).read { try $0.find(Self.self, key: try .single(key, model: modelName), loading: loading) }
    }

    /// Finds by composite key without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func find(key: [String: any SQLValueConvertible], loading: LoadOptions = .declared, in store: ModelStore? = nil)
        async throws -> Self?
    {
        try await ModelStore.resolve(store).read { try $0.find(Self.self, key: try .components(key, model: modelName), loading: loading) }
    }

    /// Every stored model, in primary-key order, with the relationships `loading` names.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func findAll(loading: LoadOptions = .declared, in store: ModelStore? = nil) throws -> [Self] {
        try ModelStore.resolve(store).read { try $0.findAll(Self.self, loading: loading) }
    }

    /// Every stored model, delivered later on the completion queue.
    public static func findAll(
        loading: LoadOptions = .declared, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<[Self], ModelStoreError>) -> Void
    ) {
        ModelStore.resolve(store).read({ try $0.findAll(Self.self, loading: loading) }, completion: completion)
    }

    /// Every stored model, without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func findAll(loading: LoadOptions = .declared, in store: ModelStore? = nil) async throws -> [Self] {
        try await ModelStore.resolve(store).read { try $0.findAll(Self.self, loading: loading) }
    }

    /// How many records are stored.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func count(in store: ModelStore? = nil) throws -> Int {
        try ModelStore.resolve(store).read { try $0.count(Self.self) }
    }

    /// How many records are stored, delivered later on the completion queue.
    public static func count(
        in store: ModelStore? = nil, completion: @escaping @Sendable (Result<Int, ModelStoreError>) -> Void
    ) {
        ModelStore.resolve(store).read({ try $0.count(Self.self) }, completion: completion)
    }

    /// How many records are stored, without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func count(in store: ModelStore? = nil) async throws -> Int {
        try await ModelStore.resolve(store).read { try $0.count(Self.self) }
    }

    /// Whether a record has this single-property key.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func exists(key: some SQLValueConvertible, in store: ModelStore? = nil) throws -> Bool {
        try ModelStore.resolve(store).read { try $0.exists(Self.self, key: try .single(key, model: modelName)) }
    }

    /// Whether a record has this composite key.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func exists(key: [String: any SQLValueConvertible], in store: ModelStore? = nil) throws -> Bool {
        try ModelStore.resolve(store).read { try $0.exists(Self.self, key: try .components(key, model: modelName)) }
    }

    /// Whether a record has this key, delivered later on the completion queue.
    public static func exists(
        key: some SQLValueConvertible, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Bool, ModelStoreError>) -> Void
    ) {
        ModelStore.resolve(store).read({ try $0.exists(Self.self, key: try .single(key, model: modelName)) }, completion: completion)
    }

    /// Whether a record has this key, without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func exists(key: some SQLValueConvertible, in store: ModelStore? = nil) async throws -> Bool {
        try await ModelStore.resolve(store).read { try $0.exists(Self.self, key: try .single(key, model: modelName)) }
    }

    /// Whether a record has this composite key, delivered later on the completion queue.
    public static func exists(
        key: [String: any SQLValueConvertible], in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Bool, ModelStoreError>) -> Void
    ) {
        ModelStore.resolve(store).read({ try $0.exists(Self.self, key: try .components(key, model: modelName)) }, completion: completion)
    }

    /// Whether a record has this composite key, without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidKey` when the key does not name every key property.
    public static func exists(key: [String: any SQLValueConvertible], in store: ModelStore? = nil) async throws -> Bool {
        try await ModelStore.resolve(store).read { try $0.exists(Self.self, key: try .components(key, model: modelName)) }
    }
}
