/// A model's column named by its property name, for predicates and orderings where a key
/// path cannot be written (a property whose type is not `SQLValueConvertible`, names built
/// at run time). The name is checked against the model when the query runs.
///
/// ```swift
/// let p: Condition<Snack> = Column("price") > 2 && Column("tags") != "[]"
/// ```
public struct Column: Sendable, Hashable, ExpressibleByStringLiteral {
    /// The property (column) name.
    public let name: String

    /// A column by property name.
    public init(_ name: String) {
        self.name = name
    }

    /// A column by property name, from a string literal.
    public init(stringLiteral name: String) {
        self.name = name
    }

    var reference: ColumnReference { ColumnReference(name: name) }
}
