/// Conditions, counts and orderings that cross a relationship, and conditions inside
/// JSON-stored arrays. Each compiles to one subquery inside the statement, so a query across
/// relationships is still one query, whatever the number of records.
extension QueryCompiler {
    /// The relationship `name` of this model, or `.invalidQuery` listing the ones it has.
    func relationship(_ name: String) throws -> RelationshipDescription {
        if let found = table.relationships.first(where: { $0.property == name }) { return found }
        let known = table.relationships.map(\.property)
        throw ModelStoreError(
            .invalidQuery,
            "\(table.modelName) has no relationship '\(name)' for a query to follow"
                + (known.isEmpty ? " (it declares none)." : " (its relationships: \(known.joined(separator: ", "))).")
                + " Only properties listed in \(table.modelName).relationships can be followed.",
            model: table.modelName, column: name)
    }

    /// A compiler for the relationship's target table, one subquery deeper, whose table is
    /// named by an alias of its own: a subquery on the same table (a self-relationship) and
    /// correlated references from deeper subqueries then always name the right record.
    private func target(_ relationship: RelationshipDescription) throws -> QueryCompiler {
        var compiler = QueryCompiler(table: try resolve(relationship.target), resolve: resolve)
        compiler.depth = depth + 1
        compiler.dialect = dialect
        compiler.beforeSearch = beforeSearch
        return compiler
    }

    /// The compiler `relatedKeys`, `relatedCount` and `relatedValue` use for the relationship's
    /// target: SQL it writes names the same alias, so a condition translated with it can be
    /// handed to them.
    func relatedCompiler(_ name: String) throws -> QueryCompiler {
        try target(relationship(name))
    }

    /// `"Team" AS "modelstore_1"` in a subquery.
    private var aliasedTable: String { table.quotedTable + " AS " + qualifier }

    /// `(this record's link columns) IN (SELECT … the links of target records matching inner)`:
    /// true for records with at least one related record matching `inner`, false otherwise —
    /// never NULL, so `NOT` of it is exactly "no related record matches".
    func relatedKeys(_ name: String, matching inner: PredicateNode) throws -> SQLFragment {
        let relationship = try relationship(name)
        let target = try target(relationship)
        let condition = try target.compile(inner)
        let targetKeys = target.table.keyNames.map(quoted)
        let ownKeys = table.keyNames.map(quoted)
        switch relationship.storage {
        case .foreignKeyHere(let positions, _):
            // A NULL link matches nothing; the target's key columns are never NULL.
            let links = positions.map { quoted(table.columns[$0].name) }
            let present = links.map { "\($0) IS NOT NULL" }.joined(separator: " AND ")
            return SQLFragment(
                "(\(present) AND \(Self.tuple(links)) IN (SELECT \(targetKeys.joined(separator: ", ")) FROM \(target.aliasedTable) WHERE \(condition.sql)))",
                condition.values)
        case .foreignKeyThere(let columns):
            let links = columns.map(quoted)
            let present = links.map { "\($0) IS NOT NULL" }.joined(separator: " AND ")
            return SQLFragment(
                "\(Self.tuple(ownKeys)) IN (SELECT \(links.joined(separator: ", ")) FROM \(target.aliasedTable) WHERE \(present) AND (\(condition.sql)))",
                condition.values)
        case .joinTable(let join):
            let owners = join.ownerColumns.map(quoted).joined(separator: ", ")
            let targets = Self.tuple(join.targetColumns.map(quoted))
            return SQLFragment(
                "\(Self.tuple(ownKeys)) IN (SELECT \(owners) FROM \(quoted(join.name)) WHERE \(targets) IN (SELECT \(targetKeys.joined(separator: ", ")) FROM \(target.aliasedTable) WHERE \(condition.sql)))",
                condition.values)
        }
    }

