extension Query {
    /// Every model the query selects, in its order (by primary key when it has none).
    ///
    /// ```swift
    /// let page = try Snack.filter(\.price > 1).order(.descending(\.price)).page(0, rows: 20).findAll()
    /// // SELECT … FROM "Snack" WHERE "price" > ? ORDER BY "price" DESC, "snackId" LIMIT ? OFFSET ?
    /// ```
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a column the model lacks or
    ///   impossible paging, `.decodingFailed` for a record that does not decode.
    public func findAll(in store: ModelStore? = nil) throws -> [Model] {
        try ModelStore.resolve(store).read { try $0.findAll(self) }
    }

    /// `findAll(in:)`, delivered later on the store's completion queue.
    public func findAll(in store: ModelStore? = nil, completion: @escaping @Sendable (Result<[Model], ModelStoreError>) -> Void) {
        ModelStore.resolve(store).read({ try $0.findAll(self) }, completion: completion)
    }

    /// `findAll(in:)` without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func findAll(in store: ModelStore? = nil) async throws -> [Model] {
        try await ModelStore.resolve(store).read { try $0.findAll(self) }
    }

    /// The first model the query selects, or nil.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func findFirst(in store: ModelStore? = nil) throws -> Model? {
        try ModelStore.resolve(store).read { try $0.findFirst(self) }
    }

    /// `findFirst(in:)`, delivered later on the store's completion queue.
    public func findFirst(in store: ModelStore? = nil, completion: @escaping @Sendable (Result<Model?, ModelStoreError>) -> Void) {
        ModelStore.resolve(store).read({ try $0.findFirst(self) }, completion: completion)
    }

    /// `findFirst(in:)` without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func findFirst(in store: ModelStore? = nil) async throws -> Model? {
        try await ModelStore.resolve(store).read { try $0.findFirst(self) }
    }

    /// How many records the query selects (for a paged query, how many its page holds).
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func count(in store: ModelStore? = nil) throws -> Int {
        try ModelStore.resolve(store).read { try $0.countMatching(self) }
    }

    /// `count(in:)`, delivered later on the store's completion queue.
    public func count(in store: ModelStore? = nil, completion: @escaping @Sendable (Result<Int, ModelStoreError>) -> Void) {
        ModelStore.resolve(store).read({ try $0.countMatching(self) }, completion: completion)
    }

    /// `count(in:)` without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func count(in store: ModelStore? = nil) async throws -> Int {
        try await ModelStore.resolve(store).read { try $0.countMatching(self) }
    }

    /// Whether the query selects any record.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func exists(in store: ModelStore? = nil) throws -> Bool {
        try ModelStore.resolve(store).read { try $0.existsMatching(self) }
    }

    /// `exists(in:)`, delivered later on the store's completion queue.
    public func exists(in store: ModelStore? = nil, completion: @escaping @Sendable (Result<Bool, ModelStoreError>) -> Void) {
        ModelStore.resolve(store).read({ try $0.existsMatching(self) }, completion: completion)
    }

    /// `exists(in:)` without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func exists(in store: ModelStore? = nil) async throws -> Bool {
        try await ModelStore.resolve(store).read { try $0.existsMatching(self) }
    }

    /// The query's records as another `Decodable` type, reading only the columns it decodes:
    /// for lists that need a few properties of many records.
    ///
    /// ```swift
    /// struct SnackName: Decodable, Sendable { var snackId: Int64; var name: String? }
    /// let names = try Snack.order(.ascending(\.name)).findAll(as: SnackName.self)
    /// ```
    /// - Throws: `ModelStoreError` with code `.invalidQuery` when `Row` reads a property the
    ///   model does not store.
    public func findAll<Row: Decodable & Sendable>(as type: Row.Type, in store: ModelStore? = nil) throws -> [Row] {
        try ModelStore.resolve(store).read { try $0.findAll(self, as: type) }
    }

    /// `findAll(as:in:)`, delivered later on the store's completion queue.
    public func findAll<Row: Decodable & Sendable>(
        as type: Row.Type, in store: ModelStore? = nil, completion: @escaping @Sendable (Result<[Row], ModelStoreError>) -> Void
    ) {
        ModelStore.resolve(store).read({ try $0.findAll(self, as: type) }, completion: completion)
    }

    /// `findAll(as:in:)` without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func findAll<Row: Decodable & Sendable>(as type: Row.Type, in store: ModelStore? = nil) async throws -> [Row] {
        try await ModelStore.resolve(store).read { try $0.findAll(self, as: type) }
    }

    // The names these had before they were named after `findAll`, which they narrow.

    /// `findAll(as:in:)`, under its earlier name.
    /// - Throws: as `findAll(as:in:)`.
    @available(*, deprecated, renamed: "findAll(as:in:)")
    public func fetch<Row: Decodable & Sendable>(_ type: Row.Type, in store: ModelStore? = nil) throws -> [Row] {
        try findAll(as: type, in: store)
    }

    /// `findAll(as:in:completion:)`, under its earlier name.
    @available(*, deprecated, renamed: "findAll(as:in:completion:)")
    public func fetch<Row: Decodable & Sendable>(
        _ type: Row.Type, in store: ModelStore? = nil, completion: @escaping @Sendable (Result<[Row], ModelStoreError>) -> Void
    ) {
        findAll(as: type, in: store, completion: completion)
    }

    /// `findAll(as:in:)` without blocking the calling task, under its earlier name.
    /// - Throws: as `findAll(as:in:)`.
    @available(*, deprecated, renamed: "findAll(as:in:)")
    public func fetch<Row: Decodable & Sendable>(_ type: Row.Type, in store: ModelStore? = nil) async throws -> [Row] {
        try await findAll(as: type, in: store)
    }
}
