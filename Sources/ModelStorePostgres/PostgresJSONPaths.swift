#if PostgreSQL
    import Foundation
    import ModelStore

    /// Conditions and orderings inside JSON-stored values on PostgreSQL, answering as SQLite's
    /// `json_extract` does (the rule of `JSONPathSQL`).
    ///
    /// A JSON-stored value is JSON text in a TEXT column (as on SQLite), read as `jsonb`. SQLite
    /// gives the value at a path a type of its own per row (a number, a text), which a server
    /// expression cannot: here it is a sort key, `ROW(rank, number, bytes)` — rank 1 for a
    /// number (a Boolean is 1 or 0), 2 for a string (or an object or array, as its JSON
    /// text), the number exactly (`numeric`), and the text's UTF-8 bytes (`bytea`, which
    /// compares bytes whatever the server's collation). Rows compare field by field, so a
    /// number is before every text and each compares with its own kind, as on SQLite; the key
    /// is NULL for a missing value and JSON `null`. A condition's value becomes the same key.
    struct PostgresJSONPaths: JSONPathSQL {
        /// `(column::jsonb #> ARRAY['a','b']::text[])`: the JSON value at the path.
        private func json(_ column: String, _ path: [String]) -> String {
            guard !path.isEmpty else { return "(\(column)::jsonb)" }
            // The compiler refused quotes, backslashes and control characters in the names.
            return "(\(column)::jsonb #> ARRAY[" + path.map { "'" + $0 + "'" }.joined(separator: ", ") + "]::text[])"
        }

        /// The sort key of a `jsonb` value (see the type's comment).
        private func key(_ json: String) -> String {
            """
            CASE jsonb_typeof(\(json)) \
            WHEN 'number' THEN ROW(1, (\(json) #>> '{}')::numeric, ''::bytea) \
            WHEN 'boolean' THEN ROW(1, CASE WHEN \(json) = 'true'::jsonb THEN 1 ELSE 0 END::numeric, ''::bytea) \
            WHEN 'string' THEN ROW(2, 0::numeric, convert_to(\(json) #>> '{}', 'UTF8')) \
            WHEN 'object' THEN ROW(2, 0::numeric, convert_to(\(json)::text, 'UTF8')) \
            WHEN 'array' THEN ROW(2, 0::numeric, convert_to(\(json)::text, 'UTF8')) END
            """
        }

        func value(of column: String, at path: [String]) -> String { key(json(column, path)) }

        func operand(_ value: SQLValue) -> (sql: String, values: [SQLValue]) {
            switch value {
            case .null: return ("NULL", [])
            case .integer: return ("ROW(1, ?::numeric, ''::bytea)", [value])
            case .real(let number):
                // SQLite binds NaN as NULL. A Double converted to numeric by the server keeps
                // 15 digits; its shortest text keeps the number (as JSONEncoder wrote it).
                guard !number.isNaN else { return ("NULL", []) }
                let text = number.isInfinite ? (number < 0 ? "-Infinity" : "Infinity") : "\(number)"
                return ("ROW(1, ?::numeric, ''::bytea)", [.text(text)])
            case .text: return ("ROW(2, 0::numeric, convert_to(?, 'UTF8'))", [value])
            // SQLite orders bytes after every text.
            case .blob: return ("ROW(3, 0::numeric, ?::bytea)", [value])
            }
        }

        // One comparison against an array: a list of `=` on anonymous rows sets up each
        // comparison anew for every row (1,200 values over 4 rows took 8 s; this, 0.4 ms).
        func membership(_ value: String, _ operands: [String], negated: Bool) -> String? {
            let test = "\(value) = ANY(ARRAY[\(operands.joined(separator: ", "))])"
            return negated ? "NOT (\(test))" : test
        }

        func text(of column: String, at path: [String]) -> String {
            let json = json(column, path)
            return
                "CASE jsonb_typeof(\(json)) WHEN 'null' THEN NULL WHEN 'boolean' THEN CASE WHEN \(json) = 'true'::jsonb THEN '1' ELSE '0' END ELSE \(json) #>> '{}' END"
        }

        func elements(of column: String, at path: [String]) -> (source: String, element: String) {
            let json = json(column, path)
            return (
                "jsonb_array_elements(CASE WHEN jsonb_typeof(\(json)) = 'array' THEN \(json) END) AS modelstore_element(value)",
                key("modelstore_element.value")
            )
        }

        var selectsValues: Bool { false }
    }
#endif