    /// `(SELECT count(*) …)`: how many records the relationship links this record to (only
    /// those matching the predicate, when there is one), correlated with the outer record.
    func relatedCount(_ count: RelatedCountExpression) throws -> SQLFragment {
        let relationship = try relationship(count.relationship)
        let target = try target(relationship)
        let condition = try count.predicate.map { try target.compile($0) }
        let outer = { (column: String) in self.qualifier + "." + quoted(column) }
        func matched(_ alias: String, _ pairs: [(String, String)]) -> String {
            pairs.map { "\(alias).\(quoted($0.0)) = \(outer($0.1))" }.joined(separator: " AND ")
        }
        let extra = condition.map { " AND (" + $0.sql + ")" } ?? ""
        let values = condition?.values ?? []
        switch relationship.storage {
        case .foreignKeyHere(let positions, _):
            let pairs = Array(zip(target.table.keyNames, positions.map { table.columns[$0].name }))
            return SQLFragment(
                "(SELECT count(*) FROM \(target.aliasedTable) WHERE \(matched(target.qualifier, pairs))\(extra))", values)
        case .foreignKeyThere(let columns):
            let pairs = Array(zip(columns, table.keyNames))
            return SQLFragment(
                "(SELECT count(*) FROM \(target.aliasedTable) WHERE \(matched(target.qualifier, pairs))\(extra))", values)
        case .joinTable(let join):
            // The join table's alias: unqualified names inside are the target's (deeper).
            let link = "\"modelstore_link_\(target.depth)\""
            let pairs = Array(zip(join.ownerColumns, table.keyNames))
            var sql = "(SELECT count(*) FROM \(quoted(join.name)) AS \(link) WHERE \(matched(link, pairs))"
            if let condition {
                let targets = Self.tuple(join.targetColumns.map { link + "." + quoted($0) })
                sql +=
                    " AND \(targets) IN (SELECT \(target.table.keyNames.map(quoted).joined(separator: ", ")) FROM \(target.aliasedTable) WHERE \(condition.sql))"
            }
            return SQLFragment(sql + ")", values)
        }
    }

    /// `(SELECT value FROM target WHERE key = link)`: a value of the record a to-one
    /// relationship links to (NULL when it links to none), for ordering.
    func relatedValue(_ name: String, _ reference: ColumnReference) throws -> SQLFragment {
        let relationship = try relationship(name)
        guard relationship.kind == .toOne else {
            throw ModelStoreError(
                .invalidQuery,
                "\(table.modelName).\(name) is a to-many relationship, so '\(reference.described)' of its records has no single value to order \(table.modelName) by.",
                model: table.modelName, column: name,
                suggestion: "Order by a to-one relationship's value, or by RelatedCount(\\.\(name)).")
        }
        let target = try target(relationship)
        // The collation inside the subquery carries to the ORDER BY term (SQLite takes a scalar
        // subquery's collation from its result column).
        let value = try target.expression(reference) + target.orderingCollation(for: reference)
        let outer = { (column: String) in self.qualifier + "." + quoted(column) }
        let pairs: [(String, String)]
        switch relationship.storage {
        case .foreignKeyHere(let positions, _):
            pairs = Array(zip(target.table.keyNames, positions.map { table.columns[$0].name }))
        case .foreignKeyThere(let columns):
            pairs = Array(zip(columns, table.keyNames))
        case .joinTable:
            // A to-one never uses a join table; refuse rather than guess.
            throw ModelStoreError(
                .invalidQuery, "\(table.modelName).\(name) keeps its link in a join table, which ordering cannot follow.",
                model: table.modelName, column: name)
        }
        let matched = pairs.map { "\(target.qualifier).\(quoted($0.0)) = \(outer($0.1))" }.joined(separator: " AND ")
        return SQLFragment("(SELECT \(value) FROM \(target.aliasedTable) WHERE \(matched) LIMIT 1)")
    }

    /// `EXISTS (SELECT 1 FROM json_each(column) WHERE value = ?)` on SQLite (the backend's
    /// `JSONPathSQL.elements` elsewhere): the JSON-stored array (or set) holds an element
    /// equal to `value`. A NULL or empty array holds none.
    func arrayContains(_ reference: ColumnReference, _ value: SQLValue) throws -> SQLFragment {
        let base = try column(ColumnReference(name: reference.name))
        let position = table.layout.position(of: reference.name)!
        guard table.columns[position].isJSON else {
            throw ModelStoreError(
                .invalidQuery,
                "\(table.modelName).\(reference.described) is not stored as a JSON array, so it has no elements to look for \(value.description) among.",
                model: table.modelName, column: reference.described, value: value.description)
        }
        if !dialect.capabilities.conditionsInsideJSON {
            throw ModelStoreError(
                .unsupported,
                "\(table.modelName).\(reference.described) is a JSON-stored array, which conditions on \(dialect.name) cannot look inside.",
                model: table.modelName, column: reference.described, value: value.description,
                suggestion: "Store the elements as a to-many relationship, or filter the records in Swift.")
        }
        try Self.checkJSONPath(reference.path, table: table, reference: reference)
        let elements = dialect.json.elements(of: base, at: reference.path, as: "\"modelstore_element\"")
        let operand = dialect.json.operand(value)
        return SQLFragment(
            "EXISTS (SELECT 1 FROM \(elements.source) WHERE \(elements.element) = \(operand.sql))", operand.values)
    }

    /// `a` for one column, `(a, b)` for several (SQLite's row values).
    static func tuple(_ columns: [String]) -> String {
        columns.count == 1 ? columns[0] : "(" + columns.joined(separator: ", ") + ")"
    }
}
