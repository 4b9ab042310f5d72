import Foundation

extension Session {
    /// The groups of a grouped query, one `R` per group: `SELECT groups, aggregates FROM …
    /// GROUP BY … HAVING … ORDER BY … LIMIT …`, one statement.
    func findAll<M: StoredModel, R: Decodable>(_ query: GroupedQuery<M>, as type: R.Type, _ aggregates: [Aggregate<M>]) throws -> [R] {
        if let failure = query.failure { throw failure }
        let table = try table(M.self)
        let compiler = compiler(table)
        var named: [String: String] = [:]
        var groupSQL: [String] = []
        for group in query.groups {
            let sql = try compiler.expression(group)
            if !group.path.isEmpty, !compiler.dialect.json.selectsValues {
                throw ModelStoreError(
                    .unsupported,
                    "The grouped query on \(table.modelName) groups by '\(group.described)', a value inside a JSON-stored property, which \(compiler.dialect.name) compares and orders but cannot select as a group's value.",
                    model: table.modelName, column: group.described,
                    suggestion: "Group by a stored property of \(table.modelName), or group the records in Swift.")
            }
            let name = group.path.last ?? group.name
            guard named.updateValue(sql, forKey: name) == nil else {
                throw ModelStoreError(
                    .invalidQuery, "\(table.modelName) is grouped by '\(name)' twice.", model: table.modelName, column: name)
            }
            groupSQL.append(sql)
        }
        var aggregateSQL: [String: String] = [:]
        for aggregate in aggregates.map(\.expression) {
            let sql = try self.sql(of: aggregate, compiler)
            guard named.updateValue(sql, forKey: aggregate.name) == nil else {
                throw ModelStoreError(
                    .invalidQuery,
                    "Two results of the grouped query on \(table.modelName) are named '\(aggregate.name)'; each needs a name of its own.",
                    model: table.modelName, column: aggregate.name, suggestion: "Name the aggregate with `as:`.")
            }
            aggregateSQL[aggregate.name] = sql
        }
        var layout = try SchemaProbe.cachedLayout(of: type)
        if table.layout.hasDeclaredForms { layout = layout.adoptingForms(of: table.layout) }
        let columns = try layout.columns.map { column -> String in
            guard let sql = named[column.name] else {
                throw ModelStoreError(
                    .invalidQuery,
                    "\(layout.modelName) reads '\(column.name)', which is neither a grouped property nor an aggregate of the grouped query on \(table.modelName) (it has: \(named.keys.sorted().joined(separator: ", "))).",
                    model: table.modelName, column: column.name,
                    suggestion: "Group by \\.\(column.name), or name an aggregate `as: \"\(column.name)\"`.")
            }
            return sql
        }
        var statement = SQLFragment("SELECT \(columns.joined(separator: ", ")) FROM ") + (try compiler.source(query.base, columns: "*"))
        if !groupSQL.isEmpty { statement.sql += " GROUP BY " + groupSQL.joined(separator: ", ") }
        if let having = query.having {
            statement = statement + SQLFragment(" HAVING ") + (try self.having(having, compiler))
        }
        var terms: [String] = []
        for ordering in query.orderings {
            let term: String
            switch ordering.term {
            case .column(let reference):
                let sql = try compiler.expression(reference)
                guard groupSQL.contains(sql) else {
                    throw ModelStoreError(
                        .invalidQuery,
                        "The grouped query on \(table.modelName) is ordered by '\(reference.described)', which it is not grouped by, so a group has no single value of it.",
                        model: table.modelName, column: reference.described)
                }
                term = sql + compiler.orderingCollation(for: reference)
            case .computed(let aggregate):
                term = try self.sql(of: aggregate, compiler) + collation(of: aggregate, compiler)
            }
            terms.append(term + (ordering.descending ? " DESC" : "") + compiler.dialect.nullsOrder(descending: ordering.descending))
        }
        // The groups break ties, so pages of groups never overlap or skip.
        let collatedGroups = zip(query.groups, groupSQL).map { $1 + compiler.orderingCollation(for: $0) }
        let ascending = compiler.dialect.nullsOrder(descending: false)
        let descending = " DESC" + compiler.dialect.nullsOrder(descending: true)
        terms += collatedGroups.filter { group in !terms.contains { $0 == group + ascending || $0 == group + descending } }
            .map { $0 + ascending }
        if !terms.isEmpty { statement.sql += " ORDER BY " + terms.joined(separator: ", ") }
        if let limit = query.limit {
            statement = statement + SQLFragment(" LIMIT ? OFFSET ?", [.integer(Int64(limit)), .integer(Int64(query.offset ?? 0))])
        }
        let prepared = try connection.cachedStatement(statement.sql)
        defer { prepared.reset() }
        try prepared.bind(statement.values)
        let decoder = RowDecoder(statement: prepared, layout: layout, keyPositions: [])
        var rows: [R] = []
        do {
            while try prepared.step() { rows.append(try decoder.decode(type)) }
        } catch let error as ModelStoreError {
            let summed = aggregates.lazy.compactMap { $0.expression.function == .sum ? $0.expression.column : nil }
            throw summed.lazy.compactMap { DecimalSum.refined(error, model: table.modelName, column: $0.name) }.first ?? error
        }
        return rows
    }

