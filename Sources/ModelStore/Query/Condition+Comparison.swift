/// Comparison operators between a property and a value: `\.price < 2`, `Column("name") == "x"`.

/// Matches records whose property equals `value`; comparing with `nil` matches NULL.
public func == <Model: StoredModel, Value: SQLValueConvertible>(lhs: KeyPath<Model, Value>, rhs: Value) -> Condition<Model> {
    Condition(.comparison(ColumnReference(lhs), .equal, rhs))
}

/// Matches records whose property equals `value`; comparing with `nil` matches NULL.
public func == <Model: StoredModel>(lhs: Column, rhs: some SQLValueConvertible) -> Condition<Model> {
    Condition(.comparison(lhs.reference, .equal, rhs))
}

/// Matches records whose property differs from `value`, NULL included; with `nil`, non-NULL ones.
public func != <Model: StoredModel, Value: SQLValueConvertible>(lhs: KeyPath<Model, Value>, rhs: Value) -> Condition<Model> {
    Condition(.comparison(ColumnReference(lhs), .notEqual, rhs))
}

/// Matches records whose property differs from `value`, NULL included; with `nil`, non-NULL ones.
public func != <Model: StoredModel>(lhs: Column, rhs: some SQLValueConvertible) -> Condition<Model> {
    Condition(.comparison(lhs.reference, .notEqual, rhs))
}

/// Matches records whose property is less than `value` (never NULL ones).
public func < <Model: StoredModel, Value: SQLValueConvertible>(lhs: KeyPath<Model, Value>, rhs: Value) -> Condition<Model> {
    Condition(.comparison(ColumnReference(lhs), .less, rhs))
}

/// Matches records whose property is less than `value` (never NULL ones).
public func < <Model: StoredModel>(lhs: Column, rhs: some SQLValueConvertible) -> Condition<Model> {
    Condition(.comparison(lhs.reference, .less, rhs))
}

/// Matches records whose property is at most `value` (never NULL ones).
public func <= <Model: StoredModel, Value: SQLValueConvertible>(lhs: KeyPath<Model, Value>, rhs: Value) -> Condition<Model> {
    Condition(.comparison(ColumnReference(lhs), .lessOrEqual, rhs))
}

/// Matches records whose property is at most `value` (never NULL ones).
public func <= <Model: StoredModel>(lhs: Column, rhs: some SQLValueConvertible) -> Condition<Model> {
    Condition(.comparison(lhs.reference, .lessOrEqual, rhs))
}

/// Matches records whose property is greater than `value` (never NULL ones).
public func > <Model: StoredModel, Value: SQLValueConvertible>(lhs: KeyPath<Model, Value>, rhs: Value) -> Condition<Model> {
    Condition(.comparison(ColumnReference(lhs), .greater, rhs))
}

/// Matches records whose property is greater than `value` (never NULL ones).
public func > <Model: StoredModel>(lhs: Column, rhs: some SQLValueConvertible) -> Condition<Model> {
    Condition(.comparison(lhs.reference, .greater, rhs))
}

/// Matches records whose property is at least `value` (never NULL ones).
public func >= <Model: StoredModel, Value: SQLValueConvertible>(lhs: KeyPath<Model, Value>, rhs: Value) -> Condition<Model> {
    Condition(.comparison(ColumnReference(lhs), .greaterOrEqual, rhs))
}

/// Matches records whose property is at least `value` (never NULL ones).
public func >= <Model: StoredModel>(lhs: Column, rhs: some SQLValueConvertible) -> Condition<Model> {
    Condition(.comparison(lhs.reference, .greaterOrEqual, rhs))
}

extension PredicateNode {
    /// A comparison; `= NULL` and `IS NOT NULL` become NULL tests, as Swift's `nil` means.
    static func comparison(_ column: ColumnReference, _ op: ComparisonOperator, _ value: some SQLValueConvertible) -> PredicateNode {
        converting(value, column: column) { stored in
            guard stored.isNull else { return .compare(column, op, stored) }
            switch op {
            case .equal: return .isNull(column, negated: false)
            case .notEqual: return .isNull(column, negated: true)
            // SQL: an ordering comparison with NULL is never true.
            default: return .constant(false)
            }
        }
    }
}
