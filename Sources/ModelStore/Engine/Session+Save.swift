/// How a save treats a record that does or does not exist.
enum SaveMode: Sendable {
    /// Update the record with the model's key (or unique index values), else insert it.
    case upsert
    /// Insert; fail with `.alreadyExists` when the key is taken.
    case insert
    /// Update; fail with `.notFound` when no record has the key.
    case update
}

/// What a save did.
public enum SaveOutcome: Sendable, Equatable {
    /// No record had the model's key; a new record was stored.
    case inserted
    /// A record had the model's key; the properties the model carries were written to it.
    case updated
    /// A record had the model's key and already held every value the model carries, so
    /// nothing was written (an upsert only; `update()` always reports `.updated`).
    case unchanged
}

extension Session {
    /// Saves one model's own record by the merge rule: the properties it carries are written,
    /// nil optionals leave stored values alone, and `clearing` names optionals to set to NULL.
    /// The plain path: whether the model has relationships is decided above (`Operations/`).
    func saveRecord<M: StoredModel>(_ model: M, into table: TableDescription, mode: SaveMode, clearing: [String] = []) throws
        -> SaveOutcome
    {
        let row = RowEncoder(layout: table.layout)
        let callbacks = ModelCallbacks.of(M.self).save
        try encodeForWriting(model, into: row, table, callbacks: callbacks)
        for name in clearing {
            row.setNull(at: try table.clearablePosition(name, carried: row))
        }
        let outcome = try write(row, into: table, owner: ObjectIdentifier(M.self), mode: mode)
        if callbacks { try didSave(model, outcome: outcome, table, row) }
        return outcome
    }

    /// The key of `model`'s record.
    func key<M: StoredModel>(of model: M, in table: TableDescription) throws -> [SQLValue] {
        let row = RowEncoder(layout: table.layout)
        try row.encode(model)
        return try table.key(of: row)
    }

    /// Writes the encoder's current row.
    func write(_ row: RowEncoder, into table: TableDescription, owner: ObjectIdentifier, mode: SaveMode) throws -> SaveOutcome {
        if table.assignsKeys, (row.value(at: table.keyPositions[0]) ?? .null).isNull {
            return try saveAssigningKey(row, table, owner, mode: mode)
        }
        let key = try table.key(of: row)
        do {
            switch mode {
            case .upsert:
                var reuse: (shape: ColumnMask, statement: Statement)?
                return try upsert(row, table, owner, reuse: &reuse)
            case .insert:
                guard try insertIfAbsent(row, table, owner) else {
                    throw ModelStoreError(
                        .alreadyExists,
                        "A \(table.modelName) record with key \(table.describeKey(key))"
                            + (table.indexes.contains(where: \.isUnique) ? " (or with the same unique index values)" : "")
                            + " already exists.",
                        model: table.modelName, key: table.describeKey(key),
                        suggestion: "Use save() to update it, or update() to require that it exists.")
                }
                return .inserted
            case .update:
                let updated = table.updatable(row.present)
                let found =
                    !table.changesSomething(updated)
                    ? try exists(table, owner, key) : try update(row, columns: updated, key: key, table, owner)
                guard found else {
                    throw ModelStoreError(
                        .notFound, "No \(table.modelName) record has key \(table.describeKey(key)); nothing was updated.",
                        model: table.modelName, key: table.describeKey(key),
                        suggestion: "Use save() to insert it when it is missing.")
                }
                return .updated
            }
        } catch let error as ModelStoreError {
            throw error.explainingDrift(of: table).naming(model: table.modelName, key: table.describeKey(key))
        }
    }

