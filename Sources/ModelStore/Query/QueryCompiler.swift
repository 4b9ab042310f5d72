import Foundation

/// SQL text with the values its `?` placeholders take, in order.
struct SQLFragment {
    var sql: String
    var values: [SQLValue]

    init(_ sql: String = "", _ values: [SQLValue] = []) {
        self.sql = sql
        self.values = values
    }

    static func + (lhs: SQLFragment, rhs: SQLFragment) -> SQLFragment {
        SQLFragment(lhs.sql + rhs.sql, lhs.values + rhs.values)
    }
}

/// Turns predicates, orderings and pages into SQL for one table, checking every column
/// name against the model first. Values only ever become bound parameters.
struct QueryCompiler {
    let table: TableDescription

    /// Lists up to this long are written as `?, ?, …`; longer ones are bound as one JSON
    /// array, so no list runs into SQLite's limit on parameters.
    static let inlineListLimit = 500

    // MARK: Columns

    /// The quoted column a reference names, or `.invalidQuery` naming model and column.
    func column(_ reference: ColumnReference) throws -> String {
        guard table.layout.position(of: reference.name) != nil else {
            let known = table.columns.map(\.name).joined(separator: ", ")
            throw ModelStoreError(
                .invalidQuery,
                "\(table.modelName) has no stored property '\(reference.name)' for a query to use (its properties: \(known)).",
                model: table.modelName, column: reference.name,
                suggestion: "Name a stored property of \(table.modelName) directly, as \\\(table.modelName).property.")
        }
        return quoted(reference.name)
    }

    // MARK: Clauses

    /// ` WHERE …`, or nothing.
    func whereClause(_ node: PredicateNode?) throws -> SQLFragment {
        guard let node else { return SQLFragment() }
        let condition = try compile(node)
        return SQLFragment(" WHERE " + condition.sql, condition.values)
    }

    /// ` ORDER BY …`: the query's orderings, then the primary key as tie-breaker.
    func orderClause<Model>(_ orderings: [Ordering<Model>]) throws -> String {
        var terms: [String] = []
        var named = Set<String>()
        for ordering in orderings {
            terms.append(try column(ordering.column) + (ordering.descending ? " DESC" : ""))
            named.insert(ordering.column.name)
        }
        for name in table.keyNames where !named.contains(name) { terms.append(quoted(name)) }
        return " ORDER BY " + terms.joined(separator: ", ")
    }

    /// ` LIMIT ? OFFSET ?`, or nothing.
    func pageClause<Model>(_ query: Query<Model>) -> SQLFragment {
        guard query.isPaged else { return SQLFragment() }
        return SQLFragment(" LIMIT ? OFFSET ?", [.integer(Int64(query.limit ?? -1)), .integer(Int64(query.offset ?? 0))])
    }

    /// `SELECT columns FROM table WHERE … ORDER BY … LIMIT …`.
    func select<Model>(_ columns: String, _ query: Query<Model>, ordered: Bool = true) throws -> SQLFragment {
        if let failure = query.failure { throw failure }
        var fragment = SQLFragment("SELECT \(columns) FROM \(table.quotedTable)")
        fragment = fragment + (try whereClause(query.predicate))
        if ordered || query.isPaged { fragment.sql += try orderClause(query.orderings) }
        return fragment + pageClause(query)
    }

    /// What to aggregate over: the table filtered, or — for a paged query — the page.
    func source<Model>(_ query: Query<Model>, columns: String) throws -> SQLFragment {
        if let failure = query.failure { throw failure }
        guard query.isPaged else {
            return SQLFragment(table.quotedTable) + (try whereClause(query.predicate))
        }
        let inner = try select(columns, query)
        return SQLFragment("(" + inner.sql + ")", inner.values)
    }

    // MARK: Predicates

    func compile(_ node: PredicateNode) throws -> SQLFragment {
        switch node {
        case .compare(let reference, let op, let value):
            return SQLFragment("\(try column(reference)) \(op.rawValue) ?", [value])
        case .isNull(let reference, let negated):
            return SQLFragment("\(try column(reference)) IS \(negated ? "NOT " : "")NULL")
        case .membership(let reference, let values, let negated):
            return try membership(column(reference), values, negated: negated)
        case .between(let reference, let lower, let upper, let negated):
            return SQLFragment("\(try column(reference)) \(negated ? "NOT " : "")BETWEEN ? AND ?", [lower, upper])
        case .text(let reference, let match, let text, let caseInsensitive):
            return try textMatch(try column(reference), match, text, caseInsensitive: caseInsensitive)
        case .and(let nodes):
            guard !nodes.isEmpty else { return SQLFragment("1") }
            return try join(nodes, with: " AND ")
        case .or(let nodes):
            guard !nodes.isEmpty else { return SQLFragment("0") }
            return try join(nodes, with: " OR ")
        case .not(let inner):
            let compiled = try compile(inner)
            return SQLFragment("NOT (" + compiled.sql + ")", compiled.values)
        case .sql(let fragment, let values):
            return SQLFragment("(" + fragment + ")", values)
        case .constant(let value):
            return SQLFragment(value ? "1" : "0")
        case .invalid(var error, let reference):
            error.code = .invalidQuery
            error.model = table.modelName
            error.column = error.column ?? reference?.name
            error.message = "A value in the query on \(table.modelName)"
                + (reference.map { ".\($0.name)" } ?? "") + " cannot be used: " + error.message
            throw error
        }
    }

