import ModelStoreCSQLite
import Foundation

/// One SQLite connection, with its prepared-statement caches.
///
/// A connection is not thread-safe: the store hands it to one block at a time (the writer
/// to barrier blocks, each reader to one read block), and it never escapes those blocks.
final class Connection {
    let handle: OpaquePointer
    /// The path or URI it was opened with, for error messages.
    let location: String
    private var statementsBySQL: [String: Statement] = [:]
    private var statementsByKey: [StatementKey: Statement] = [:]
    /// How many transactions and savepoints `inTransaction` has open, and what ended the
    /// outermost one early (see `TransactionGuard`).
    let transactionGuard = TransactionGuard()
    var transactionDepth: Int { transactionGuard.depth }
    /// The date stamping the records of the open transaction (`transactionDate`).
    private var openTransactionDate: Date?
    private var trace: TraceBox?
    /// Where rows being written keep their text while a statement runs.
    let textArena = TextArena()
    /// The table and sequence position of the last assigned key another connection took at
    /// the same moment (see `Session.assignedKeyTaken`): the same clash twice is no race.
    var lastAssignedKeyClash: String?

    /// Prepared statements kept per connection; past this, the caches start over.
    private static let cacheLimit = 512

    /// The server connection, when this is not SQLite (then `handle` is a private in-memory
    /// SQLite database that only holds the rows being read: see `RemoteStatement`).
    let remote: (any RemoteConnection)?
    /// The SQL the engine writes for this backend.
    let dialect: any SQLDialect
    /// `dialect.capabilities`, kept here: the per-row write path asks one of them, and a
    /// stored field costs less than a call through the existential.
    let capabilities: BackendCapabilities
    /// A server's counterparts of SQLite's connection state (see `runRemote`).
    private var remoteChanges = 0
    private var remoteTotalChanges: Int64 = 0
    private var remoteLastInsert: Int64 = 0
    private var remoteInTransaction = false
    /// The columns with a DEFAULT of each table this connection prepared (by table name): a
    /// server's multi-row statement must not send NULL for a row that leaves one out.
    var columnsWithDefaults: [String: Set<String>] = [:]
    /// Tables (lowercased) a migration step is rewriting, whose gap in the history it has
    /// recorded already: their triggers made again meanwhile record no second one.
    var historyGapsRecorded: Set<String> = []
    /// Raised when a server reports a table or column that is not what a store checked: a
    /// server has no schema version, so this stands in for one (`PooledConnection`). One per
    /// set of tables (`RemoteConnection.tablesIdentity`): a change met in one database or
    /// schema once made every store of the process check all its tables again, each holding
    /// the table-preparation lock until its transaction ended.
    private static let checkedSchemaEpochs = Locked<[String: Int]>([:])

    /// This connection's tables' epoch (see `checkedSchemaEpochs`); 0 for a SQLite file,
    /// which has a schema version of its own.
    var checkedSchemaEpoch: Int {
        guard let remote else { return 0 }
        let identity = remote.tablesIdentity
        return Self.checkedSchemaEpochs.withLock { $0[identity] ?? 0 }
    }
    /// Savepoints made by `withSavepoint`, to name each one apart.
    private var savepoints = 0
    /// What may stop the call running on the connection now (see `running`), nil between
    /// calls and for calls that nothing stops.
    var interruption: Interruption?