    /// One `INSERT … ON CONFLICT DO UPDATE … WHERE changed`: no lookup, and the outcome is
    /// exact, because the update branch leaves `last_insert_rowid` as it was and a skipped
    /// update changes no row.
    ///
    /// `reuse` carries a batch's last statement and its shape: consecutive elements nearly
    /// always share one, and comparing masks is cheaper than hashing a cache key.
    @inline(__always)
    func upsert(
        _ row: RowEncoder, _ table: TableDescription, _ owner: ObjectIdentifier,
        reuse: inout (shape: ColumnMask, statement: Statement)?
    ) throws -> SaveOutcome {
        if table.assignsKeys, (row.value(at: table.keyPositions[0]) ?? .null).isNull {
            return try saveAssigningKey(row, table, owner, mode: .upsert)
        }
        if !table.keyMask.isSubset(of: row.present) {
            _ = try table.key(of: row)  // throws, naming the key property the model did not write
        }
        let statement: Statement
        if let reused = reuse, reused.shape == row.present {
            statement = reused.statement
        } else {
            statement = try self.statement(.upsert, table, owner: owner, shape: row.present)
            reuse = (row.present, statement)
        }
        defer { statement.reset() }
        try bindPresent(row, to: statement, table)
        // A value no insert here can produce: an integer key inserts its own value as rowid,
        // and SQLite never picks a negative rowid by itself.
        let sentinel: Int64 = table.hasIntegerKey && row.presentValue(at: table.keyPositions[0]) == .integer(.min) ? 0 : .min
        connection.lastInsertRowid = sentinel
        _ = try statement.step()
        // No change: the key existed and the record already held every value.
        guard connection.changes > 0 else { return .unchanged }
        return connection.lastInsertRowid != sentinel ? .inserted : .updated
    }

    /// Returns whether a record matched (with `onlyIfChanged`, whether one changed).
    func update(
        _ row: RowEncoder, columns: ColumnMask, key: [SQLValue], _ table: TableDescription, _ owner: ObjectIdentifier,
        onlyIfChanged: Bool = false
    ) throws -> Bool {
        let statement = try statement(onlyIfChanged ? .updateByKeyIfChanged : .updateByKey, table, owner: owner, shape: columns)
        defer { statement.reset() }
        var index: Int32 = 1
        for position in 0..<table.columns.count where columns.contains(position) {
            try statement.bind(row.presentValue(at: position), at: index)
            index += 1
        }
        for value in key {
            try statement.bind(value, at: index)
            index += 1
        }
        _ = try statement.step()
        return connection.changes > 0
    }

    /// Returns whether a record was inserted (false when the key or a unique value exists).
    func insertIfAbsent(_ row: RowEncoder, _ table: TableDescription, _ owner: ObjectIdentifier) throws -> Bool {
        let statement = try statement(.insertIfAbsent, table, owner: owner, shape: row.present)
        defer { statement.reset() }
        try bindPresent(row, to: statement, table)
        _ = try statement.step()
        return connection.changes > 0
    }

    /// Inserts the row of a model that matched no record (`save(matching:)`, `MatchKeys`
    /// batches): under its own key, as `insert()` does. A key — or unique index values —
    /// another record holds is `.alreadyExists` naming it, never SQLite's bare constraint
    /// failure; nothing is written.
    func insertUnmatched(_ row: RowEncoder, _ table: TableDescription, _ owner: ObjectIdentifier) throws {
        if table.assignsKeys, (row.value(at: table.keyPositions[0]) ?? .null).isNull {
            // The database picks a free key — past those saved with keys of their own — and
            // the row gets it, as insert() does.
            _ = try saveAssigningKey(row, table, owner, mode: .insert)
            return
        }
        guard try insertIfAbsent(row, table, owner) else {
            let key = table.describeKey(try table.key(of: row))
            throw ModelStoreError(
                .alreadyExists,
                "No \(table.modelName) record matches, so the model is inserted under its own key, and a record with key \(key)"
                    + (table.indexes.contains(where: \.isUnique) ? " (or with the same unique index values)" : "")
                    + " already exists.",
                model: table.modelName, key: key,
                suggestion: "Give the model a key no record has (nil, when the database assigns keys), or match the record that has it.")
        }
    }

    /// Inserts the row; a taken key is a constraint error.
    func insert(_ row: RowEncoder, _ table: TableDescription, _ owner: ObjectIdentifier) throws {
        let statement = try statement(.insert, table, owner: owner, shape: row.present)
        defer { statement.reset() }
        try bindPresent(row, to: statement, table)
        _ = try statement.step()
    }

    @inline(__always)
    private func bindPresent(_ row: RowEncoder, to statement: Statement, _ table: TableDescription) throws {
        let present = row.present
        var textBytes = 0
        for position in 0..<table.columns.count where present.contains(position) {
            if case .text(let text) = row.presentValue(at: position) { textBytes += text.utf8.count }
        }
        let arena = connection.textArena
        arena.begin(reserving: textBytes)
        var index: Int32 = 1
        for position in 0..<table.columns.count where present.contains(position) {
            try statement.bind(row.presentValue(at: position), at: index, arena: arena)
            index += 1
        }
    }