    /// The collation an aggregate's value orders by: a Decimal column's for its min, max and
    /// sum (all Decimal text), none for count and avg (numbers).
    private func collation(of aggregate: AggregateExpression, _ compiler: QueryCompiler) -> String {
        guard let reference = aggregate.column, [.min, .max, .sum].contains(aggregate.function) else { return "" }
        return compiler.orderingCollation(for: reference)
    }

    private func sql(of aggregate: AggregateExpression, _ compiler: QueryCompiler) throws -> String {
        guard let reference = aggregate.column else { return "count(*)" }
        let column = try compiler.column(reference)
        let table = compiler.table
        if aggregate.function != .count, table.layout.hasDeclaredForms, let format = table.layout.format(of: reference.name) {
            // min and max of a declared form read back in it only under the column's own name.
            let readsBack = (aggregate.function == .min || aggregate.function == .max) && aggregate.name == reference.name
            guard readsBack else {
                throw ModelStoreError(
                    .invalidQuery,
                    "\(table.modelName).\(reference.name) is stored as \(format), so its \(aggregate.function.rawValue) cannot be computed by SQL and read back as '\(aggregate.name)'.",
                    model: table.modelName, column: reference.name,
                    suggestion: aggregate.function == .min || aggregate.function == .max
                        ? "Name the aggregate `as: \"\(reference.name)\"`." : "Read the values and add them up in Swift.")
            }
        }
        return Self.aggregateSQL(aggregate.function.rawValue, of: (aggregate.distinct ? "DISTINCT " : "") + column, compiler, reference)
    }

    /// A number compared with a Decimal aggregate, as Decimal text: the aggregate is TEXT, and
    /// SQLite orders every number before every text.
    private func decimalText(_ value: SQLValue, _ aggregate: AggregateExpression, _ compiler: QueryCompiler) throws -> SQLValue {
        guard !collation(of: aggregate, compiler).isEmpty else { return value }
        switch value {
        case .integer, .real: return try Decimal(sqlValue: value).sqlValue
        default: return value
        }
    }

    private func having<M>(_ node: GroupCondition<M>.Node, _ compiler: QueryCompiler) throws -> SQLFragment {
        switch node {
        case .compare(let aggregate, let op, let value):
            guard !value.isNull else {
                return SQLFragment("\(try sql(of: aggregate, compiler)) IS \(op == .notEqual ? "NOT " : "")NULL")
            }
            let collation = op == .equal || op == .notEqual ? "" : collation(of: aggregate, compiler)
            return SQLFragment(
                "\(try sql(of: aggregate, compiler))\(collation) \(op.rawValue) ?", [try decimalText(value, aggregate, compiler)])
        case .and(let lhs, let rhs):
            let (left, right) = (try having(lhs, compiler), try having(rhs, compiler))
            return SQLFragment("(\(left.sql)) AND (\(right.sql))", left.values + right.values)
        case .or(let lhs, let rhs):
            let (left, right) = (try having(lhs, compiler), try having(rhs, compiler))
            return SQLFragment("(\(left.sql)) OR (\(right.sql))", left.values + right.values)
        case .not(let inner):
            let compiled = try having(inner, compiler)
            return SQLFragment("NOT (\(compiled.sql))", compiled.values)
        case .invalid(var error):
            error.code = .invalidQuery
            error.model = compiler.table.modelName
            throw error
        }
    }
}
