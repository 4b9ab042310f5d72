extension Session {
    /// `function(column)` over the query's records: `sum`, `avg`, `min`, `max`.
    func aggregate<M: StoredModel>(_ query: Query<M>, _ function: String, _ column: ColumnReference) throws -> SQLValue {
        let table = try table(M.self)
        let compiler = QueryCompiler(table: table)
        let name = try compiler.column(column)
        let source = try compiler.source(query, columns: name)
        return try scalar(SQLFragment("SELECT \(function)(\(name)) FROM ") + source) ?? .null
    }

    /// How many of the query's records have each value of `column`.
    func groupCounts<M: StoredModel>(_ query: Query<M>, by column: ColumnReference) throws -> [(SQLValue, Int)] {
        let table = try table(M.self)
        let compiler = QueryCompiler(table: table)
        let name = try compiler.column(column)
        let sql =
            SQLFragment("SELECT \(name), count(*) FROM ") + (try compiler.source(query, columns: name))
            + SQLFragment(" GROUP BY \(name) ORDER BY \(name)")
        let statement = try connection.cachedStatement(sql.sql)
        var groups: [(SQLValue, Int)] = []
        try statement.forEachRow(sql.values) { groups.append((statement.value(at: 0), Int(statement.int64(at: 1)))) }
        return groups
    }

    /// The distinct values of `column` among the query's records, in ascending order.
    func distinctValues<M: StoredModel>(_ query: Query<M>, of column: ColumnReference) throws -> [SQLValue] {
        let table = try table(M.self)
        let compiler = QueryCompiler(table: table)
        let name = try compiler.column(column)
        let sql =
            SQLFragment("SELECT DISTINCT \(name) FROM ") + (try compiler.source(query, columns: name))
            + SQLFragment(" ORDER BY \(name)")
        return try columnValues(of: sql)
    }

    /// The values of `column` for the query's records, in the query's order.
    func values<M: StoredModel>(_ query: Query<M>, of column: ColumnReference) throws -> [SQLValue] {
        let table = try table(M.self)
        let compiler = QueryCompiler(table: table)
        return try columnValues(of: try compiler.select(try compiler.column(column), query))
    }

    private func columnValues(of sql: SQLFragment) throws -> [SQLValue] {
        let statement = try connection.cachedStatement(sql.sql)
        var values: [SQLValue] = []
        try statement.forEachRow(sql.values) { values.append(statement.value(at: 0)) }
        return values
    }

    /// The query's records as `R`, reading only the columns `R` decodes.
    func findAll<M: StoredModel, R: Decodable>(_ query: Query<M>, as type: R.Type) throws -> [R] {
        let table = try table(M.self)
        let compiler = QueryCompiler(table: table)
        let layout = try SchemaProbe.cachedLayout(of: type)
        let columns = try layout.columns.map { column -> String in
            do {
                return try compiler.column(ColumnReference(name: column.name))
            } catch var error as ModelStoreError {
                error.message = "\(layout.modelName) reads '\(column.name)', but " + error.message
                throw error
            }
        }
        let sql = try compiler.select(columns.joined(separator: ", "), query)
        let statement = try connection.cachedStatement(sql.sql)
        defer { statement.reset() }
        try statement.bind(sql.values)
        let decoder = RowDecoder(statement: statement, layout: layout, keyPositions: [])
        var rows: [R] = []
        while try statement.step() { rows.append(try decoder.decode(type)) }
        return rows
    }
}
