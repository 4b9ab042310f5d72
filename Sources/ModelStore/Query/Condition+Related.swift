/// Conditions across relationships, typed by key path: which records are related to records
/// matching a condition. Each compiles to a subquery of the same statement, so a query across
/// relationships is one query, however many records it covers.
///
/// ```swift
/// let rockets = try Player.findAll(where: .related(\.team, \.name == "Rockets"))
/// let busy = try Team.findAll(where: .any(\.players, \.score > 90))
/// let idle = try Team.findAll(where: .none(\.players))
/// let big = try Team.findAll(where: RelatedCount(\Team.players) >= 11)
/// let dependents = try Package.filter(.any(\.depends, \.name == "libc6")).count()
/// ```
///
/// The conditions are two-valued: a record linked to nothing is matched by `.none` and by
/// `!.related(…)`, and never by `.any` or `.related`.
extension Condition {
    /// Matches records whose to-one relationship links to a record matching `condition`.
    public static func related<Target: StoredModel>(_ relationship: KeyPath<Model, Target?>, _ condition: Condition<Target>) -> Condition {
        Condition(.related(PropertyName.of(toOne: relationship), .any, condition.node))
    }

    /// Matches records with at least one related record matching `condition` (any related
    /// record when omitted).
    public static func any<Target: StoredModel>(_ relationship: KeyPath<Model, [Target]?>, _ condition: Condition<Target> = .all)
        -> Condition
    {
        Condition(.related(PropertyName.of(relationship), .any, condition.node))
    }

    /// `any(_:_:)` for a to-many held in a non-optional array.
    public static func any<Target: StoredModel>(_ relationship: KeyPath<Model, [Target]>, _ condition: Condition<Target> = .all)
        -> Condition
    {
        Condition(.related(PropertyName.of(relationship), .any, condition.node))
    }

    /// `any(_:_:)` for a to-one: the record it links to matches `condition`.
    public static func any<Target: StoredModel>(_ relationship: KeyPath<Model, Target?>, _ condition: Condition<Target> = .all) -> Condition
    {
        Condition(.related(PropertyName.of(toOne: relationship), .any, condition.node))
    }

    /// Matches records with no related record matching `condition` (no related record at all
    /// when omitted).
    public static func none<Target: StoredModel>(_ relationship: KeyPath<Model, [Target]?>, _ condition: Condition<Target> = .all)
        -> Condition
    {
        Condition(.related(PropertyName.of(relationship), .none, condition.node))
    }

    /// `none(_:_:)` for a to-many held in a non-optional array.
    public static func none<Target: StoredModel>(_ relationship: KeyPath<Model, [Target]>, _ condition: Condition<Target> = .all)
        -> Condition
    {
        Condition(.related(PropertyName.of(relationship), .none, condition.node))
    }

    /// `none(_:_:)` for a to-one: it links to no record, or to one not matching `condition`.
    public static func none<Target: StoredModel>(_ relationship: KeyPath<Model, Target?>, _ condition: Condition<Target> = .all)
        -> Condition
    {
        Condition(.related(PropertyName.of(toOne: relationship), .none, condition.node))
    }

    /// Matches records all of whose related records match `condition` (records with none
    /// included, as Swift's `allSatisfy` is true of an empty array).
    public static func every<Target: StoredModel>(_ relationship: KeyPath<Model, [Target]?>, _ condition: Condition<Target>) -> Condition {
        Condition(.related(PropertyName.of(relationship), .none, PredicateNode.not(condition.node.twoValued)))
    }

    /// `every(_:_:)` for a to-many held in a non-optional array.
    public static func every<Target: StoredModel>(_ relationship: KeyPath<Model, [Target]>, _ condition: Condition<Target>) -> Condition {
        Condition(.related(PropertyName.of(relationship), .none, PredicateNode.not(condition.node.twoValued)))
    }
}

/// The number of records a relationship links a record to — optionally only those matching
/// a condition — to compare with a number or order by, without loading them.
///
/// ```swift
/// let crowded = try Team.findAll(where: RelatedCount(\Team.players) > 20)
/// let strong = try Team.findAll(where: RelatedCount(\Team.players, where: \.score > 90) >= 3)
/// let ranked = try Team.order(.descending(RelatedCount(\Team.players))).findAll()
/// ```
public struct RelatedCount<Model: StoredModel>: Sendable {
    let expression: RelatedCountExpression

