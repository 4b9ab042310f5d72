/// The name `BatchSaveOutcome` had before it was named after `SaveOutcome`, which it counts.
@available(*, deprecated, renamed: "BatchSaveOutcome")
public typealias BatchSaveResult = BatchSaveOutcome

/// What a batch save did: how many of each `SaveOutcome` its records had.
public struct BatchSaveOutcome: Sendable, Equatable {
    /// Records that did not exist before and were inserted (related records included).
    public var inserted: Int
    /// Elements written to a record that already existed, or that an earlier element of the
    /// same batch had inserted.
    public var updated: Int
    /// Elements whose record already held every value they carry: nothing was written.
    public var unchanged: Int
    /// The keys SQLite assigned to the elements saved without one (`var id: Int64?` left
    /// nil), in the order of those elements; empty for models whose keys are their own.
    public var assignedKeys: [Int64] = []
    // Related records a graph batch saves count as well, once for each element whose graph
    // carries them: `inserted` is then every record the batch created.

    /// Creates a result.
    public init(inserted: Int, updated: Int, unchanged: Int = 0) {
        self.inserted = inserted
        self.updated = updated
        self.unchanged = unchanged
    }

    /// Records the key of an element whose key SQLite assigned (`row` was keyless before).
    mutating func noteAssignedKey(of row: RowEncoder, _ table: TableDescription) throws {
        guard row.assignedKey, case .integer(let key)? = row.value(at: table.keyPositions[0]) else { return }
        assignedKeys.append(key)
    }

    mutating func count(_ outcome: SaveOutcome) {
        switch outcome {
        case .inserted: inserted += 1
        case .updated: updated += 1
        case .unchanged: unchanged += 1
        }
    }
}

extension Session {
    /// Upserts every model's own record in array order, one reused statement per shape,
    /// inside the caller's transaction; elements with the same key merge, later over earlier.
    func saveRecords<M: StoredModel>(_ models: [M], into table: TableDescription) throws -> BatchSaveOutcome {
        let owner = ObjectIdentifier(M.self)
        if connection.capabilities.rowLocksInKeyOrder, models.count > 1, !table.assignsKeys, !ModelCallbacks.of(M.self).save {
            // A unique index merges saves as the key does. Where an upsert takes one conflict
            // target, a batch that clashes on one (with a stored record, or between its own
            // elements) is undone and written one by one, where each upsert's statement finds
            // the record an index holds (`StatementCatalog.keyFindingValues`).
            guard table.hasUniqueIndex, !connection.dialect.supportsMultipleUpsertClauses else {
                return try saveRecordsInKeyOrder(models, into: table, owner: owner)
            }
            do {
                return try connection.withSavepoint { try saveRecordsInKeyOrder(models, into: table, owner: owner) }
            } catch let error as ModelStoreError where error.code == .constraintViolation {}
        }
        let row = RowEncoder(layout: table.layout)
        var result = BatchSaveOutcome(inserted: 0, updated: 0)
        var reuse: (shape: ColumnMask, statement: Statement)?
        let callbacks = ModelCallbacks.of(M.self).save
        // A buffer pointer, not `enumerated()`: this generic code is not specialized for the
        // model type, and the sequence machinery would look up metadata on every element.
        try models.withUnsafeBufferPointer { buffer in
            for offset in 0..<buffer.count {
                do {
                    try encodeForWriting(buffer[offset], into: row, table, callbacks: callbacks)
                    let outcome = try upsert(row, table, owner, reuse: &reuse)
                    result.count(outcome)
                    if callbacks { try didSave(buffer[offset], outcome: outcome, table, row) }
                    if table.assignsKeys { try result.noteAssignedKey(of: row, table) }
                } catch let error as ModelStoreError {
                    throw error.inBatch(at: offset, of: models.count, table: table, key: try? table.key(of: row))
                }
            }
        }
        return result
    }

