#if PostgreSQL
    import Foundation
    import ModelStore

    /// Conditions and orderings inside JSON-stored values on PostgreSQL, answering as SQLite's
    /// `json_extract` does (the rule of `JSONPathSQL`).
    ///
    /// A JSON-stored value is JSON text in a TEXT column (as on SQLite), read as `json`, which
    /// keeps the text as written (an object's keys in their order, numbers as spelled) where
    /// `jsonb` would respell it. SQLite gives the value at a path a type of its own per row (an
    /// integer, a REAL, a text), which a server expression cannot: here it is a sort key,
    /// `ROW(rank, double, exact, bytes)`:
    /// - rank 1 for a number (a Boolean is 1 or 0), 2 for a string (or an object or array, as
    ///   its JSON text), so every number comes before every text;
    /// - a number as SQLite reads it: a literal of at most 19 digits that fits 64 bits is an
    ///   integer, any other a Double. `double` compares Doubles as SQLite does; `exact` breaks
    ///   a tie between an integer and a Double as SQLite's exact comparison does (an integer
    ///   past 2^53 against the Double nearest it);
    /// - a text by its UTF-8 bytes (`bytea`), whatever the server's collation.
    ///
    /// Rows compare field by field; the key is NULL for a missing value and JSON `null`. A
    /// condition's value becomes the same kind of key.
    struct PostgresJSONPaths: JSONPathSQL {
        /// `(column::json #> ARRAY['a','b']::text[])`: the JSON value at the path.
        private func json(_ column: String, _ path: [String]) -> String {
            guard !path.isEmpty else { return "(\(column)::json)" }
            // The compiler refused quotes, backslashes and control characters in the names.
            return "(\(column)::json #> ARRAY[" + path.map { "'" + $0 + "'" }.joined(separator: ", ") + "]::text[])"
        }

        /// The exact part of the key of a number spelled `literal` (SQL text): the integer
        /// itself for a literal SQLite reads as one, else the Double nearest the literal as an
        /// integer (rounded half to even, as `operand(_:)` rounds in Swift) where it fits 64
        /// bits — it only ever breaks a tie between an integer and that Double.
        private func exact(_ literal: String) -> String {
            """
            CASE WHEN (\(literal)) ~ '^-?[0-9]{1,19}$' AND (\(literal))::numeric BETWEEN -9223372036854775808 AND 9223372036854775807 \
            THEN (\(literal))::numeric \
            WHEN (\(literal))::float8 >= -9223372036854775808::float8 AND (\(literal))::float8 < 9223372036854775808::float8 \
            THEN (\(literal))::float8::bigint::numeric \
            ELSE (\(literal))::float8::numeric END
            """
        }

        /// The sort key of a number spelled `literal` (see the type's comment).
        private func numberKey(_ literal: String) -> String {
            "ROW(1, (\(literal))::float8, \(exact(literal)), ''::bytea)"
        }

        /// The identity of a number spelled `literal`: bytes equal exactly when the keys are
        /// (-0 is 0), which the server can hash where it cannot hash a key (an anonymous row).
        private func numberIdentity(_ literal: String) -> String {
            "'\\x01'::bytea || float8send((\(literal))::float8 + 0::float8) || convert_to((\(exact(literal)))::text, 'UTF8')"
        }

        /// A value of the JSON at the path, built from its kind (`modelstore_k`), its text
        /// (`modelstore_l`) and the value itself (`modelstore_v`), which are read once, in a
        /// subquery the planner keeps (`OFFSET 0`): written inline, each use parses the
        /// document again (a number's key uses its text seven times; 100,000 rows compared by
        /// a number took about twice as long).
        private func reading(_ json: String, _ cases: String) -> String {
            """
            (SELECT CASE modelstore_k \(cases) END \
            FROM (SELECT modelstore_v, json_typeof(modelstore_v) AS modelstore_k, modelstore_v #>> '{}' AS modelstore_l \
            FROM (SELECT \(json) AS modelstore_v OFFSET 0) AS modelstore_value OFFSET 0) AS modelstore_read)
            """
        }

        private static let boolean = "(CASE WHEN modelstore_l = 'true' THEN '1' ELSE '0' END)"

        /// The sort key of a `json` value (see the type's comment).
        private func key(_ json: String) -> String {
            reading(
                json,
                """
                WHEN 'number' THEN \(numberKey("modelstore_l")) WHEN 'boolean' THEN \(numberKey(Self.boolean)) \
                WHEN 'string' THEN ROW(2, 0::float8, 0::numeric, convert_to(modelstore_l, 'UTF8')) \
                WHEN 'object' THEN ROW(2, 0::float8, 0::numeric, convert_to(modelstore_v::text, 'UTF8')) \
                WHEN 'array' THEN ROW(2, 0::float8, 0::numeric, convert_to(modelstore_v::text, 'UTF8'))
                """)
        }

        /// The identity of a `json` value: bytes equal exactly when the keys are.
        private func identity(_ json: String) -> String {
            reading(
                json,
                """
                WHEN 'number' THEN \(numberIdentity("modelstore_l")) WHEN 'boolean' THEN \(numberIdentity(Self.boolean)) \
                WHEN 'string' THEN '\\x02'::bytea || convert_to(modelstore_l, 'UTF8') \
                WHEN 'object' THEN '\\x02'::bytea || convert_to(modelstore_v::text, 'UTF8') \
                WHEN 'array' THEN '\\x02'::bytea || convert_to(modelstore_v::text, 'UTF8')
                """)
        }

        func value(of column: String, at path: [String]) -> String { key(json(column, path)) }

        func operand(_ value: SQLValue) -> (sql: String, values: [SQLValue]) {
            switch value {
            case .null: return ("NULL::record", [])
            case .integer(let integer):
                return ("ROW(1, ?::float8, ?::numeric, ''::bytea)", [.real(Double(integer)), value])
            case .real(let number):
                // SQLite binds NaN as NULL (JSONScalar refuses NaN and infinities first).
                guard !number.isNaN else { return ("NULL::record", []) }
                guard number >= -0x1p63, number < 0x1p63 else {
                    return ("ROW(1, ?::float8, ?::float8::numeric, ''::bytea)", [value, value])
                }
                return ("ROW(1, ?::float8, ?::numeric, ''::bytea)", [value, .integer(Int64(number.rounded(.toNearestOrEven)))])
            case .text: return ("ROW(2, 0::float8, 0::numeric, convert_to(?, 'UTF8'))", [value])
            // SQLite orders bytes after every text.
            case .blob: return ("ROW(3, 0::float8, 0::numeric, ?::bytea)", [value])
            }
        }

        // One array parameter, each value with its kind ("n:5", "t:Paris"), compared by
        // identity: the server hashes the list once per statement. A list of keys built from
        // parameters was built again for every row (200 texts over 100,000 rows: 6.5 s), and
        // a list of keys cannot be hashed at all (anonymous rows), so NOT IN compared each row
        // with each value again (100 numbers over 10,000 rows: 9.4 s).
        func membership(
            of column: String, at path: [String], _ values: [SQLValue], negated: Bool
        ) -> (sql: String, values: [SQLValue])? {
            var elements: [SQLValue] = []
            var null = false
            for value in values {
                switch value {
                case .integer(let integer): elements.append(.text("n:" + String(integer)))
                case .real(let number) where number.isFinite: elements.append(.text("n:\(number)"))
                case .text(let text): elements.append(.text("t:" + text))
                case .blob(let bytes): elements.append(.text("b:" + bytes.map { String(format: "%02x", $0) }.joined()))
                // SQLite binds NaN as NULL (JSONScalar refuses NaN and infinities first).
                case .null, .real: null = true
                }
            }
            var parts: [String] = []
            var bound: [SQLValue] = []
            if !elements.isEmpty, let array = PostgresDialect().arrayParameter(elements) {
                parts.append(
                    """
                    \(identity(json(column, path))) IN (SELECT CASE left(e, 2) \
                    WHEN 'n:' THEN \(numberIdentity("substr(e, 3)")) \
                    WHEN 't:' THEN '\\x02'::bytea || convert_to(substr(e, 3), 'UTF8') \
                    WHEN 'b:' THEN '\\x03'::bytea || decode(substr(e, 3), 'hex') END \
                    FROM unnest(?::text[]) AS modelstore_list(e))
                    """)
                bound.append(array)
            }
            // A NULL in the list leaves a value found nowhere else unknown, as SQL's IN does.
            if null { parts.append("NULL") }
            let test = "(" + parts.joined(separator: " OR ") + ")"
            return (negated ? "NOT " + test : test, bound)
        }

        func text(of column: String, at path: [String]) -> String { text(json(column, path)) }

        /// The text of a `json` value as SQLite's `json_extract` gives it (see `text(of:at:)`).
        private func text(_ json: String) -> String {
            return
                "CASE json_typeof(\(json)) WHEN 'null' THEN NULL WHEN 'boolean' THEN CASE WHEN \(json)::text = 'true' THEN '1' ELSE '0' END WHEN 'string' THEN \(json) #>> '{}' ELSE \(json)::text END"
        }

        // As SQLite's json_each: an array's elements, an object's values, a scalar itself.
        func elements(of column: String, at path: [String], as alias: String) -> (source: String, element: String, text: String) {
            let json = json(column, path)
            return (
                """
                json_array_elements(CASE json_typeof(\(json)) WHEN 'array' THEN \(json) \
                WHEN 'object' THEN (SELECT json_agg(value) FROM json_each(\(json))) WHEN 'null' THEN NULL \
                ELSE json_build_array(\(json)) END) AS \(alias)(value)
                """,
                key("\(alias).value"),
                text("\(alias).value")
            )
        }

        // SQLite's json_array_length: 0 for a JSON value that is not an array.
        func arrayLength(of column: String, at path: [String]) -> String {
            let json = json(column, path)
            return
                "(CASE json_typeof(\(json)) WHEN 'array' THEN json_array_length(\(json)) WHEN 'null' THEN NULL ELSE CASE WHEN \(json) IS NOT NULL THEN 0 END END)"
        }

        // Such a value is a sort key here, which holds no elements.
        func arrayLength(ofValue value: String) -> String? { nil }

        var selectsValues: Bool { false }
    }
#endif
