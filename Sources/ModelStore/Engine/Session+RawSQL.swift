/// The user's own SQL (`store.execute`, `store.findAll(_:sql:)`), and the statement-stepping
/// that streams use: rows decoded one at a time, never all held at once.
extension Session {
    /// Runs every statement of `sql` on the writer; returns how many rows the INSERT, UPDATE
    /// and DELETE statements among them changed (not counting what triggers did).
    func execute(_ sql: SQLStatement) throws -> Int {
        if let failure = sql.failure { throw failure }
        var changes = 0
        // Values bind to one statement: several statements are allowed only without them.
        try connection.forEachRawStatement(in: sql.sql, single: !sql.arguments.isEmpty) { raw in
            try bind(sql, to: raw)
            defer { raw.statement.reset() }
            let before = connection.totalChanges
            while try raw.statement.step() {}
            // `changes` keeps the last DML's count through DDL; the total moves only when this one changed rows.
            if connection.totalChanges != before { changes += connection.changes }
            if raw.changesSchema { link.forgetTablesAfterRawSchemaChange(in: store, dropped: raw.tablesDropped) }
        }
        return changes
    }

    /// Steps one statement of the user's SQL, decoding each row as `T` and handing it to `row`
    /// until `row` returns false. A statement that writes runs only on the writer: a reader
    /// hands the whole call to it (`NeedsWriter`), a read block refuses it.
    ///
    /// `streaming`: the rows go to a stream or `forEach`, so on a server a read-only query is
    /// read through a cursor, a chunk at a time, in a read transaction of its own.
    func forEachRawRow<T: Decodable>(_ type: T.Type, _ sql: SQLStatement, streaming: Bool = false, _ row: (T) throws -> Bool) throws {
        if let failure = sql.failure { throw failure }
        // A model decodes exactly as finders decode it: its table's layout (declared forms,
        // relationships left empty), checked and ready.
        func table<M: StoredModel>(of model: M.Type) throws -> TableDescription { try self.table(model) }
        let modelTable = try (T.self as? any StoredModel.Type).map { try table(of: $0) }
        try connection.forEachRawStatement(in: sql.sql, single: true) { raw in
            if !raw.isReadOnly {
                switch role {
                case .writer: break
                case .reader: throw NeedsWriter()
                case .pinnedReader: throw ModelStore.writeInsideRead()
                }
            }
            // A live query re-runs when a table its SQL reads changes.
            if let recorder = link.recorder {
                if let names = raw.tablesRead {
                    for name in names { recorder.note(tableNamed: name) }
                } else {
                    recorder.noteUnknownTables()
                }
            }
            try bind(sql, to: raw)
            defer { raw.statement.reset() }
            func read() throws {
                try raw.statement.runOnServer()
                let reader = try RawRowReader(T.self, statement: raw.statement, table: modelTable)
                while try raw.statement.step() {
                    guard try row(try reader.read()) else { break }
                }
            }
            if streaming, raw.isReadOnly, raw.statement.readInChunks() {
                try connection.inReadTransaction { try read() }
            } else {
                try read()
            }
            if raw.changesSchema { link.forgetTablesAfterRawSchemaChange(in: store, dropped: raw.tablesDropped) }
        }
    }

    private func bind(_ sql: SQLStatement, to raw: RawStatement) throws {
        let expected = Int(raw.statement.parameterCount)
        guard expected == sql.arguments.count else {
            var error = ModelStoreError(
                .invalidQuery,
                "The SQL takes \(expected) value(s) but \(sql.arguments.count) were given.",
                suggestion: "Interpolate each value (\"… WHERE name = \\(name)\"), or pass one argument per ? parameter.")
            error.sql = sql.sql
            throw error
        }
        try raw.statement.bind(sql.arguments)
    }

    /// Steps the query's `SELECT` and hands its records on in chunks of `chunkSize`, decoded
    /// one row at a time, until `body` returns false. The statement is the stream's own (not
    /// the cache's), so reads made meanwhile on this connection cannot reset it; the chunks
    /// are read in one read transaction, so relationships loaded per chunk see one snapshot.
    func forEachRecordChunk<M: StoredModel>(_ query: Query<M>, chunkSize: Int, _ body: ([M]) throws -> Bool) throws {
        let table = try table(M.self)
        let compiled = try checkingSearchIndexes(QueryCompiler(table: table)).select(table.selectList, query)
        let statement = try connection.makeStatement(compiled.sql)
        // On a server, through a cursor: the stream holds a chunk of rows, not the result.
        statement.readInChunks()
        try statement.bind(compiled.values)
        defer { statement.reset() }
        let decoder = RowDecoder(statement: statement, layout: table.layout, keyPositions: table.keyPositions)
        try connection.inReadTransaction {
            var chunk: [M] = []
            chunk.reserveCapacity(chunkSize)
            while try statement.step() {
                chunk.append(try decoder.decode(M.self))
                guard chunk.count == chunkSize else { continue }
                guard try body(chunk) else { return }
                chunk = []
                chunk.reserveCapacity(chunkSize)
            }
            if !chunk.isEmpty { _ = try body(chunk) }
        }
    }
}

/// Reads the rows of the user's statement as `T`: a keyed type (a model or a projection) by
/// column name through `RowDecoder` — the finders' own decoding — and a single value
/// (`Int`, `String?`, a convertible enum) from the first column.
struct RawRowReader<T: Decodable> {
    private let statement: Statement
    private let decoder: RowDecoder?

    init(_ type: T.Type, statement: Statement, table: TableDescription?) throws {
        self.statement = statement
        let names = (0..<statement.columnCount).map { statement.columnName(at: $0) }
        if T.self is any SQLValueConvertible.Type {
            decoder = nil
            return
        }
        let layout: ColumnLayout
        if let table {
            layout = table.layout
        } else {
            do {
                layout = try SchemaProbe.cachedLayout(of: T.self)
            } catch {
                // Not a keyed type (an enum that codes itself as one value): the one column. (A
                // server names no columns of an empty result: there is no row to decode.)
                guard names.count <= 1 else { throw error }
                decoder = nil
                return
            }
        }
        // Columns by name: SQL names its result columns in any order. SQLite compares names
        // without case; an exact match wins.
        let mapping = layout.columns.map { column -> Int32 in
            if let exact = names.firstIndex(of: column.name) { return Int32(exact) }
            let lowered = column.name.lowercased()
            return Int32(names.firstIndex { $0.lowercased() == lowered } ?? -1)
        }
        decoder = RowDecoder(statement: statement, layout: layout, keyPositions: table?.keyPositions ?? [], mapping: mapping)
    }

    /// The current row as `T`.
    func read() throws -> T {
        if let decoder { return try decoder.decode(T.self) }
        let value = statement.value(at: 0)
        do {
            return try T(from: SingleValueColumnDecoder(value: value))
        } catch {
            let column = statement.columnName(at: 0)
            var failure = ModelStoreError.wrapping(error)
            failure.code = .decodingFailed
            failure.message = "\(T.self) from column \(column): " + failure.message
            failure.model = failure.model ?? String(describing: T.self)
            failure.column = failure.column ?? column
            failure.value = failure.value ?? value.description
            throw failure
        }
    }
}
