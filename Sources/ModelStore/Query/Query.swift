/// A description of which records to read, change or count: a predicate, an order, and a
/// page. Queries are values; building one runs nothing.
///
/// ```swift
/// let page = try Snack.filter(\.price > 1)
///     .order(.descending(\.price))
///     .page(2, rows: 50)                 // rows 100–149
///     .findAll()
/// let total = try Snack.filter(\.taste == "sweet").sum(\.price)
/// ```
///
/// Every way to run a query has a synchronous, a completion-handler and an `async` form.
/// Invalid requests (a negative page, zero rows, a column the model lacks) throw
/// `.invalidQuery` when the query runs, before any SQL.
public struct Query<Model: StoredModel>: Sendable {
    var predicate: PredicateNode?
    var orderings: [Ordering<Model>] = []
    var limit: Int?
    var offset: Int?
    var failure: ModelStoreError?
    var loadOptions: LoadOptions = .declared
    /// A filter evaluated in Swift on the records SQL selects (`filter(_:untranslated:)`).
    var memoryFilter: MemoryFilter<Model>?

    init() {}

    /// Which relationships `findAll` and `findFirst` fill (default `.declared`: those declared `.eager`).
    public func loading(_ options: LoadOptions) -> Query {
        var query = self
        query.loadOptions = options
        return query
    }

    /// Only records matching `predicate`, in addition to any earlier filter.
    public func filter(_ predicate: Condition<Model>) -> Query {
        var query = self
        query.predicate = self.predicate.map { .and([$0, predicate.node]) } ?? predicate.node
        return query
    }

    /// Sorted by `orderings`, replacing any earlier order.
    public func order(_ orderings: Ordering<Model>...) -> Query {
        order(orderings)
    }

    /// Sorted by `orderings`, replacing any earlier order.
    public func order(_ orderings: [Ordering<Model>]) -> Query {
        var query = self
        query.orderings = orderings
        return query
    }

    /// The `page`-th page (counting from 0) of `rows` records.
    public func page(_ page: Int, rows: Int) -> Query {
        var query = self
        guard page >= 0, rows > 0 else {
            query.failure = ModelStoreError(
                .invalidQuery,
                "Page \(page) of \(rows) rows is not a page: pages count from 0 and hold at least one row.",
                model: String(describing: Model.self), value: "page \(page), rows \(rows)")
            return query
        }
        let (offset, overflow) = page.multipliedReportingOverflow(by: rows)
        guard !overflow else {
            query.failure = ModelStoreError(
                .invalidQuery, "Page \(page) of \(rows) rows starts beyond any possible record.",
                model: String(describing: Model.self), value: "page \(page), rows \(rows)")
            return query
        }
        query.limit = rows
        query.offset = offset
        return query
    }

    /// At most `limit` records, after skipping `offset`.
    public func limit(_ limit: Int, offset: Int = 0) -> Query {
        var query = self
        guard limit >= 0, offset >= 0 else {
            query.failure = ModelStoreError(
                .invalidQuery, "A limit of \(limit) from offset \(offset) is impossible: neither may be negative.",
                model: String(describing: Model.self), value: "limit \(limit), offset \(offset)")
            return query
        }
        query.limit = limit
        query.offset = offset
        return query
    }

    var isPaged: Bool { limit != nil || (offset ?? 0) > 0 }
}

extension StoredModel {
    /// A query over every record of this model.
    public static func all() -> Query<Self> {
        Query()
    }

    /// A query over the records matching `predicate`.
    public static func filter(_ predicate: Condition<Self>) -> Query<Self> {
        Query().filter(predicate)
    }

    /// A query over every record, sorted by `orderings`.
    public static func order(_ orderings: Ordering<Self>...) -> Query<Self> {
        Query().order(orderings)
    }
}

/// A test of each record in Swift, after SQL selected it: a `#Predicate` the caller asked to
/// evaluate in memory.
struct MemoryFilter<Model>: Sendable {
    let matches: @Sendable (Model) throws -> Bool
}
