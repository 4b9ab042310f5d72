/// Named conditions: membership, ranges, NULL tests and text matching.
extension Condition {
    /// Matches records whose property is one of `values` (SQL `IN`). An empty list matches
    /// nothing; long lists are bound as one JSON array, so any length works.
    public static func `in`<Value: SQLValueConvertible>(_ property: KeyPath<Model, Value>, _ values: some Sequence<Value>) -> Condition {
        Condition(.memberOf(ColumnReference(property), values, negated: false))
    }

    /// Matches records whose property is none of `values` (SQL `NOT IN`).
    public static func notIn<Value: SQLValueConvertible>(_ property: KeyPath<Model, Value>, _ values: some Sequence<Value>) -> Condition {
        Condition(.memberOf(ColumnReference(property), values, negated: true))
    }

    /// Matches records whose property lies in `lower...upper` (SQL `BETWEEN`, both ends included).
    public static func between<Value: SQLValueConvertible>(_ property: KeyPath<Model, Value>, _ lower: Value, _ upper: Value) -> Condition {
        Condition(.range(ColumnReference(property), lower, upper))
    }

    /// Matches records whose optional property is NULL.
    public static func isNull<Value>(_ property: KeyPath<Model, Value?>) -> Condition {
        Condition(.isNull(ColumnReference(property), negated: false))
    }

    /// Matches records whose optional property is not NULL.
    public static func isNotNull<Value>(_ property: KeyPath<Model, Value?>) -> Condition {
        Condition(.isNull(ColumnReference(property), negated: true))
    }

    /// Matches records whose text contains `text` literally (`%` and `_` are plain
    /// characters). Case-sensitive unless asked; case folding covers ASCII letters.
    public static func contains<Value>(_ property: KeyPath<Model, Value>, _ text: String, caseInsensitive: Bool = false) -> Condition {
        Condition(.text(ColumnReference(property), .contains, text, caseInsensitive: caseInsensitive))
    }

    /// Matches records whose text starts with `prefix` literally.
    public static func hasPrefix<Value>(_ property: KeyPath<Model, Value>, _ prefix: String, caseInsensitive: Bool = false) -> Condition {
        Condition(.text(ColumnReference(property), .prefix, prefix, caseInsensitive: caseInsensitive))
    }

    /// Matches records whose text ends with `suffix` literally.
    public static func hasSuffix<Value>(_ property: KeyPath<Model, Value>, _ suffix: String, caseInsensitive: Bool = false) -> Condition {
        Condition(.text(ColumnReference(property), .suffix, suffix, caseInsensitive: caseInsensitive))
    }

    /// Matches records whose text fits an SQL LIKE `pattern`: `%` stands for any run of
    /// characters, `_` for one. Case-insensitive by default, as SQL's LIKE is (ASCII letters).
    public static func like<Value>(_ property: KeyPath<Model, Value>, _ pattern: String, caseInsensitive: Bool = true) -> Condition {
        Condition(.text(ColumnReference(property), .like, pattern, caseInsensitive: caseInsensitive))
    }

    // MARK: By column name

    /// `in(_:_:)` for a column named by string.
    public static func `in`(_ column: Column, _ values: [any SQLValueConvertible]) -> Condition {
        Condition(.memberOf(column.reference, values, negated: false))
    }

    /// `notIn(_:_:)` for a column named by string.
    public static func notIn(_ column: Column, _ values: [any SQLValueConvertible]) -> Condition {
        Condition(.memberOf(column.reference, values, negated: true))
    }

    /// `between(_:_:_:)` for a column named by string.
    public static func between(_ column: Column, _ lower: some SQLValueConvertible, _ upper: some SQLValueConvertible) -> Condition {
        Condition(.range(column.reference, lower, upper))
    }

    /// Matches records whose named column is NULL.
    public static func isNull(_ column: Column) -> Condition {
        Condition(.isNull(column.reference, negated: false))
    }

    /// Matches records whose named column is not NULL.
    public static func isNotNull(_ column: Column) -> Condition {
        Condition(.isNull(column.reference, negated: true))
    }

    /// `contains(_:_:caseInsensitive:)` for a column named by string.
    public static func contains(_ column: Column, _ text: String, caseInsensitive: Bool = false) -> Condition {
        Condition(.text(column.reference, .contains, text, caseInsensitive: caseInsensitive))
    }

    /// `hasPrefix(_:_:caseInsensitive:)` for a column named by string.
    public static func hasPrefix(_ column: Column, _ prefix: String, caseInsensitive: Bool = false) -> Condition {
        Condition(.text(column.reference, .prefix, prefix, caseInsensitive: caseInsensitive))
    }

    /// `hasSuffix(_:_:caseInsensitive:)` for a column named by string.
    public static func hasSuffix(_ column: Column, _ suffix: String, caseInsensitive: Bool = false) -> Condition {
        Condition(.text(column.reference, .suffix, suffix, caseInsensitive: caseInsensitive))
    }

    /// `like(_:_:caseInsensitive:)` for a column named by string.
    public static func like(_ column: Column, _ pattern: String, caseInsensitive: Bool = true) -> Condition {
        Condition(.text(column.reference, .like, pattern, caseInsensitive: caseInsensitive))
    }
}

extension PredicateNode {
    static func memberOf(_ column: ColumnReference, _ values: some Sequence<some SQLValueConvertible>, negated: Bool) -> PredicateNode {
        do {
            return .membership(column, try values.map { try conditionValue($0, for: column) }, negated: negated)
        } catch {
            return .invalid(ModelStoreError.wrapping(error), column: column)
        }
    }

    static func memberOf(_ column: ColumnReference, _ values: [any SQLValueConvertible], negated: Bool) -> PredicateNode {
        do {
            return .membership(column, try values.map { try conditionValue($0, for: column) }, negated: negated)
        } catch {
            return .invalid(ModelStoreError.wrapping(error), column: column)
        }
    }

    static func range(_ column: ColumnReference, _ lower: some SQLValueConvertible, _ upper: some SQLValueConvertible) -> PredicateNode {
        do {
            return .between(column, try conditionValue(lower, for: column), try conditionValue(upper, for: column), negated: false)
        } catch {
            return .invalid(ModelStoreError.wrapping(error), column: column)
        }
    }
}
