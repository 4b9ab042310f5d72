extension SchemaMigrator {
    /// Refuses a stored join table that cannot hold the relationship's links as ModelStore
    /// writes them — a declared one another tool made, or one drifted from the model:
    ///
    /// - a column of the relationship is missing (inserts would fail half-way through a graph);
    /// - another column is NOT NULL without a default (every insert would fail);
    /// - no primary key or unique index covers exactly the link columns (a link saved twice
    ///   would be stored twice), or one covers only some of them (a second link would be
    ///   silently dropped by `ON CONFLICT DO NOTHING`).
    static func checkJoinTableShape(
        _ join: JoinTableDescription, of relationship: String, modelName: String, on connection: Connection
    ) throws {
        // SQLite's catalog pragmas; a server's join tables are ModelStore's own (declared
        // join tables of another tool's making are checked on SQLite only, for now).
        guard connection.capabilities.sqliteCatalog else { return }
        let info = try connection.makeStatement("PRAGMA table_info(\(quoted(join.name)))")
        var columns: [(name: String, type: String, blocksInsert: Bool, keyOrder: Int64)] = []
        try info.forEachRow {
            columns.append((info.string(at: 1), info.string(at: 2), info.int64(at: 3) != 0 && info.isNull(at: 4), info.int64(at: 5)))
        }
        guard !columns.isEmpty else { return }
        let owner = "\(modelName).\(relationship)"
        let wanted = join.ownerColumns + join.targetColumns
        let wantedSet = Set(wanted.map { $0.lowercased() })
        let stored = columns.map(\.name).joined(separator: ", ")
        func refuse(_ problem: String, suggestion: String) -> ModelStoreError {
            ModelStoreError(
                .schemaMismatch,
                "The stored table \(quoted(join.name)), the join table of \(owner), \(problem) (its columns: \(stored)). Nothing was written.",
                model: modelName, column: relationship, value: join.name, suggestion: suggestion)
        }
        let present = Set(columns.map { $0.name.lowercased() })
        let missing = wanted.filter { !present.contains($0.lowercased()) }
        if !missing.isEmpty {
            throw refuse(
                "has no column \(missing.joined(separator: ", ")) for the links",
                suggestion: "Name the table's own columns with joinTable(_:columns:targetColumns:) on \(owner).")
        }
        let keyColumns = columns.filter { $0.keyOrder > 0 }
        // An INTEGER PRIMARY KEY column is the rowid: SQLite fills it in.
        let rowid = keyColumns.count == 1 && keyColumns[0].type.uppercased() == "INTEGER" ? keyColumns[0].name : nil
        if let blocking = columns.first(where: { $0.blocksInsert && !wantedSet.contains($0.name.lowercased()) && $0.name != rowid }) {
            throw refuse(
                "has a column \(blocking.name) that is NOT NULL without a default, which a link ModelStore inserts leaves empty",
                suggestion: "Give \(blocking.name) a default value, or store these links in another table.")
        }
        var uniqueSets: [Set<String>] = []
        if !keyColumns.isEmpty { uniqueSets.append(Set(keyColumns.map { $0.name.lowercased() })) }
        let indexes = try connection.makeStatement("PRAGMA index_list(\(quoted(join.name)))")
        var uniqueIndexes: [String] = []
        try indexes.forEachRow { if indexes.int64(at: 2) != 0 { uniqueIndexes.append(indexes.string(at: 1)) } }
        for index in uniqueIndexes {
            let indexInfo = try connection.makeStatement("PRAGMA index_info(\(quoted(index)))")
            var names = Set<String>()
            try indexInfo.forEachRow { names.insert(indexInfo.string(at: 2).lowercased()) }
            uniqueSets.append(names)
        }
        if let partial = uniqueSets.first(where: { $0.isStrictSubset(of: wantedSet) }) {
            throw refuse(
                "is unique over (\(partial.sorted().joined(separator: ", "))) alone, so a second link would be dropped",
                suggestion: "Make the table unique over (\(wanted.joined(separator: ", "))) instead.")
        }
        guard uniqueSets.contains(wantedSet) else {
            throw refuse(
                "has no primary key or unique index over (\(wanted.joined(separator: ", "))), so a link saved twice would be stored twice",
                suggestion: "Add one: CREATE UNIQUE INDEX … ON \(quoted(join.name)) (\(wanted.map(quoted).joined(separator: ", "))).")
        }
    }
}
