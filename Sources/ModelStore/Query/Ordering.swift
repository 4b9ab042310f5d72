/// One sort key of a query: a property, ascending or descending.
///
/// ```swift
/// Snack.order(.descending(\.price), .ascending(\.name))
/// Player.order(.ascending(\.team, \.name))                 // by the related team's name
/// Team.order(.descending(RelatedCount(\Team.players)))     // most players first
/// Order.order(.ascending(\.address.city))                  // inside a JSON-stored value
/// ```
/// NULLs sort first when ascending and last when descending (SQLite's rule). Ties are
/// always broken by primary key, so pages of a sorted query never overlap or skip.
public struct Ordering<Model: StoredModel>: Sendable {
    enum Term: Sendable {
        case column(ColumnReference)
        /// A value of the record a to-one relationship links to.
        case related(String, ColumnReference)
        /// How many records a relationship links to.
        case count(RelatedCountExpression)
        /// An ordering that cannot be translated (a `SortDescriptor` SQL cannot follow).
        case refused(ModelStoreError)
    }

    let term: Term
    let descending: Bool

    /// Smallest first.
    public static func ascending<Value>(_ property: KeyPath<Model, Value>) -> Ordering {
        Ordering(term: .column(ColumnReference(property)), descending: false)
    }

    /// Largest first.
    public static func descending<Value>(_ property: KeyPath<Model, Value>) -> Ordering {
        Ordering(term: .column(ColumnReference(property)), descending: true)
    }

    /// Smallest first, by column name.
    public static func ascending(_ column: Column) -> Ordering {
        Ordering(term: .column(column.reference), descending: false)
    }

    /// Largest first, by column name.
    public static func descending(_ column: Column) -> Ordering {
        Ordering(term: .column(column.reference), descending: true)
    }

    /// Smallest first, by a value of the record a to-one relationship links to; records
    /// linked to none sort as NULL (first).
    ///
    /// ```swift
    /// let players = try Player.order(.ascending(\.team, \.name)).findAll()
    /// ```
    public static func ascending<Target: StoredModel, Value>(
        _ relationship: KeyPath<Model, Target?>, _ property: KeyPath<Target, Value>
    ) -> Ordering {
        Ordering(term: .related(PropertyName.of(toOne: relationship), ColumnReference(property)), descending: false)
    }

    /// Largest first, by a value of the record a to-one relationship links to; records
    /// linked to none sort as NULL (last).
    public static func descending<Target: StoredModel, Value>(
        _ relationship: KeyPath<Model, Target?>, _ property: KeyPath<Target, Value>
    ) -> Ordering {
        Ordering(term: .related(PropertyName.of(toOne: relationship), ColumnReference(property)), descending: true)
    }

    /// Fewest related records first.
    public static func ascending(_ count: RelatedCount<Model>) -> Ordering {
        Ordering(term: .count(count.expression), descending: false)
    }

    /// Most related records first.
    public static func descending(_ count: RelatedCount<Model>) -> Ordering {
        Ordering(term: .count(count.expression), descending: true)
    }
}
