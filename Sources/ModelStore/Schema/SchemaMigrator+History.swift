/// Makes the durable history's log and a history-keeping table's triggers (see `HistorySQL`).
extension SchemaMigrator {
    /// Makes sure every later change of `table` is recorded in the history, by any writer:
    /// the log where it is missing, and the table's triggers where they are missing or record
    /// another key or name (a table renamed, a key column renamed, a table made again). Runs in
    /// the caller's transaction, so the triggers and the first write after them commit
    /// together. A declaration removed leaves the triggers: other processes may still rely on
    /// the history (see `ModelStore.stopHistory(of:)`).
    static func prepareHistory(_ table: TableDescription, on connection: Connection) throws {
        let history = connection.dialect.history
        if try connection.scalar(history.logCurrent) == nil {
            for sql in history.makeLog { try connection.execute(sql) }
        }
        let keys = table.keyNames
        let current = history.triggersCurrent(table.tableName, keys)
        guard try connection.scalar(current.sql, current.values) == nil else { return }
        try dropHistoryTriggers(ofTable: table.tableName, on: connection)
        // The table was recorded before and its triggers were missing or out of date (dropped
        // with the table or by `stopHistory`, renamed behind the store's back): changes may
        // have gone unrecorded, which a consumer learns as a change of unknown rows.
        if !connection.historyGapsRecorded.contains(table.tableName.lowercased()) {
            try connection.execute(history.unknownRows, [.text(table.tableName)])
        }
        for sql in history.makeTriggers(table.tableName, keys) { try connection.execute(sql) }
    }

    /// Drops the history triggers of the table named `tableName`, whatever key or name they
    /// were made for.
    static func dropHistoryTriggers(ofTable tableName: String, on connection: Connection) throws {
        let history = connection.dialect.history
        var names: [String] = []
        let statement = try connection.makeStatement(history.triggerNames)
        try statement.forEachRow([.text(tableName)]) { names.append(statement.string(at: 0)) }
        for name in names { try connection.execute(history.dropTrigger(name, tableName)) }
    }
}

extension SchemaMigrator {
    /// Before a migration step rewrites `tableName` (a rebuild, a transform), whose records
    /// change without their triggers: a change of unknown rows, where the table was recorded.
    static func recordRewrite(ofTable tableName: String, on connection: Connection) throws {
        guard try History.logExists(on: connection) else { return }
        try connection.execute(connection.dialect.history.unknownRows, [.text(tableName)])
        connection.historyGapsRecorded.insert(tableName.lowercased())
    }
}
