/// How a backend spells the parts of a translated `#Predicate` that SQL has no common form
/// for: truth values, arithmetic checked as Swift checks it, a refusal raised from inside a
/// statement, and text compared by `Character`s. The core declares it and implements it for
/// SQLite (`SQLitePredicates`); a driver implements it for its server.
///
/// A fragment is SQL with its `?` placeholders and the values they take, in order.
package protocol PredicateSQL: Sendable {
    /// A value (a `Bool` property, a constant: 1, 0 or NULL) as a condition: true for 1, false
    /// for 0, unknown for NULL.
    func truth(of value: String) -> String
    /// A condition as a value a `Bool` property compares with: 1, 0, or NULL when unknown.
    func number(of condition: String) -> String
    /// `expression` where it is an integer within `min...max` (NULL stays NULL), else the
    /// statement fails with `message` (reported as `.invalidQuery`).
    func checkedInteger(_ expression: String, min: Int64, max: Int64, message: String) -> String
    /// `expression`, a Double, where the backend's arithmetic gave a number, else the statement
    /// fails with `message`.
    func checkedReal(_ expression: String, message: String) -> String
    /// An expression that fails the statement with `message` when it is evaluated (a `CASE`
    /// branch); it reads `value`, a value of the row, so the backend cannot evaluate it before
    /// the row is read.
    func refusal(_ message: String, reading value: (sql: String, values: [SQLValue])) -> (sql: String, values: [SQLValue])
    /// The placeholder of a constant compared with no property, typed where the backend
    /// cannot tell its type from the SQL around it.
    func placeholder(for value: SQLValue) -> String
    /// `left / right` computed in Double, whatever the operands' types.
    func realQuotient(_ left: String, _ right: String) -> String
    /// Whether `part` occurs in `text` as Swift's `contains` finds it, by `Character`s, as a
    /// condition (false for NULL); `constant` is `part`'s text when it is a constant. nil
    /// where the backend cannot give Swift's answer for it.
    func characterContains(
        _ text: (sql: String, values: [SQLValue]), _ part: (sql: String, values: [SQLValue]), constant: String?
    ) -> (sql: String, values: [SQLValue])?
    /// Whether `text` starts with `prefix` as Swift's `starts(with:)` tells, by `Character`s,
    /// as a condition (false for NULL); `constant` is `prefix`'s text when it is a constant.
    /// nil where the backend cannot give Swift's answer for it.
    func characterStarts(
        _ text: (sql: String, values: [SQLValue]), _ prefix: (sql: String, values: [SQLValue]), constant: String?
    ) -> (sql: String, values: [SQLValue])?
}

extension PredicateSQL {
    /// `text` as an SQL string literal.
    package func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}

/// SQLite's spelling: values are conditions as they are, and the checks are the functions the
/// store registers on each connection (`PredicateFunctions`).
struct SQLitePredicates: PredicateSQL {
    func truth(of value: String) -> String { value }
    func number(of condition: String) -> String { condition }

    func checkedInteger(_ expression: String, min: Int64, max: Int64, message: String) -> String {
        "modelstore_integer(\(expression), \(min), \(max), \(literal(message)))"
    }

    func checkedReal(_ expression: String, message: String) -> String {
        "modelstore_real(\(expression), \(literal(message)))"
    }

    func refusal(_ message: String, reading value: (sql: String, values: [SQLValue])) -> (sql: String, values: [SQLValue]) {
        ("modelstore_refuse(\(literal(message)))", [])
    }

    func placeholder(for value: SQLValue) -> String { "?" }

    // `* 1.0`: SQL divides two integer-valued operands as integers.
    func realQuotient(_ left: String, _ right: String) -> String { "\(left) * 1.0 / \(right)" }

    func characterContains(
        _ text: (sql: String, values: [SQLValue]), _ part: (sql: String, values: [SQLValue]), constant: String?
    ) -> (sql: String, values: [SQLValue])? {
        // Bytes first (cheap, and true wherever Swift's answer is, for NFC text), then
        // Swift's own answer by characters: "👍" is not in "👍🏽", nor "\r" in "\r\n".
        (
            "coalesce(instr(\(text.sql), \(part.sql)) > 0 AND modelstore_contains(\(text.sql), \(part.sql)), FALSE)",
            text.values + part.values + text.values + part.values
        )
    }

    func characterStarts(
        _ text: (sql: String, values: [SQLValue]), _ prefix: (sql: String, values: [SQLValue]), constant: String?
    ) -> (sql: String, values: [SQLValue])? {
        // Bytes first (an empty prefix starts every string), then Swift's own answer by
        // characters, as for contains.
        let blob = "CAST(\(prefix.sql) AS BLOB)"
        return (
            "coalesce((length(\(blob)) = 0 OR substr(CAST(\(text.sql) AS BLOB), 1, length(\(blob))) = \(blob)) AND modelstore_starts(\(text.sql), \(prefix.sql)), FALSE)",
            prefix.values + text.values + prefix.values + prefix.values + text.values + prefix.values
        )
    }
}
