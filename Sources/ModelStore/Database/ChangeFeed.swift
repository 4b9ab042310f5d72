import Foundation

/// What one committed transaction changed, as observers see it.
package struct CommittedChanges: Sendable {
    /// A row's change, its key in the table's key order (empty for tables observed without keys).
    package struct Row: Sendable {
        package enum Operation: Int64, Sendable {
            case insert = 1, update = 2, delete = 3
        }
        package let operation: Operation
        package let key: [SQLValue]

        package init(operation: Operation, key: [SQLValue]) {
            self.operation = operation
            self.key = key
        }
    }

    /// Lowercased names of the tables the transaction wrote.
    package var tables: Set<String> = []
    /// Row changes by lowercased table name, in the order they happened.
    package var rows: [String: [Row]] = [:]
    /// Which tables and rows changed is unknown, so every observer treats everything as
    /// changed: a commit by another connection (another process, or another store on the
    /// file), or one whose transaction began before the set of observed tables changed (its
    /// triggers may not cover a table observed since).
    package var isUnknown = false
    /// Lowercased tables (also in `tables`) whose changed rows are unknown, where the rest of
    /// the transaction's are known (a TRUNCATE; a table a server's feed began recording).
    package var unknownTables: Set<String> = []
    /// The tracker generation the transaction's triggers matched.
    var generation = -1

    var isEmpty: Bool { tables.isEmpty && !isUnknown }

    package init(
        tables: Set<String> = [], rows: [String: [Row]] = [:], isUnknown: Bool = false, unknownTables: Set<String> = [],
        generation: Int = -1
    ) {
        self.tables = tables
        self.rows = rows
        self.isUnknown = isUnknown
        self.unknownTables = unknownTables
        self.generation = generation
    }
}

/// A table the writer records changes of, with the key columns to record.
package struct ObservedTable: Sendable, Hashable {
    package let name: String
    package let keyColumns: [String]

    package init(name: String, keyColumns: [String]) {
        self.name = name
        self.keyColumns = keyColumns
    }
}

/// A backend's own record of committed changes, kept by the database for every connection
/// that writes — this store's, other processes', other machines', other tools' — and read
/// back with each change's keys (ModelStorePostgres: a log table that triggers write in the
/// transaction of the change, and `LISTEN`/`NOTIFY` to hear of new rows at once).
///
/// Where the backend has one, a store observes through it instead of SQLite's temp triggers:
/// the store asks it to record the tables its observers read, and it publishes each
/// committed transaction's changes, in the order it reads them, through the closure it was
/// opened with. Its record survives a lost notification or a reconnect: what was missed is
/// read from the record, never lost.
package protocol ChangeFeed: AnyObject, Sendable {
    /// A statement whose single value names the current transaction as the feed publishes it
    /// (NULL while the transaction has written nothing): the writer reads it just before
    /// COMMIT, so its own commit can be told from others'.
    var transactionSQL: String { get }

    /// Makes sure every later commit to `tables` is recorded, by any connection. A table that
    /// does not exist yet is recorded once it does (and its first changes reach observers as
    /// unknown). Returns true when it began recording one of them just now: what changed in
    /// it before is unknown.
    ///
    /// - Parameter execute: runs a statement on the writer's open transaction, when the caller
    ///   is inside one (a lock that transaction holds would otherwise wait for itself).
    /// - Throws: `ModelStoreError` when the record cannot be made (privileges, a lost server).
    func record(_ tables: [ObservedTable], execute: ((String) throws -> Void)?) throws -> Bool

    /// The statements that start recording `table`, which the writer's current transaction has
    /// just created, when an observer waits for it; empty otherwise. The writer runs them in
    /// the same transaction, so every row it writes there is recorded.
    func statementsRecording(table: String, keyColumns: [String]) -> [String]

    /// Reads what was recorded since the last read and publishes it; the writer calls it
    /// right after each commit, so its own changes are published before its call returns.
    func catchUp()

    /// Stops listening and closes the feed's connection.
    func close()
}

/// Opens a backend's change feed: `publish` receives each committed transaction's changes
/// and the transaction's name (as `ChangeFeed.transactionSQL` gives it).
package typealias ChangeFeedOpener =
    @Sendable (
        _ publish: @escaping @Sendable (CommittedChanges, String) -> Void
    ) throws -> any ChangeFeed

/// Names a backend's change feed keeps in the store's schema: ModelStore's own, never a
/// model's (a schema holding only these is new).
package enum ChangeLogNames {
    /// The table of recorded changes.
    package static let table = "modelstore_change_log"
    /// The function its triggers call.
    package static let function = "modelstore_record_change"
    /// The triggers on each recorded table, one per event (statement triggers with
    /// transition tables take one event each); the first one's presence means "recorded".
    package static let triggers = [
        "modelstore_record_insert", "modelstore_record_update", "modelstore_record_delete", "modelstore_record_truncate",
    ]
}
