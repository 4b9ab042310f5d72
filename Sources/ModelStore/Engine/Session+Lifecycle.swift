import Foundation

/// Which lifecycle callbacks a model type has, and how its saves begin their transaction,
/// looked up once per type: a batch asks for every element, and a conformance lookup (or the
/// key path a declaration's check makes) costs more than the rest of a small write.
enum ModelCallbacks {
    private struct Facts: Sendable {
        let save: Bool
        let delete: Bool
        let saveIsolation: WriteIsolation
    }

    private static let known = Locked<[ObjectIdentifier: Facts]>([:])

    private static func facts<M: StoredModel>(_ type: M.Type) -> Facts {
        let id = ObjectIdentifier(type)
        if let found = known.withLock({ $0[id] }) { return found }
        let save = type is any SaveCallbacks.Type
        // See `StoredModel.saveIsolation`.
        let upserts = !save && type.relationships.isEmpty && type.timestamps.updated == nil && !type.indexes.contains { $0.isUnique }
        let found = Facts(save: save, delete: type is any DeleteCallbacks.Type, saveIsolation: upserts ? .upserts : .serializable)
        known.withLock { $0[id] = found }
        return found
    }

    static func of<M: StoredModel>(_ type: M.Type) -> (save: Bool, delete: Bool) {
        let found = facts(type)
        return (found.save, found.delete)
    }

    static func saveIsolation<M: StoredModel>(_ type: M.Type) -> WriteIsolation {
        facts(type).saveIsolation
    }
}

extension Session {
    /// Encodes `model` into `row` for writing: validated, stamped with the transaction's
    /// date (`Timestamps`), and — when the type has save callbacks — announced with
    /// `willSave`. Every path that writes a model's values comes through here, so none can
    /// skip a step.
    func encodeForWriting<M: StoredModel>(_ model: M, into row: RowEncoder, _ table: TableDescription, callbacks: Bool) throws {
        try row.encode(model)
        try prepareForWriting(model, into: row, table, callbacks: callbacks)
    }

    /// The steps of `encodeForWriting` after encoding, for a graph save, which encodes a
    /// model before it knows whether its values will be written (a reference's are not).
    func prepareForWriting<M: StoredModel>(_ model: M, into row: RowEncoder, _ table: TableDescription, callbacks: Bool) throws {
        if !connection.capabilities.textHoldsNUL {
            for (position, column) in table.columns.enumerated() {
                guard let value = row.value(at: position) else { continue }
                try QueryCompiler.refuseNUL(
                    in: [value], model: table.modelName, column: column.name, code: .encodingFailed, backend: connection.dialect.name)
            }
        }
        do {
            try model.validate()
        } catch {
            throw Self.failure(.validationFailed, error, doing: "is not valid", table, row)
        }
        if let position = table.createdPosition {
            // An optional creation date the model carries is kept (an import brings its own).
            if !table.columns[position].isOptional || (row.value(at: position) ?? .null).isNull {
                row.set(try stamp(table, position), at: position)
            }
        }
        if let position = table.updatedPosition {
            row.set(try stamp(table, position), at: position)
        }
        if callbacks {
            do {
                try (model as! any SaveCallbacks).willSave(in: store)
            } catch {
                throw Self.failure(.callbackFailed, error, doing: "was refused by willSave", table, row)
            }
        }
    }

    /// The transaction's date as the column at `position` stores it (its declared form, if
    /// any): set as a value, not encoded per row, since a batch stamps every row alike.
    private func stamp(_ table: TableDescription, _ position: Int) throws -> SQLValue {
        let date = connection.transactionDate
        let column = table.columns[position]
        guard table.layout.hasDeclaredForms, let format = table.layout.format(of: column.name) else { return try date.sqlValue }
        // A declared form may hold less than a Date does (ISO 8601: milliseconds; Unix
        // seconds: whole seconds): the stamp is the transaction's date cut to what it holds.
        let seconds = date.timeIntervalSince1970
        for cut in [
            date, Date(timeIntervalSince1970: (seconds * 1000).rounded(.down) / 1000), Date(timeIntervalSince1970: seconds.rounded(.down)),
        ] {
            if let stored = try? format.store(try cut.sqlValue, code: .encodingFailed, model: table.modelName, column: column.name) {
                return stored
            }
        }
        return try format.store(try date.sqlValue, code: .encodingFailed, model: table.modelName, column: column.name)
    }

    /// Runs `didSave` after `model`'s record was written.
    func didSave<M: StoredModel>(_ model: M, outcome: SaveOutcome, _ table: TableDescription, _ row: RowEncoder) throws {
        do {
            try (model as! any SaveCallbacks).didSave(in: store, outcome: outcome)
        } catch {
            throw Self.failure(.callbackFailed, error, doing: "failed in didSave", table, row)
        }
    }

