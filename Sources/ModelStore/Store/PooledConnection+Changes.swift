/// The writer's side of observation: temp triggers on the observed tables record each row
/// change into a temp table, inside the transaction that makes it — so a rolled-back
/// transaction or savepoint takes its records with it, and only what commits is published.
/// Triggers see every write: ModelStore's own statements, delete rules and foreign-key
/// cascades, and raw SQL alike.
extension PooledConnection {
    static let changeTable = "modelstore_changes"
    /// Key columns a trigger records; a table with a longer key is observed without keys.
    static let recordedKeyColumns = 8

    /// Brings the triggers up to the tracker's tables; runs at the start of a write
    /// transaction (so a failure rolls the trigger DDL back with it).
    func watch(_ tracker: ChangeTracker) throws {
        let (generation, tables) = tracker.watchedTables()
        if changeFlag == nil {
            let flag = ChangeFlag()
            try connection.registerChangeFlag(flag)
            changeFlag = flag
        }
        let keys = (0..<Self.recordedKeyColumns).map { "k\($0)" }
        try connection.execute(
            "CREATE TEMP TABLE IF NOT EXISTS \(Self.changeTable) (tbl TEXT NOT NULL, op INTEGER NOT NULL, \(keys.joined(separator: ", ")))")
        var wanted: [String: ObservedTable] = [:]
        for table in tables { wanted[table.name.lowercased()] = table }
        for (name, table) in watchedTables where wanted[name] != table {
            for suffix in ["i", "u", "d"] {
                try connection.execute("DROP TRIGGER IF EXISTS temp.\(quoted(Self.triggerName(table.name, suffix)))")
            }
            watchedTables[name] = nil
        }
        absentWatchedTables = []
        for table in tables where watchedTables[table.name.lowercased()] == nil {
            guard
                try connection.scalar(
                    "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE", [.text(table.name)]) != nil
            else {
                absentWatchedTables.append(table)
                continue
            }
            for sql in Self.triggerSQL(table) { try connection.execute(sql) }
            watchedTables[table.name.lowercased()] = table
        }
        watchGeneration = generation
    }

    /// Drops every trigger and recorded row, so the next write that needs them starts from
    /// a known state: after a rollback (which took this transaction's trigger DDL but not the
    /// earlier ones), or a schema change (which may have dropped some with their tables).
    /// Outside a transaction it runs on its own; inside one, it is part of it.
    func resetWatches() {
        changeFlag?.isSet = false
        watchedTables = [:]
        absentWatchedTables = []
        createdTables = []
        watchGeneration = -1
        var names: [String] = []
        if let statement = try? connection.makeStatement(
            "SELECT name FROM temp.sqlite_master WHERE type = 'trigger' AND name GLOB 'modelstore_watch_*'")
        {
            try? statement.forEachRow { names.append(statement.string(at: 0)) }
        }
        for name in names { try? connection.execute("DROP TRIGGER IF EXISTS temp.\(quoted(name))") }
        try? connection.execute("DELETE FROM temp.\(Self.changeTable)")
    }

