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
    /// The schema version this connection last saw (writer only), to notice outside changes.
    var schemaVersion: Int64?

    init(_ connection: Connection) {
        self.connection = connection
    }
}
