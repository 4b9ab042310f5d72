import Foundation

/// A connection to a server database, as a driver provides it (ModelStorePostgres wraps
/// postgres-nio's): runs one statement at a time, synchronously, and hands back every row.
///
/// The engine is synchronous and runs on the store's dispatch queue; a driver blocks the
/// calling thread until the server answers, never an event-loop thread or the cooperative
/// pool. `Connection` wraps one of these, so everything above it is the same on both
/// backends (see `SQLDialect`).
package protocol RemoteConnection: AnyObject {
    /// Runs `sql` (already in the server's dialect) with `values` bound to its parameters.
    ///
    /// - Throws: `ModelStoreError`, its code mapped from the server's error.
    func run(_ sql: String, _ values: [SQLValue]) throws -> RemoteResult
    /// Closes the connection; later calls fail.
    func close()
    /// Where it is connected, for messages (never a password).
    var location: String { get }
    /// What names the set of tables it sees (a server's database and schema): connections
    /// with the same one see the same tables. By default `location`.
    var tablesIdentity: String { get }
}

extension RemoteConnection {
    package var tablesIdentity: String { location }
}

/// A statement's outcome on a server: its columns, every row, and the rows it changed.
package struct RemoteResult {
    package var columns: [String]
    package var rows: [[SQLValue]]
    /// The rows an INSERT, UPDATE or DELETE changed (the command tag's count), else 0.
    package var changes: Int

    package init(columns: [String], rows: [[SQLValue]], changes: Int) {
        self.columns = columns
        self.rows = rows
        self.changes = changes
    }
}

/// What a store asks of each connection it opens on a server.
package struct RemoteConnectionSettings: Sendable {
    /// How long a statement waits for a lock another connection holds before it fails with
    /// `.busy`: the store's `busyTimeout` (PostgreSQL's `lock_timeout`).
    package var lockTimeout: TimeInterval
    /// Whether the store is open already: a server that cannot be reached then has gone
    /// away (`.connectionLost`), where at opening it is a wrong address (`.cannotOpen`).
    package var storeIsOpen: Bool

    package init(lockTimeout: TimeInterval, storeIsOpen: Bool) {
        self.lockTimeout = lockTimeout
        self.storeIsOpen = storeIsOpen
    }
}

/// Opens the connections of a store on a server (see `ConnectionPool.Location.remote`).
package protocol RemoteOpener: Sendable {
    /// A new connection, set up as `settings` say.
    ///
    /// - Throws: `ModelStoreError` `.cannotOpen` when the server cannot be reached while the
    ///   store opens, `.connectionLost` once it is open; no wait is without a deadline.
    func open(_ settings: RemoteConnectionSettings) throws -> any RemoteConnection
    /// Where the server is, for messages (never a password).
    var description: String { get }
    /// The server's SQL and what it can do.
    var dialect: any SQLDialect { get }
    /// Opens the server's change feed, for a store whose observers need one (see
    /// `ChangeFeed`); nil where the backend keeps no record of changes. `tick` is how often
    /// the feed looks for what a notification may not have told it.
    func changeFeedOpener(_ settings: RemoteConnectionSettings, tick: TimeInterval) -> ChangeFeedOpener?
}

extension RemoteOpener {
    package func changeFeedOpener(_ settings: RemoteConnectionSettings, tick: TimeInterval) -> ChangeFeedOpener? { nil }
}

/// The server side of a `Statement`: the SQL it sends, the values bound, and the rows that
/// came back, handed out one at a time.
///
/// Rows are read whole when the statement first steps: a driver answers with every row at
/// once, and the engine never keeps a server statement open across calls to the server —
/// except a stream's own query (`Statement.readInChunks()`), read through a cursor
/// `RemoteStatement.chunk` rows at a time and closed when the statement is reset. The
/// statement's column readers read the current row's values in place (`cell(_:)`): a server
/// row is converted once, by the driver, and never passes through a SQLite statement.
final class RemoteStatement {
    unowned let connection: Connection
    /// The SQL the server runs (its own placeholders).
    let serverSQL: String
    let parameterCount: Int
    var bindings: [SQLValue]
    private(set) var hasRun = false
    private var rows: [[SQLValue]] = []
    private var position = 0
    /// The row the statement is on (the last `nextRow()`), read by the column readers.
    private(set) var current: [SQLValue] = []
    /// The result's column names, known once the statement has run.
    private(set) var columns: [String] = []
    /// Whether this statement's query is read through a cursor (a stream's own query, inside
    /// a transaction); set by `Statement.readInChunks()`.
    var throughCursor = false
    /// The FETCH of the cursor a stream reads through, while the last fetch left rows behind.
    private var fetch: String?
    /// The cursor's CLOSE, and the transaction it lives in, until it is closed.
    private var openCursor: (close: String, transaction: Int)?
    /// How many rows a stream's cursor fetches at a time.
    static let chunk = 256
    private static let cursors = Counter()
    #if DEBUG
        /// The most rows any one result handed over held at once, by server SQL: lets the tests
        /// see that a stream's rows stay bounded on a server.
        static let largestHeld = Locked<[String: Int]>([:])
    #endif

