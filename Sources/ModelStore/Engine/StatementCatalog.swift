/// The statements the engine runs on a model's table, cached per connection by
/// `StatementKey` so SQL text is built once per shape and never hashed on hot paths.
enum StatementCatalog: Int {
    case findByKey, findAll, count, existsByKey
    case deleteByKey, deleteAll
    /// UPDATE of the columns in the shape, by key.
    case updateByKey
    /// UPDATE of the columns in the shape, by key, only when one of them would change.
    case updateByKeyIfChanged
    /// INSERT of the columns in the shape.
    case insert
    /// INSERT of the columns in the shape that does nothing when the key (or a unique
    /// index's values) exists.
    case insertIfAbsent
    /// INSERT of the columns in the shape that updates them instead when the key, or a
    /// unique index's values, exist.
    case upsert
    /// `upsert` returning the record as stored: every column (an assigned key included).
    case upsertReturning

    static func sql(
        _ operation: StatementCatalog, _ table: TableDescription, shape: ColumnMask = ColumnMask(),
        dialect: any SQLDialect = SQLiteDialect()
    ) -> String {
        let from = " FROM \(table.quotedTable)"
        switch operation {
        case .findByKey:
            return "SELECT \(table.selectList)\(from) WHERE \(table.keyCondition)"
        case .findAll:
            return "SELECT \(table.selectList)\(from) ORDER BY \(table.keyOrder)"
        case .count:
            return "SELECT count(*)\(from)"
        case .existsByKey:
            return "SELECT 1\(from) WHERE \(table.keyCondition) LIMIT 1"
        case .deleteByKey:
            return "DELETE\(from) WHERE \(table.keyCondition)"
        case .deleteAll:
            return "DELETE\(from)"
        case .updateByKey:
            let positions = table.columns.indices.filter(shape.contains)
            if let stamp = table.updatedPosition, shape.contains(stamp), positions.count > 1 {
                // The change date moves only when another value changes: numbered parameters,
                // each value bound once, read by its assignment and by the test.
                let numbered = positions.enumerated().map { (name: quoted(table.columns[$1].name), mark: "?\($0 + 1)", position: $1) }
                let changed = numbered.filter { $0.position != stamp }.map { dialect.distinct($0.name, $0.mark) + dialect.binaryCollation }
                    .joined(separator: " OR ")
                let assignments = numbered.map {
                    $0.position == stamp
                        ? "\($0.name) = CASE WHEN \(changed) THEN \($0.mark) ELSE \($0.name) END" : "\($0.name) = \($0.mark)"
                }.joined(separator: ", ")
                return "UPDATE \(table.quotedTable) SET \(assignments) WHERE \(table.keyCondition)"
            }
            let assignments = positions.map { quoted(table.columns[$0].name) + " = ?" }.joined(separator: ", ")
            return "UPDATE \(table.quotedTable) SET \(assignments) WHERE \(table.keyCondition)"
        case .updateByKeyIfChanged:
            // Numbered parameters: each value is bound once and read twice; the key's plain
            // `?`s number on from the last of them.
            let positions = table.columns.indices.filter(shape.contains)
            let names = positions.map { quoted(table.columns[$0].name) }
            let assignments = names.enumerated().map { "\($1) = ?\($0 + 1)" }.joined(separator: ", ")
            // COLLATE BINARY: a column's own collation (NOCASE, RTRIM, in a table another tool
            // made) would call "Bob" equal to "bob" and skip a real change. The change date
            // is not a change in itself.
            let changed = zip(positions, names).enumerated().filter { $1.0 != table.updatedPosition }
                .map { dialect.distinct($1.1, "?\($0 + 1)") + dialect.binaryCollation }.joined(separator: " OR ")
            return "UPDATE \(table.quotedTable) SET \(assignments) WHERE \(table.keyCondition) AND (\(changed.isEmpty ? "1 = 0" : changed))"
        case .upsertReturning:
            return sql(.upsert, table, shape: shape, dialect: dialect, marked: false) + " RETURNING \(table.selectList)"
                + marker(table, dialect, true)
        case .insert, .insertIfAbsent, .upsert:
            return sql(operation, table, shape: shape, dialect: dialect, marked: true)
        }
    }

    /// What the driver of a server needs to tell an inserted row from an updated one.
    private static func marker(_ table: TableDescription, _ dialect: any SQLDialect, _ returning: Bool) -> String {
        dialect.insertedMarker(returning: returning, key: table.assignsKeys ? quoted(table.keyNames[0]) : nil)
    }

