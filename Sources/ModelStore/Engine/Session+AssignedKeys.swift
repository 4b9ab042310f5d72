/// Keys SQLite assigns (`var id: Int64?` saved as nil), and saves that hand back the record
/// as stored (`RETURNING`).
extension Session {
    /// Saves a row whose model has no key yet: SQLite assigns one (the rowid), which is
    /// written into the row so callers read it as the key. A unique index still finds an
    /// existing record to update, as for any upsert.
    func saveAssigningKey(_ row: RowEncoder, _ table: TableDescription, _ owner: ObjectIdentifier, mode: SaveMode) throws -> SaveOutcome {
        try saveReturning(row, table, owner, mode: mode, decode: { _ in () }).outcome
    }

    /// Upserts the row with `RETURNING` every column and hands the stored row to `decode`
    /// in the same statement; when the upsert changes nothing SQLite returns no row, and
    /// the record is read by its key instead. Keyless rows get their assigned key.
    func saveReturning<T>(
        _ row: RowEncoder, _ table: TableDescription, _ owner: ObjectIdentifier, mode: SaveMode, decode: (Statement) throws -> T
    ) throws -> (outcome: SaveOutcome, value: T?) {
        let assigning = table.assignsKeys && (row.value(at: table.keyPositions[0]) ?? .null).isNull
        var shape = row.present
        if assigning { shape.remove(table.keyPositions[0]) }
        if !assigning, !table.keyMask.isSubset(of: row.present) {
            _ = try table.key(of: row)  // throws, naming the key property the model did not write
        }
        if assigning, mode == .update {
            throw ModelStoreError(
                .invalidKey, "A \(table.modelName) without a key cannot be updated: SQLite assigns its key when it is first saved.",
                model: table.modelName, column: table.keyNames[0], value: "nil",
                suggestion: "Use save() or insert() for a new record, or set the key of the record to update.")
        }
        guard mode == .upsert else {
            // insert() and update() keep their own checks; an assigned key is read afterwards.
            let outcome = try write(keyed: row, shape: shape, assigning: assigning, table, owner, mode: mode)
            return (outcome, nil)
        }
        let advanced = assigning ? try advanceKeySequence(table) : nil
        let statement = try self.statement(.upsertReturning, table, owner: owner, shape: shape)
        defer { statement.reset() }
        try bind(row, shape: shape, to: statement, table)
        let sentinel: Int64 = .min
        connection.lastInsertRowid = sentinel
        var value: T?
        do {
            if try statement.step() {
                if assigning { row.setAssignedKey(statement.value(at: Int32(table.keyPositions[0])), at: table.keyPositions[0]) }
                value = try decode(statement)
                while try statement.step() {}
            }
        } catch let error as ModelStoreError {
            if let advanced, let conflict = assignedKeyTaken(error, table, advanced: advanced) { throw conflict }
            throw error.explainingDrift(of: table).naming(model: table.modelName)
        }
        guard connection.changes > 0 else {
            // Nothing changed, so nothing was returned: the record exists as it is.
            if assigning { try findKey(byUniqueValuesOf: row, table) }
            return (.unchanged, nil)
        }
        return (connection.lastInsertRowid != sentinel ? .inserted : .updated, value)
    }

    /// `insert()` of a keyless row: SQLite assigns the key.
    private func write(
        keyed row: RowEncoder, shape: ColumnMask, assigning: Bool, _ table: TableDescription, _ owner: ObjectIdentifier, mode: SaveMode
    ) throws -> SaveOutcome {
        guard assigning else { return try write(row, into: table, owner: owner, mode: mode) }
        try advanceKeySequence(table)
        let statement = try self.statement(.insertIfAbsent, table, owner: owner, shape: shape)
        defer { statement.reset() }
        try bind(row, shape: shape, to: statement, table)
        _ = try statement.step()
        guard connection.changes > 0 else {
            throw ModelStoreError(
                .alreadyExists, "A \(table.modelName) record with the same unique index values already exists.",
                model: table.modelName, suggestion: "Use save() to update it.")
        }
        row.setAssignedKey(.integer(connection.lastInsertRowid), at: table.keyPositions[0])
        return .inserted
    }

    /// Where keys come from a sequence, moves it past every stored key: records saved with
    /// keys of their own do not move it, and the next assigned key must not be one of theirs.
    /// (SQLite's rowid takes the largest key plus one by itself.) Returns where it set the
    /// sequence; nil when the key has no sequence of its own, or the database needs none.
    @discardableResult
    private func advanceKeySequence(_ table: TableDescription) throws -> SQLValue? {
        guard let sql = connection.dialect.advanceKeySequenceSQL(table: table.quotedTable, key: quoted(table.keyNames[0])) else {
            return nil
        }
        let position = try connection.scalar(sql, [.text(table.quotedTable), .text(table.keyNames[0])])
        return position?.isNull == false ? position : nil
    }

    /// The key a sequence just assigned (after `advanced`, where this save set it) was taken by
    /// a record another connection saved with that key of its own, which committed while this
    /// insert waited for it: the sequence had been moved past every key this transaction could
    /// see, so it is a race, not a stored key. Running the call again moves the sequence past
    /// that record too, so it fails as a conflict the store retries, as a serialization failure
    /// does — never as a refusal of a record that clashes with nothing. Only the table's own
    /// primary key, named by the server's error fields, counts; and the same clash twice
    /// (a sequence that cycles, or one set back) is no race: its error is thrown as it is.
    /// (SQLite's rowid cannot be taken.) Nil when `error` is not such a clash.
    private func assignedKeyTaken(_ error: ModelStoreError, _ table: TableDescription, advanced: SQLValue) -> ModelStoreError? {
        guard let violated = error.violatedUniqueConstraint, violated.table == table.tableName,
            connection.dialect.isPrimaryKeyConstraint(violated.constraint, of: table.tableName)
        else { return nil }
        let clash = table.tableName + "\u{0}" + advanced.description
        guard connection.lastAssignedKeyClash != clash else { return nil }
        connection.lastAssignedKeyClash = clash
        return ModelStoreError.backend(
            .busy,
            "The key the database assigned to a new \(table.modelName) was taken at the same moment by a record another connection saved with that key; the call was rolled back, and the store runs it again with the next free key until its busy timeout.",
            message: error.sqliteMessage ?? error.message, state: error.serverState, sql: error.sql, column: table.keyNames[0],
            retryable: true, model: table.modelName,
            suggestion: "Run the call again later, or save such records with keys of their own.")
    }

    private func bind(_ row: RowEncoder, shape: ColumnMask, to statement: Statement, _ table: TableDescription) throws {
        var index: Int32 = 1
        for position in 0..<table.columns.count where shape.contains(position) {
            try statement.bind(row.presentValue(at: position), at: index)
            index += 1
        }
    }

    /// The key of the record a keyless row matched through a unique index, written into the row.
    private func findKey(byUniqueValuesOf row: RowEncoder, _ table: TableDescription) throws {
        for index in table.indexes where index.isUnique {
            let positions = index.columns.compactMap { table.layout.position(of: $0) }
            guard positions.count == index.columns.count, positions.allSatisfy({ row.value(at: $0) != nil }) else { continue }
            let condition = positions.map { quoted(table.columns[$0].name) + " = ?" }.joined(separator: " AND ")
            if let key = try connection.scalar(
                "SELECT \(quoted(table.keyNames[0])) FROM \(table.quotedTable) WHERE \(condition)",
                positions.map { row.presentValue(at: $0) })
            {
                row.setAssignedKey(key, at: table.keyPositions[0])
                return
            }
        }
    }
}
