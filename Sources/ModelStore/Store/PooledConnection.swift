import Foundation

/// A connection as the store uses it: with its own copy of the tables it knows are ready,
/// read without locks because the connection serves one block at a time.
final class PooledConnection {
    let connection: Connection
    /// Tables known to exist and match their models.
    var tables: [ObjectIdentifier: TableDescription] = [:]
    /// Tables created or altered by the writer's current transaction; they join the store's
    /// registry only when it commits.
    var pending: [ObjectIdentifier: TableDescription] = [:]
    var traceGeneration = 0
    /// Temp tables standing in for models never written yet, created by the current read.
    var standIns: [String] = []
    var standInModels: [ObjectIdentifier] = []
    /// The schema version this connection last saw, to notice outside changes: the writer's
    /// at each transaction, a reader's at each read that uses a full-text index.
    var schemaVersion: Int64?
    /// Readers: whether the current read has read the schema version yet, and whether each
    /// table's full-text index (by table name) was exactly the declared one at `schemaVersion`.
    var schemaCheckedInRead = false
    var searchIndexIsComplete: [String: Bool] = [:]
    /// Observation (writer only): the tracker generation the triggers match, the tables that
    /// have them, and watched tables that did not exist when the transaction began.
    var watchGeneration = -1
    var watchedTables: [String: ObservedTable] = [:]
    var absentWatchedTables: [ObservedTable] = []
    /// Set by the triggers when they record a change (registered with the first trigger).
    var changeFlag: ChangeFlag?
    /// Lowercased tables the current write transaction created (not renamed into place).
    var createdTables: Set<String> = []
    /// The live query fetch this connection is reading for, which notes the tables it uses.
    var recorder: TableRecorder?
    /// The store's `schemaEpoch` when this connection last checked its tables (readers).
    var schemaEpoch = 0
    /// Raw SQL in the writer's current transaction created, dropped or altered something.
    var rawSchemaChanged = false
    /// Held while the writer runs a transaction, and by the change poll while it reads the
    /// writer's data version (the connection serves one thread at a time).
    private let access = NSLock()
    private var isClosed = false

    init(_ connection: Connection) {
        self.connection = connection
    }
}

extension PooledConnection {
    /// Runs `body` holding the connection against the change poll.
    func exclusively<T>(_ body: () throws -> T) rethrows -> T {
        access.lock()
        defer { access.unlock() }
        return try body()
    }

    /// The connection's `PRAGMA data_version` — which changes when another connection
    /// commits — or nil once closed or while a transaction holds the connection.
    func dataVersionUnlessBusy() -> Int64? {
        guard connection.remote == nil, access.try() else { return nil }
        defer { access.unlock() }
        guard !isClosed, case .integer(let version)? = try? connection.scalar("PRAGMA data_version") else { return nil }
        return version
    }

    /// Closes the connection, once no transaction or poll uses it.
    func closeExclusively() {
        access.lock()
        isClosed = true
        connection.close()
        access.unlock()
    }
}

extension PooledConnection {
    /// Publishes the tables a committed transaction prepared.
    func commitPending(to store: ModelStore) {
        guard !pending.isEmpty else { return }
        let prepared = pending
        pending = [:]
        store.registry.withLock { $0.merge(prepared) { _, new in new } }
        store.knownTables.withLock { $0.merge(prepared) { _, new in new } }
        tables.merge(prepared) { _, new in new }
    }

    /// Called at the start of each write transaction: when another connection or process
    /// changed the schema since this one last looked (a column retyped by rebuilding the
    /// table, a table dropped and made again) — or this is the writer's first transaction,
    /// and readers may have checked tables before anything was compared — every table is
    /// checked again before it is written, so a write never relies on a table that is not
    /// what the store checked.
    func noticeSchemaChanges(in store: ModelStore) throws {
        let version = try readSchemaVersion()
        if schemaVersion == nil || schemaVersion != version {
            tables = [:]
            store.registry.withLock { $0 = [:] }
            // A table dropped behind the store's back took its triggers along.
            if schemaVersion != nil, watchGeneration != -1 || !watchedTables.isEmpty { resetWatches() }
        }
        schemaVersion = version
        rawSchemaChanged = false
    }

    /// Called at the end of a write transaction, before it commits: the transaction's own DDL
    /// changed the schema version, which is not a change from outside. Read inside the
    /// transaction, so no other writer can slip a change in between.
    func recordOwnSchemaChanges() throws {
        // After raw DDL the version is left stale on purpose: the next transaction checks every table.
        guard !pending.isEmpty, !rawSchemaChanged else { return }
        schemaVersion = try readSchemaVersion()
    }

    /// Whether this transaction changed the schema (its own DDL, of any kind) since it began.
    func schemaChangedInTransaction() throws -> Bool {
        // Raw DDL may have dropped triggers even when the transaction also prepared tables.
        try rawSchemaChanged || (readSchemaVersion() != schemaVersion && pending.isEmpty)
    }