    /// A model's own error as ModelStore reports it, naming the model, its key and — for a
    /// `ValidationError` — the property; a `ModelStoreError` (a store call inside a
    /// callback) passes through as it is.
    static func failure(
        _ code: ModelStoreError.Code, _ error: any Error, doing: String, _ table: TableDescription, _ row: RowEncoder
    ) -> ModelStoreError {
        // A store call inside a callback failed: its own error says more. A validate() that
        // throws a ModelStoreError is still a refusal of the model.
        if code == .callbackFailed, let error = error as? ModelStoreError { return error }
        let key = (try? table.key(of: row)).map { table.describeKey($0) }
        let property = (error as? ValidationError)?.property
        var failure = ModelStoreError(
            code,
            "\(table.modelName)\(key.map { " (\($0))" } ?? "") \(doing): \(error). Nothing of the call was written.",
            model: table.modelName, column: property, key: key)
        failure.underlying = error
        return failure
    }

    /// Deletes exactly the records of `M` that `condition` selects now, calling `willDelete`
    /// and `didDelete` for each; nil when `M` has no delete callbacks (the caller deletes by
    /// its condition). The records are read first and deleted by their keys, so a callback
    /// that adds, changes or deletes records of `M` cannot make the delete take another set
    /// than the one the callbacks saw.
    func deleteWithCallbacks<M: StoredModel>(_ type: M.Type, _ table: TableDescription, where condition: SQLFragment) throws -> Int? {
        guard ModelCallbacks.of(type).delete else { return nil }
        let select = SQLFragment("SELECT \(table.selectList) FROM \(table.quotedTable) WHERE ") + condition
        let statement = try connection.cachedStatement(select.sql)
        try statement.bind(select.values)
        let doomed = try decodeAll(type, from: statement, table: table)
        let row = RowEncoder(layout: table.layout)
        var keys: [[SQLValue]] = []
        for model in doomed {
            try row.encode(model)
            keys.append(try table.key(of: row))
        }
        return try withDeleteCallbacks(doomed) { try deleteRecords(table, keys: keys) }
    }

    /// Deletes the records with `keys`, a few hundred per statement; returns how many went.
    func deleteRecords(_ table: TableDescription, keys: [[SQLValue]]) throws -> Int {
        var deleted = 0
        let columns = "(" + table.keyNames.map(quoted).joined(separator: ", ") + ")"
        let width = table.keyNames.count
        let perStatement = max(1, 500 / width)
        for start in stride(from: 0, to: keys.count, by: perStatement) {
            let chunk = keys[start..<min(keys.count, start + perStatement)]
            let tuple = "(" + Array(repeating: "?", count: width).joined(separator: ", ") + ")"
            let sql =
                "DELETE FROM \(table.quotedTable) WHERE \(columns) IN (VALUES \(Array(repeating: tuple, count: chunk.count).joined(separator: ", ")))"
            try connection.cachedStatement(sql).execute(chunk.flatMap { $0 })
            deleted += connection.changes
        }
        return deleted
    }

    /// Runs `body`, which deletes the records of `M` that `condition` selects (SQL over `M`'s
    /// table, no `WHERE`), with `willDelete` before and `didDelete` after for each of them
    /// when `M` has delete callbacks: they are read first, as the callbacks need them. The
    /// condition must select the same records after the callbacks ran (a fixed list of keys).
    func withDeleteCallbacks<M: StoredModel>(
        _ type: M.Type, _ table: TableDescription, where condition: SQLFragment, _ body: () throws -> Int
    ) throws -> Int {
        guard ModelCallbacks.of(type).delete else { return try body() }
        let select = SQLFragment("SELECT \(table.selectList) FROM \(table.quotedTable) WHERE ") + condition
        let statement = try connection.cachedStatement(select.sql)
        try statement.bind(select.values)
        return try withDeleteCallbacks(try decodeAll(type, from: statement, table: table), body)
    }

    /// `willDelete` for each of `doomed`, then `body`, then `didDelete` for each.
    private func withDeleteCallbacks<M: StoredModel>(_ doomed: [M], _ body: () throws -> Int) throws -> Int {
        let callbacks = doomed.map { $0 as! any DeleteCallbacks }
        func failure(_ error: any Error, _ doing: String) -> ModelStoreError {
            if let error = error as? ModelStoreError { return error }
            var failure = ModelStoreError(
                .callbackFailed, "\(M.self) \(doing): \(error). Nothing of the call was written.", model: String(describing: M.self))
            failure.underlying = error
            return failure
        }
        for model in callbacks {
            do { try model.willDelete(in: store) } catch { throw failure(error, "was refused by willDelete") }
        }
        let count = try body()
        for model in callbacks {
            do { try model.didDelete(in: store) } catch { throw failure(error, "failed in didDelete") }
        }
        return count
    }
}
