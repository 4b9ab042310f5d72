import Foundation

/// The shortcuts of `StoredModel+Query.swift` taking Foundation's `#Predicate` where they take
/// a `Condition`, and `SortDescriptor`s where they take orderings. Each translates the
/// predicate to the same bound SQL a typed condition produces; a predicate that cannot be
/// translated throws `.invalidQuery` naming the expression before any SQL runs (to evaluate
/// such a predicate in Swift, ask for it: `filter(_:untranslated: .evaluateInMemory)`).
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension StoredModel {
    // MARK: findAll

    /// Every model for which `predicate` is true, sorted by `orderBy` (by primary key when
    /// empty), with the relationships `loading` names.
    ///
    /// ```swift
    /// let limit = 2.0
    /// let cheap = try Snack.findAll(where: #Predicate { ($0.price ?? 0) < limit }, orderBy: [.ascending(\.name)])
    /// ```
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a predicate part that does not translate
    ///   (named in the message) or a property the model cannot use, `.decodingFailed`,
    ///   `.schemaMismatch`, `.closed` or `.noStore`, and the store's open errors.
    public static func findAll(
        where predicate: Predicate<Self>, orderBy: [Ordering<Self>] = [], loading: LoadOptions = .declared, in store: ModelStore? = nil
    ) throws -> [Self] {
        try findAll(where: Condition(predicate), orderBy: orderBy, loading: loading, in: store)
    }

    /// `findAll(where:orderBy:loading:in:)` with a predicate, delivered later on the completion queue.
    public static func findAll(
        where predicate: Predicate<Self>, orderBy: [Ordering<Self>] = [], loading: LoadOptions = .declared, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<[Self], ModelStoreError>) -> Void
    ) {
        findAll(where: Condition(predicate), orderBy: orderBy, loading: loading, in: store, completion: completion)
    }

    /// `findAll(where:orderBy:loading:in:)` with a predicate, without blocking the calling task.
    /// - Throws: `ModelStoreError`, as the synchronous form.
    public static func findAll(
        where predicate: Predicate<Self>, orderBy: [Ordering<Self>] = [], loading: LoadOptions = .declared, in store: ModelStore? = nil
    ) async throws -> [Self] {
        try await findAll(where: Condition(predicate), orderBy: orderBy, loading: loading, in: store)
    }

    /// Every model for which `predicate` is true, sorted by Foundation's `SortDescriptor`s.
    ///
    /// ```swift
    /// let dearest = try Snack.findAll(where: #Predicate { $0.price != nil }, orderBy: [SortDescriptor(\Snack.price, order: .reverse)])
    /// ```
    /// - Throws: `ModelStoreError`, as `findAll(where:orderBy:loading:in:)`; `.invalidQuery` for a
    ///   descriptor that compares strings with a localized comparator.
    public static func findAll(
        where predicate: Predicate<Self>, orderBy: [SortDescriptor<Self>], loading: LoadOptions = .declared, in store: ModelStore? = nil
    ) throws -> [Self] {
        try findAll(where: Condition(predicate), orderBy: orderBy.map { Ordering($0) }, loading: loading, in: store)
    }

    /// `findAll(where:orderBy:loading:in:)` with sort descriptors, delivered later on the completion queue.
    public static func findAll(
        where predicate: Predicate<Self>, orderBy: [SortDescriptor<Self>], loading: LoadOptions = .declared, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<[Self], ModelStoreError>) -> Void
    ) {
        findAll(where: Condition(predicate), orderBy: orderBy.map { Ordering($0) }, loading: loading, in: store, completion: completion)
    }

    /// `findAll(where:orderBy:loading:in:)` with sort descriptors, without blocking the calling task.
    /// - Throws: `ModelStoreError`, as the synchronous form.
    public static func findAll(
        where predicate: Predicate<Self>, orderBy: [SortDescriptor<Self>], loading: LoadOptions = .declared, in store: ModelStore? = nil
    ) async throws -> [Self] {
        try await findAll(where: Condition(predicate), orderBy: orderBy.map { Ordering($0) }, loading: loading, in: store)
    }

    /// Every model matching a typed condition, sorted by Foundation's `SortDescriptor`s.
    ///
    /// ```swift
    /// let sweets = try Snack.findAll(where: \.taste == "sweet", orderBy: [SortDescriptor(\Snack.price)])
    /// ```
    /// - Throws: `ModelStoreError`, as `findAll(where:orderBy:loading:in:)`.
    public static func findAll(
        where condition: Condition<Self>, orderBy: [SortDescriptor<Self>], loading: LoadOptions = .declared, in store: ModelStore? = nil
    ) throws -> [Self] {
        try findAll(where: condition, orderBy: orderBy.map { Ordering($0) }, loading: loading, in: store)
    }

    /// `findAll(where:orderBy:loading:in:)` with sort descriptors, delivered later on the completion queue.
    public static func findAll(
        where condition: Condition<Self>, orderBy: [SortDescriptor<Self>], loading: LoadOptions = .declared, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<[Self], ModelStoreError>) -> Void
    ) {
        findAll(where: condition, orderBy: orderBy.map { Ordering($0) }, loading: loading, in: store, completion: completion)
    }

    /// `findAll(where:orderBy:loading:in:)` with sort descriptors, without blocking the calling task.
    /// - Throws: `ModelStoreError`, as the synchronous form.
    public static func findAll(
        where condition: Condition<Self>, orderBy: [SortDescriptor<Self>], loading: LoadOptions = .declared, in store: ModelStore? = nil
    ) async throws -> [Self] {
        try await findAll(where: condition, orderBy: orderBy.map { Ordering($0) }, loading: loading, in: store)
    }

    // MARK: findFirst

    /// The first model for which `predicate` is true in `orderBy` order, or nil.
    ///
    /// ```swift
    /// let first = try Snack.findFirst(where: #Predicate { $0.name.starts(with: "P") }, orderBy: [.ascending(\.name)])
    /// ```
    /// - Throws: `ModelStoreError`, as `findAll(where:orderBy:loading:in:)`.
    public static func findFirst(
        where predicate: Predicate<Self>, orderBy: [Ordering<Self>] = [], loading: LoadOptions = .declared, in store: ModelStore? = nil
    ) throws -> Self? {
        try findFirst(where: Condition(predicate), orderBy: orderBy, loading: loading, in: store)
    }

    /// `findFirst(where:orderBy:loading:in:)` with a predicate, delivered later on the completion queue.
    public static func findFirst(
        where predicate: Predicate<Self>, orderBy: [Ordering<Self>] = [], loading: LoadOptions = .declared, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Self?, ModelStoreError>) -> Void
    ) {
        findFirst(where: Condition(predicate), orderBy: orderBy, loading: loading, in: store, completion: completion)
    }

    /// `findFirst(where:orderBy:loading:in:)` with a predicate, without blocking the calling task.
    /// - Throws: `ModelStoreError`, as the synchronous form.
    public static func findFirst(
        where predicate: Predicate<Self>, orderBy: [Ordering<Self>] = [], loading: LoadOptions = .declared, in store: ModelStore? = nil
    ) async throws -> Self? {
        try await findFirst(where: Condition(predicate), orderBy: orderBy, loading: loading, in: store)
    }

    /// The first model for which `predicate` is true in `SortDescriptor` order, or nil.
    /// - Throws: `ModelStoreError`, as `findAll(where:orderBy:loading:in:)`.
    public static func findFirst(
        where predicate: Predicate<Self>, orderBy: [SortDescriptor<Self>], loading: LoadOptions = .declared, in store: ModelStore? = nil
    ) throws -> Self? {
        try findFirst(where: Condition(predicate), orderBy: orderBy.map { Ordering($0) }, loading: loading, in: store)
    }

    /// `findFirst(where:orderBy:loading:in:)` with sort descriptors, delivered later on the completion queue.
    public static func findFirst(
        where predicate: Predicate<Self>, orderBy: [SortDescriptor<Self>], loading: LoadOptions = .declared, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Self?, ModelStoreError>) -> Void
    ) {
        findFirst(where: Condition(predicate), orderBy: orderBy.map { Ordering($0) }, loading: loading, in: store, completion: completion)
    }

    /// `findFirst(where:orderBy:loading:in:)` with sort descriptors, without blocking the calling task.
    /// - Throws: `ModelStoreError`, as the synchronous form.
    public static func findFirst(
        where predicate: Predicate<Self>, orderBy: [SortDescriptor<Self>], loading: LoadOptions = .declared, in store: ModelStore? = nil
    ) async throws -> Self? {
        try await findFirst(where: Condition(predicate), orderBy: orderBy.map { Ordering($0) }, loading: loading, in: store)
    }

    /// The first model matching a typed condition in `SortDescriptor` order, or nil.
    /// - Throws: `ModelStoreError`, as `findAll(where:orderBy:loading:in:)`.
    public static func findFirst(
        where condition: Condition<Self>, orderBy: [SortDescriptor<Self>], loading: LoadOptions = .declared, in store: ModelStore? = nil
    ) throws -> Self? {
        try findFirst(where: condition, orderBy: orderBy.map { Ordering($0) }, loading: loading, in: store)
    }

    /// `findFirst(where:orderBy:loading:in:)` with sort descriptors, delivered later on the completion queue.
    public static func findFirst(
        where condition: Condition<Self>, orderBy: [SortDescriptor<Self>], loading: LoadOptions = .declared, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Self?, ModelStoreError>) -> Void
    ) {
        findFirst(where: condition, orderBy: orderBy.map { Ordering($0) }, loading: loading, in: store, completion: completion)
    }

    /// `findFirst(where:orderBy:loading:in:)` with sort descriptors, without blocking the calling task.
    /// - Throws: `ModelStoreError`, as the synchronous form.
    public static func findFirst(
        where condition: Condition<Self>, orderBy: [SortDescriptor<Self>], loading: LoadOptions = .declared, in store: ModelStore? = nil
    ) async throws -> Self? {
        try await findFirst(where: condition, orderBy: orderBy.map { Ordering($0) }, loading: loading, in: store)
    }

    // MARK: Counting

    /// How many records `predicate` is true for, counted in SQL.
    ///
    /// ```swift
    /// let priced = try Snack.count(where: #Predicate { $0.price != nil })
    /// ```
    /// - Throws: `ModelStoreError`, as `findAll(where:orderBy:loading:in:)`.
    public static func count(where predicate: Predicate<Self>, in store: ModelStore? = nil) throws -> Int {
        try count(where: Condition(predicate), in: store)
    }

    /// `count(where:in:)` with a predicate, delivered later on the completion queue.
    public static func count(
        where predicate: Predicate<Self>, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Int, ModelStoreError>) -> Void
    ) {
        count(where: Condition(predicate), in: store, completion: completion)
    }

    /// `count(where:in:)` with a predicate, without blocking the calling task.
    /// - Throws: `ModelStoreError`, as the synchronous form.
    public static func count(where predicate: Predicate<Self>, in store: ModelStore? = nil) async throws -> Int {
        try await count(where: Condition(predicate), in: store)
    }

    /// Whether `predicate` is true for any record.
    ///
    /// ```swift
    /// let anyFree = try Snack.exists(where: #Predicate { $0.price == 0 })
    /// ```
    /// - Throws: `ModelStoreError`, as `findAll(where:orderBy:loading:in:)`.
    public static func exists(where predicate: Predicate<Self>, in store: ModelStore? = nil) throws -> Bool {
        try exists(where: Condition(predicate), in: store)
    }

    /// `exists(where:in:)` with a predicate, delivered later on the completion queue.
    public static func exists(
        where predicate: Predicate<Self>, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Bool, ModelStoreError>) -> Void
    ) {
        exists(where: Condition(predicate), in: store, completion: completion)
    }

    /// `exists(where:in:)` with a predicate, without blocking the calling task.
    /// - Throws: `ModelStoreError`, as the synchronous form.
    public static func exists(where predicate: Predicate<Self>, in store: ModelStore? = nil) async throws -> Bool {
        try await exists(where: Condition(predicate), in: store)
    }

    // MARK: Changing

    /// Deletes every record `predicate` is true for, in one statement; returns how many went.
    ///
    /// ```swift
    /// let stale = try Snack.deleteAll(where: #Predicate { $0.price == nil })
    /// ```
    /// - Throws: `ModelStoreError`, as `findAll(where:orderBy:loading:in:)`; a failed delete
    ///   leaves every record in place.
    @discardableResult
    public static func deleteAll(where predicate: Predicate<Self>, in store: ModelStore? = nil) throws -> Int {
        try deleteAll(where: Condition(predicate), in: store)
    }

    /// `deleteAll(where:in:)` with a predicate, delivered later on the completion queue.
    public static func deleteAll(
        where predicate: Predicate<Self>, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Int, ModelStoreError>) -> Void
    ) {
        deleteAll(where: Condition(predicate), in: store, completion: completion)
    }

    /// `deleteAll(where:in:)` with a predicate, without blocking the calling task.
    /// - Throws: `ModelStoreError`, as the synchronous form.
    @discardableResult
    public static func deleteAll(where predicate: Predicate<Self>, in store: ModelStore? = nil) async throws -> Int {
        try await deleteAll(where: Condition(predicate), in: store)
    }

    /// Sets `assignments` on every record `predicate` is true for, in one statement; returns
    /// how many changed.
    ///
    /// ```swift
    /// try Snack.updateAll(where: #Predicate { $0.price == nil }, set: [.set(\.price, to: 1)])
    /// ```
    /// - Throws: `ModelStoreError`, as `findAll(where:orderBy:loading:in:)`, and
    ///   `.constraintViolation` when a value breaks a constraint; a failed update changes nothing.
    @discardableResult
    public static func updateAll(where predicate: Predicate<Self>, set assignments: [Assignment<Self>], in store: ModelStore? = nil) throws
        -> Int
    {
        try updateAll(where: Condition(predicate), set: assignments, in: store)
    }

    /// `updateAll(where:set:in:)` with a predicate, delivered later on the completion queue.
    public static func updateAll(
        where predicate: Predicate<Self>, set assignments: [Assignment<Self>], in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Int, ModelStoreError>) -> Void
    ) {
        updateAll(where: Condition(predicate), set: assignments, in: store, completion: completion)
    }

    /// `updateAll(where:set:in:)` with a predicate, without blocking the calling task.
    /// - Throws: `ModelStoreError`, as the synchronous form.
    @discardableResult
    public static func updateAll(where predicate: Predicate<Self>, set assignments: [Assignment<Self>], in store: ModelStore? = nil)
        async throws -> Int
    {
        try await updateAll(where: Condition(predicate), set: assignments, in: store)
    }

    /// Saves this model over the one stored record `predicate` is true for, or inserts it
    /// when none is (`save(matching:updatingAll:in:)` with a condition).
    ///
    /// ```swift
    /// let email = "ada@example.com"
    /// try user.save(matching: #Predicate { $0.email == email })
    /// ```
    /// - Throws: `ModelStoreError`, as `save(matching:updatingAll:in:)` with a condition.
    @discardableResult
    public func save(matching predicate: Predicate<Self>, updatingAll: Bool = false, in store: ModelStore? = nil) throws -> SaveOutcome {
        try save(matching: Condition(predicate), updatingAll: updatingAll, in: store)
    }

    /// `save(matching:updatingAll:in:)` with a predicate, delivered later on the completion queue.
    public func save(
        matching predicate: Predicate<Self>, updatingAll: Bool = false, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<SaveOutcome, ModelStoreError>) -> Void
    ) {
        save(matching: Condition(predicate), updatingAll: updatingAll, in: store, completion: completion)
    }

    /// `save(matching:updatingAll:in:)` with a predicate, without blocking the calling task.
    /// - Throws: `ModelStoreError`, as the synchronous form.
    @discardableResult
    public func save(matching predicate: Predicate<Self>, updatingAll: Bool = false, in store: ModelStore? = nil) async throws
        -> SaveOutcome
    {
        try await save(matching: Condition(predicate), updatingAll: updatingAll, in: store)
    }

    /// A query over every record, sorted by Foundation's `SortDescriptor`s.
    ///
    /// ```swift
    /// let byPrice = try Snack.order([SortDescriptor(\Snack.price)]).page(0, rows: 20).findAll()
    /// ```
    public static func order(_ descriptors: [SortDescriptor<Self>]) -> Query<Self> {
        Query().order(descriptors)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Query {
    /// Sorted by Foundation's `SortDescriptor`s, replacing any earlier order.
    ///
    /// ```swift
    /// let page = try Snack.filter(#Predicate { $0.price != nil }).order(SortDescriptor(\Snack.price), SortDescriptor(\Snack.id)).findAll()
    /// ```
    public func order(_ descriptors: SortDescriptor<Model>...) -> Query {
        order(descriptors)
    }
}
