/// How a save treats a record that does or does not exist.
enum SaveMode: Sendable {
    /// Update the record with the model's key, else insert it.
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
}

extension Session {
    /// Saves one model by the merge rule: the properties it carries are written, nil
    /// optionals leave stored values alone, and `clearing` names optionals to set to NULL.
    func save<M: StoredModel>(_ model: M, mode: SaveMode, clearing: [String] = []) throws -> SaveOutcome {
        let table = try table(M.self)
        let encoder = RowEncoder(layout: table.layout)
        try encoder.encode(model)
        for name in clearing {
            try encoder.setNull(at: table.clearablePosition(name, carried: encoder))
        }
        return try write(encoder, into: table, owner: ObjectIdentifier(M.self), mode: mode)
    }

    /// Writes the encoder's current row. UPDATE first, INSERT when nothing matched: two
    /// statements at most, no lookup, and the outcome is exact.
    func write(
        _ row: RowEncoder, into table: TableDescription, owner: ObjectIdentifier, mode: SaveMode
    ) throws -> SaveOutcome {
        var key: [SQLValue] = []
        key.reserveCapacity(table.keyPositions.count)
        for position in table.keyPositions {
            guard let value = row.value(at: position) else {
                throw ModelStoreError(
                    .encodingFailed,
                    "\(table.modelName).encode(to:) did not write the key property '\(table.columns[position].name)'.",
                    model: table.modelName, column: table.columns[position].name)
            }
            key.append(value)
        }
        var updated = row.present
        for position in table.keyPositions { updated.remove(position) }

        do {
            switch mode {
            case .upsert:
                if !updated.isEmpty {
                    if try update(row, updated, key, table, owner) { return .updated }
                    try insert(row, table, owner, ifAbsent: false)
                    return .inserted
                }
                // Only the key is carried: insert it unless it is already there.
                return try insert(row, table, owner, ifAbsent: true) ? .inserted : .updated
            case .insert:
                guard try insert(row, table, owner, ifAbsent: true) else {
                    throw ModelStoreError(
                        .alreadyExists, "A \(table.modelName) record with key \(table.describeKey(key)) already exists.",
                        model: table.modelName, key: table.describeKey(key),
                        suggestion: "Use save() to update it, or update() to require that it exists.")
                }
                return .inserted
            case .update:
                let found = updated.isEmpty ? try exists(table, owner, key) : try update(row, updated, key, table, owner)
                guard found else {
                    throw ModelStoreError(
                        .notFound, "No \(table.modelName) record has key \(table.describeKey(key)); nothing was updated.",
                        model: table.modelName, key: table.describeKey(key),
                        suggestion: "Use save() to insert it when it is missing.")
                }
                return .updated
            }
        } catch var error as ModelStoreError {
            error.model = error.model ?? table.modelName
            error.key = error.key ?? table.describeKey(key)
            throw error
        }
    }

    /// Returns whether a record matched.
    private func update(
        _ row: RowEncoder, _ shape: ColumnMask, _ key: [SQLValue], _ table: TableDescription, _ owner: ObjectIdentifier
    ) throws -> Bool {
        let statement = try statement(.updateByKey, table, owner: owner, shape: shape)
        defer { statement.reset() }
        var index: Int32 = 1
        for position in 0..<table.columns.count where shape.contains(position) {
            try statement.bind(row.values[position], at: index)
            index += 1
        }
        for value in key {
            try statement.bind(value, at: index)
            index += 1
        }
        _ = try statement.step()
        return connection.changes > 0
    }

    /// Returns whether a record was inserted (false only when `ifAbsent` and the key exists).
    @discardableResult
    private func insert(_ row: RowEncoder, _ table: TableDescription, _ owner: ObjectIdentifier, ifAbsent: Bool) throws -> Bool {
        let statement = try statement(ifAbsent ? .insertIfAbsent : .insert, table, owner: owner, shape: row.present)
        defer { statement.reset() }
        var index: Int32 = 1
        for position in 0..<table.columns.count where row.present.contains(position) {
            try statement.bind(row.values[position], at: index)
            index += 1
        }
        _ = try statement.step()
        return connection.changes > 0
    }

    func exists(_ table: TableDescription, _ owner: ObjectIdentifier, _ key: [SQLValue]) throws -> Bool {
        let statement = try statement(.existsByKey, table, owner: owner)
        defer { statement.reset() }
        try statement.bind(key)
        return try statement.step()
    }
}

extension TableDescription {
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
