// Declared in Coding/, the layer that needs it: the schema probe and placeholders ask any
// value type whether it is an empty relationship. `Related` (Schema/) conforms.

/// A type the schema probe and decoders can make empty without decoding anything:
/// relationship values, filled later by the graph loader.
protocol EmptyRelationshipValue {
    static var emptyValue: Self { get }
    /// A relationship holding a placeholder model, or nil when none can be made.
    static var holdingPlaceholder: Self? { get }
    var isEmpty: Bool { get }
}
