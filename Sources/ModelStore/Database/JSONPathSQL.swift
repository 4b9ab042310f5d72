/// How a backend reaches inside JSON-stored values, for conditions and orderings on a key path
/// into one (`\.venue.city == "Paris"`, `.contains(\.tags, "rock")`). The core declares it and
/// implements it for SQLite (`SQLiteJSONPaths`); a driver implements it for its server.
///
/// Every backend answers as SQLite's `json_extract` and `json_each` do, which is the rule the
/// store keeps: a missing value and JSON `null` are NULL; a Boolean is the number 1 or 0; a
/// number compares and orders as a number and before any text; a string as its bytes; an
/// object or array as its JSON text.
///
/// Each method takes the column's SQL (quoted, maybe qualified) and the property names of the
/// path, which the compiler has checked hold no quote, backslash or control character.
package protocol JSONPathSQL: Sendable {
    /// The value at `path` inside `column`, as an expression that compares with
    /// `operand(_:)`, orders as SQLite orders `json_extract`'s values, and is NULL where the
    /// value is missing or JSON `null`.
    func value(of column: String, at path: [String]) -> String
    /// What a condition compares `value(of:at:)` (or an element of `elements(of:at:)`) with
    /// for `value`, bound as the SQL's placeholders (`?`) take `values`.
    func operand(_ value: SQLValue) -> (sql: String, values: [SQLValue])
    /// The value at `path` inside `column` is one of `values` (`negated`: none of them), in
    /// SQL's three-valued logic, for a backend that needs its own form of such a list; nil for
    /// the store's usual `IN` list of `value(of:at:)`.
    func membership(of column: String, at path: [String], _ values: [SQLValue], negated: Bool) -> (sql: String, values: [SQLValue])?
    /// The value at `path` as text, for the text matches (`contains`, `hasPrefix`, `LIKE`):
    /// a number as SQLite writes it, a Boolean `1` or `0`.
    func text(of column: String, at path: [String]) -> String
    /// A FROM item named `alias` (quoted) of the elements of the JSON array at `path` (none
    /// for NULL or an empty array), the expression of one element, which compares as
    /// `value(of:at:)` does, and its text as `text(of:at:)` reads a value.
    func elements(of column: String, at path: [String], as alias: String) -> (source: String, element: String, text: String)
    /// The number of elements of the JSON array at `path` (an empty `path`: the column's own
    /// value); 0 for any other JSON value, NULL where the value is missing.
    func arrayLength(of column: String, at path: [String]) -> String
    /// The number of elements of `value`, a value this protocol's expressions gave (an
    /// element of `elements(of:at:as:)`, a related record's value); nil where such a value
    /// is only a key that compares (`selectsValues` false).
    func arrayLength(ofValue value: String) -> String?
    /// Whether `value(of:at:)` is the value itself, which a grouped query may select and a
    /// model read back (SQLite); otherwise it is only a key that compares and orders.
    var selectsValues: Bool { get }
}

/// SQLite's own JSON functions: `json_extract(column, '$."a"."b"')` and `json_each`.
struct SQLiteJSONPaths: JSONPathSQL {
    /// `$."a"."b"`: each property quoted, so names with dots or brackets stay one label.
    static func path(_ components: [String]) -> String {
        "'$" + components.map { ".\"" + $0 + "\"" }.joined() + "'"
    }

    func value(of column: String, at path: [String]) -> String {
        "json_extract(\(column), \(Self.path(path)))"
    }

    func operand(_ value: SQLValue) -> (sql: String, values: [SQLValue]) { ("?", [value]) }

    func membership(of column: String, at path: [String], _ values: [SQLValue], negated: Bool) -> (sql: String, values: [SQLValue])? {
        nil
    }

    func text(of column: String, at path: [String]) -> String { value(of: column, at: path) }

    func elements(of column: String, at path: [String], as alias: String) -> (source: String, element: String, text: String) {
        let source = (path.isEmpty ? "json_each(\(column))" : "json_each(\(column), \(Self.path(path)))") + " AS " + alias
        return (source, alias + ".\"value\"", alias + ".\"value\"")
    }

    func arrayLength(of column: String, at path: [String]) -> String {
        "json_array_length(\(path.isEmpty ? column : value(of: column, at: path)))"
    }

    func arrayLength(ofValue value: String) -> String? { "json_array_length(\(value))" }

    var selectsValues: Bool { true }
}