    private static func sql(
        _ operation: StatementCatalog, _ table: TableDescription, shape: ColumnMask, dialect: any SQLDialect, marked: Bool
    ) -> String {
        switch operation {
        case .insert, .insertIfAbsent, .upsert:
            let positions = table.columns.indices.filter(shape.contains)
            let names = positions.map { quoted(table.columns[$0].name) }.joined(separator: ", ")
            let marks =
                operation == .upsert
                ? keyFindingValues(table, positions: positions, dialect: dialect)
                : Array(repeating: "?", count: positions.count).joined(separator: ", ")
            let insert = "INSERT INTO \(table.quotedTable) (\(names)) VALUES (\(marks))"
            let marker = marked ? marker(table, dialect, false) : ""
            switch operation {
            case .insertIfAbsent: return insert + " ON CONFLICT DO NOTHING" + marker
            case .upsert: return insert + upsertClauses(table, shape: shape, dialect: dialect) + marker
            default: return insert + marker
            }
        default:
            return sql(operation, table, shape: shape, dialect: dialect)
        }
    }

    /// One upsert of `count` rows of the columns at `positions` (each row with its key),
    /// returning one row per record it inserted or changed, with whether it inserted it: a
    /// server's batch in one round trip per chunk. A column in `coalesced` is one some rows
    /// do not carry (NULL in their tuple): a stored record keeps its value there, as the merge
    /// rule says. The rows must have distinct keys (a statement cannot change a row twice).
    ///
    /// With `returningKeys`, each returned row also carries its record's key (after the
    /// marker), so a caller can tell which rows were written.
    static func multiRowUpsert(
        _ table: TableDescription, positions: [Int], coalesced: Set<Int>, count: Int, dialect: any SQLDialect,
        returningKeys: Bool = false
    ) -> String {
        let names = positions.map { quoted(table.columns[$0].name) }.joined(separator: ", ")
        let tuple = "(" + Array(repeating: "?", count: positions.count).joined(separator: ", ") + ")"
        var sql = "INSERT INTO \(table.quotedTable) (\(names)) VALUES " + Array(repeating: tuple, count: count).joined(separator: ", ")
        let updated = positions.filter { !table.keyMask.contains($0) && $0 != table.createdPosition }
        let compared = updated.filter { $0 != table.updatedPosition }
        func proposed(_ position: Int) -> String {
            let name = quoted(table.columns[position].name)
            return coalesced.contains(position) ? "COALESCE(excluded.\(name), \(table.quotedTable).\(name))" : "excluded.\(name)"
        }
        if compared.isEmpty {
            sql += " ON CONFLICT DO NOTHING"
        } else {
            sql +=
                " ON CONFLICT (\(table.keyOrder)) DO UPDATE SET "
                + updated.map { "\(quoted(table.columns[$0].name)) = \(proposed($0))" }.joined(separator: ", ") + " WHERE "
                + compared.map { dialect.distinct(table.quotedTable + "." + quoted(table.columns[$0].name), proposed($0)) }
                .joined(separator: " OR ")
        }
        sql += dialect.insertedMarker(returning: false, key: nil)
        return returningKeys ? sql + ", " + table.keyNames.map(quoted).joined(separator: ", ") : sql
    }

    /// An upsert's VALUES: `?, ?, …`, or — where an upsert takes one conflict target (a
    /// server; SQLite before 3.35), the model carries its key and covers a unique index —
    /// numbered parameters whose key columns take the stored record's key when no record has
    /// the model's key but one holds its unique index values:
    /// `COALESCE((SELECT "id" FROM (SELECT "id" FROM "T" WHERE "email" = ?2) AS stored
    /// WHERE NOT EXISTS (SELECT 1 FROM "T" WHERE "id" = ?1) LIMIT 1), ?1)`. The insert then
    /// meets that record on the key and updates it, keeping its key: the merge SQLite's one
    /// clause per unique index does, in one statement, without a savepoint. A record with the
    /// model's key wins, as SQLite's key clause comes first; the indexes are tried in order.
    private static func keyFindingValues(_ table: TableDescription, positions: [Int], dialect: any SQLDialect) -> String {
        let shape = ColumnMask(positions)
        let covered = table.indexes.filter { $0.isUnique && $0.positions.allSatisfy(shape.contains) }
        guard !covered.isEmpty, !dialect.supportsMultipleUpsertClauses, table.keyMask.isSubset(of: shape) else {
            return Array(repeating: "?", count: positions.count).joined(separator: ", ")
        }
        func mark(_ position: Int) -> String { "?\(positions.firstIndex(of: position)! + 1)" }
        func matching(_ columns: [Int]) -> String {
            columns.map { "\(quoted(table.columns[$0].name)) = \(mark($0))" }.joined(separator: " AND ")
        }
        let absent = "NOT EXISTS (SELECT 1 FROM \(table.quotedTable) WHERE \(matching(table.keyPositions)))"
        return positions.map { position -> String in
            guard table.keyMask.contains(position) else { return mark(position) }
            let column = quoted(table.columns[position].name)
            let found = covered.map { "SELECT \(column) FROM \(table.quotedTable) WHERE \(matching($0.positions))" }
                .joined(separator: " UNION ALL ")
            return "COALESCE((SELECT \(column) FROM (\(found)) AS stored WHERE \(absent) LIMIT 1), \(mark(position)))"
        }.joined(separator: ", ")
    }

