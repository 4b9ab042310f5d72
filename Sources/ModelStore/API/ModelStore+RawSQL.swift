/// The store's own SQL calls: any statement, with values bound, and rows read into any
/// `Decodable` with the decoding finders use.
extension ModelStore {
    /// Runs SQL that changes the store, as a write: a barrier on the writer, in its own
    /// transaction (or the enclosing transaction block's), seen by live queries and change
    /// streams like any write. Interpolated values are bound, never spliced into the SQL.
    ///
    /// ```swift
    /// let changed = try store.execute("UPDATE Snack SET price = price * \(1.1) WHERE taste = \(taste)")
    /// try store.execute("CREATE INDEX IF NOT EXISTS byPrice ON \(table: Snack.self) (price)")
    /// ```
    ///
    /// SQL without values may hold several statements. Statements that would end the
    /// store's transaction (`BEGIN`, `COMMIT`, `SAVEPOINT` …) or attach databases are
    /// refused, and so is setting a pragma the store configures or relies on (`journal_mode`,
    /// `synchronous`, `foreign_keys`, `recursive_triggers`, `busy_timeout`,
    /// `wal_autocheckpoint`, `schema_version`, `trusted_schema`, `locking_mode`, `query_only`
    /// …), in any spelling: the error says why. What cannot run inside a transaction has a
    /// call of its own, which the error names: `VACUUM` is `vacuum()`, `VACUUM INTO` is
    /// `vacuum(into:)`, `PRAGMA wal_checkpoint` is `checkpoint(_:)`. After a statement that
    /// creates, drops or alters a table, the store checks its models' tables again before
    /// using them.
    /// - Returns: How many rows the INSERT, UPDATE and DELETE statements changed.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for SQL SQLite cannot prepare (naming it), a refused
    ///   statement, or a wrong number of values; `.constraintViolation`; `.reentrancy` inside a read block;
    ///   `.readOnly`, `.busy`, `.closed` or `.noStore`.
    @discardableResult
    public func execute(_ sql: SQLStatement) throws -> Int {
        try write { try $0.execute(sql) }
    }

    /// `execute(_:)`, delivered later on the store's completion queue.
    public func execute(_ sql: SQLStatement, completion: @escaping @Sendable (Result<Int, ModelStoreError>) -> Void) {
        write({ try $0.execute(sql) }, completion: completion)
    }

    /// `execute(_:)` without blocking the calling task.
    /// - Throws: as `execute(_:)`.
    @discardableResult
    public func execute(_ sql: SQLStatement) async throws -> Int {
        try await write { try $0.execute(sql) }
    }

    /// The rows of an SQL query, each decoded as `Row`: a model (exactly as finders decode
    /// it — dates, UUIDs, declared forms, JSON properties), a projection struct (columns by
    /// name), or a single value (`Int`, `String?`, …) from the first column.
    ///
    /// ```swift
    /// let cheap = try store.findAll(Snack.self, sql: "SELECT * FROM Snack WHERE price < \(limit)")
    /// let names = try store.findAll(String.self, sql: "SELECT name FROM Snack ORDER BY name")
    /// ```
    ///
    /// It runs as a read on a pooled reader. A statement that writes (`… RETURNING`) runs on
    /// the writer instead, as a write; inside a read block it throws `.reentrancy`.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for SQL SQLite cannot prepare (naming it), more than one
    ///   statement, a wrong number of values, or a statement `execute(_:)` refuses (a pragma the store relies
    ///   on, `VACUUM`, …: the error says why); `.decodingFailed` naming the type and column of a value that
    ///   does not fit; `.closed` or `.noStore`.
    public func findAll<Row: Decodable & Sendable>(_ type: Row.Type, sql: SQLStatement) throws -> [Row] {
        try read { try Self.rows(type, sql, $0) }
    }

    /// `findAll(_:sql:)`, delivered later on the store's completion queue.
    public func findAll<Row: Decodable & Sendable>(
        _ type: Row.Type, sql: SQLStatement, completion: @escaping @Sendable (Result<[Row], ModelStoreError>) -> Void
    ) {
        read({ try Self.rows(type, sql, $0) }, completion: completion)
    }

    /// `findAll(_:sql:)` without blocking the calling task.
    /// - Throws: as `findAll(_:sql:)`.
    public func findAll<Row: Decodable & Sendable>(_ type: Row.Type, sql: SQLStatement) async throws -> [Row] {
        try await read { try Self.rows(type, sql, $0) }
    }

    /// The first row of an SQL query decoded as `Row`, or nil when it returns none.
    ///
    /// ```swift
    /// let top = try store.findFirst(Double.self, sql: "SELECT max(price) FROM Snack")   // Double? — nil: no row
    /// ```
    /// - Throws: as `findAll(_:sql:)`; a NULL read as a non-optional value is `.decodingFailed`
    ///   (ask for `Double?.self`).
    public func findFirst<Row: Decodable & Sendable>(_ type: Row.Type, sql: SQLStatement) throws -> Row? {
        try read { try Self.first(type, sql, $0) }
    }

    /// `findFirst(_:sql:)`, delivered later on the store's completion queue.
    public func findFirst<Row: Decodable & Sendable>(
        _ type: Row.Type, sql: SQLStatement, completion: @escaping @Sendable (Result<Row?, ModelStoreError>) -> Void
    ) {
        read({ try Self.first(type, sql, $0) }, completion: completion)
    }

    /// `findFirst(_:sql:)` without blocking the calling task.
    /// - Throws: as `findFirst(_:sql:)`.
    public func findFirst<Row: Decodable & Sendable>(_ type: Row.Type, sql: SQLStatement) async throws -> Row? {
        try await read { try Self.first(type, sql, $0) }
    }

    /// Calls `body` with each row of an SQL query, decoded one at a time (memory stays
    /// bounded), in one snapshot read off the store's queue — as `Query.forEach` does.
    ///
    /// ```swift
    /// try store.forEach(Snack.self, sql: "SELECT * FROM Snack WHERE taste = \(taste)") { snack in … }
    /// ```
    /// - Throws: What `body` throws; as `findAll(_:sql:)`; `.invalidQuery` for SQL that writes.
    public func forEach<Row: Decodable & Sendable>(_ type: Row.Type, sql: SQLStatement, _ body: (Row) throws -> Void) throws {
        try streamingRead(prepare: { try $0.prepareTable(for: Row.self) }) { session, interruption in
            try session.forEachRawRow(type, sql, streaming: true) { row in
                // The time `body` holds the row is not the read's: it is out of the limit.
                if let interruption { try interruption.excludingFromLimit { try body(row) } } else { try body(row) }
                return true
            }
        }
    }

    /// The rows of an SQL query as an `AsyncSequence` holding at most a few hundred at a
    /// time (see `RecordStream`).
    ///
    /// ```swift
    /// for try await name in store.stream(String.self, sql: "SELECT name FROM Snack") { print(name) }
    /// ```
    public func stream<Row: Decodable & Sendable>(_ type: Row.Type, sql: SQLStatement) -> RecordStream<Row> {
        RecordStream(sql: sql, store: self)
    }

    private static func rows<Row: Decodable>(_ type: Row.Type, _ sql: SQLStatement, _ session: Session) throws -> [Row] {
        var rows: [Row] = []
        try session.forEachRawRow(type, sql) {
            rows.append($0)
            return true
        }
        return rows
    }

    private static func first<Row: Decodable>(_ type: Row.Type, _ sql: SQLStatement, _ session: Session) throws -> Row? {
        var first: Row?
        try session.forEachRawRow(type, sql) {
            first = $0
            return false
        }
        return first
    }
}
