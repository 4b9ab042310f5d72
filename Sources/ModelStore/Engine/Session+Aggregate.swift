import Foundation

extension Session {
    /// `function(column)` over the query's records: `sum`, `avg`, `min`, `max`.
    func aggregate<M: StoredModel>(_ query: Query<M>, _ function: String, _ column: ColumnReference) throws -> SQLValue {
        let table = try table(M.self)
        let compiler = compiler(table)
        let name = try compiler.column(column)
        let format = declaredForm(table, column)
        if let format, function == "sum" || function == "avg" {
            throw ModelStoreError(
                .invalidQuery,
                "\(table.modelName).\(column.name) is stored as \(format), whose stored values SQL's \(function) cannot add up.",
                model: table.modelName, column: column.name, suggestion: "Read the values and add them up in Swift.")
        }
        let source = try compiler.source(query, columns: name)
        let value = try refiningDecimalSum(table, column) {
            try scalar(SQLFragment("SELECT \(Self.aggregateSQL(function, of: name, compiler, column)) FROM ") + source) ?? .null
        }
        // A backend that adds NUMERIC itself answers an exact sum of any length: one that a
        // Decimal cannot hold is refused as `modelstore_decimal_sum` refuses it.
        if function == "sum", case .text(let text) = value, (try? Decimal(sqlValue: value)) == nil,
            let position = table.layout.position(of: column.name), table.columns[position].holdsDecimal,
            !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "." || $0 == "-") })
        {
            throw DecimalSum.overflow(model: table.modelName, column: column.name)
        }
        return try loaded([value], format, table, column)[0]
    }

    /// `function(column)`, exact for a Decimal column: min and max compare its text as
    /// numbers, and sum adds Decimals (`modelstore_decimal_sum`) rather than binary floating
    /// point. avg stays SQL's, a Double by its type.
    static func aggregateSQL(_ function: String, of column: String, _ compiler: QueryCompiler, _ reference: ColumnReference) -> String {
        // A backend whose sum or average answers in another type than SQLite's spells it so
        // that it answers as SQLite does.
        let position = compiler.table.layout.position(of: reference.name)
        let integerColumn = position.map { compiler.table.columns[$0].storage } == .integer
        if let spelled = compiler.dialect.aggregate(function, of: column, integerColumn: integerColumn) { return spelled }
        let collation = compiler.orderingCollation(for: reference)
        guard !collation.isEmpty else { return "\(function)(\(column))" }
        switch function {
        case "min", "max": return "\(function)(\(column)\(collation))"
        case "sum" where compiler.dialect.capabilities.decimalsAsText: return "\(DecimalSum.name)(\(column))"
        default: return "\(function)(\(column))"
        }
    }

    /// Runs `body`, turning a failure of a Decimal sum into the error its cause deserves.
    func refiningDecimalSum<T>(_ table: TableDescription, _ column: ColumnReference, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as ModelStoreError {
            throw DecimalSum.refined(error, model: table.modelName, column: column.name) ?? error
        }
    }

    /// Values read from a column in its declared form, in the type's own form: what the
    /// aggregates' conversions to Swift expect.
    private func loaded(_ values: [SQLValue], _ format: ColumnFormat?, _ table: TableDescription, _ column: ColumnReference) throws
        -> [SQLValue]
    {
        guard let format else { return values }
        return try values.map { try format.load($0, model: table.modelName, column: column.name) }
    }

    private func declaredForm(_ table: TableDescription, _ column: ColumnReference) -> ColumnFormat? {
        table.layout.hasDeclaredForms ? table.layout.format(of: column.name) : nil
    }

    /// How many of the query's records have each value of `column`.
    func groupCounts<M: StoredModel>(_ query: Query<M>, by column: ColumnReference) throws -> [(SQLValue, Int)] {
        let table = try table(M.self)
        let compiler = compiler(table)
        let name = try compiler.column(column)
        let sql =
            SQLFragment("SELECT \(name), count(*) FROM ") + (try compiler.source(query, columns: name))
            + SQLFragment(" GROUP BY \(name) ORDER BY \(name)")
        let statement = try connection.cachedStatement(sql.sql)
        var groups: [(SQLValue, Int)] = []
        try statement.forEachRow(sql.values) { groups.append((statement.value(at: 0), Int(statement.int64(at: 1)))) }
        guard let format = declaredForm(table, column) else { return groups }
        return try groups.map { (try format.load($0.0, model: table.modelName, column: column.name), $0.1) }
    }

    /// The distinct values of `column` among the query's records, in ascending order.
    func distinctValues<M: StoredModel>(_ query: Query<M>, of column: ColumnReference) throws -> [SQLValue] {
        let table = try table(M.self)
        let compiler = compiler(table)
        let name = try compiler.column(column)
        let ordered = name + compiler.orderingCollation(for: column)
        let selected = compiler.dialect.capabilities.distinctOrdersBySelectedExpressions ? ordered : name
        let sql =
            SQLFragment("SELECT DISTINCT \(selected) FROM ") + (try compiler.source(query, columns: name))
            + SQLFragment(" ORDER BY \(ordered)\(compiler.dialect.nullsOrder(descending: false))")
        return try loaded(columnValues(of: sql), declaredForm(table, column), table, column)
    }

    /// The values of `column` for the query's records, in the query's order.
    func values<M: StoredModel>(_ query: Query<M>, of column: ColumnReference) throws -> [SQLValue] {
        let table = try table(M.self)
        let compiler = compiler(table)
        return try loaded(
            columnValues(of: try compiler.select(try compiler.column(column), query)), declaredForm(table, column), table, column)
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
        let compiler = compiler(table)
        var layout = try SchemaProbe.cachedLayout(of: type)
        // A projection reads a column in the model's declared form.
        if table.layout.hasDeclaredForms { layout = layout.adoptingForms(of: table.layout) }
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
