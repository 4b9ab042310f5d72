/// One sort key of a query: a property, ascending or descending.
///
/// ```swift
/// Snack.order(.descending(\.price), .ascending(\.name))
/// ```
/// NULLs sort first when ascending and last when descending (SQLite's rule). Ties are
/// always broken by primary key, so pages of a sorted query never overlap or skip.
public struct Ordering<Model: StoredModel>: Sendable {
    let column: ColumnReference
    let descending: Bool

    /// Smallest first.
    public static func ascending<Value>(_ property: KeyPath<Model, Value>) -> Ordering {
        Ordering(column: ColumnReference(property), descending: false)
    }

    /// Largest first.
    public static func descending<Value>(_ property: KeyPath<Model, Value>) -> Ordering {
        Ordering(column: ColumnReference(property), descending: true)
    }

    /// Smallest first, by column name.
    public static func ascending(_ column: Column) -> Ordering {
        Ordering(column: column.reference, descending: false)
    }

    /// Largest first, by column name.
    public static func descending(_ column: Column) -> Ordering {
        Ordering(column: column.reference, descending: true)
    }
}
