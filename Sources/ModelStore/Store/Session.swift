/// One block's access to the store: a connection, whether it may write, and the tables
/// ready on it. Engine operations take a session; they never touch the queue.
struct Session {
    enum Role {
        /// The writer, inside a transaction: may create and alter tables.
        case writer
        /// A reader that may hand the work to the writer when a table needs creating.
        case reader
        /// A reader inside the user's own read block, where handing off is impossible.
        case pinnedReader
    }

    let store: ModelStore
    let link: PooledConnection
    let role: Role

    var connection: Connection { link.connection }

    /// The table of `M`, created or brought up to date on first use in this store.
    @inline(__always)
    func table<M: StoredModel>(_ type: M.Type) throws -> TableDescription {
        let id = ObjectIdentifier(type)
        if let table = link.tables[id] { return table }
        return try prepare(type, id)
    }

    private func prepare<M: StoredModel>(_ type: M.Type, _ id: ObjectIdentifier) throws -> TableDescription {
        if let table = link.pending[id] { return table }
        if let table = store.registry.withLock({ $0[id] }) {
            link.tables[id] = table
            return table
        }
        let table = try TableDescription.of(type)
        try store.schemaNames.withLock { try $0.claim(table) }
        switch role {
        case .writer:
            if store.knownTables.withLock({ $0[id] != nil }) {
                try SchemaMigrator.requireStillPresent(table, on: connection)
            }
            try SchemaMigrator.prepare(table, on: connection)
            link.pending[id] = table
            // Foreign keys need their targets' tables, even for links that are NULL.
            for relationship in table.relationships {
                func prepare<T: StoredModel>(_ target: T.Type) throws { _ = try self.table(target) }
                try prepare(relationship.target)
            }
        case .reader, .pinnedReader:
            switch try SchemaMigrator.readiness(table, on: connection) {
            case .complete:
                // A table that is already complete needs no writer: reads keep working while
                // another process holds the write lock.
                store.registry.withLock { $0[id] = table }
                store.knownTables.withLock { $0[id] = table }
                link.tables[id] = table
            case .readable(let missingJoinTables):
                // A missing join table holds no links, and a missing index changes no answer:
                // read now, with empty stand-ins, and leave the table to the writer to finish.
                try link.createStandIn(for: table, id, includingTable: false, joinTables: missingJoinTables)
            case .needsWriter:
                if try SchemaMigrator.inspect(table, on: connection) == nil {
                    // A table this store has checked before was dropped behind its back: that
                    // is an error, not an empty table.
                    if store.knownTables.withLock({ $0[id] != nil }) {
                        try SchemaMigrator.requireStillPresent(table, on: connection)
                    }
                    // A model nothing has written yet has no records. Its read must not need
                    // the writer (a read block cannot use it; another process may hold the
                    // write lock; the store may be read-only): an empty stand-in in this
                    // connection's temp schema answers every query, and goes when the read ends.
                    try link.createStandIn(for: table, id, includingTable: true, joinTables: table.joinTables)
                    return table
                }
                guard role == .pinnedReader else { throw NeedsWriter() }
                throw ModelStoreError(
                    .reentrancy,
                    "\(table.modelName) is used for the first time inside a read block, and its table needs a column the model gained, which a read cannot add.",
                    model: table.modelName,
                    suggestion:
                        "Use \(table.modelName) once outside the read block first (any call adds the column), or use a transaction block.")
            }
        }
        return table
    }
}

/// Thrown by a reader that met a table needing DDL; the store reruns the work on the writer.
struct NeedsWriter: Error {}

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
        }
        schemaVersion = version
    }

    /// Called at the end of a write transaction, before it commits: the transaction's own DDL
    /// changed the schema version, which is not a change from outside. Read inside the
    /// transaction, so no other writer can slip a change in between.
    func recordOwnSchemaChanges() throws {
        guard !pending.isEmpty else { return }
        schemaVersion = try readSchemaVersion()
    }

    private func readSchemaVersion() throws -> Int64? {
        if case .integer(let version)? = try connection.scalar("PRAGMA schema_version") { return version }
        return nil
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
    func createStandIn(for table: TableDescription, _ id: ObjectIdentifier, includingTable: Bool, joinTables: [JoinTableDescription]) throws
    {
        var statements: [String] = []
        if includingTable, !standIns.contains(table.tableName) {
            let columns = table.columns.map { quoted($0.name) + ($0.storage == .untyped ? "" : " " + $0.storage.rawValue) }
            statements.append("CREATE TEMP TABLE \(table.quotedTable) (\(columns.joined(separator: ", ")))")
            standIns.append(table.tableName)
        }
        for join in joinTables {
            guard !standIns.contains(join.name),
                try connection.scalar("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(join.name)]) == nil
            else { continue }
            let joinColumns = (join.ownerColumns + join.targetColumns).map(quoted)
            statements.append("CREATE TEMP TABLE \(quoted(join.name)) (\(joinColumns.joined(separator: ", ")))")
            standIns.append(join.name)
        }
        if !statements.isEmpty {
            // Readers are query-only; the temp schema is the connection's own, never the file.
            try connection.execute("PRAGMA query_only = 0")
            defer { try? connection.execute("PRAGMA query_only = 1") }
            for sql in statements { try connection.execute(sql) }
        }
        standInModels.append(id)
        tables[id] = table
    }

    /// Drops the stand-ins a read created, and forgets their tables, so the next read looks
    /// at the file again (something may have written the model meanwhile).
    func dropStandIns() {
        guard !standIns.isEmpty else { return }
        try? connection.execute("PRAGMA query_only = 0")
        for name in standIns { try? connection.execute("DROP TABLE IF EXISTS temp.\(quoted(name))") }
        try? connection.execute("PRAGMA query_only = 1")
        standIns = []
        for id in standInModels { tables[id] = nil }
        standInModels = []
    }
}
