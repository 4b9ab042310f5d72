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
        switch role {
        case .writer:
            try SchemaMigrator.prepare(table, on: connection)
            link.pending[id] = table
            // Foreign keys need their targets' tables, even for links that are NULL.
            for relationship in table.relationships {
                func prepare<T: StoredModel>(_ target: T.Type) throws { _ = try self.table(target) }
                try prepare(relationship.target)
            }
        case .reader, .pinnedReader:
            // A table that is already complete needs no writer: reads keep working while
            // another process holds the write lock.
            guard try SchemaMigrator.isReady(table, on: connection) else {
                guard role == .pinnedReader else { throw NeedsWriter() }
                throw ModelStoreError(
                    .reentrancy,
                    "\(table.modelName) is used for the first time inside a read block, and its table needs creating or extending, which a read cannot do.",
                    model: table.modelName,
                    suggestion: "Use \(table.modelName) once outside the read block first (any call prepares its table), or use a transaction block.")
            }
            store.registry.withLock { $0[id] = table }
            link.tables[id] = table
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
        tables.merge(prepared) { _, new in new }
    }

    /// Forgets tables prepared by a transaction that rolled back: their DDL is undone too.
    func discardPending() {
        pending = [:]
    }
}