    func exists(_ table: TableDescription, _ owner: ObjectIdentifier, _ key: [SQLValue]) throws -> Bool {
        let statement = try statement(.existsByKey, table, owner: owner)
        defer { statement.reset() }
        try statement.bind(key)
        return try statement.step()
    }
}

extension SaveOutcome {
    /// A graph save whose root record was unchanged but which wrote related records or links
    /// did change something: it reports `.updated`, never "nothing was written".
    @inline(__always)
    func counting(related wroteSomething: Bool) -> SaveOutcome {
        self == .unchanged && wroteSomething ? .updated : self
    }
}

extension TableDescription {
    /// The key values the encoder's row carries, in `primaryKey` order.
    func key(of row: RowEncoder) throws -> [SQLValue] {
        var key: [SQLValue] = []
        key.reserveCapacity(keyPositions.count)
        for position in keyPositions {
            guard let value = row.value(at: position) else {
                throw ModelStoreError(
                    .encodingFailed, "\(modelName).encode(to:) did not write the key property '\(columns[position].name)'.",
                    model: modelName, column: columns[position].name)
            }
            key.append(value)
        }
        return key
    }

    /// The position of a property a save may set to NULL, with the reasons it may not.
    func clearablePosition(_ name: String, carried row: RowEncoder) throws -> Int {
        guard let position = layout.position(of: name) else {
            throw ModelStoreError(
                .invalidQuery, "\(modelName) has no stored property '\(name)' to clear.", model: modelName, column: name)
        }
        let column = columns[position]
        guard !keyMask.contains(position) else {
            throw ModelStoreError(
                .invalidQuery, "\(modelName).\(name) is part of the primary key and cannot be cleared.",
                model: modelName, column: name)
        }
        guard column.isOptional else {
            throw ModelStoreError(
                .invalidQuery, "\(modelName).\(name) is not Optional, so it cannot be cleared to NULL.",
                model: modelName, column: name)
        }
        if let value = row.value(at: position), !value.isNull {
            throw ModelStoreError(
                .invalidQuery, "\(modelName).\(name) is listed to be cleared, but the model carries the value \(value) for it.",
                model: modelName, column: name, value: value.description,
                suggestion: "Set the property to nil, or do not list it in clearing:.")
        }
        return position
    }
}

extension ModelStoreError {
    /// The error with the cause spelled out when the stored table has drifted from the model:
    /// a NOT NULL column the model no longer has refuses every insert, and the database's own
    /// message names neither the model nor the way out. SQLite names the column in its
    /// message; a server in the error's column, with SQLSTATE 23502 (not-null violation).
    func explainingDrift(of table: TableDescription) -> ModelStoreError {
        guard code == .constraintViolation, let sqliteMessage else { return self }
        let column: String
        let prefix = "NOT NULL constraint failed: \(table.tableName)."
        if serverState == "23502", let named = self.column {
            column = named
        } else if sqliteMessage.hasPrefix(prefix) {
            column = String(sqliteMessage.dropFirst(prefix.count))
        } else {
            return self
        }
        guard table.layout.position(of: column) == nil else { return self }
        var error = self
        error.code = .schemaMismatch
        error.column = column
        error.message =
            "The table \(table.tableName) has a NOT NULL column \(column) that the model \(table.modelName) does not have, so the model cannot be saved; nothing was written."
        let others = TableDescription.otherModels(declaring: column, inTable: table.tableName, except: table.modelID)
        guard others.isEmpty else {
            // The column is another model's: dropping it would break that model.
            let names = others.joined(separator: ", ")
            error.message +=
                " \(names) — another model of this program — declares \(column) in the table \(table.tableName) too: two models store their records in one table."
            error.suggestion =
                "Give \(table.modelName) or \(names) its own tableName, so each model has a table of its own, or add the property \(column) to \(table.modelName)."
            return error
        }
        error.suggestion =
            "Add the property \(column) back to \(table.modelName), or migrate the table: copy what \(column) holds if you need it, then ALTER TABLE \(quoted(table.tableName)) DROP COLUMN \(quoted(column))."
        return error
    }
}
