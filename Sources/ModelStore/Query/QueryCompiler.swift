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
    /// The description of a related model's table, ready to read (the session's, which
    /// creates it or stands in for it); conditions across relationships compile against it.
    var resolve: (any StoredModel.Type) throws -> TableDescription = { target in
        func describe<T: StoredModel>(_ type: T.Type) throws -> TableDescription { try TableDescription.of(type) }
        return try describe(target)
    }

    /// How deep in subqueries this compiler's table is: 0 for the statement's own table.
    var depth = 0
    /// Whether columns are written with their table (`"Item"."price"`), as a translated
    /// predicate needs inside `json_each` subqueries.
    var qualifiesColumns = false
    /// The backend's SQL (the session's connection's).
    var dialect: any SQLDialect = SQLiteDialect()
    /// Called before SQL that reads a table's full-text index is written (the session's,
    /// which makes sure the index does not lag the table).
    var beforeSearch: (TableDescription) throws -> Void = { _ in }

    /// How SQL names this compiler's table: the table itself at the top, an alias of its own
    /// in a subquery.
    var qualifier: String { depth == 0 ? table.quotedTable : "\"modelstore_\(depth)\"" }

    init(table: TableDescription) {
        self.table = table
    }

    init(table: TableDescription, resolve: @escaping (any StoredModel.Type) throws -> TableDescription) {
        self.table = table
        self.resolve = resolve
    }

    /// Lists up to this long are written as `?, ?, …`; longer ones are bound as one JSON
    /// array, so no list runs into SQLite's limit on parameters.
    static let inlineListLimit = 500

    // MARK: Columns

    /// The quoted column a reference names, or `.invalidQuery` naming model and column. A
    /// reference into a JSON-stored value (`\.address.city`) is refused: only conditions and
    /// orderings (`expression(_:)`) can reach inside one.
    func column(_ reference: ColumnReference) throws -> String {
        guard reference.path.isEmpty else {
            throw ModelStoreError(
                .invalidQuery,
                "\(table.modelName).\(reference.described) reaches inside the JSON-stored property '\(reference.name)', which only conditions and orderings can do.",
                model: table.modelName, column: reference.described,
                suggestion: "Name a stored property of \(table.modelName) itself.")
        }
        guard table.layout.position(of: reference.name) != nil else {
            let known = table.columns.map(\.name).joined(separator: ", ")
            throw ModelStoreError(
                .invalidQuery,
                "\(table.modelName) has no stored property '\(reference.name)' for a query to use (its properties: \(known)).",
                model: table.modelName, column: reference.name,
                suggestion: "Name a stored property of \(table.modelName) directly, as \\\(table.modelName).property.")
        }
        return qualifiesColumns ? qualifier + "." + quoted(reference.name) : quoted(reference.name)
    }

    /// The SQL value a condition or ordering compares: the column, or for a key path into a
    /// JSON-stored property, the value at that path (`json_extract(column, '$."city"')` on
    /// SQLite; see `JSONPathSQL`).
    func expression(_ reference: ColumnReference) throws -> String {
        guard !reference.path.isEmpty else { return try column(reference) }
        return dialect.json.value(of: try jsonColumn(reference), at: reference.path)
    }

    /// What a text match (`contains`, `hasPrefix`, `LIKE`) reads: the column, or the text of
    /// the value at a key path into a JSON-stored property.
    func textExpression(_ reference: ColumnReference) throws -> String {
        guard !reference.path.isEmpty else { return try column(reference) }
        return dialect.json.text(of: try jsonColumn(reference), at: reference.path)
    }

    /// The column a key path into a JSON-stored property reaches into, once the path is
    /// checked: the property is stored as JSON, is not a relationship, and each name of the
    /// path can be spelled.
    private func jsonColumn(_ reference: ColumnReference) throws -> String {
        if table.relationships.contains(where: { $0.property == reference.name }) {
            throw ModelStoreError(
                .invalidQuery,
                "\(table.modelName).\(reference.name) is a relationship, so '\(reference.described)' is a value of another table.",
                model: table.modelName, column: reference.described,
                suggestion:
                    "Use .related(\\.\(reference.name), …) or .any(\\.\(reference.name), …) to filter by it, or order by .ascending(\\.\(reference.name), \\.property)."
            )
        }
        let base = try column(ColumnReference(name: reference.name))
        if !dialect.capabilities.conditionsInsideJSON {
            throw ModelStoreError(
                .unsupported,
                "\(table.modelName).\(reference.described) reaches inside a JSON-stored value, which conditions and orderings do on SQLite only for now.",
                model: table.modelName, column: reference.described,
                suggestion: "Filter on a stored property of \(table.modelName), or filter the records in Swift.")
        }
        let position = table.layout.position(of: reference.name)!
        guard table.columns[position].isJSON else {
            throw ModelStoreError(
                .invalidQuery,
                "\(table.modelName).\(reference.name) is not stored as JSON, so a condition cannot reach '\(reference.described)' inside it.",
                model: table.modelName, column: reference.described)
        }
        try Self.checkJSONPath(reference.path, table: table, reference: reference)
        return base
    }

    /// `reference`, a key path into a JSON-stored value, is one of `values` (none NULL), in the
    /// backend's own form of such a list (`JSONPathSQL.membership`), or its usual `IN` list.
    func jsonMembership(_ reference: ColumnReference, _ values: [SQLValue]) throws -> SQLFragment {
        if let list = dialect.json.membership(of: try jsonColumn(reference), at: reference.path, values, negated: false) {
            return SQLFragment(list.sql, list.values)
        }
        return try membership(expression(reference), values, negated: false)
    }

    /// The number of elements of the JSON array `reference` names (a JSON-stored property, or
    /// a key path into one): 0 for any other JSON value, NULL where there is none.
    func jsonArrayLength(_ reference: ColumnReference) throws -> String {
        guard !reference.path.isEmpty else {
            let position = table.layout.position(of: reference.name)
            guard let position, table.columns[position].isJSON else {
                throw ModelStoreError(
                    .invalidQuery, "\(table.modelName).\(reference.name) is not stored as JSON, so it has no elements to count.",
                    model: table.modelName, column: reference.name)
            }
            return dialect.json.arrayLength(of: try column(reference), at: [])
        }
        return dialect.json.arrayLength(of: try jsonColumn(reference), at: reference.path)
    }

    /// What a condition on `reference` compares with for `value`: a placeholder, or for a
    /// key path into a JSON-stored value, the backend's operand (`JSONPathSQL.operand`).
    func operand(_ value: SQLValue, for reference: ColumnReference) -> SQLFragment {
        guard !reference.path.isEmpty else { return SQLFragment("?", [value]) }
        let operand = dialect.json.operand(value)
        return SQLFragment(operand.sql, operand.values)
    }

    /// ` COLLATE modelstore_decimal` for a column that holds a `Decimal` (its exact text, which
    /// SQLite would order by bytes: "10" < "9"), or "" for any other column and for a value
    /// inside a JSON-stored one (a JSON number compares as a number). Ordering comparisons,
    /// ORDER BY terms and min/max arguments append it; equality needs none (the text is canonical).
    func orderingCollation(for reference: ColumnReference) -> String {
        guard reference.path.isEmpty, let position = table.layout.position(of: reference.name) else { return "" }
        let column = table.columns[position]
        guard dialect.capabilities.decimalsAsText else {
            // A server's text column compares as its collation says: ask for byte order.
            return dialect.byteOrderCollation(forDeclaredType: dialect.columnType(column.storage.rawValue, isDecimal: column.holdsDecimal))
        }
        return column.holdsDecimal ? " COLLATE " + DecimalCollation.name : ""
    }

    /// Refuses a property name inside a JSON-stored value that no backend's path can spell
    /// as one label (a quote, a backslash, a control character).
    static func checkJSONPath(_ components: [String], table: TableDescription, reference: ColumnReference) throws {
        for component in components {
            guard !component.contains(where: { $0 == "\"" || $0 == "'" || $0 == "\\" || $0.asciiValue.map { $0 < 0x20 } == true }) else {
                throw ModelStoreError(
                    .invalidQuery,
                    "The property name '\(component)' inside \(table.modelName).\(reference.name) cannot be written as a JSON path.",
                    model: table.modelName, column: reference.described)
            }
        }
    }

    // MARK: Clauses

    /// ` WHERE …`, or nothing.
    func whereClause(_ node: PredicateNode?) throws -> SQLFragment {
        guard let node else { return SQLFragment() }
        let condition = try compile(node)
        return SQLFragment(" WHERE " + condition.sql, condition.values)
    }

    /// ` ORDER BY …`: the query's orderings, then the primary key as tie-breaker.
    func orderClause<Model>(_ orderings: [Ordering<Model>]) throws -> SQLFragment {
        var clause = SQLFragment(" ORDER BY ")
        var named = Set<String>()
        for (offset, ordering) in orderings.enumerated() {
            let term: SQLFragment
            switch ordering.term {
            case .column(let reference):
                term = SQLFragment(try expression(reference) + orderingCollation(for: reference))
                if reference.path.isEmpty { named.insert(reference.name) }
            case .related(let relationship, let reference):
                term = try relatedValue(relationship, reference)
            case .count(let count):
                term = try relatedCount(count)
            case .refused(var error):
                error.model = table.modelName
                throw error
            }
            // A key column is never NULL: no NULL order, so its index (the primary key's, in
            // NULL's default place) serves the order without a sort.
            var neverNull = false
            if case .column(let reference) = ordering.term, reference.path.isEmpty {
                neverNull = table.keyNames.contains(reference.name)
            }
            clause.sql +=
                (offset == 0 ? "" : ", ") + term.sql + (ordering.descending ? " DESC" : "")
                + (neverNull ? "" : dialect.nullsOrder(descending: ordering.descending))
            clause.values += term.values
        }
        for (offset, name) in table.keyNames.enumerated() where !named.contains(name) {
            clause.sql += (offset == 0 && orderings.isEmpty ? "" : ", ") + quoted(name)
        }
        return clause
    }

    /// ` LIMIT ? OFFSET ?`, or nothing.
    func pageClause<Model>(_ query: Query<Model>) -> SQLFragment {
        guard query.isPaged else { return SQLFragment() }
        return SQLFragment(" LIMIT ? OFFSET ?", [.integer(Int64(query.limit ?? -1)), .integer(Int64(query.offset ?? 0))])
    }

    /// Throws the query's recorded failure, or `.invalidQuery` when part of it is evaluated in
    /// memory: the finders take that part off before they compile; everything else (counts
    /// in SQL, aggregates, streams, updates, deletes) would silently ignore it.
    func checkRunsInSQL<Model>(_ query: Query<Model>) throws {
        if let failure = query.failure { throw failure }
        guard query.memoryFilter == nil else {
            throw ModelStoreError(
                .invalidQuery,
                "A query on \(table.modelName) evaluates part of its #Predicate in memory (untranslated: .evaluateInMemory), which only findAll, findFirst, count, exists and observe can do; this operation runs in SQL. Nothing was run.",
                model: table.modelName,
                suggestion:
                    "Find the records with the in-memory filter, then act on their keys; or write the predicate so that it translates.")
        }
    }

    /// `SELECT columns FROM table WHERE … ORDER BY … LIMIT …`.
    func select<Model>(_ columns: String, _ query: Query<Model>, ordered: Bool = true) throws -> SQLFragment {
        try checkRunsInSQL(query)
        var fragment = SQLFragment("SELECT \(columns) FROM \(table.quotedTable)")
        fragment = fragment + (try whereClause(query.predicate))
        if ordered || query.isPaged { fragment = fragment + (try orderClause(query.orderings)) }
        return fragment + pageClause(query)
    }

    /// What to aggregate over: the table filtered, or — for a paged query — the page.
    func source<Model>(_ query: Query<Model>, columns: String) throws -> SQLFragment {
        try checkRunsInSQL(query)
        guard query.isPaged else {
            return SQLFragment(table.quotedTable) + (try whereClause(query.predicate))
        }
        let inner = try select(columns, query)
        // A server may want every subquery in FROM named.
        return SQLFragment("(" + inner.sql + ") AS \"modelstore_page\"", inner.values)
    }

    // MARK: Predicates

    func compile(_ node: PredicateNode) throws -> SQLFragment {
        switch node {
        case .compare(let reference, let op, let value):
            let collation = op == .equal || op == .notEqual ? "" : orderingCollation(for: reference)
            let operand = operand(try bound([value], for: reference)[0], for: reference)
            if op == .notEqual, dialect.capabilities.notEqualAsDistinct {
                return SQLFragment(dialect.distinct(try expression(reference), operand.sql), operand.values)
            }
            return SQLFragment("\(try expression(reference))\(collation) \(op.rawValue) \(operand.sql)", operand.values)
        case .isNull(let reference, let negated):
            return SQLFragment("\(try expression(reference)) IS \(negated ? "NOT " : "")NULL")
        case .membership(let reference, let values, let negated):
            let values = try bound(values, for: reference)
            if !reference.path.isEmpty, !values.isEmpty,
                let list = dialect.json.membership(of: try jsonColumn(reference), at: reference.path, values, negated: negated)
            {
                return SQLFragment(list.sql, list.values)
            }
            return try membership(expression(reference), values, negated: negated)
        case .between(let reference, let lower, let upper, let negated):
            let bounds = try bound([lower, upper], for: reference).map { operand($0, for: reference) }
            return SQLFragment(
                "\(try expression(reference))\(orderingCollation(for: reference)) \(negated ? "NOT " : "")BETWEEN \(bounds[0].sql) AND \(bounds[1].sql)",
                bounds[0].values + bounds[1].values)
        case .text(let reference, let match, let text, let caseInsensitive):
            if !dialect.capabilities.textHoldsNUL {
                try Self.refuseNUL(
                    in: [.text(text)], model: table.modelName, column: reference.name, code: .invalidQuery, backend: dialect.name)
            }
            return try textMatch(try textExpression(reference), match, text, caseInsensitive: caseInsensitive)
        case .translated(let translate):
            if !dialect.capabilities.translatesPredicates {
                throw ModelStoreError(
                    .unsupported,
                    "A #Predicate on \(table.modelName) cannot run on \(dialect.name): it has no translation of predicates.",
                    model: table.modelName,
                    suggestion:
                        "Write the condition with key-path operators (\\.price > 5 && \\.name == \"x\"), which run on both backends.")
            }
            let translated = try translate(self)
            return SQLFragment("(" + translated.sql + ")", translated.values)
        case .isTrue(let inner):
            let compiled = try compile(inner)
            return SQLFragment("coalesce((" + compiled.sql + "), FALSE)", compiled.values)
        case .arrayContains(let reference, let value):
            return try arrayContains(reference, value)
        case .related(let relationship, let quantifier, let inner):
            let linked = try relatedKeys(relationship, matching: inner)
            return quantifier == .any ? linked : SQLFragment("NOT (" + linked.sql + ")", linked.values)
        case .relatedCount(let count, let op, let number):
            let counted = try relatedCount(count)
            // A count is never NULL, so `IS NOT` is plain inequality here.
            return SQLFragment("\(counted.sql) \(op == .notEqual ? "<>" : op.rawValue) ?", counted.values + [.integer(number)])
        case .and(let nodes):
            guard !nodes.isEmpty else { return SQLFragment("TRUE") }
            return try join(nodes, with: " AND ")
        case .or(let nodes):
            guard !nodes.isEmpty else { return SQLFragment("FALSE") }
            return try join(nodes, with: " OR ")
        case .not(let inner):
            let compiled = try compile(inner)
            return SQLFragment("NOT (" + compiled.sql + ")", compiled.values)
        case .sql(let fragment, let values):
            return SQLFragment("(" + fragment + ")", values)
        case .constant(let value):
            return SQLFragment(value ? "TRUE" : "FALSE")
        case .fullText(let text, let columns):
            return try fullText(text, columns: columns)
        case .invalid(var error, let reference):
            error.code = .invalidQuery
            error.model = table.modelName
            error.column = error.column ?? reference?.name
            error.message =
                "A value in the query on \(table.modelName)"
                + (reference.map { ".\($0.name)" } ?? "") + " cannot be used: " + error.message
            throw error
        }
    }

    /// A condition's values in the column's declared form (`columnStorage`), if it has one:
    /// `\.createdAt > date` compares with the date's ISO text in an `iso8601` column.
    func bound(_ values: [SQLValue], for reference: ColumnReference) throws -> [SQLValue] {
        if !dialect.capabilities.textHoldsNUL {
            try Self.refuseNUL(in: values, model: table.modelName, column: reference.name, code: .invalidQuery, backend: dialect.name)
        }
        guard reference.path.isEmpty, table.layout.hasDeclaredForms, let format = table.layout.format(of: reference.name) else {
            return values
        }
        return try values.map { try format.store($0, code: .invalidQuery, model: table.modelName, column: reference.name) }
    }

    private func join(_ nodes: [PredicateNode], with separator: String) throws -> SQLFragment {
        let parts = try nodes.map(compile)
        return SQLFragment(
            parts.map { "(" + $0.sql + ")" }.joined(separator: separator), parts.flatMap(\.values))
    }

    func membership(_ column: String, _ values: [SQLValue], negated: Bool) throws -> SQLFragment {
        guard !values.isEmpty else { return SQLFragment(negated ? "TRUE" : "FALSE") }
        let keyword = negated ? "NOT IN" : "IN"
        if values.count <= Self.inlineListLimit {
            let marks = Array(repeating: "?", count: values.count).joined(separator: ", ")
            return SQLFragment("\(column) \(keyword) (\(marks))", values)
        }
        // A long list is one JSON array for the values JSON carries exactly, plus inline lists
        // for the rest; `x IN (A ∪ B)` is `x IN A OR x IN B` in SQL's three-valued logic too,
        // and `x NOT IN (A ∪ B)` is `x NOT IN A AND x NOT IN B`.
        let parts = Self.membershipParts(column, values, keyword: keyword, dialect: dialect)
        guard parts.reduce(0, { $0 + $1.values.count }) <= Self.maximumListParameters else {
            throw ModelStoreError(
                .invalidQuery,
                "An IN list of \(values.count) values holds more than \(Self.maximumListParameters) numbers with a fraction, byte strings or texts containing NUL, which must be passed one by one.",
                value: values.first?.description, suggestion: "Split the list into several queries.")
        }
        guard parts.count > 1 else { return parts[0] }
        let joined = parts.map { "(" + $0.sql + ")" }.joined(separator: negated ? " AND " : " OR ")
        return SQLFragment("(" + joined + ")", parts.flatMap(\.values))
    }

    /// The most parameters inline IN lists of one condition may take (SQLite allows 32,766).
    static let maximumListParameters = 30_000

    /// Parameters one chunk of a composite key list takes: well inside the 999 that SQLite
    /// builds before 3.32 allow, with room for a few more conditions beside it.
    static let listParameterBudget = 900

    /// Conditions whose union says "the columns hold one of these keys", for any number of
    /// keys: one column through `membershipParts` (exact for every value type), several as
    /// `(a, b) IN (VALUES (?, ?), …)` in chunks of `parameterBudget` parameters. Each
    /// fragment is a query of its own; full chunks share their SQL, so a cached statement
    /// serves them all. The one builder of key lists: relationship loading, link checks and
    /// match-key batches all use it.
    static func keyMembership(
        _ columns: [String], _ keys: [[SQLValue]], parameterBudget: Int = listParameterBudget, dialect: any SQLDialect = SQLiteDialect()
    ) -> [SQLFragment] {
        guard !keys.isEmpty else { return [] }
        if columns.count == 1 { return membershipParts(columns[0], keys.map { $0[0] }, dialect: dialect) }
        let tuple = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        let chunkSize = max(1, parameterBudget / columns.count)
        let list = "(" + columns.joined(separator: ", ") + ")"
        return stride(from: 0, to: keys.count, by: chunkSize).map { start in
            let chunk = keys[start..<min(start + chunkSize, keys.count)]
            return SQLFragment(
                list + " IN (VALUES " + Array(repeating: tuple, count: chunk.count).joined(separator: ", ") + ")", chunk.flatMap { $0 })
        }
    }

    /// `column IN …` for any number of values, as conditions whose union is the list: a
    /// JSON array through `json_each` for integers and texts without NUL (which it returns
    /// exactly), and lists of at most `inlineListLimit` bound values for everything else
    /// (reals, whose text form SQLite might round differently; byte strings; NULs, at which
    /// `json_each` cuts a text).
    static func membershipParts(
        _ column: String, _ values: [SQLValue], keyword: String = "IN", dialect: any SQLDialect = SQLiteDialect()
    ) -> [SQLFragment] {
        // A backend that takes an array as one parameter carries every integer and text in
        // one (`column = ANY(?)`, typed by the column).
        let takesArrays = dialect.arrayParameter([]) != nil
        var carried: [SQLValue] = []
        var inline: [SQLValue] = []
        for value in values {
            switch value {
            case .integer: carried.append(value)
            case .text(let text) where takesArrays || !text.utf8.contains(0): carried.append(value)
            default: inline.append(value)
            }
        }
        var parts: [SQLFragment] = []
        if takesArrays, !carried.isEmpty, let array = dialect.arrayParameter(carried) {
            let test = "\(column) = ANY(?)"
            parts.append(SQLFragment(keyword == "IN" ? test : "NOT (\(test))", [array]))
        } else if carried.count <= inlineListLimit {
            inline += carried
        } else {
            parts.append(SQLFragment("\(column) \(keyword) (SELECT value FROM json_each(?))", [.text(jsonArray(carried))]))
        }
        for start in stride(from: 0, to: inline.count, by: inlineListLimit) {
            let chunk = Array(inline[start..<min(start + inlineListLimit, inline.count)])
            parts.append(
                SQLFragment("\(column) \(keyword) (" + Array(repeating: "?", count: chunk.count).joined(separator: ", ") + ")", chunk))
        }
        return parts
    }

    /// Integers and texts without NUL as a JSON array, which `json_each` returns exactly.
    private static func jsonArray(_ values: [SQLValue]) -> String {
        var json = "["
        json.reserveCapacity(values.count * 8)
        var first = true
        for value in values {
            if !first { json += "," }
            first = false
            switch value {
            case .integer(let integer): json += String(integer)
            case .text(let text): appendJSONString(text, to: &json)
            default: preconditionFailure("membershipParts passes only integers and texts to JSON")
            }
        }
        return json + "]"
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    private static func appendJSONString(_ text: String, to json: inout String) {
        json += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": json += "\\\""
            case "\\": json += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                json += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: json.unicodeScalars.append(scalar)
            }
        }
        json += "\""
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
            if !dialect.capabilities.globAndLike {
                // SQLite's LIKE has no escape character, and folds ASCII letters only.
                guard caseInsensitive else { return SQLFragment("\(column) LIKE ? ESCAPE ''", [.text(text)]) }
                return SQLFragment("\(Self.asciiLower(column)) LIKE \(Self.asciiLower("?")) ESCAPE ''", [.text(text)])
            }
            guard !caseInsensitive else { return SQLFragment("\(column) LIKE ?", [.text(text)]) }
            return SQLFragment("\(column) GLOB ?", [.text(Self.globPattern(fromLike: text))])
        }
        if text.isEmpty { return SQLFragment("\(column) IS NOT NULL") }
        if !dialect.capabilities.globAndLike {
            // strpos, left and right compare characters exactly (the database is UTF-8);
            // folding is SQLite's: ASCII letters only, whatever the server's locale.
            let subject = caseInsensitive ? Self.asciiLower(column) : column
            let needle = caseInsensitive ? Self.asciiLower("?") : "?"
            switch match {
            case .contains: return SQLFragment("strpos(\(subject), \(needle)) > 0", [.text(text)])
            case .prefix: return SQLFragment("starts_with(\(subject), \(needle))", [.text(text)])
            case .suffix, .like:
                return SQLFragment("right(\(subject), char_length(\(needle))) = \(needle)", [.text(text), .text(text)])
            }
        }
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

    /// Throws `code` when a text value holds a NUL character, which the backend's text cannot
    /// (see `BackendCapabilities.textHoldsNUL`).
    static func refuseNUL(in values: [SQLValue], model: String, column: String, code: ModelStoreError.Code, backend: String) throws {
        for value in values {
            guard case .text(let text) = value, text.utf8.contains(0) else { continue }
            throw ModelStoreError(
                code, "\(model).\(column) is given a text with a NUL character (U+0000), which \(backend) text cannot hold.",
                model: model, column: column, value: value.description,
                suggestion: "Remove the NUL characters, or store the bytes as Data.")
        }
    }

    /// `expression` with ASCII letters lowered and every other character kept, as SQLite's
    /// `lower()` and `LIKE` fold (a server's `lower()` folds every letter of its locale).
    static func asciiLower(_ expression: String) -> String {
        "translate(\(expression), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
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