    /// Opens a connection. Opening is lazy in SQLite: a bad file shows at the first read,
    /// so callers validate with `PRAGMA`s right after.
    init(location: String, flags: Int32, busyTimeout: TimeInterval) throws {
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(location, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            let extended = db.map { sqlite3_extended_errcode($0) } ?? rc
            var error = ModelStoreError.sqlite(resultCode: extended, message: message, sql: nil, database: db)
            sqlite3_close_v2(db)
            error.message += " Path: \(location)"
            throw error
        }
        self.handle = db
        self.location = location
        self.remote = nil
        self.dialect = SQLiteDialect()
        self.capabilities = .sqlite
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, Int32(clamping: Int((busyTimeout * 1000).rounded())))
        transactionGuard.install(on: db)
        // Every connection, writer and readers alike: a quoted name that is not a column must
        // fail, never compare as a string (a column renamed behind the store's back).
        _ = csqlite_disable_double_quoted_strings(db)
        // Every connection: queries on Decimal columns name the collation and the sum (a
        // failure here closes the handle through deinit).
        try registerDecimalFunctions()
        try registerPredicateFunctions()
    }

    /// A connection to a server, through its driver.
    init(remote: any RemoteConnection, dialect: any SQLDialect) throws {
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let db else {
            sqlite3_close_v2(db)
            throw ModelStoreError.sqlite(
                resultCode: rc, message: "cannot open the local database that holds placeholder statements", sql: nil)
        }
        self.handle = db
        self.location = remote.location
        self.remote = remote
        self.dialect = dialect
        self.capabilities = dialect.capabilities
        sqlite3_extended_result_codes(db, 1)
    }

    /// The first `count` bytes of the main database file (fewer when it is shorter) and its
    /// size, read through SQLite's own descriptor: see `csqlite_read_file_start`.
    func readFileStart(count: Int) throws -> (bytes: [UInt8], size: Int64) {
        try refuseUnlessLocal("reading the database file")
        var size: sqlite3_int64 = 0
        var bytes = [UInt8](repeating: 0, count: count)
        let rc = bytes.withUnsafeMutableBytes { csqlite_read_file_start(handle, $0.baseAddress, Int32(count), &size) }
        guard rc == SQLITE_OK else {
            throw ModelStoreError.sqlite(resultCode: rc, message: String(cString: sqlite3_errstr(rc)), sql: nil)
        }
        return (Array(bytes.prefix(Int(min(Int64(count), max(0, size))))), size)
    }

    /// Copies the main database, page by page, into a new database file at `path` with
    /// SQLite's online backup API, in one step: the copy is the snapshot this connection
    /// reads (inside a read transaction, exactly that one).
    func backup(to path: String) throws {
        try refuseUnlessLocal("backup(to:)")
        let destination = try Connection(
            location: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, busyTimeout: 5)
        defer { destination.close() }
        guard let backup = sqlite3_backup_init(destination.handle, "main", handle, "main") else {
            let code = sqlite3_extended_errcode(destination.handle)
            throw ModelStoreError.sqlite(
                resultCode: code, message: String(cString: sqlite3_errmsg(destination.handle)), sql: nil, database: destination.handle)
        }
        let step = sqlite3_backup_step(backup, -1)
        let finish = sqlite3_backup_finish(backup)
        guard step == SQLITE_DONE, finish == SQLITE_OK else {
            let code = step == SQLITE_DONE ? finish : step
            throw ModelStoreError.sqlite(
                resultCode: code, message: String(cString: sqlite3_errstr(code)), sql: nil, database: destination.handle)
        }
    }

    private var isOpen = true

    deinit {
        close()
    }

    /// Finalizes the cached statements and closes the connection; later use is a bug (the
    /// pool closes a connection only when nothing holds it). Idempotent.
    func close() {
        guard isOpen else { return }
        isOpen = false
        statementsBySQL.removeAll()
        statementsByKey.removeAll()
        sqlite3_trace_v2(handle, 0, nil, nil)
        trace = nil
        sqlite3_close_v2(handle)
        remote?.close()
    }

    /// The columns of the table stored exactly as `table`, in order, as the backend's catalog
    /// lists them (`SQLDialect.tableColumnsSQL`); empty when there is no such table.
    func columnNames(ofTable table: String) throws -> [String] {
        let statement = try makeStatement(dialect.tableColumnsSQL)
        var names: [String] = []
        try statement.forEachRow([.text(table)]) { names.append(statement.string(at: 0)) }
        return names
    }

    /// Throws `.unsupported` naming `feature` on a server's connection: it is SQLite's alone.
    func refuseUnlessLocal(_ feature: String) throws {
        guard remote != nil else { return }
        throw ModelStoreError(
            .unsupported, "\(feature) is SQLite's alone; the store at \(location) is on \(dialect.name).",
            suggestion: "Use the server's own tools for it (its dump and backup programs), or a SQLite store.")
    }

    /// Prepares `sql` on the local SQLite database (on a server, a private in-memory one that
    /// only gives each server statement an empty placeholder handle).
    func prepareLocal(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, 0, &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw ModelStoreError.sqlite(
                resultCode: sqlite3_extended_errcode(handle),
                message: String(cString: sqlite3_errmsg(handle)), sql: sql, database: handle)
        }
        return statement
    }

    /// Counts the transactions begun on the server, so a statement can tell whether the
    /// cursor it opened still exists (a transaction's end closes its cursors).
    private(set) var transactionSerial = 0

    /// Runs `sql` on the server and keeps SQLite's bookkeeping in step: the rows changed,
    /// whether a transaction is open, and what an INSERT did (`insertedMarker`).
    func runRemote(_ sql: String, _ values: [SQLValue]) throws -> RemoteResult {
        guard let remote else { preconditionFailure("runRemote on a SQLite connection") }
        trace?.handler(sql)
        // The driver cannot always stop a statement the server runs: at least none starts
        // once the call is cancelled or past its limit (transaction control always runs).
        if let stop = interruption?.stopNow() { throw stop }
        let result: RemoteResult
        let head = sql.prefix(9).uppercased()
        let ends =
            head.hasPrefix("COMMIT") || head == "ROLLBACK" || (head.hasPrefix("ROLLBACK") && !sql.uppercased().hasPrefix("ROLLBACK TO"))
        do {
            result = try remote.run(sql, values)
        } catch {
            // A COMMIT or ROLLBACK that fails still ends the server's transaction: a COMMIT of
            // a transaction an earlier statement aborted (a read past its time limit) is
            // answered by rolling it back. Believing it open, the next read would have sent a
            // SAVEPOINT outside any transaction.
            if ends { remoteInTransaction = false }
            // A failed statement inside a transaction may leave a server's transaction
            // aborted: only ROLLBACK works. A lost connection has none left.
            if let failure = error as? ModelStoreError {
                if failure.code == .connectionLost { remoteInTransaction = false }
                // Every store checks its tables again at its next write (see `checkedSchemaEpoch`).
                if failure.code == .schemaMismatch {
                    let identity = remote.tablesIdentity
                    Self.checkedSchemaEpochs.withLock { $0[identity, default: 0] += 1 }
                }
            }
            throw error
        }
        remoteChanges = result.changes
        remoteTotalChanges += Int64(result.changes)
        if head.hasPrefix("BEGIN") {
            remoteInTransaction = true
            transactionSerial &+= 1
        } else if ends {
            remoteInTransaction = false
        }
        if let marker = result.columns.firstIndex(of: "modelstore_inserted"), let row = result.rows.first,
            row[marker] == .integer(1)
        {
            if let key = result.columns.firstIndex(of: "modelstore_rowid"), case .integer(let value) = row[key] {
                remoteLastInsert = value
            } else {
                remoteLastInsert = Int64.max - remoteTotalChanges
            }
        }
        return result
    }

    // MARK: Statements

    /// A new statement, not cached: for SQL that runs once.
    func makeStatement(_ sql: String) throws -> Statement {
        if remote != nil {
            let finished = dialect.finish(sql)
            let state = RemoteStatement(connection: self, serverSQL: finished.sql, parameterCount: finished.parameterCount)
            return Statement(remote: state, placeholder: try prepareLocal("SELECT NULL WHERE 0"), sql: sql)
        }
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, 0, &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw ModelStoreError.sqlite(
                resultCode: sqlite3_extended_errcode(handle),
                message: String(cString: sqlite3_errmsg(handle)), sql: sql, database: handle)
        }
        return Statement(handle: statement, sql: sql)
    }

    /// Prepares and hands over each statement of `sql` in turn — the next one is prepared
    /// only after `body` ran the previous (it may depend on what that one created). Empty
    /// statements and comments are skipped.
    func forEachStatement(in sql: String, _ body: (Statement) throws -> Void) throws {
        if remote != nil {
            for part in dialect.split(sql) { try body(try makeStatement(part)) }
            return
        }
        try sql.withCString { start in
            var rest: UnsafePointer<CChar>? = start
            while let current = rest, current.pointee != 0 {
                var statement: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let rc = sqlite3_prepare_v2(handle, current, -1, &statement, &tail)
                guard rc == SQLITE_OK else {
                    throw ModelStoreError.sqlite(
                        resultCode: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)),
                        sql: String(cString: current), database: handle)
                }
                rest = tail
                guard let statement else { continue }
                try body(Statement(handle: statement, sql: String(cString: sqlite3_sql(statement))))
            }
        }
    }

    /// A cached statement for `sql`, prepared on first use.
    func cachedStatement(_ sql: String) throws -> Statement {
        if let statement = statementsBySQL[sql] { return statement }
        let statement = try makeStatement(sql)
        if statementsBySQL.count >= Self.cacheLimit { statementsBySQL.removeAll() }
        statementsBySQL[sql] = statement
        return statement
    }

    /// A cached statement found by a structured key, so hot paths neither build nor hash SQL
    /// text; `makeSQL` runs only the first time a key is seen.
    @inline(__always)
    func cachedStatement(_ key: StatementKey, _ makeSQL: () throws -> String) throws -> Statement {
        if let statement = statementsByKey[key] { return statement }
        let statement = try makeStatement(try makeSQL())
        if statementsByKey.count >= Self.cacheLimit { statementsByKey.removeAll() }
        statementsByKey[key] = statement
        return statement
    }

    /// Runs one or more SQL statements that take no values.
    func execute(_ sql: String) throws {
        if remote != nil {
            for part in dialect.split(sql) { try makeStatement(part).execute() }
            return
        }
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(message)
            throw ModelStoreError.sqlite(
                resultCode: sqlite3_extended_errcode(handle), message: text, sql: sql, database: handle)
        }
    }

    /// Runs a cached statement with values, ignoring rows.
    func execute(_ sql: String, _ values: [SQLValue]) throws {
        try cachedStatement(sql).execute(values)
    }

    /// The first column of the first row of a query, or `nil` when it returns no row.
    func scalar(_ sql: String, _ values: [SQLValue] = []) throws -> SQLValue? {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        try statement.bind(values)
        return try statement.step() ? statement.value(at: 0) : nil
    }

    /// The collation a table's column compares with (`BINARY`, `NOCASE`, `RTRIM`, or another
    /// a tool registered), or nil when there is no such column.
    func collation(ofColumn column: String, inTable table: String, schema: String = "main") -> String? {
        guard remote == nil else { return nil }
        var type: UnsafePointer<CChar>?
        var collation: UnsafePointer<CChar>?
        var notNull: Int32 = 0
        var primaryKey: Int32 = 0
        var autoincrement: Int32 = 0
        guard
            sqlite3_table_column_metadata(handle, schema, table, column, &type, &collation, &notNull, &primaryKey, &autoincrement)
                == SQLITE_OK, let collation
        else { return nil }
        return String(cString: collation)
    }

    /// The main database's file path; nil for an in-memory or temporary database.
    var filename: String? {
        guard remote == nil, let name = sqlite3_db_filename(handle, "main") else { return nil }
        let path = String(cString: name)
        return path.isEmpty ? nil : path
    }

    /// Rows changed by every INSERT, UPDATE or DELETE since the connection opened.
    var totalChanges: Int64 {
        remote == nil ? sqlite3_total_changes64(handle) : remoteTotalChanges
    }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE.
    var changes: Int {
        remote == nil ? Int(sqlite3_changes64(handle)) : remoteChanges
    }

    /// The rowid SQLite last inserted; an upsert that updated leaves it untouched, which is
    /// how a save tells an insert from an update without a lookup.
    var lastInsertRowid: Int64 {
        get { remote == nil ? sqlite3_last_insert_rowid(handle) : remoteLastInsert }
        set {
            if remote == nil { sqlite3_set_last_insert_rowid(handle, newValue) } else { remoteLastInsert = newValue }
        }
    }

    /// The SQLite library's version number, for example 3040001.
    static let libraryVersion = Int(sqlite3_libversion_number())

    /// Whether an upsert may carry several ON CONFLICT clauses (SQLite 3.35).
    static var supportsMultipleUpsertClauses: Bool { libraryVersion >= 3_035_000 }

    /// The most `?` parameters one statement may take.
    var maximumParameters: Int {
        if remote != nil { return dialect.maximumParameters }
        return Int(sqlite3_limit(handle, SQLITE_LIMIT_VARIABLE_NUMBER, -1))
    }

    /// Whether the connection is inside a transaction (SQLite's view, which an error may
    /// have ended behind our back).
    var isInTransaction: Bool {
        remote == nil ? sqlite3_get_autocommit(handle) == 0 : remoteInTransaction
    }

    // MARK: Transactions

    /// The date that stamps every record written in the current transaction (`Timestamps`):
    /// taken at the first stamp, forgotten when the outermost transaction ends. Outside a
    /// transaction each write is its own, with its own date.
    var transactionDate: Date {
        guard transactionDepth > 0 else { return Date() }
        if let date = openTransactionDate { return date }
        let date = Date()
        openTransactionDate = date
        return date
    }

    /// Runs `body` in a transaction: `BEGIN IMMEDIATE` at the outermost level (so the write
    /// lock is taken up front and waits out the busy timeout), a savepoint when nested.
    /// Any error thrown rolls back everything `body` did. `isolation` says how much a server
    /// must isolate the outermost transaction (see `WriteIsolation`).
    ///
    /// When a call inside fails in a way that ends the whole transaction (see
    /// `TransactionGuard`), every later nested call fails without running, and so does the
    /// outermost `body` when it returns normally: nothing after the rollback is written.
    func inTransaction<T>(isolation: WriteIsolation = .serializable, _ body: () throws -> T) throws -> T {
        let depth = transactionDepth
        let savepoint = "modelstore_\(depth)"
        if depth == 0 {
            transactionGuard.reset()
            let begin = isolation == .upserts ? dialect.beginUpsertsSQL : "BEGIN IMMEDIATE"
            try uninterrupted { try cachedStatement(begin).execute() }
        } else {
            try requireOpenTransaction()
            try uninterrupted { try execute("SAVEPOINT \(savepoint)") }
        }
        transactionGuard.depth += 1
        defer {
            if depth == 0 {
                openTransactionDate = nil
                transactionGuard.reset()
            }
        }
        let result: T
        do {
            result = try body()
        } catch {
            transactionGuard.depth -= 1
            var error = noteEndedTransaction(after: error)
            // A server conflict doomed the transaction, whatever the block made of it (it may
            // have caught the conflict and thrown its own error): the store runs it again.
            if depth == 0, let cause = transactionGuard.cause, cause.isRetryableConflict { error = cause }
            rollback(depth: depth, savepoint: savepoint)
            throw error
        }
        transactionGuard.depth -= 1
        if transactionGuard.ended || !isInTransaction {
            // The block went on after the transaction ended under it: nothing of it stands.
            let error = endedTransactionError()
            rollback(depth: depth, savepoint: savepoint)
            throw error
        }
        // A call cancelled (or past its limit) before it commits commits nothing, whatever
        // its body made of the interruption (it may have caught it and gone on).
        if depth == 0, let stop = interruption?.stopNow() {
            rollback(depth: depth, savepoint: savepoint)
            throw stop
        }
        do {
            try uninterrupted {
                if depth == 0 {
                    try cachedStatement("COMMIT").execute()
                } else {
                    try execute("RELEASE \(savepoint)")
                }
            }
        } catch var error as ModelStoreError {
            if error.sqliteCode == 787 { error = explainForeignKeyFailure(error) }  // SQLITE_CONSTRAINT_FOREIGNKEY
            rollback(depth: depth, savepoint: savepoint)
            throw error
        }
        return result
    }

    /// Fails when ModelStore counts a transaction open but it ended under the caller (see
    /// `TransactionGuard`): a call made after that must not run, or it would commit alone.
    func requireOpenTransaction() throws {
        guard transactionDepth > 0, transactionGuard.ended || !isInTransaction else { return }
        throw endedTransactionError()
    }

    /// Notes that `error`, thrown inside a transaction, ended the whole transaction, and
    /// returns the error to throw: for SQLite's own rollback, the statement's error saying
    /// so; for a refused commit (`SQLITE_CONSTRAINT_COMMITHOOK`), the `.rolledBack` error.
    private func noteEndedTransaction(after error: any Error) -> any Error {
        if let conflict = error as? ModelStoreError, conflict.isRetryableConflict, transactionDepth > 0 || remote != nil {
            // The server rolled back (a deadlock) or will refuse to commit (a serialization
            // failure) the whole transaction: nothing later in it may run.
            transactionGuard.ended = true
            if transactionGuard.cause == nil { transactionGuard.cause = conflict }
        }
        guard transactionGuard.ended || !isInTransaction else { return error }
        transactionGuard.ended = true
        guard var failure = error as? ModelStoreError else { return error }
        // SQLITE_CONSTRAINT_COMMITHOOK: a statement after the end tried to commit on its own.
        if (failure.code == .constraintViolation && failure.sqliteCode == 531) || failure.code == .rolledBack {
            return endedTransactionError()
        }
        if transactionGuard.cause == nil {
            transactionGuard.cause = failure
            if remote == nil, transactionDepth > 0 {
                failure.message +=
                    " SQLite rolled back the whole transaction for it: nothing of the enclosing block is written, and its later calls fail."
            }
        }
        return failure
    }

    private func endedTransactionError() -> ModelStoreError {
        transactionGuard.ended = true
        return transactionGuard.rolledBackError()
    }

    /// A deferred foreign key failed at COMMIT, which SQLite reports without naming a table;
    /// the transaction is still open, so ask which rows refer to missing ones.
    private func explainForeignKeyFailure(_ error: ModelStoreError) -> ModelStoreError {
        var error = error
        guard let check = try? makeStatement("PRAGMA foreign_key_check") else { return error }
        var problems: [String: (parent: String, count: Int)] = [:]
        try? check.forEachRow {
            let table = check.string(at: 0)
            problems[table] = (check.string(at: 2), (problems[table]?.count ?? 0) + 1)
        }
        guard !problems.isEmpty else { return error }
        let listed = problems.sorted { $0.key < $1.key }
            .map { "\($0.value.count) \($0.key) record(s) would refer to missing \($0.value.parent) records" }
        error.message = "The transaction cannot commit: " + listed.joined(separator: "; ") + "."
        error.model = problems.keys.sorted().first
        error.suggestion = "Delete or unlink the referring records in the same transaction, or use the delete rule nullify or cascade."
        return error
    }

    /// Runs `body` inside a savepoint of the open transaction: a failure undoes only what
    /// `body` did, and leaves the transaction usable.
    func withSavepoint<T>(_ body: () throws -> T) throws -> T {
        try requireOpenTransaction()
        savepoints += 1
        let name = "modelstore_step_\(savepoints)"
        try uninterrupted { try execute("SAVEPOINT \(name)") }
        do {
            let result = try body()
            try uninterrupted { try execute("RELEASE \(name)") }
            return result
        } catch {
            let error = noteEndedTransaction(after: error)
            if isInTransaction, !transactionGuard.ended { uninterrupted { try? execute("ROLLBACK TO \(name); RELEASE \(name)") } }
            throw error
        }
    }

    /// Runs `body` in a deferred read transaction, so several queries see one snapshot.
    func inReadTransaction<T>(_ body: () throws -> T) throws -> T {
        guard !isInTransaction else { return try body() }
        try uninterrupted { try cachedStatement("BEGIN DEFERRED").execute() }
        // (Uninterrupted: a read stopped half way still ends its snapshot.)
        defer { uninterrupted { _ = try? cachedStatement("COMMIT").execute() } }
        return try body()
    }

    private func rollback(depth: Int, savepoint: String) {
        // Some errors (disk full, I/O, a trigger's RAISE(ROLLBACK)) make SQLite roll back on
        // its own; then there is nothing left to undo at the outermost level.
        if depth == 0 {
            guard isInTransaction else { return }
            transactionGuard.rollingBack = true
            defer { transactionGuard.rollingBack = false }
            uninterrupted { _ = try? cachedStatement("ROLLBACK").execute() }
        } else if isInTransaction, !transactionGuard.ended {
            uninterrupted { _ = try? execute("ROLLBACK TO \(savepoint); RELEASE \(savepoint)") }
        }
    }

    /// Runs `body` with `BEGIN`, `COMMIT` and `ROLLBACK` refused (SQLite's authorizer):
    /// work that must stay inside the caller's transaction, such as a migration step, cannot
    /// end it half way. Such a statement fails with SQLite's "not authorized" (`SQLITE_AUTH`).
    func refusingTransactionControl<T>(_ body: () throws -> T) rethrows -> T {
        // A server has no authorizer: the transaction's own end is what guards it there.
        guard remote == nil else { return try body() }
        sqlite3_set_authorizer(
            handle, { _, action, _, _, _, _ in action == SQLITE_TRANSACTION ? SQLITE_DENY : SQLITE_OK }, nil)
        defer { sqlite3_set_authorizer(handle, nil, nil) }
        return try body()
    }

    /// Registers the SQL function `modelstore_changed()`, which sets `flag` (and returns
    /// NULL): a trigger that calls it tells the connection that it fired, so code that reads
    /// what triggers recorded can skip the read when none did. `flag` must live as long as
    /// the connection (its owner keeps it).
    func registerChangeFlag(_ flag: ChangeFlag) throws {
        try refuseUnlessLocal("Observing changes")
        let rc = sqlite3_create_function_v2(
            handle, "modelstore_changed", 0, SQLITE_UTF8 | SQLITE_INNOCUOUS, Unmanaged.passUnretained(flag).toOpaque(),
            { context, _, _ in
                if let box = sqlite3_user_data(context) {
                    Unmanaged<ChangeFlag>.fromOpaque(box).takeUnretainedValue().isSet = true
                }
                sqlite3_result_null(context)
            }, nil, nil, nil)
        guard rc == SQLITE_OK else {
            throw ModelStoreError.sqlite(resultCode: rc, message: String(cString: sqlite3_errmsg(handle)), sql: nil)
        }
    }

    // MARK: Tracing

    /// Sends the SQL of every statement this connection runs to `handler`, or stops when nil.
    func setTrace(_ handler: (@Sendable (String) -> Void)?) {
        if remote != nil {
            trace = handler.map(TraceBox.init)
            return
        }
        guard let handler else {
            sqlite3_trace_v2(handle, 0, nil, nil)
            trace = nil
            return
        }
        let box = TraceBox(handler)
        trace = box
        sqlite3_trace_v2(
            handle, UInt32(SQLITE_TRACE_STMT),
            { _, context, _, sqlPointer in
                guard let context, let sqlPointer else { return 0 }
                let box = Unmanaged<TraceBox>.fromOpaque(context).takeUnretainedValue()
                box.handler(String(cString: sqlPointer.assumingMemoryBound(to: CChar.self)))
                return 0
            }, Unmanaged.passUnretained(box).toOpaque())
    }
}

/// Holds a trace handler for SQLite's C callback; the connection keeps it alive.
final class TraceBox {
    let handler: @Sendable (String) -> Void
    init(_ handler: @escaping @Sendable (String) -> Void) { self.handler = handler }
}

/// Identifies a cached statement without SQL text: which model, which operation, which
/// columns. Cheap to hash on every call.
struct StatementKey: Hashable {
    var owner: ObjectIdentifier
    var operation: Int
    var shape: ColumnMask = ColumnMask()
}

/// Set by SQL (`modelstore_changed()`), read and cleared by Swift, on the connection's thread.
final class ChangeFlag {
    var isSet = false
}

/// How a server isolates a write's own transaction. SQLite runs one writer at a time, which
/// is serializable whatever is asked.
enum WriteIsolation: Sendable {
    /// Every write the store does not know to be blind: its statements may read what they
    /// decide on (a graph's links, a block's balances), so the server must order it with
    /// every other transaction or fail it (40001) for the store to run it again.
    case serializable
    /// A write of given values alone — upserts whose merge rule is in their SQL, of a model
    /// with no relationship, unique index or callback that could read first, and no change
    /// date taken before the write: nothing it writes depends on what it read or when, so it
    /// never needs to run again.
    case upserts
}
