#if PostgreSQL
    import ModelStore

    /// A translated `#Predicate`'s SQL on PostgreSQL (the rule of `PredicateSQL`).
    ///
    /// A `Bool` property is a BIGINT 1 or 0 here, as on SQLite, and a condition is BOOLEAN:
    /// each becomes the other where the predicate uses it so. Integer arithmetic runs in
    /// BIGINT, which fails the statement where a 64-bit result overflows (22003); a narrower
    /// Swift type's result is checked against its range. A refusal is a cast that fails with
    /// the refusal's text (22P02). Double arithmetic that overflows or divides by zero fails
    /// on the server itself (22003, 22012). `ModelStoreError.server` reports each as
    /// `.invalidQuery`.
    struct PostgresPredicates: PredicateSQL {
        /// What a refusal's text starts with inside the server's message.
        static let refusalPrefix = "modelstore_refuse: "

        func truth(of value: String) -> String { "((\(value)) <> 0)" }
        func number(of condition: String) -> String { "((\(condition))::integer)" }

        func checkedInteger(_ expression: String, min: Int64, max: Int64, message: String) -> String {
            // 64 bits: BIGINT's own overflow check is Swift's (measured: the subquery below
            // made `$0.n * 3 > x` over 100,000 rows take 6 times as long as the plain product).
            if min == .min, max == .max { return "(\(expression))" }
            // A narrower type: its operands are within it, so the BIGINT result is exact, and
            // is checked once per row, in a subquery the planner keeps (`OFFSET 0`).
            return """
                (SELECT CASE WHEN modelstore_n IS NULL THEN NULL WHEN modelstore_n BETWEEN \(min) AND \(max) THEN modelstore_n \
                ELSE \(refusal(message, reading: ("modelstore_n", [])).sql) END \
                FROM (SELECT (\(expression))::bigint AS modelstore_n OFFSET 0) AS modelstore_checked)
                """
        }

        // The server fails the statement itself where a Double overflows (22003) or is divided
        // by zero (22012); a NaN (infinity minus infinity), which the server calls equal to
        // itself, is refused here, as SQLite's NULL for it is.
        func checkedReal(_ expression: String, message: String) -> String {
            """
            (SELECT CASE WHEN modelstore_r = 'NaN'::float8 THEN (\(refusal(message, reading: ("modelstore_r", [])).sql))::float8 \
            ELSE modelstore_r END FROM (SELECT (\(expression))::float8 AS modelstore_r OFFSET 0) AS modelstore_checked)
            """
        }

        func refusal(_ message: String, reading value: (sql: String, values: [SQLValue])) -> (sql: String, values: [SQLValue]) {
            // The empty text read from the row, through a subquery the planner keeps, stops it
            // from failing the statement while it plans it (where a parameter is a constant: a
            // divisor of 0 refused an empty table), before any record needs the refusal.
            (
                "(SELECT CAST(\(literal(Self.refusalPrefix + message)) || left(modelstore_v::text, 0) AS bigint) FROM (SELECT (\(value.sql)) AS modelstore_v OFFSET 0) AS modelstore_refusal)",
                value.values
            )
        }

        // Doubles go untyped (`PostgresDriverConnection`), typed by the SQL around them: with
        // no column beside it (`cond ? 1.5 : 2.5`) the server would take one for text.
        func placeholder(for value: SQLValue) -> String {
            if case .real = value { return "?::float8" }
            return "?"
        }

        func realQuotient(_ left: String, _ right: String) -> String { "(\(left))::float8 / (\(right))::float8" }

        // The server has no notion of a Character (a grapheme cluster): a constant text is
        // found by a regular expression that carries Swift's answer (`CharacterPattern`); any
        // other is refused, so a predicate with `.evaluateInMemory` still answers, by Swift.
        func characterContains(
            _ text: (sql: String, values: [SQLValue]), _ part: (sql: String, values: [SQLValue]), constant: String?
        ) -> (sql: String, values: [SQLValue])? {
            guard let constant, let pattern = CharacterPattern.contains(constant) else { return nil }
            // The code points first (cheap), then where Characters start and end.
            return (
                "coalesce(strpos(\(text.sql), ?) > 0 AND \(text.sql) ~ ?, FALSE)",
                text.values + [.text(constant)] + text.values + [.text(pattern)]
            )
        }

        func characterStarts(
            _ text: (sql: String, values: [SQLValue]), _ prefix: (sql: String, values: [SQLValue]), constant: String?
        ) -> (sql: String, values: [SQLValue])? {
            guard let constant, let pattern = CharacterPattern.starts(with: constant) else { return nil }
            return (
                "coalesce(starts_with(\(text.sql), ?) AND \(text.sql) ~ ?, FALSE)",
                text.values + [.text(constant)] + text.values + [.text(pattern)]
            )
        }
    }
#endif