    /// `saveRecords` on a server: the rows are written in key order (a stable sort, so a later
    /// element with the same key still merges over an earlier one). Two batches taking their
    /// row locks in one order cannot deadlock each other, whatever order their callers used.
    private func saveRecordsInKeyOrder<M: StoredModel>(_ models: [M], into table: TableDescription, owner: ObjectIdentifier) throws
        -> BatchSaveOutcome
    {
        let row = RowEncoder(layout: table.layout)
        var rows: [(values: [SQLValue], present: ColumnMask, offset: Int)] = []
        rows.reserveCapacity(models.count)
        for (offset, model) in models.enumerated() {
            do {
                try encodeForWriting(model, into: row, table, callbacks: false)
                rows.append((row.values, row.present, offset))
            } catch let error as ModelStoreError {
                throw error.inBatch(at: offset, of: models.count, table: table, key: try? table.key(of: row))
            }
        }
        return try upsertRowsInKeyOrder(&rows, into: table, owner: owner) { error, offset, key in
            error.inBatch(at: offset, of: models.count, table: table, key: key)
        }
    }

    /// Encoded rows upserted in key order, in multi-row statements where their shapes allow:
    /// the writing half of `saveRecordsInKeyOrder`, which a graph save also uses for the
    /// related records of a to-many. `failure` names the row (by its `offset`) in an error;
    /// `outcome`, when given, hears what happened to each row (by its `offset`), in the order
    /// the rows were written (only where `insertedMarker` returns rows: a server).
    func upsertRowsInKeyOrder(
        _ rows: inout [(values: [SQLValue], present: ColumnMask, offset: Int)], into table: TableDescription,
        owner: ObjectIdentifier, failure: (ModelStoreError, _ offset: Int, _ key: [SQLValue]?) -> ModelStoreError,
        outcome: ((_ offset: Int, SaveOutcome) -> Void)? = nil
    ) throws -> BatchSaveOutcome {
        let row = RowEncoder(layout: table.layout)
        let keys = table.keyPositions
        rows.sort { left, right in
            for position in keys {
                let order = Self.order(left.values[position], right.values[position])
                if order != 0 { return order < 0 }
            }
            return left.offset < right.offset
        }
        var result = BatchSaveOutcome(inserted: 0, updated: 0)
        var reuse: (shape: ColumnMask, statement: Statement)?
        var start = 0
        let columnCount = table.columns.count
        // A batch of several rows runs in a savepoint: one statement writes a chunk of rows,
        // and a value it refuses ends a server's transaction until it rolls back to a
        // savepoint; the failed chunk's rows are then written one at a time to name the
        // element that holds the value.
        var failedChunk: (rows: Range<Int>, error: ModelStoreError)?
        // A column with a DEFAULT (in a table another tool made) is carried by every row of a
        // chunk or by none: a row that leaves it out must get the DEFAULT, which one statement
        // for rows that carry it cannot give. Unknown tables are taken to have defaults.
        let defaults = connection.columnsWithDefaults[table.tableName]
        let hasDefault = table.columns.map { defaults?.contains($0.name.lowercased()) ?? true }
        func writeChunks() throws {
            while start < rows.count {
                // A chunk: rows in key order, each with its key, no key twice (a repeated key
                // starts the next chunk, so it merges over the first as in order). Rows may lack
                // optional properties others carry (nil: the stored value stays) but never then
                // clear one explicitly: one statement cannot tell the two NULLs apart.
                var carried = (0..<columnCount).map { rows[start].present.contains($0) }
                var always = carried
                var cleared = (0..<columnCount).map { carried[$0] && rows[start].values[$0].isNull }
                var end = start + 1
                if table.keyMask.isSubset(of: rows[start].present) {
                    extending: while end < rows.count, end - start < Self.serverChunkRows {
                        let next = rows[end]
                        guard table.keyMask.isSubset(of: next.present),
                            keys.contains(where: { Self.order(rows[end - 1].values[$0], next.values[$0]) != 0 })
                        else { break }
                        var union = carried
                        var both = always
                        var nulls = cleared
                        for column in 0..<columnCount {
                            let present = next.present.contains(column)
                            union[column] = union[column] || present
                            both[column] = both[column] && present
                            nulls[column] = nulls[column] || (present && next.values[column].isNull)
                            if union[column] && !both[column] && (nulls[column] || !table.columns[column].isOptional || hasDefault[column])
                            {
                                break extending
                            }
                        }
                        guard union.filter({ $0 }).count * (end - start + 1) <= connection.maximumParameters else { break }
                        (carried, always, cleared) = (union, both, nulls)
                        end += 1
                    }
                }
                do {
                    if end - start == 1 {
                        row.load(values: rows[start].values, present: rows[start].present)
                        let written = try upsert(row, table, owner, reuse: &reuse)
                        result.count(written)
                        outcome?(rows[start].offset, written)
                    } else {
                        let positions = (0..<columnCount).filter { carried[$0] }
                        let coalesced = Set(positions.filter { !always[$0] })
                        try upsertChunk(
                            rows[start..<end], positions: positions, coalesced: coalesced, table, into: &result, outcome: outcome)
                    }
                } catch let error as ModelStoreError {
                    if end - start > 1, error.code == .constraintViolation || error.code == .server {
                        failedChunk = (start..<end, error)
                        throw error
                    }
                    row.load(values: rows[start].values, present: rows[start].present)
                    throw failure(error, rows[start].offset, try? table.key(of: row))
                }
                start = end
            }
        }
        do {
            if rows.count > 1 { try connection.withSavepoint(writeChunks) } else { try writeChunks() }
        } catch let error as ModelStoreError {
            guard let (range, chunkError) = failedChunk else { throw error }
            var (culprit, cause) = (range.lowerBound, chunkError)
            if let found = failingRow(rows[range], of: table, owner: owner) { (culprit, cause) = found }
            row.load(values: rows[culprit].values, present: rows[culprit].present)
            throw failure(cause, rows[culprit].offset, try? table.key(of: row))
        }
        return result
    }

