/// Running a grouped query: one row per group, decoded into any `Decodable` whose properties
/// are the grouped properties and the aggregates' names.
extension GroupedQuery {
    /// The groups as `Row`s, each with the aggregates named in `aggregates`.
    ///
    /// ```swift
    /// struct TasteStats: Decodable, Sendable { var taste: String?; var count: Int; var total: Double? }
    /// let stats = try Snack.all().grouped(by: \.taste)
    ///     .having(Aggregate.count() >= 2)
    ///     .findAll(as: TasteStats.self, .count(), .sum(\.price, as: "total"))
    /// ```
    /// - Throws: `ModelStoreError` — `.invalidQuery` when `Row` reads a property that is
    ///   neither grouped nor an aggregate, two results share a name, or an ordering names a
    ///   property the query is not grouped by; `.decodingFailed` when a result does not fit
    ///   its property (a `sum` over no values is NULL: make it optional); `.closed` or `.noStore`.
    public func findAll<Row: Decodable & Sendable>(as type: Row.Type, _ aggregates: Aggregate<Model>..., in store: ModelStore? = nil)
        throws -> [Row]
    {
        try ModelStore.resolve(store).read { try $0.findAll(self, as: type, aggregates) }
    }

    /// `findAll(as:_:in:)`, delivered later on the store's completion queue.
    public func findAll<Row: Decodable & Sendable>(
        as type: Row.Type, _ aggregates: Aggregate<Model>..., in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<[Row], ModelStoreError>) -> Void
    ) {
        ModelStore.resolve(store).read({ try $0.findAll(self, as: type, aggregates) }, completion: completion)
    }

    /// `findAll(as:_:in:)` without blocking the calling task.
    /// - Throws: as `findAll(as:_:in:)`.
    public func findAll<Row: Decodable & Sendable>(as type: Row.Type, _ aggregates: Aggregate<Model>..., in store: ModelStore? = nil)
        async throws -> [Row]
    {
        try await ModelStore.resolve(store).read { try $0.findAll(self, as: type, aggregates) }
    }
}