    private func readSchemaVersion() throws -> Int64? {
        // Without SQLite's catalog there is no schema version: tables are checked when first
        // used, and again after a statement met a table or column changed behind a store's back.
        guard connection.capabilities.sqliteCatalog else { return Int64(connection.checkedSchemaEpoch) }
        if case .integer(let version)? = try connection.scalar("PRAGMA schema_version") { return version }
        return nil
    }

    /// Whether `table`'s full-text index is exactly the declared one, so it changes with every
    /// write of the table (readers). Asked again only when the schema version changed, which
    /// any trigger dropped or made does; the version is read once per read.
    func searchIndexIsComplete(_ table: TableDescription) throws -> Bool {
        if !schemaCheckedInRead {
            schemaCheckedInRead = true
            let version = try readSchemaVersion()
            if version != schemaVersion {
                schemaVersion = version
                searchIndexIsComplete = [:]
            }
        }
        if let known = searchIndexIsComplete[table.tableName] { return known }
        let complete = try SchemaMigrator.searchIndexIsComplete(table, on: connection)
        searchIndexIsComplete[table.tableName] = complete
        return complete
    }

    /// Forgets tables prepared by a transaction that rolled back: their DDL is undone too.
    func discardPending() {
        pending = [:]
    }
}

extension PooledConnection {
    /// Creates empty temp tables standing in for `table` (when `includingTable`) and for
    /// those of `joinTables` the file lacks, so a read finds no records or links instead of
    /// failing. The model's table is known on this connection until the read ends.
    /// A copy of a full-text index that lags its table, made from the table's rows in this
    /// connection's temp schema: the read's search finds it first (the temp schema comes
    /// first), and it goes when the read ends.
    func copySearchIndex(_ search: SearchIndexDescription) throws {
        guard !standIns.contains(search.name) else { return }
        standIns.append(search.name)
        try runInTempSchema(connection.dialect.fullText.temporaryCopy(search))
    }

    func createStandIn(for table: TableDescription, _ id: ObjectIdentifier, includingTable: Bool, joinTables: [JoinTableDescription]) throws
    {
        var statements: [String] = []
        if includingTable, !standIns.contains(table.tableName) {
            let dialect = connection.dialect
            let columns = table.columns.map {
                quoted($0.name)
                    + ($0.storage == .untyped && !dialect.capabilities.typesEveryColumn
                        ? "" : " " + dialect.columnType($0.storage.rawValue, isDecimal: $0.holdsDecimal))
            }
            statements.append("CREATE TEMP TABLE \(table.quotedTable) (\(columns.joined(separator: ", ")))")
            standIns.append(table.tableName)
            // An empty index beside it, so a search finds nothing rather than failing.
            if let search = table.search, !standIns.contains(search.name) {
                statements += dialect.fullText.standIn(search)
                standIns.append(search.name)
            }
        }
        for join in joinTables {
            guard !standIns.contains(join.name),
                try connection.scalar(connection.dialect.tableExistsSQL, [.text(join.name)]) == nil
            else { continue }
            // Typed where the backend types every column (a server's CREATE TABLE needs them).
            let typed = connection.dialect.capabilities.typesEveryColumn
            let joinColumns = zip(join.ownerColumns + join.targetColumns, join.ownerStorage + join.targetStorage).map {
                quoted($0) + (typed ? " " + connection.dialect.columnType($1.rawValue, isDecimal: false) : "")
            }
            statements.append("CREATE TEMP TABLE \(quoted(join.name)) (\(joinColumns.joined(separator: ", ")))")
            standIns.append(join.name)
        }
        try runInTempSchema(statements)
        standInModels.append(id)
        tables[id] = table
    }

    private func runInTempSchema(_ statements: [String]) throws {
        guard !statements.isEmpty else { return }
        // A reader may be read-only (SQLite's query_only); the temporary schema is the
        // connection's own, never the store's data.
        let switches = connection.dialect.temporaryWritesOnReader
        if let switches { try connection.execute(switches.allow) }
        defer { if let switches { try? connection.execute(switches.forbid) } }
        for sql in statements { try connection.execute(sql) }
    }

    /// Ends a read: drops the stand-ins it created, and forgets their tables, so the next read
    /// looks at the file again (something may have written the model meanwhile); the next
    /// read that uses a full-text index reads the schema version again.
    func dropStandIns() {
        schemaCheckedInRead = false
        if !standIns.isEmpty {
            let switches = connection.dialect.temporaryWritesOnReader
            let temp = connection.dialect.temporarySchema
            if let switches { try? connection.execute(switches.allow) }
            for name in standIns { try? connection.execute("DROP TABLE IF EXISTS \(temp).\(quoted(name))") }
            if let switches { try? connection.execute(switches.forbid) }
            standIns = []
        }
        // Also a table read with only an index missing: the next read checks it again.
        for id in standInModels { tables[id] = nil }
        standInModels = []
    }
}