    /// The row of a failed multi-row chunk that fails written alone, and its error: each row
    /// is written in turn inside a savepoint that is rolled back whatever happens, so the
    /// search writes nothing. Nil when no row fails alone (the chunk's error then stands).
    private func failingRow(
        _ rows: ArraySlice<(values: [SQLValue], present: ColumnMask, offset: Int)>, of table: TableDescription,
        owner: ObjectIdentifier
    ) -> (index: Int, error: ModelStoreError)? {
        struct Undo: Error {}
        let row = RowEncoder(layout: table.layout)
        var reuse: (shape: ColumnMask, statement: Statement)?
        var found: (index: Int, error: ModelStoreError)?
        _ = try? connection.withSavepoint {
            for index in rows.indices {
                row.load(values: rows[index].values, present: rows[index].present)
                do {
                    _ = try upsert(row, table, owner, reuse: &reuse)
                } catch let error as ModelStoreError {
                    found = (index, error)
                    break
                }
            }
            throw Undo()
        }
        return found
    }

    /// Rows per multi-row upsert on a server: large enough that round trips stop mattering,
    /// small enough that few statement shapes are cached.
    static let serverChunkRows = 500

    /// One multi-row upsert of `chunk`, counting what it did: each returned row is a record
    /// inserted or changed; the others held every value already.
    private func upsertChunk(
        _ chunk: ArraySlice<(values: [SQLValue], present: ColumnMask, offset: Int)>, positions: [Int], coalesced: Set<Int>,
        _ table: TableDescription, into result: inout BatchSaveOutcome, outcome: ((_ offset: Int, SaveOutcome) -> Void)? = nil
    ) throws {
        // Cached by its text: a chunk's statement is built once per shape and size, and a
        // server's round trip dwarfs hashing it.
        let statement = try connection.cachedStatement(
            StatementCatalog.multiRowUpsert(
                table, positions: positions, coalesced: coalesced, count: chunk.count, dialect: connection.dialect,
                returningKeys: outcome != nil))
        defer { statement.reset() }
        var index: Int32 = 1
        for element in chunk {
            for position in positions {
                try statement.bind(element.present.contains(position) ? element.values[position] : .null, at: index)
                index += 1
            }
        }
        var inserted = 0
        var returned = 0
        // A chunk's keys are distinct, so a returned key names its row.
        var written: [RecordKey: SaveOutcome] = [:]
        while try statement.step() {
            returned += 1
            let isInsert = statement.int64(at: 0) == 1
            if isInsert { inserted += 1 }
            if outcome != nil {
                written[RecordKey(statement.values(from: 1, count: table.keyPositions.count))] = isInsert ? .inserted : .updated
            }
        }
        if let outcome {
            var matched = 0
            for element in chunk {
                let done = written[RecordKey(table.keyPositions.map { element.values[$0] })]
                if done != nil { matched += 1 }
                outcome(element.offset, done ?? .unchanged)
            }
            // A key column another tool made of a type that gives values back otherwise than
            // they were bound (a `uuid` upper-cased, a `char(n)` padded): the rows cannot be told.
            guard matched == written.count, written.count == returned else { throw UnmatchedReturnedKeys() }
        }
        result.inserted += inserted
        result.updated += returned - inserted
        result.unchanged += chunk.count - returned
    }

