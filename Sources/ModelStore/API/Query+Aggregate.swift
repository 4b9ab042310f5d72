/// Aggregates and projections over a query's records, computed by SQLite. On a paged
/// query they cover the page.
extension Query {
    /// The sum of a numeric property (0 when no record has a value).
    ///
    /// ```swift
    /// let spent = try Snack.filter(\.taste == "sweet").sum(\.quantity)   // SELECT sum("quantity") …
    /// ```
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func sum<Value: Numeric & SQLValueConvertible>(_ property: KeyPath<Model, Value>, in store: ModelStore? = nil) throws -> Value {
        let column = ColumnReference(property)
        return try ModelStore.resolve(store).read { try Self.sum($0, self, column) }
    }

    /// The sum of an optional numeric property; NULLs are skipped (0 when none has a value).
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func sum<Value: Numeric & SQLValueConvertible>(_ property: KeyPath<Model, Value?>, in store: ModelStore? = nil) throws -> Value {
        let column = ColumnReference(property)
        return try ModelStore.resolve(store).read { try Self.sum($0, self, column) }
    }

    /// The sum, delivered later on the store's completion queue.
    public func sum<Value: Numeric & SQLValueConvertible>(
        _ property: KeyPath<Model, Value?>, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Value, ModelStoreError>) -> Void
    ) {
        let column = ColumnReference(property)
        ModelStore.resolve(store).read({ try Self.sum($0, self, column) }, completion: completion)
    }

    /// The sum, without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func sum<Value: Numeric & SQLValueConvertible>(_ property: KeyPath<Model, Value?>, in store: ModelStore? = nil) async throws
        -> Value
    {
        let column = ColumnReference(property)
        return try await ModelStore.resolve(store).read { try Self.sum($0, self, column) }
    }

    /// The sum of a non-optional property, delivered later on the store's completion queue.
    public func sum<Value: Numeric & SQLValueConvertible>(
        _ property: KeyPath<Model, Value>, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Value, ModelStoreError>) -> Void
    ) {
        let column = ColumnReference(property)
        ModelStore.resolve(store).read({ try Self.sum($0, self, column) }, completion: completion)
    }

    /// The sum of a non-optional property, without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func sum<Value: Numeric & SQLValueConvertible>(_ property: KeyPath<Model, Value>, in store: ModelStore? = nil) async throws
        -> Value
    {
        let column = ColumnReference(property)
        return try await ModelStore.resolve(store).read { try Self.sum($0, self, column) }
    }

    /// The average of a numeric property, or nil when no record has a value.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func average<Value: SQLValueConvertible>(_ property: KeyPath<Model, Value>, in store: ModelStore? = nil) throws -> Double? {
        let column = ColumnReference(property)
        return try ModelStore.resolve(store).read { try Self.average($0, self, column) }
    }

    /// The average, delivered later on the store's completion queue.
    public func average<Value: SQLValueConvertible>(
        _ property: KeyPath<Model, Value>, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Double?, ModelStoreError>) -> Void
    ) {
        let column = ColumnReference(property)
        ModelStore.resolve(store).read({ try Self.average($0, self, column) }, completion: completion)
    }

    /// The average, without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func average<Value: SQLValueConvertible>(_ property: KeyPath<Model, Value>, in store: ModelStore? = nil) async throws -> Double?
    {
        let column = ColumnReference(property)
        return try await ModelStore.resolve(store).read { try Self.average($0, self, column) }
    }

    /// The smallest value of a property, or nil when no record has one.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func min<Value: SQLValueConvertible>(_ property: KeyPath<Model, Value>, in store: ModelStore? = nil) throws -> Value? {
        let column = ColumnReference(property)
        return try ModelStore.resolve(store).read { try Self.extreme($0, self, "min", column, as: Value.self) }
    }

    /// The smallest value of an optional property, or nil when no record has one.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func min<Value: SQLValueConvertible>(_ property: KeyPath<Model, Value?>, in store: ModelStore? = nil) throws -> Value? {
        let column = ColumnReference(property)
        return try ModelStore.resolve(store).read { try Self.extreme($0, self, "min", column, as: Value.self) }
    }

    /// The largest value of a property, or nil when no record has one.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func max<Value: SQLValueConvertible>(_ property: KeyPath<Model, Value>, in store: ModelStore? = nil) throws -> Value? {
        let column = ColumnReference(property)
        return try ModelStore.resolve(store).read { try Self.extreme($0, self, "max", column, as: Value.self) }
    }

    /// The largest value of an optional property, or nil when no record has one.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func max<Value: SQLValueConvertible>(_ property: KeyPath<Model, Value?>, in store: ModelStore? = nil) throws -> Value? {
        let column = ColumnReference(property)
        return try ModelStore.resolve(store).read { try Self.extreme($0, self, "max", column, as: Value.self) }
    }

    /// The smallest value, without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func min<Value: SQLValueConvertible>(_ property: KeyPath<Model, Value?>, in store: ModelStore? = nil) async throws -> Value? {
        let column = ColumnReference(property)
        return try await ModelStore.resolve(store).read { try Self.extreme($0, self, "min", column, as: Value.self) }
    }

    /// The largest value, without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func max<Value: SQLValueConvertible>(_ property: KeyPath<Model, Value?>, in store: ModelStore? = nil) async throws -> Value? {
        let column = ColumnReference(property)
        return try await ModelStore.resolve(store).read { try Self.extreme($0, self, "max", column, as: Value.self) }
    }

    /// The smallest value, delivered later on the store's completion queue.
    public func min<Value: SQLValueConvertible>(
        _ property: KeyPath<Model, Value?>, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Value?, ModelStoreError>) -> Void
    ) {
        let column = ColumnReference(property)
        ModelStore.resolve(store).read({ try Self.extreme($0, self, "min", column, as: Value.self) }, completion: completion)
    }

    /// The largest value, delivered later on the store's completion queue.
    public func max<Value: SQLValueConvertible>(
        _ property: KeyPath<Model, Value?>, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Value?, ModelStoreError>) -> Void
    ) {
        let column = ColumnReference(property)
        ModelStore.resolve(store).read({ try Self.extreme($0, self, "max", column, as: Value.self) }, completion: completion)
    }

    /// The smallest value of a non-optional property, without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func min<Value: SQLValueConvertible>(_ property: KeyPath<Model, Value>, in store: ModelStore? = nil) async throws -> Value? {
        let column = ColumnReference(property)
        return try await ModelStore.resolve(store).read { try Self.extreme($0, self, "min", column, as: Value.self) }
    }

    /// The smallest value of a non-optional property, delivered later on the completion queue.
    public func min<Value: SQLValueConvertible>(
        _ property: KeyPath<Model, Value>, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Value?, ModelStoreError>) -> Void
    ) {
        let column = ColumnReference(property)
        ModelStore.resolve(store).read({ try Self.extreme($0, self, "min", column, as: Value.self) }, completion: completion)
    }

    /// The largest value of a non-optional property, without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func max<Value: SQLValueConvertible>(_ property: KeyPath<Model, Value>, in store: ModelStore? = nil) async throws -> Value? {
        let column = ColumnReference(property)
        return try await ModelStore.resolve(store).read { try Self.extreme($0, self, "max", column, as: Value.self) }
    }

    /// The largest value of a non-optional property, delivered later on the completion queue.
    public func max<Value: SQLValueConvertible>(
        _ property: KeyPath<Model, Value>, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<Value?, ModelStoreError>) -> Void
    ) {
        let column = ColumnReference(property)
        ModelStore.resolve(store).read({ try Self.extreme($0, self, "max", column, as: Value.self) }, completion: completion)
    }

    /// How many records have each value of a property (SQL `GROUP BY`): the seeds' "posts
    /// per user". For an optional property, records without a value count under `nil`.
    ///
    /// ```swift
    /// let postsPerUser = try Post.all().countsGrouped(by: \.userId)   // [Int64: Int]
    /// ```
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func countsGrouped<Value: Hashable & SQLValueConvertible>(by property: KeyPath<Model, Value>, in store: ModelStore? = nil) throws
        -> [Value: Int]
    {
        let column = ColumnReference(property)
        return try ModelStore.resolve(store).read { try Self.groupCounts($0, self, column, as: Value.self) }
    }

    /// Grouped counts, delivered later on the store's completion queue.
    public func countsGrouped<Value: Hashable & SQLValueConvertible>(
        by property: KeyPath<Model, Value>, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<[Value: Int], ModelStoreError>) -> Void
    ) {
        let column = ColumnReference(property)
        ModelStore.resolve(store).read({ try Self.groupCounts($0, self, column, as: Value.self) }, completion: completion)
    }

    /// Grouped counts, without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func countsGrouped<Value: Hashable & SQLValueConvertible>(by property: KeyPath<Model, Value>, in store: ModelStore? = nil)
        async throws -> [Value: Int]
    {
        let column = ColumnReference(property)
        return try await ModelStore.resolve(store).read { try Self.groupCounts($0, self, column, as: Value.self) }
    }

    /// The distinct values of a property, in ascending order (`nil` first for an optional one).
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func distinct<Value: SQLValueConvertible>(_ property: KeyPath<Model, Value>, in store: ModelStore? = nil) throws -> [Value] {
        let column = ColumnReference(property)
        return try ModelStore.resolve(store).read { try Self.convert($0.distinctValues(self, of: column), column, as: Value.self) }
    }

    /// Distinct values, delivered later on the store's completion queue.
    public func distinct<Value: SQLValueConvertible>(
        _ property: KeyPath<Model, Value>, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<[Value], ModelStoreError>) -> Void
    ) {
        let column = ColumnReference(property)
        ModelStore.resolve(store).read(
            { try Self.convert($0.distinctValues(self, of: column), column, as: Value.self) }, completion: completion)
    }

    /// Distinct values, without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func distinct<Value: SQLValueConvertible>(_ property: KeyPath<Model, Value>, in store: ModelStore? = nil) async throws -> [Value]
    {
        let column = ColumnReference(property)
        return try await ModelStore.resolve(store).read { try Self.convert($0.distinctValues(self, of: column), column, as: Value.self) }
    }

    /// One property of each selected record, in the query's order: reads one column only.
    ///
    /// ```swift
    /// let names = try Snack.order(.ascending(\.name)).values(of: \.name)   // [String?]
    /// ```
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func values<Value: SQLValueConvertible>(of property: KeyPath<Model, Value>, in store: ModelStore? = nil) throws -> [Value] {
        let column = ColumnReference(property)
        return try ModelStore.resolve(store).read { try Self.convert($0.values(self, of: column), column, as: Value.self) }
    }

    /// One property of each selected record, delivered later on the completion queue.
    public func values<Value: SQLValueConvertible>(
        of property: KeyPath<Model, Value>, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<[Value], ModelStoreError>) -> Void
    ) {
        let column = ColumnReference(property)
        ModelStore.resolve(store).read({ try Self.convert($0.values(self, of: column), column, as: Value.self) }, completion: completion)
    }

    /// One property of each selected record, without blocking the calling task.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a condition or property the model cannot use,
    ///   `.decodingFailed` for a stored value that does not read back exactly, `.schemaMismatch` when the
    ///   table changed behind the store's back, `.closed` or `.noStore`, and the store's open errors
    ///   (`.cannotOpen`, `.notADatabase`, `.corrupt`).
    public func values<Value: SQLValueConvertible>(of property: KeyPath<Model, Value>, in store: ModelStore? = nil) async throws -> [Value]
    {
        let column = ColumnReference(property)
        return try await ModelStore.resolve(store).read { try Self.convert($0.values(self, of: column), column, as: Value.self) }
    }

    // MARK: Conversions shared by the three forms

    private static func sum<Value: Numeric & SQLValueConvertible>(_ session: Session, _ query: Query, _ column: ColumnReference) throws
        -> Value
    {
        let total = try session.aggregate(query, "sum", column)
        return total.isNull ? .zero : try convert(total, column, as: Value.self)
    }

    private static func average(_ session: Session, _ query: Query, _ column: ColumnReference) throws -> Double? {
        let average = try session.aggregate(query, "avg", column)
        return average.isNull ? nil : try convert(average, column, as: Double.self)
    }

    private static func extreme<Value: SQLValueConvertible>(
        _ session: Session, _ query: Query, _ function: String, _ column: ColumnReference, as type: Value.Type
    ) throws -> Value? {
        let value = try session.aggregate(query, function, column)
        return value.isNull ? nil : try convert(value, column, as: type)
    }

    private static func groupCounts<Value: Hashable & SQLValueConvertible>(
        _ session: Session, _ query: Query, _ column: ColumnReference, as type: Value.Type
    ) throws -> [Value: Int] {
        var counts: [Value: Int] = [:]
        for (value, count) in try session.groupCounts(query, by: column) {
            counts[try convert(value, column, as: type)] = count
        }
        return counts
    }

    private static func convert<Value: SQLValueConvertible>(_ values: [SQLValue], _ column: ColumnReference, as type: Value.Type) throws
        -> [Value]
    {
        try values.map { try convert($0, column, as: type) }
    }

    private static func convert<Value: SQLValueConvertible>(_ value: SQLValue, _ column: ColumnReference, as type: Value.Type) throws
        -> Value
    {
        do {
            return try Value(sqlValue: value)
        } catch var error as ModelStoreError {
            error.model = String(describing: Model.self)
            error.column = column.name
            throw error
        }
    }
}
