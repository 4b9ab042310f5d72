/// A condition on a model's records, compiled to SQL with every value bound as a parameter.
///
/// Build predicates from key paths, so the compiler checks property names and value types:
///
/// ```swift
/// let cheapSweets: Condition<Snack> = \.price < 2 && \.taste == "sweet"
/// let named: Condition<Snack> = .hasPrefix(\.name, "Po") || .in(\.snackId, [1, 2, 3])
/// let unpriced: Condition<Snack> = \.price == nil            // IS NULL
/// ```
///
/// or by column name where a key path cannot reach (`Column("price") > 2`). Values are
/// never spliced into SQL, so quotes, `%`, `_` and SQL keywords in values match literally.
/// A predicate naming a property the model does not store fails with `.invalidQuery`
/// before any SQL runs.
///
/// Comparisons follow SQL: `<`, `>` and friends never match NULL. `==` and `!=` follow Swift:
/// `\.name != "x"` matches records whose name is NULL (`IS NOT`), and comparing with `nil`
/// tests for NULL.
public struct Condition<Model: StoredModel>: Sendable {
    let node: PredicateNode

    init(_ node: PredicateNode) {
        self.node = node
    }

    /// Matches every record.
    public static var all: Condition { Condition(.constant(true)) }

    /// Matches no record.
    public static var none: Condition { Condition(.constant(false)) }

    /// Both conditions.
    public static func && (lhs: Condition, rhs: Condition) -> Condition {
        Condition(.and([lhs.node, rhs.node]))
    }

    /// Either condition.
    public static func || (lhs: Condition, rhs: Condition) -> Condition {
        Condition(.or([lhs.node, rhs.node]))
    }

    /// The opposite condition (SQL `NOT`: a comparison with NULL stays unmatched).
    public static prefix func ! (predicate: Condition) -> Condition {
        Condition(.not(predicate.node))
    }

    /// An SQL fragment with bound arguments, for what the typed API cannot say. The fragment
    /// is the caller's SQL; pass values only as `?` arguments.
    ///
    /// ```swift
    /// let p: Condition<Snack> = .sql("length(name) > ? AND price * 2 < ?", [3, 10.0])
    /// ```
    public static func sql(_ fragment: String, _ arguments: [any SQLValueConvertible] = []) -> Condition {
        do {
            return Condition(.sql(fragment, try arguments.map { try $0.comparisonValue }))
        } catch {
            return Condition(.invalid(ModelStoreError.wrapping(error), column: nil))
        }
    }
}

/// A column a predicate or ordering refers to, with how the caller named it (for errors).
struct ColumnReference: Sendable, Hashable {
    /// The property name, or the key path's description when it names no single property.
    let name: String
    /// For a key path that reaches into a JSON-stored property (`\.address.city`), the
    /// properties inside it, outermost first; empty for a column itself.
    let path: [String]

    init<Root>(_ keyPath: PartialKeyPath<Root>) {
        let described = PropertyName.of(keyPath)
        if described.hasPrefix("\\"), let components = PropertyName.components(keyPath), components.count > 1 {
            name = components[0]
            path = Array(components.dropFirst())
        } else {
            name = described
            path = []
        }
    }

    init(name: String, path: [String] = []) {
        self.name = name
        self.path = path
    }

    /// How the caller wrote it, for messages: `address.city`.
    var described: String { ([name] + path).joined(separator: ".") }
}

enum ComparisonOperator: String, Sendable {
    case equal = "="
    case notEqual = "IS NOT"
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
}

enum RelatedQuantifier: Sendable {
    case any, none
}

/// `count(*)` of the records related through a relationship, optionally only those matching a
/// predicate on the target.
struct RelatedCountExpression: Sendable {
    let relationship: String
    let predicate: PredicateNode?
}

enum TextMatch: Sendable {
    case contains, prefix, suffix
    /// A LIKE pattern: `%` any run of characters, `_` one character.
    case like
}

/// The model-independent form of a predicate, which the compiler turns into SQL.
indirect enum PredicateNode: Sendable {
    case compare(ColumnReference, ComparisonOperator, SQLValue)
    case isNull(ColumnReference, negated: Bool)
    case membership(ColumnReference, [SQLValue], negated: Bool)
    case between(ColumnReference, SQLValue, SQLValue, negated: Bool)
    case text(ColumnReference, TextMatch, String, caseInsensitive: Bool)
    case and([PredicateNode])
    case or([PredicateNode])
    case not(PredicateNode)
    case sql(String, [SQLValue])
    /// Matches in the model's full-text index, in some of its columns (all when empty).
    case fullText(SearchText, columns: [ColumnReference])
    case constant(Bool)
    /// Records with at least one (`any`) or no (`none`) related record, through the named
    /// relationship, matching the inner predicate (on the target's table).
    case related(String, RelatedQuantifier, PredicateNode)
    /// The number of related records (those matching the inner predicate) compared with a count.
    case relatedCount(RelatedCountExpression, ComparisonOperator, Int64)
    /// True where the predicate is true; false where it is false or unknown (NULL).
    case isTrue(PredicateNode)
    /// Records whose JSON-stored array (or set) holds an element equal to the value.
    case arrayContains(ColumnReference, SQLValue)
    /// Foundation's `#Predicate`, translated against the table when the query compiles.
    case translated(@Sendable (QueryCompiler) throws -> SQLFragment)
    /// A value that could not be converted; reported when the query runs.
    case invalid(ModelStoreError, column: ColumnReference?)
}

extension PredicateNode {
    /// Converts a value for a predicate, keeping a failure to report when the query runs.
    static func converting(
        _ value: some SQLValueConvertible, column: ColumnReference, _ make: (SQLValue) -> PredicateNode
    ) -> PredicateNode {
        do {
            return make(try conditionValue(value, for: column))
        } catch {
            return .invalid(ModelStoreError.wrapping(error), column: column)
        }
    }

    /// The value a condition compares a column with: its stored form, or — inside a
    /// JSON-stored property — the form JSON gives it there (a date as JSONEncoder writes it).
    static func conditionValue(_ value: some SQLValueConvertible, for column: ColumnReference) throws -> SQLValue {
        guard !column.path.isEmpty, let encodable = value as? any Encodable else { return try value.comparisonValue }
        return try JSONScalar.value(of: encodable)
    }
}
