extension Session {
    /// The query's `SELECT` of whole records, prepared and bound; the caller steps it.
    func select<M: StoredModel>(_ query: Query<M>, in table: TableDescription) throws -> Statement {
        let compiled = try compiler(table).select(table.selectList, query)
        let statement = try connection.cachedStatement(compiled.sql)
        try statement.bind(compiled.values)
        return statement
    }

    /// How many records the query selects (on a paged query: in its page).
    func count<M: StoredModel>(_ query: Query<M>) throws -> Int {
        let table = try table(M.self)
        let source = try compiler(table).source(query, columns: "1")
        let value = try scalar(SQLFragment("SELECT count(*) FROM ") + source)
        guard case .integer(let count)? = value else { return 0 }
        return Int(count)
    }

    /// Whether the query selects any record.
    func exists<M: StoredModel>(_ query: Query<M>) throws -> Bool {
        let table = try table(M.self)
        let source = try compiler(table).source(query, columns: "1")
        return try scalar(SQLFragment("SELECT EXISTS (SELECT 1 FROM ") + source + SQLFragment(")")) == .integer(1)
    }

    /// Deletes the records the query selects, in one statement, with no delete rules to
    /// apply; returns how many went.
    func deleteRecords<M: StoredModel>(_ query: Query<M>, in table: TableDescription) throws -> Int {
        let statement = SQLFragment("DELETE FROM \(table.quotedTable)") + (try selection(query, table))
        try connection.cachedStatement(statement.sql).execute(statement.values)
        return connection.changes
    }

    /// Sets `assignments` on every record the query selects, in one statement; returns how
    /// many records changed.
    func updateAll<M: StoredModel>(_ query: Query<M>, _ assignments: [Assignment<M>]) throws -> Int {
        let table = try table(M.self)
        guard !assignments.isEmpty else {
            throw ModelStoreError(
                .invalidQuery, "An update of \(table.modelName) records names no property to set.", model: table.modelName)
        }
        var set = SQLFragment()
        for (offset, assignment) in assignments.enumerated() {
            let (column, value) = try assignment.resolve(in: table)
            if !connection.capabilities.textHoldsNUL {
                try QueryCompiler.refuseNUL(
                    in: [value], model: table.modelName, column: column.name, code: .invalidQuery, backend: connection.dialect.name)
            }
            set.sql += (offset == 0 ? "" : ", ") + quoted(column.name) + " = ?"
            set.values.append(value)
        }
        let statement = SQLFragment("UPDATE \(table.quotedTable) SET ") + set + (try selection(query, table))
        do {
            try connection.cachedStatement(statement.sql).execute(statement.values)
        } catch let error as ModelStoreError {
            throw error.naming(model: table.modelName)
        }
        return connection.changes
    }

    /// ` WHERE …` selecting the query's records: its predicate, or — when it is sorted and
    /// paged — the rowids of its page, since DELETE and UPDATE take no LIMIT by default.
    func selection<M>(_ query: Query<M>, _ table: TableDescription) throws -> SQLFragment {
        let compiler = compiler(table)
        try compiler.checkRunsInSQL(query)
        guard query.isPaged else { return try compiler.whereClause(query.predicate) }
        if connection.capabilities.rowids {
            let page = try compiler.select("rowid", query)
            return SQLFragment(" WHERE rowid IN (" + page.sql + ")", page.values)
        }
        // Without rowids, the page's keys select its records.
        let key = "(" + table.keyOrder + ")"
        let page = try compiler.select(table.keyOrder, query)
        return SQLFragment(" WHERE \(key) IN (" + page.sql + ")", page.values)
    }

    /// The single value a query returns, or nil when it returns no row.
    func scalar(_ fragment: SQLFragment) throws -> SQLValue? {
        try connection.scalar(fragment.sql, fragment.values)
    }
}