    private func join(_ nodes: [PredicateNode], with separator: String) throws -> SQLFragment {
        let parts = try nodes.map(compile)
        return SQLFragment(
            parts.map { "(" + $0.sql + ")" }.joined(separator: separator), parts.flatMap(\.values))
    }

    private func membership(_ column: String, _ values: [SQLValue], negated: Bool) throws -> SQLFragment {
        guard !values.isEmpty else { return SQLFragment(negated ? "1" : "0") }
        let keyword = negated ? "NOT IN" : "IN"
        if values.count <= Self.inlineListLimit {
            let marks = Array(repeating: "?", count: values.count).joined(separator: ", ")
            return SQLFragment("\(column) \(keyword) (\(marks))", values)
        }
        return SQLFragment("\(column) \(keyword) (SELECT value FROM json_each(?))", [.text(try Self.jsonArray(values))])
    }

    /// Values as a JSON array whose elements `json_each` returns with their storage class.
    static func jsonArray(_ values: [SQLValue]) throws -> String {
        var elements: [String] = []
        elements.reserveCapacity(values.count)
        for value in values {
            switch value {
            case .null: elements.append("null")
            case .integer(let integer): elements.append(String(integer))
            case .real(let real) where real.isFinite:
                // JSON has no way to say "this integral number is REAL"; 1.0 would read back as 1.
                elements.append(real == real.rounded() && abs(real) < 1e15 ? String(format: "%.1f", real) : "\(real)")
            case .text(let text):
                let data = try JSONEncoder().encode(text)
                elements.append(String(decoding: data, as: UTF8.self))
            case .real, .blob:
                throw ModelStoreError(
                    .invalidQuery,
                    "An IN list of more than \(inlineListLimit) values may hold only integers, finite numbers and text; it holds \(value).",
                    value: value.description, suggestion: "Split the list into parts of \(inlineListLimit) values.")
            }
        }
        return "[" + elements.joined(separator: ",") + "]"
    }

    /// Literal matches compare bytes (`instr`, and `substr` over the text cast to a BLOB), so
    /// `%`, `_` and even NUL characters are plain characters; `length()` of text and LIKE
    /// would stop at a NUL. Case folding applies SQL's `lower()` to both sides, so they fold
    /// alike. Each form keeps SQL's NULL: a NULL column is neither matched nor, under NOT,
    /// unmatched. (`substr` of an empty BLOB is NULL, hence the length guards.)
    private func textMatch(_ column: String, _ match: TextMatch, _ text: String, caseInsensitive: Bool) throws -> SQLFragment {
        if match == .like {
            guard !text.utf8.contains(0) else {
                throw ModelStoreError(
                    .invalidQuery, "A LIKE pattern cannot contain a NUL character: SQLite's LIKE stops reading at it.",
                    value: SQLValue.text(text).description,
                    suggestion: "Use contains, hasPrefix or hasSuffix, which match NUL characters literally.")
            }
            guard !caseInsensitive else { return SQLFragment("\(column) LIKE ?", [.text(text)]) }
            return SQLFragment("\(column) GLOB ?", [.text(Self.globPattern(fromLike: text))])
        }
        if text.isEmpty { return SQLFragment("\(column) IS NOT NULL") }
        if caseInsensitive {
            switch match {
            case .contains:
                return SQLFragment("instr(lower(\(column)), lower(?)) > 0", [.text(text)])
            case .prefix:
                return SQLFragment("instr(lower(\(column)), lower(?)) = 1", [.text(text)])
            case .suffix, .like:
                let folded = "CAST(lower(\(column)) AS BLOB)"
                let needle = "CAST(lower(?) AS BLOB)"
                return SQLFragment(
                    "length(\(folded)) >= length(\(needle)) AND substr(\(folded), -length(\(needle))) = \(needle)",
                    [.text(text), .text(text), .text(text)])
            }
        }
        let bytes = Data(text.utf8)
        let count = Int64(bytes.count)
        switch match {
        case .contains:
            return SQLFragment("instr(\(column), ?) > 0", [.text(text)])
        case .prefix:
            return SQLFragment(
                "length(CAST(\(column) AS BLOB)) >= ? AND substr(CAST(\(column) AS BLOB), 1, ?) = ?",
                [.integer(count), .integer(count), .blob(bytes)])
        case .suffix, .like:
            return SQLFragment(
                "length(CAST(\(column) AS BLOB)) >= ? AND substr(CAST(\(column) AS BLOB), ?) = ?",
                [.integer(count), .integer(-count), .blob(bytes)])
        }
    }

    /// A LIKE pattern as a case-sensitive GLOB pattern: `%` → `*`, `_` → `?`, and GLOB's
    /// own special characters made literal.
    static func globPattern(fromLike pattern: String) -> String {
        var glob = ""
        for character in pattern {
            switch character {
            case "%": glob.append("*")
            case "_": glob.append("?")
            case "*": glob.append("[*]")
            case "?": glob.append("[?]")
            case "[": glob.append("[[]")
            default: glob.append(character)
            }
        }
        return glob
    }
}
