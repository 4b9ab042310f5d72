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
        if let table = link.tables[id] {
            link.recorder?.note(table)
            return table
        }
        let table = try prepare(type, id)
        link.recorder?.note(table)
        return table
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
            // Observation needs to tell a table this transaction creates (all its rows are
            // new) from one renamed into place; only asked while something is observed.
            let existed =
                try link.watchGeneration == -1
                || ([table.tableName] + table.former.tables).contains {
                    try SchemaRenamer.exists("table", $0, on: connection)
                }
            try SchemaMigrator.prepare(table, on: connection)
            if !existed { link.createdTables.insert(table.tableName.lowercased()) }
            // A backend's change feed waiting for this table records it from its first row.
            if let feed = store.changeTracker.activeFeed {
                for sql in feed.statementsRecording(table: table.tableName, keyColumns: table.keyNames) { try connection.execute(sql) }
                for join in table.joinTables {
                    for sql in feed.statementsRecording(table: join.name, keyColumns: []) { try connection.execute(sql) }
                }
            }
            link.pending[id] = table
            // Foreign keys need their targets' tables, even for links that are NULL.
            for relationship in table.relationships {
                func prepare<T: StoredModel>(_ target: T.Type) throws { _ = try self.table(target) }
                try prepare(relationship.target)
            }
            if connection.capabilities.foreignKeysAfterTables { try SchemaMigrator.linkAfterTables(table, on: connection) }
        case .reader, .pinnedReader:
            switch try SchemaMigrator.readiness(table, on: connection) {
            case .complete:
                // A table that is already complete needs no writer: reads keep working while
                // another process holds the write lock.
                store.registry.withLock { $0[id] = table }
                store.knownTables.withLock { $0[id] = table }
                link.tables[id] = table
            case .readable(let missingJoinTables), .searchIndexLags(let missingJoinTables):
                // A missing join table holds no links, and a missing index changes no answer:
                // read now, with empty stand-ins, and leave the table to the writer to finish.
                // (A full-text index that lags is checked when a read uses it: `readySearchIndex`.)
                try link.createStandIn(for: table, id, includingTable: false, joinTables: missingJoinTables)
            case .absent:
                // A table this store has checked before was dropped behind its back: that is
                // an error, not an empty table.
                if store.knownTables.withLock({ $0[id] != nil }) {
                    try SchemaMigrator.requireStillPresent(table, on: connection)
                }
                // A model nothing has written yet has no records. Its read must not need the
                // writer (a read block cannot use it; another process may hold the write lock;
                // the store may be read-only): an empty stand-in in this connection's temp
                // schema answers every query, and goes when the read ends.
                try link.createStandIn(for: table, id, includingTable: true, joinTables: table.joinTables)
            case .needsWriter:
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

extension Session {
    /// A compiler for `table` whose conditions across relationships reach related tables
    /// through this session, so they are created, or stood in for, before the SQL runs.
    func compiler(_ table: TableDescription) -> QueryCompiler {
        var compiler = QueryCompiler(table: table) { target in
            func prepare<T: StoredModel>(_ type: T.Type) throws -> TableDescription { try self.table(type) }
            return try prepare(target)
        }
        compiler.dialect = connection.dialect
        return checkingSearchIndexes(compiler)
    }
}

/// Thrown by a reader that met a table needing DDL; the store reruns the work on the writer.
struct NeedsWriter: Error {}