    /// Thrown when the keys a multi-row upsert returned are not the keys it was given, so the
    /// caller that asked for each row's outcome cannot have them (it falls back to writing
    /// record by record).
    struct UnmatchedReturnedKeys: Error {}

    /// A total order of values for sorting keys: by storage class, then by value.
    private static func order(_ left: SQLValue, _ right: SQLValue) -> Int {
        func rank(_ value: SQLValue) -> Int {
            switch value {
            case .null: return 0
            case .integer, .real: return 1
            case .text: return 2
            case .blob: return 3
            }
        }
        switch (left, right) {
        case (.integer(let a), .integer(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.real(let a), .real(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.text(let a), .text(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.blob(let a), .blob(let b)): return a.lexicographicallyPrecedes(b) ? -1 : (a == b ? 0 : 1)
        default: return rank(left) - rank(right)
        }
    }

    /// Saves `models`, finding existing records by match keys instead of the primary key.
    func save<M: StoredModel>(_ models: [M], matching keys: MatchKeys<M>) throws -> BatchSaveOutcome {
        let table = try table(M.self)
        let owner = ObjectIdentifier(M.self)
        let compiler = compiler(table)
        let shared = try keys.shared.map { try table.matchPosition($0, compiler) }
        let varying = try keys.varying.map { try table.matchPosition($0, compiler) }
        guard !varying.isEmpty else {
            throw ModelStoreError(
                .invalidQuery, "MatchKeys for \(table.modelName) name no varying property to tell elements apart.",
                model: table.modelName)
        }

        // Encode once, keeping each element's values, and check the shared ones agree.
        var rows: [(values: [SQLValue], present: ColumnMask)] = []
        var matches: [RecordKey] = []
        rows.reserveCapacity(models.count)
        matches.reserveCapacity(models.count)
        let row = RowEncoder(layout: table.layout)
        let callbacks = ModelCallbacks.of(M.self).save
        for (offset, model) in models.enumerated() {
            do {
                try encodeForWriting(model, into: row, table, callbacks: callbacks)
                rows.append((row.values, row.present))
                try table.checkMatchValues(rows[offset], shared: shared, varying: varying, against: rows.first!, at: offset)
                matches.append(table.folded(RecordKey(rows[offset].values, at: varying), at: varying))
            } catch let error as ModelStoreError {
                throw error.inBatch(at: offset, of: models.count, table: table, key: try? table.key(of: row))
            }
        }
        guard let first = rows.first else { return BatchSaveOutcome(inserted: 0, updated: 0) }

        var existing = try existingKeys(
            table, sharedValues: shared.map { first.values[$0] }, shared: shared, varying: varying, lookups: matches)

        var result = BatchSaveOutcome(inserted: 0, updated: 0)
        for offset in rows.indices {
            let element = rows[offset]
            do {
                row.load(values: element.values, present: element.present)
                let outcome: SaveOutcome
                if let key = existing[matches[offset]] {
                    let columns = table.updatable(element.present)
                    let changed =
                        try table.changesSomething(columns) && update(row, columns: columns, key: key, table, owner, onlyIfChanged: true)
                    outcome = changed ? .updated : .unchanged
                } else {
                    try insertUnmatched(row, table, owner)
                    existing[matches[offset]] = try table.key(of: row)
                    outcome = .inserted
                }
                result.count(outcome)
                if callbacks { try didSave(models[offset], outcome: outcome, table, row) }
            } catch let error as ModelStoreError {
                throw error.inBatch(at: offset, of: models.count, table: table, key: try? table.key(of: row))
            }
        }
        return result
    }

    /// Keys of stored records by their varying values.
    ///
    /// A batch whose values fit one statement's parameters asks for them in one `IN` list.
    /// A larger batch asks in chunks only when an index leads with the varying properties
    /// (each chunk is then a few index lookups per value); otherwise every chunk would scan
    /// the whole table (or shared group) again, so the cost would grow with the batch times
    /// the table. It reads the group once instead and matches in memory: one pass, whatever
    /// the batch size.
    private func existingKeys(
        _ table: TableDescription, sharedValues: [SQLValue], shared: [Int], varying: [Int], lookups: [RecordKey]
    ) throws -> [RecordKey: [SQLValue]] {
        let wanted = Set(lookups)
        let distinct = wanted.map(\.values)
        let keyList = table.keyNames.map(quoted).joined(separator: ", ")
        let varyingColumns = varying.map { quoted(table.columns[$0].name) }
        let varyingList = varyingColumns.joined(separator: ", ")
        let sharedConditions = shared.map { quoted(table.columns[$0].name) + " = ?" }
        var found: [RecordKey: [SQLValue]] = [:]
        found.reserveCapacity(wanted.count)
        func collect(_ sql: String, _ values: [SQLValue], onlyWanted: Bool) throws {
            let statement = try connection.cachedStatement(sql)
            try statement.forEachRow(values) {
                let key = statement.values(count: table.keyPositions.count)
                // A NULL matches nothing, as in SQL.
                guard let stored = RecordKey(statement, at: Int32(key.count), count: varying.count) else { return }
                let match = table.folded(stored, at: varying)
                if onlyWanted, !wanted.contains(match) { return }
                if let other = found[match], other != key {
                    throw ModelStoreError(
                        .ambiguousMatch,
                        "Two stored \(table.modelName) records (\(table.describeKey(other)) and \(table.describeKey(key))) match the same values \(match.values.map(\.description).joined(separator: ", ")); a batch cannot tell which to update.",
                        model: table.modelName, suggestion: "Add properties to MatchKeys.varying until they identify one record.")
                }
                found[match] = key
            }
        }
        let select = "SELECT \(keyList), \(varyingList) FROM \(table.quotedTable)"
        let parts = QueryCompiler.keyMembership(
            varyingColumns, distinct, parameterBudget: QueryCompiler.listParameterBudget - shared.count, dialect: connection.dialect)
        if parts.count > 1, !table.hasIndex(leadingWith: varying, after: shared) {
            let condition = sharedConditions.isEmpty ? "" : " WHERE " + sharedConditions.joined(separator: " AND ")
            try collect(select + condition, sharedValues, onlyWanted: true)
            return found
        }
        for part in parts {
            let condition = (sharedConditions + [part.sql]).joined(separator: " AND ")
            try collect(select + " WHERE " + condition, sharedValues + part.values, onlyWanted: false)
        }
        return found
    }
}

extension TableDescription {
    /// Whether a declared index (or the primary key) can find records by the varying
    /// positions: its columns, after any of the shared ones, begin with a varying one.
    fileprivate func hasIndex(leadingWith varying: [Int], after shared: [Int]) -> Bool {
        let sharedNames = Set(shared.map { columns[$0].name })
        let varyingNames = Set(varying.map { columns[$0].name })
        let candidates = indexes.map(\.columns) + [keyNames]
        return candidates.contains { columns in
            columns.first { !sharedNames.contains($0) }.map(varyingNames.contains) ?? false
        }
    }
}

extension TableDescription {
    fileprivate func matchPosition(_ reference: ColumnReference, _ compiler: QueryCompiler) throws -> Int {
        _ = try compiler.column(reference)
        return layout.position(of: reference.name)!
    }

    fileprivate func checkMatchValues(
        _ row: (values: [SQLValue], present: ColumnMask), shared: [Int], varying: [Int],
        against first: (values: [SQLValue], present: ColumnMask), at offset: Int
    ) throws {
        for position in shared + varying where !row.present.contains(position) {
            throw ModelStoreError(
                .invalidQuery, "Element \(offset) does not carry \(modelName).\(columns[position].name), which MatchKeys names.",
                model: modelName, column: columns[position].name)
        }
        for position in shared where row.values[position] != first.values[position] {
            throw ModelStoreError(
                .invalidQuery,
                "Element \(offset) has \(modelName).\(columns[position].name) = \(row.values[position]), but the batch shares \(first.values[position]) for it.",
                model: modelName, column: columns[position].name, value: row.values[position].description,
                suggestion: "Shared match properties must be equal in every element; save the groups in separate batches.")
        }
    }
}

extension ModelStoreError {
    /// The error, saying which element of a batch caused it and that nothing was saved.
    func inBatch(at offset: Int, of count: Int, table: TableDescription, key: [SQLValue]?) -> ModelStoreError {
        var error = explainingDrift(of: table).naming(model: table.modelName, key: key.map(table.describeKey))
        error.message = "Element \(offset) of a batch of \(count) \(table.modelName) models failed, so none were saved: " + error.message
        return error
    }
}