    /// The changes the transaction recorded, and clears them; called just before commit.
    func collectChanges() throws -> CommittedChanges {
        var changes = CommittedChanges()
        changes.generation = watchGeneration
        // No trigger fired (a rolled-back savepoint may have taken what one recorded): nothing to read.
        guard changeFlag?.isSet == true || !absentWatchedTables.isEmpty else { return changes }
        changeFlag?.isSet = false
        let statement = try connection.cachedStatement(
            "SELECT tbl, op, " + (0..<Self.recordedKeyColumns).map { "k\($0)" }.joined(separator: ", ")
                + " FROM temp.\(Self.changeTable) ORDER BY rowid")
        var any = false
        try statement.forEachRow {
            any = true
            let name = statement.string(at: 0)
            let lowered = name.lowercased()
            // A key longer than the triggers record comes back empty: keys unknown.
            let keyCount = watchedTables[lowered]?.keyColumns.count ?? 0
            let count = keyCount <= Self.recordedKeyColumns ? keyCount : 0
            let operation = CommittedChanges.Row.Operation(rawValue: statement.int64(at: 1)) ?? .update
            changes.tables.insert(lowered)
            changes.rows[lowered, default: []].append(.init(operation: operation, key: statement.values(from: 2, count: count)))
        }
        if any { try connection.execute("DELETE FROM temp.\(Self.changeTable)") }
        // A watched table that appeared in this transaction had no trigger yet. Made by it,
        // every row it holds was inserted now; renamed into place (or made by raw SQL), which
        // rows changed is unknown.
        for table in absentWatchedTables {
            guard
                try connection.scalar(
                    "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE", [.text(table.name)]) != nil
            else { continue }
            let lowered = table.name.lowercased()
            changes.tables.insert(lowered)
            guard createdTables.contains(lowered) else {
                changes.isUnknown = true
                continue
            }
            guard !table.keyColumns.isEmpty, table.keyColumns.count <= Self.recordedKeyColumns else { continue }
            let keys = try connection.makeStatement(
                "SELECT " + table.keyColumns.map(quoted).joined(separator: ", ") + " FROM main.\(quoted(table.name))")
            try keys.forEachRow {
                changes.rows[lowered, default: []].append(.init(operation: .insert, key: keys.values(count: table.keyColumns.count)))
            }
        }
        return changes
    }

    private static func triggerName(_ table: String, _ suffix: String) -> String {
        "modelstore_watch_\(table)_\(suffix)"
    }

    private static func triggerSQL(_ table: ObservedTable) -> [String] {
        let recorded = table.keyColumns.count <= recordedKeyColumns ? table.keyColumns : []
        func values(_ row: String, _ operation: Int) -> String {
            let keys = (0..<recordedKeyColumns).map { $0 < recorded.count ? "\(row).\(quoted(recorded[$0]))" : "NULL" }
            return "(\(quotedLiteral(table.name)), \(operation), \(keys.joined(separator: ", ")))"
        }
        let on = "ON main.\(quoted(table.name)) FOR EACH ROW"
        let insert = "INSERT INTO \(changeTable) VALUES"
        // An update that changes the key is the old record's delete and the new one's insert.
        let flag = "SELECT modelstore_changed();"
        let keyChanged = recorded.isEmpty ? "0" : recorded.map { "OLD.\(quoted($0)) IS NOT NEW.\(quoted($0))" }.joined(separator: " OR ")
        return [
            "CREATE TEMP TRIGGER IF NOT EXISTS \(quoted(triggerName(table.name, "i"))) AFTER INSERT \(on) BEGIN \(insert) \(values("NEW", 1)); \(flag) END",
            "CREATE TEMP TRIGGER IF NOT EXISTS \(quoted(triggerName(table.name, "u"))) AFTER UPDATE \(on) BEGIN "
                + "INSERT INTO \(changeTable) SELECT \(quotedLiteral(table.name)), 3, \(recordedOld(recorded)) WHERE \(keyChanged); "
                + "INSERT INTO \(changeTable) SELECT \(quotedLiteral(table.name)), CASE WHEN \(keyChanged) THEN 1 ELSE 2 END, \(recordedNew(recorded)); \(flag) END",
            "CREATE TEMP TRIGGER IF NOT EXISTS \(quoted(triggerName(table.name, "d"))) AFTER DELETE \(on) BEGIN \(insert) \(values("OLD", 3)); \(flag) END",
        ]
    }

    private static func recordedOld(_ keys: [String]) -> String {
        (0..<recordedKeyColumns).map { $0 < keys.count ? "OLD.\(quoted(keys[$0]))" : "NULL" }.joined(separator: ", ")
    }

    private static func recordedNew(_ keys: [String]) -> String {
        (0..<recordedKeyColumns).map { $0 < keys.count ? "NEW.\(quoted(keys[$0]))" : "NULL" }.joined(separator: ", ")
    }

    private static func quotedLiteral(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