    /// `ON CONFLICT (key) DO UPDATE SET c = excluded.c, … WHERE c IS NOT excluded.c OR …`,
    /// then one clause per unique index the shape covers, so a unique index dedupes as the
    /// key does. The WHERE skips records that already hold every value: an unchanged
    /// re-import writes nothing (not even to the WAL), and the save can tell it was unchanged.
    private static func upsertClauses(_ table: TableDescription, shape: ColumnMask, dialect: any SQLDialect) -> String {
        // A stored record keeps its creation date, and its change date is not a change.
        let updated = table.columns.indices.filter { shape.contains($0) && !table.keyMask.contains($0) && $0 != table.createdPosition }
        let compared = updated.filter { $0 != table.updatedPosition }
        if !dialect.supportsMultipleUpsertClauses, !table.keyMask.isSubset(of: shape), compared.isEmpty {
            // Without the key, and nothing to update: a bare DO NOTHING would swallow a clash
            // with a key another connection took at the same moment, and report the new
            // record unchanged. Only a unique index may find the stored record.
            guard let index = table.indexes.first(where: { $0.isUnique && $0.positions.allSatisfy(shape.contains) }) else { return "" }
            return " ON CONFLICT (\(index.columns.map(quoted).joined(separator: ", "))) DO NOTHING"
        }
        guard !compared.isEmpty else { return " ON CONFLICT DO NOTHING" }
        let names = updated.map { quoted(table.columns[$0].name) }
        let action =
            " DO UPDATE SET " + names.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
            // COLLATE BINARY: see updateByKeyIfChanged; bytes decide what changed.
            + " WHERE "
            + compared.map { quoted(table.columns[$0].name) }
            // Where the stored and the proposed row's columns are alike ambiguous: name the target.
            .map {
                dialect.distinct((dialect.capabilities.qualifiedUpsertColumns ? table.quotedTable + "." : "") + $0, "excluded.\($0)")
                    + dialect.binaryCollation
            }
            .joined(separator: " OR ")
        if !dialect.supportsMultipleUpsertClauses, !table.keyMask.isSubset(of: shape) {
            // One conflict target only: without the key (a key the database
            // assigns), a unique index is what finds the stored record; with none, it is a new
            // record, and a clash with a stored key must fail, never update that record.
            guard let index = table.indexes.first(where: { $0.isUnique && $0.positions.allSatisfy(shape.contains) }) else { return "" }
            return " ON CONFLICT (\(index.columns.map(quoted).joined(separator: ", ")))" + action
        }
        var sql = " ON CONFLICT (\(table.keyOrder))" + action
        guard dialect.supportsMultipleUpsertClauses else { return sql }
        for index in table.indexes where index.isUnique && index.positions.allSatisfy(shape.contains) {
            sql += " ON CONFLICT (\(index.columns.map(quoted).joined(separator: ", ")))" + action
        }
        return sql
    }
}

extension Session {
    /// The cached statement for `operation` on `table` (of model `owner`) and `shape`.
    @inline(__always)
    func statement(
        _ operation: StatementCatalog, _ table: TableDescription, owner: ObjectIdentifier,
        shape: ColumnMask = ColumnMask()
    ) throws -> Statement {
        try connection.cachedStatement(StatementKey(owner: owner, operation: operation.rawValue, shape: shape)) {
            StatementCatalog.sql(operation, table, shape: shape, dialect: connection.dialect)
        }
    }
}

extension TableDescription {
    /// `"snackId"` or `"a", "b"`: the primary key, for ORDER BY.
    var keyOrder: String {
        keyNames.map(quoted).joined(separator: ", ")
    }
}