    init(connection: Connection, serverSQL: String, parameterCount: Int) {
        self.connection = connection
        self.serverSQL = serverSQL
        self.parameterCount = parameterCount
        self.bindings = Array(repeating: .null, count: parameterCount)
    }

    func run() throws {
        closeCursor()
        let result: RemoteResult
        if throughCursor, connection.isInTransaction, Self.isQuery(serverSQL),
            let statements = connection.dialect.cursorStatements(
                name: "modelstore_cursor_\(Self.cursors.next())", query: serverSQL, rows: Self.chunk)
        {
            _ = try connection.runRemote(statements.declare, bindings)
            openCursor = (statements.close, connection.transactionSerial)
            result = try connection.runRemote(statements.fetch, [])
            if result.rows.count == Self.chunk { fetch = statements.fetch }
        } else {
            result = try connection.runRemote(serverSQL, bindings)
        }
        take(result.rows)
        hasRun = true
        columns = result.columns
    }

    private func take(_ fetched: [[SQLValue]]) {
        rows = fetched
        position = 0
        #if DEBUG
            if !fetched.isEmpty {
                Self.largestHeld.withLock { held in
                    if held.count < 10_000 { held[serverSQL] = max(held[serverSQL] ?? 0, fetched.count) }
                }
            }
        #endif
    }

    /// Whether `sql` is a query a cursor can read: a `SELECT` (a `WITH` may hold a statement
    /// that writes, which no cursor takes), and not a `SELECT … INTO`, which makes a table.
    private static func isQuery(_ sql: String) -> Bool {
        let text = sql.drop(while: { $0.isWhitespace || $0 == "(" })
        return text.prefix(6).uppercased() == "SELECT" && text.range(of: " INTO ", options: .caseInsensitive) == nil
    }

    func nextRow() throws -> [SQLValue]? {
        if position == rows.count, let next = fetch {
            let result = try connection.runRemote(next, [])
            if result.rows.count < Self.chunk { fetch = nil }
            take(result.rows)
        }
        guard position < rows.count else {
            // Past the end a column reads as NULL, as SQLite's do.
            current = []
            return nil
        }
        defer { position += 1 }
        current = rows[position]
        return current
    }

    /// How many rows are left to hand out, when they are all held (nil while a cursor has
    /// more to fetch).
    var heldRowCount: Int? { fetch == nil ? rows.count - position : nil }

    /// The storage class of column `index` in the current row, read without copying the
    /// value out (a copy of text retains its storage).
    @inline(__always)
    func storageClass(_ index: Int32) -> Int32 {
        let index = Int(index)
        guard index >= 0 && index < current.count else { return StorageClass.null }
        switch current[index] {
        case .null: return StorageClass.null
        case .integer: return StorageClass.integer
        case .real: return StorageClass.float
        case .text: return StorageClass.text
        case .blob: return StorageClass.blob
        }
    }

    /// The value of column `index` in the current row; NULL past its end (as SQLite answers
    /// for a column it does not have).
    @inline(__always)
    func cell(_ index: Int32) -> SQLValue {
        let index = Int(index)
        return index >= 0 && index < current.count ? current[index] : .null
    }

    func reset() {
        closeCursor()
        hasRun = false
        rows = []
        current = []
        position = 0
    }

    /// Closes the cursor this statement opened, while its transaction lasts: an open cursor
    /// holds its query's state on the server and keeps its tables from being altered or
    /// dropped until the transaction ends. (A transaction that ended closed it already; one
    /// that failed refuses the CLOSE, and ends anyway.)
    private func closeCursor() {
        fetch = nil
        guard let open = openCursor else { return }
        openCursor = nil
        guard connection.isInTransaction, connection.transactionSerial == open.transaction else { return }
        _ = try? connection.runRemote(open.close, [])
    }
}