    /// Records linked through a to-many relationship, those matching `condition` when given.
    public init<Target: StoredModel>(_ relationship: KeyPath<Model, [Target]?>, where condition: Condition<Target>? = nil) {
        expression = RelatedCountExpression(relationship: PropertyName.of(relationship), predicate: condition?.node)
    }

    /// Records linked through a to-many held in a non-optional array.
    public init<Target: StoredModel>(_ relationship: KeyPath<Model, [Target]>, where condition: Condition<Target>? = nil) {
        expression = RelatedCountExpression(relationship: PropertyName.of(relationship), predicate: condition?.node)
    }

    /// The record a to-one links to (0 or 1), if it matches `condition` when given.
    public init<Target: StoredModel>(_ relationship: KeyPath<Model, Target?>, where condition: Condition<Target>? = nil) {
        expression = RelatedCountExpression(relationship: PropertyName.of(toOne: relationship), predicate: condition?.node)
    }

    /// Matches records with exactly `count` related records.
    public static func == (lhs: RelatedCount, rhs: Int) -> Condition<Model> { Condition(.relatedCount(lhs.expression, .equal, Int64(rhs))) }

    /// Matches records with another number of related records.
    public static func != (lhs: RelatedCount, rhs: Int) -> Condition<Model> {
        Condition(.relatedCount(lhs.expression, .notEqual, Int64(rhs)))
    }

    /// Matches records with fewer related records.
    public static func < (lhs: RelatedCount, rhs: Int) -> Condition<Model> { Condition(.relatedCount(lhs.expression, .less, Int64(rhs))) }

    /// Matches records with at most `count` related records.
    public static func <= (lhs: RelatedCount, rhs: Int) -> Condition<Model> {
        Condition(.relatedCount(lhs.expression, .lessOrEqual, Int64(rhs)))
    }

    /// Matches records with more related records.
    public static func > (lhs: RelatedCount, rhs: Int) -> Condition<Model> {
        Condition(.relatedCount(lhs.expression, .greater, Int64(rhs)))
    }

    /// Matches records with at least `count` related records.
    public static func >= (lhs: RelatedCount, rhs: Int) -> Condition<Model> {
        Condition(.relatedCount(lhs.expression, .greaterOrEqual, Int64(rhs)))
    }
}

/// Conditions inside JSON-stored arrays and sets.
extension Condition {
    /// Matches records whose JSON-stored array holds an element equal to `element` — the
    /// array's `contains(_:)`, in SQL (`json_each`).
    ///
    /// ```swift
    /// let spicy = try Snack.findAll(where: .contains(\.tags, "spicy"))
    /// ```
    public static func contains<Element: SQLValueConvertible & Encodable>(_ property: KeyPath<Model, [Element]>, _ element: Element)
        -> Condition
    {
        Condition(.elementOf(ColumnReference(property), element))
    }

    /// `contains(_:_:)` for an optional array (a nil array holds nothing).
    public static func contains<Element: SQLValueConvertible & Encodable>(_ property: KeyPath<Model, [Element]?>, _ element: Element)
        -> Condition
    {
        Condition(.elementOf(ColumnReference(property), element))
    }

    /// `contains(_:_:)` for a JSON-stored set.
    public static func contains<Element: SQLValueConvertible & Encodable>(_ property: KeyPath<Model, Set<Element>>, _ element: Element)
        -> Condition
    {
        Condition(.elementOf(ColumnReference(property), element))
    }

    /// `contains(_:_:)` for an optional JSON-stored set.
    public static func contains<Element: SQLValueConvertible & Encodable>(_ property: KeyPath<Model, Set<Element>?>, _ element: Element)
        -> Condition
    {
        Condition(.elementOf(ColumnReference(property), element))
    }
}

extension PredicateNode {
    /// The predicate made two-valued: NULL (unknown) counts as false. Used where a negation
    /// must mean "does not hold" as Swift evaluates it.
    var twoValued: PredicateNode { .isTrue(self) }

    static func elementOf(_ column: ColumnReference, _ element: some SQLValueConvertible & Encodable) -> PredicateNode {
        do {
            return .arrayContains(column, try JSONScalar.value(of: element))
        } catch {
            return .invalid(ModelStoreError.wrapping(error), column: column)
        }
    }
}
