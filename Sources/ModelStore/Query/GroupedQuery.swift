/// One aggregate of a grouped query — `count`, `sum`, `average`, `min` or `max` — with the
/// name its result takes in the row type the results decode into.
///
/// ```swift
/// struct TasteStats: Decodable, Sendable {
///     var taste: String?
///     var count: Int
///     var total: Double?
/// }
/// let stats = try Snack.all()
///     .grouped(by: \.taste)
///     .having(Aggregate.count() >= 2)
///     .order(.descending(Aggregate.sum(\.price, as: "total")))
///     .findAll(as: TasteStats.self, .count(), .sum(\.price, as: "total"))
/// ```
public struct Aggregate<Model: StoredModel>: Sendable {
    let expression: AggregateExpression

    /// How many records each group holds (`count(*)`), as `name`.
    public static func count(as name: String = "count") -> Aggregate {
        Aggregate(expression: AggregateExpression(function: .count, column: nil, distinct: false, name: name))
    }

    /// How many records of each group have a value of `property` (or how many different
    /// values, with `distinct`), as `name`.
    public static func count<Value>(_ property: KeyPath<Model, Value>, distinct: Bool = false, as name: String) -> Aggregate {
        Aggregate(expression: AggregateExpression(function: .count, column: ColumnReference(property), distinct: distinct, name: name))
    }

    /// The sum of `property` in each group (NULL, so `nil`, when no record has a value).
    public static func sum<Value>(_ property: KeyPath<Model, Value>, as name: String) -> Aggregate {
        Aggregate(expression: AggregateExpression(function: .sum, column: ColumnReference(property), distinct: false, name: name))
    }

    /// The average of `property` in each group, as a `Double?`.
    public static func average<Value>(_ property: KeyPath<Model, Value>, as name: String) -> Aggregate {
        Aggregate(expression: AggregateExpression(function: .average, column: ColumnReference(property), distinct: false, name: name))
    }

    /// The smallest value of `property` in each group.
    public static func min<Value>(_ property: KeyPath<Model, Value>, as name: String) -> Aggregate {
        Aggregate(expression: AggregateExpression(function: .min, column: ColumnReference(property), distinct: false, name: name))
    }

    /// The largest value of `property` in each group.
    public static func max<Value>(_ property: KeyPath<Model, Value>, as name: String) -> Aggregate {
        Aggregate(expression: AggregateExpression(function: .max, column: ColumnReference(property), distinct: false, name: name))
    }

    /// Groups whose aggregate is NULL (a `sum` or `min` over no values).
    public static func == (lhs: Aggregate, rhs: _OptionalNilComparisonType) -> GroupCondition<Model> {
        GroupCondition(node: .compare(lhs.expression, .equal, .null))
    }
    /// Groups whose aggregate is not NULL.
    public static func != (lhs: Aggregate, rhs: _OptionalNilComparisonType) -> GroupCondition<Model> {
        GroupCondition(node: .compare(lhs.expression, .notEqual, .null))
    }
    /// Groups whose aggregate equals `value`.
    public static func == (lhs: Aggregate, rhs: some SQLValueConvertible) -> GroupCondition<Model> { .comparing(lhs, .equal, rhs) }
    /// Groups whose aggregate differs from `value` (or is NULL).
    public static func != (lhs: Aggregate, rhs: some SQLValueConvertible) -> GroupCondition<Model> { .comparing(lhs, .notEqual, rhs) }
    /// Groups whose aggregate is less than `value`.
    public static func < (lhs: Aggregate, rhs: some SQLValueConvertible) -> GroupCondition<Model> { .comparing(lhs, .less, rhs) }
    /// Groups whose aggregate is at most `value`.
    public static func <= (lhs: Aggregate, rhs: some SQLValueConvertible) -> GroupCondition<Model> { .comparing(lhs, .lessOrEqual, rhs) }
    /// Groups whose aggregate is greater than `value`.
    public static func > (lhs: Aggregate, rhs: some SQLValueConvertible) -> GroupCondition<Model> { .comparing(lhs, .greater, rhs) }
    /// Groups whose aggregate is at least `value`.
    public static func >= (lhs: Aggregate, rhs: some SQLValueConvertible) -> GroupCondition<Model> {
        .comparing(lhs, .greaterOrEqual, rhs)
    }
}

struct AggregateExpression: Sendable {
    enum Function: String, Sendable {
        case count, sum, average = "avg", min, max
    }

    let function: Function
    let column: ColumnReference?
    let distinct: Bool
    let name: String
}

