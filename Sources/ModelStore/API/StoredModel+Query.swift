/// Shortcuts for the common queries; each builds a `Query` and runs it. For paging,
/// aggregates and projections, start from `filter(_:)`, `order(_:)` or `all()`.
extension StoredModel {
    /// Every model matching `predicate`, sorted by `orderBy` (by primary key when empty), with
    /// the relationships `loading` names (by default those declared `.eager`).
    ///
    /// ```swift
    /// let sweets = try Snack.findAll(where: \.taste == "sweet" && \.price < 2, orderBy: [.ascending(\.price)])
    /// ```
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func findAll(
        where predicate: Condition<Self>, orderBy: [Ordering<Self>] = [], loading: LoadOptions = .declared,
        in store: ModelStore? = nil
    ) throws
        -> [Self]
    {
        try filter(predicate).order(orderBy).loading(loading).findAll(in: store)
    }

    /// `findAll(where:orderBy:loading:in:)`, delivered later on the completion queue.
    public static func findAll(
        where predicate: Condition<Self>, orderBy: [Ordering<Self>] = [], loading: LoadOptions = .declared,
        in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<[Self], ModelStoreError>) -> Void
    ) {
        filter(predicate).order(orderBy).loading(loading).findAll(in: store, completion: completion)
    }

    /// `findAll(where:orderBy:loading:in:)` without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func findAll(
        where predicate: Condition<Self>, orderBy: [Ordering<Self>] = [], loading: LoadOptions = .declared,
        in store: ModelStore? = nil
    ) async throws
        -> [Self]
    {
        try await filter(predicate).order(orderBy).loading(loading).findAll(in: store)
    }

    /// The first model matching `predicate` in `orderBy` order, or nil.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func findFirst(
        where predicate: Condition<Self>, orderBy: [Ordering<Self>] = [], loading: LoadOptions = .declared,
        in store: ModelStore? = nil
    ) throws
        -> Self?
    {
        try filter(predicate).order(orderBy).loading(loading).findFirst(in: store)
    }

    /// `findFirst(where:orderBy:loading:in:)`, delivered later on the completion queue.
    public static func findFirst(
        where predicate: Condition<Self>, orderBy: [Ordering<Self>] = [], loading: LoadOptions = .declared,
        in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Self?, ModelStoreError>) -> Void
    ) {
        filter(predicate).order(orderBy).loading(loading).findFirst(in: store, completion: completion)
    }

    /// `findFirst(where:orderBy:loading:in:)` without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func findFirst(
        where predicate: Condition<Self>, orderBy: [Ordering<Self>] = [], loading: LoadOptions = .declared,
        in store: ModelStore? = nil
    ) async throws
        -> Self?
    {
        try await filter(predicate).order(orderBy).loading(loading).findFirst(in: store)
    }

    /// Every model whose `property` equals `value` (the original's `findByAttribute`).
    ///
    /// ```swift
    /// let sweets = try Snack.findAll(by: \.taste, equals: "sweet")
    /// ```
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func findAll<Value: SQLValueConvertible>(
        by property: KeyPath<Self, Value>, equals value: Value, orderBy: [Ordering<Self>] = [], loading: LoadOptions = .declared,
        in store: ModelStore? = nil
    ) throws -> [Self] {
        try filter(property == value).order(orderBy).loading(loading).findAll(in: store)
    }

    /// `findAll(by:equals:orderBy:loading:in:)`, delivered later on the completion queue.
    public static func findAll<Value: SQLValueConvertible>(
        by property: KeyPath<Self, Value>, equals value: Value, orderBy: [Ordering<Self>] = [], loading: LoadOptions = .declared,
        in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<[Self], ModelStoreError>) -> Void
    ) {
        filter(property == value).order(orderBy).loading(loading).findAll(in: store, completion: completion)
    }

    /// `findAll(by:equals:orderBy:loading:in:)` without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func findAll<Value: SQLValueConvertible>(
        by property: KeyPath<Self, Value>, equals value: Value, orderBy: [Ordering<Self>] = [], loading: LoadOptions = .declared,
        in store: ModelStore? = nil
    ) async throws -> [Self] {
        try await filter(property == value).order(orderBy).loading(loading).findAll(in: store)
    }

    /// The first model whose `property` equals `value`, or nil.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func findFirst<Value: SQLValueConvertible>(
        by property: KeyPath<Self, Value>, equals value: Value, orderBy: [Ordering<Self>] = [], loading: LoadOptions = .declared,
        in store: ModelStore? = nil
    ) throws -> Self? {
        try filter(property == value).order(orderBy).loading(loading).findFirst(in: store)
    }

    /// `findFirst(by:equals:orderBy:loading:in:)`, delivered later on the completion queue.
    public static func findFirst<Value: SQLValueConvertible>(
        by property: KeyPath<Self, Value>, equals value: Value, orderBy: [Ordering<Self>] = [], loading: LoadOptions = .declared,
        in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Self?, ModelStoreError>) -> Void
    ) {
        filter(property == value).order(orderBy).loading(loading).findFirst(in: store, completion: completion)
    }

    /// `findFirst(by:equals:orderBy:loading:in:)` without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func findFirst<Value: SQLValueConvertible>(
        by property: KeyPath<Self, Value>, equals value: Value, orderBy: [Ordering<Self>] = [], loading: LoadOptions = .declared,
        in store: ModelStore? = nil
    ) async throws -> Self? {
        try await filter(property == value).order(orderBy).loading(loading).findFirst(in: store)
    }

    /// How many records match `predicate`.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func count(where predicate: Condition<Self>, in store: ModelStore? = nil) throws -> Int {
        try filter(predicate).count(in: store)
    }

    /// `count(where:in:)`, delivered later on the completion queue.
    public static func count(
        where predicate: Condition<Self>, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Int, ModelStoreError>) -> Void
    ) {
        filter(predicate).count(in: store, completion: completion)
    }

    /// `count(where:in:)` without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func count(where predicate: Condition<Self>, in store: ModelStore? = nil) async throws -> Int {
        try await filter(predicate).count(in: store)
    }

    /// Whether any record matches `predicate`.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func exists(where predicate: Condition<Self>, in store: ModelStore? = nil) throws -> Bool {
        try filter(predicate).exists(in: store)
    }

    /// `exists(where:in:)`, delivered later on the completion queue.
    public static func exists(
        where predicate: Condition<Self>, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Bool, ModelStoreError>) -> Void
    ) {
        filter(predicate).exists(in: store, completion: completion)
    }

    /// `exists(where:in:)` without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public static func exists(where predicate: Condition<Self>, in store: ModelStore? = nil) async throws -> Bool {
        try await filter(predicate).exists(in: store)
    }

    /// Deletes every record matching `predicate`, in one statement; returns how many went.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    @discardableResult
    public static func deleteAll(where predicate: Condition<Self>, in store: ModelStore? = nil) throws -> Int {
        try filter(predicate).deleteAll(in: store)
    }

    /// `deleteAll(where:in:)` later; `completion` gets the count on the completion queue.
    public static func deleteAll(
        where predicate: Condition<Self>, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Int, ModelStoreError>) -> Void
    ) {
        filter(predicate).deleteAll(in: store, completion: completion)
    }

    /// `deleteAll(where:in:)` without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    @discardableResult
    public static func deleteAll(where predicate: Condition<Self>, in store: ModelStore? = nil) async throws -> Int {
        try await filter(predicate).deleteAll(in: store)
    }

    /// Sets properties on every record matching `predicate`, in one statement; returns how
    /// many records changed.
    ///
    /// ```swift
    /// try Snack.updateAll(where: \.taste == "sweet", set: [.set(\.price, to: 0.99)])
    /// ```
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    @discardableResult
    public static func updateAll(where predicate: Condition<Self>, set assignments: [Assignment<Self>], in store: ModelStore? = nil) throws
        -> Int
    {
        try ModelStore.resolve(store).write { try $0.updateAll(filter(predicate), assignments) }
    }

    /// `updateAll(where:set:in:)` later; `completion` gets the count on the completion queue.
    public static func updateAll(
        where predicate: Condition<Self>, set assignments: [Assignment<Self>], in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Int, ModelStoreError>) -> Void
    ) {
        filter(predicate).updateAll(assignments, in: store, completion: completion)
    }

    /// `updateAll(where:set:in:)` without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.encodingFailed` for a value SQLite cannot hold,
    ///   `.constraintViolation`, `.schemaMismatch` when the table changed behind the store's back,
    ///   `.readOnly`, `.busy`, `.storeFull`, `.fileReplaced`, `.closed` or `.noStore`; nothing of the call is
    ///   written.
    @discardableResult
    public static func updateAll(where predicate: Condition<Self>, set assignments: [Assignment<Self>], in store: ModelStore? = nil)
        async throws -> Int
    {
        try await ModelStore.resolve(store).write { try $0.updateAll(filter(predicate), assignments) }
    }
}