/// A condition on the groups of a grouped query (SQL `HAVING`): aggregates compared with
/// values, combined with `&&`, `||` and `!`.
public struct GroupCondition<Model: StoredModel>: Sendable {
    indirect enum Node: Sendable {
        case compare(AggregateExpression, ComparisonOperator, SQLValue)
        case and(Node, Node)
        case or(Node, Node)
        case not(Node)
        case invalid(ModelStoreError)
    }

    let node: Node

    static func comparing(_ aggregate: Aggregate<Model>, _ op: ComparisonOperator, _ value: some SQLValueConvertible) -> GroupCondition {
        do {
            return GroupCondition(node: .compare(aggregate.expression, op, try value.comparisonValue))
        } catch {
            return GroupCondition(node: .invalid(ModelStoreError.wrapping(error)))
        }
    }

    /// Both conditions.
    public static func && (lhs: GroupCondition, rhs: GroupCondition) -> GroupCondition { GroupCondition(node: .and(lhs.node, rhs.node)) }
    /// Either condition.
    public static func || (lhs: GroupCondition, rhs: GroupCondition) -> GroupCondition { GroupCondition(node: .or(lhs.node, rhs.node)) }
    /// The opposite condition.
    public static prefix func ! (condition: GroupCondition) -> GroupCondition { GroupCondition(node: .not(condition.node)) }
}

/// One sort key of a grouped query: a grouped property or an aggregate.
public struct GroupOrdering<Model: StoredModel>: Sendable {
    enum Term: Sendable {
        case column(ColumnReference)
        case computed(AggregateExpression)
    }

    let term: Term
    let descending: Bool

    /// Smallest first, by a grouped property.
    public static func ascending<Value>(_ property: KeyPath<Model, Value>) -> GroupOrdering {
        GroupOrdering(term: .column(ColumnReference(property)), descending: false)
    }

    /// Largest first, by a grouped property.
    public static func descending<Value>(_ property: KeyPath<Model, Value>) -> GroupOrdering {
        GroupOrdering(term: .column(ColumnReference(property)), descending: true)
    }

    /// Smallest first, by an aggregate.
    public static func ascending(_ aggregate: Aggregate<Model>) -> GroupOrdering {
        GroupOrdering(term: .computed(aggregate.expression), descending: false)
    }

    /// Largest first, by an aggregate.
    public static func descending(_ aggregate: Aggregate<Model>) -> GroupOrdering {
        GroupOrdering(term: .computed(aggregate.expression), descending: true)
    }
}

/// A query's records in groups by one or more properties, to aggregate per group. Build it
/// with `Query.grouped(by:)`; run it with `findAll(as:_:)`.
public struct GroupedQuery<Model: StoredModel>: Sendable {
    let base: Query<Model>
    let groups: [ColumnReference]
    var having: GroupCondition<Model>.Node?
    var orderings: [GroupOrdering<Model>] = []
    var limit: Int?
    var offset: Int?
    var failure: ModelStoreError?

    /// Only the groups matching `condition` (SQL `HAVING`), in addition to any earlier one.
    public func having(_ condition: GroupCondition<Model>) -> GroupedQuery {
        var query = self
        query.having = having.map { .and($0, condition.node) } ?? condition.node
        return query
    }

    /// Groups sorted by `orderings` (by the grouped properties when none).
    public func order(_ orderings: GroupOrdering<Model>...) -> GroupedQuery {
        var query = self
        query.orderings = orderings
        return query
    }

    /// At most `limit` groups, after skipping `offset`.
    public func limit(_ limit: Int, offset: Int = 0) -> GroupedQuery {
        var query = self
        guard limit >= 0, offset >= 0 else {
            query.failure = ModelStoreError(
                .invalidQuery, "A limit of \(limit) groups from offset \(offset) is impossible: neither may be negative.",
                model: String(describing: Model.self), value: "limit \(limit), offset \(offset)")
            return query
        }
        query.limit = limit
        query.offset = offset
        return query
    }
}

extension Query {
    /// The query's records in groups of equal values of `properties`, for aggregates per group.
    ///
    /// ```swift
    /// let perTaste = try Snack.filter(\.price > 0).grouped(by: \.taste)
    ///     .findAll(as: TasteStats.self, .count(), .average(\.price, as: "averagePrice"))
    /// ```
    public func grouped(by properties: PartialKeyPath<Model>...) -> GroupedQuery<Model> {
        GroupedQuery(base: self, groups: properties.map { ColumnReference($0) })
    }

    /// `grouped(by:)` with columns named by string.
    public func grouped(by columns: [Column]) -> GroupedQuery<Model> {
        GroupedQuery(base: self, groups: columns.map(\.reference))
    }
}
