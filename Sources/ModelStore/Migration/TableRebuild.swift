/// SQLite's documented procedure for the table changes `ALTER TABLE` cannot make (a new
/// primary key, a column's type or NOT NULL, dropping an indexed or referenced column):
/// create the new table under a temporary name, copy the rows, drop the old table, rename
/// the new one, and create its indexes, triggers and views again
/// (sqlite.org/lang_altertable.html, "Making Other Kinds Of Table Schema Changes").
///
/// It runs inside a migration step's transaction, with foreign keys switched off for the
/// whole migration (a `DROP TABLE` would otherwise cascade into the join tables and links
/// of the rows it is about to copy back); the runner checks every foreign key before the
/// step commits. Columns of the old table that neither the model nor the step accounts for
/// are carried over as they are: nothing is dropped unless the step names it.
struct TableRebuild {
    let connection: Connection
    /// The model the table is rebuilt into.
    let table: TableDescription
    /// The table holding the rows now.
    let source: String
    /// Old columns the step consumes (a transform's old model): not carried over.
    let consumed: Set<String>
    /// Old columns the step drops explicitly.
    let dropping: [String]
    let step: String

    struct OldColumn {
        let name: String
        let declaredType: String
        var notNull = false
        /// The column's DEFAULT expression as SQL, if any.
        var defaultValue: String?
    }

    /// The old table's columns, in order.
    private(set) var oldColumns: [OldColumn] = []
    /// Old columns carried into the new table as they are (the model does not have them).
    private(set) var extras: [OldColumn] = []

    static let temporaryName = "modelstore_rebuild"

    init(
        connection: Connection, table: TableDescription, source: String, consumed: Set<String> = [], dropping: [String],
        step: String
    ) throws {
        self.connection = connection
        self.table = table
        self.source = source
        self.consumed = Set(consumed.map { $0.lowercased() })
        self.dropping = dropping
        self.step = step
        var columns: [OldColumn] = []
        let statement = try connection.makeStatement(
            connection.dialect.rebuildCatalog?.columns
                ?? "SELECT name, type, \"notnull\", dflt_value FROM pragma_table_info(?) ORDER BY cid")
        try statement.forEachRow([.text(source)]) {
            columns.append(
                OldColumn(
                    name: statement.string(at: 0), declaredType: statement.string(at: 1), notNull: statement.int64(at: 2) != 0,
                    defaultValue: statement.isNull(at: 3) ? nil : statement.string(at: 3)))
        }
        guard !columns.isEmpty else {
            throw ModelStoreError(
                .schemaMismatch, "Migration step '\(step)': there is no table \(source) to rebuild \(table.modelName) from.",
                model: table.modelName, value: source)
        }
        oldColumns = columns
        try check()
        if let catalog = connection.dialect.rebuildCatalog {
            try refuseWhatCannotBeCarried(catalog)
        } else {
            try refuseWhatCannotBeCarried()
        }
    }

    /// A table another tool made may have what a rebuild from the model cannot reproduce:
    /// STRICT or WITHOUT ROWID, generated columns, AUTOINCREMENT, CHECK, UNIQUE or COLLATE
    /// constraints, foreign keys on columns the model does not have. Rebuilding would drop
    /// them without a word, so the step is refused instead, before anything changes.
    private func refuseWhatCannotBeCarried() throws {
        var found: [String] = []
        if let kind = try? connection.makeStatement("SELECT strict, wr FROM pragma_table_list WHERE schema = 'main' AND name = ?") {
            try kind.forEachRow([.text(source)]) {
                if kind.int64(at: 0) != 0 { found.append("STRICT") }
                if kind.int64(at: 1) != 0 { found.append("WITHOUT ROWID") }
            }
        }
        let hidden = try connection.makeStatement("SELECT name FROM pragma_table_xinfo(?) WHERE hidden != 0")
        try hidden.forEachRow([.text(source)]) { found.append("the generated column \(hidden.string(at: 0))") }
        if case .text(let sql)? = try connection.scalar(
            "SELECT sql FROM main.sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE", [.text(source)])
        {
            let words = Self.keywords(of: sql)
            for keyword in ["AUTOINCREMENT", "CHECK", "UNIQUE"] where words.contains(keyword) {
                found.append(keyword)
            }
        }
        let modelColumns = Set(table.columns.map { $0.name.lowercased() })
        // A collation survives a rebuild only where the model declares the same one.
        let declared = Dictionary(table.columns.map { ($0.name.lowercased(), $0.collation?.rawValue ?? "BINARY") }) { first, _ in first }
        let info = try connection.makeStatement("SELECT name FROM pragma_table_info(?)")
        var stored: [String] = []
        try info.forEachRow([.text(source)]) { stored.append(info.string(at: 0)) }
        for column in stored {
            let collation = (connection.collation(ofColumn: column, inTable: source) ?? "BINARY").uppercased()
            guard collation != "BINARY", declared[column.lowercased()] != collation else { continue }
            found.append("COLLATE \(collation) on \(column)")
        }
        let keys = try connection.makeStatement("SELECT \"from\", \"table\" FROM pragma_foreign_key_list(?)")
        try keys.forEachRow([.text(source)]) {
            let column = keys.string(at: 0)
            if !modelColumns.contains(column.lowercased()) {
                found.append("a foreign key on \(column) (to \(keys.string(at: 1)))")
            }
        }
        guard !found.isEmpty else { return }
        throw ModelStoreError(
            .schemaMismatch,
            "Migration step '\(step)' cannot rebuild \(source) into \(table.modelName): the table has \(found.joined(separator: ", ")), which a rebuild from the model would not keep. Nothing was changed.",
            model: table.modelName, value: source,
            suggestion:
                "Write this rebuild in SQL with step.execute (SQLite's procedure: create the new table with everything to keep, copy, drop, rename), or remove those first."
        )
    }

    /// The upper-cased words of `sql` outside string literals and quoted names.
    private static func keywords(of sql: String) -> Set<String> {
        var words = Set<String>()
        var word = ""
        var quote: Character?
        for character in sql {
            if let open = quote {
                if character == (open == "[" ? "]" : open) { quote = nil }
                continue
            }
            if "'\"`[".contains(character) {
                quote = character
                continue
            }
            if character.isLetter || character == "_" {
                word.append(character)
            } else {
                if !word.isEmpty { words.insert(word.uppercased()) }
                word = ""
            }
        }
        if !word.isEmpty { words.insert(word.uppercased()) }
        return words
    }

    /// Whether the old table has a column named `name` (ignoring case, as SQLite does).
    func oldHas(_ name: String) -> Bool {
        oldColumns.contains { $0.name.lowercased() == name.lowercased() }
    }

    private mutating func check() throws {
        let modelColumns = Set(table.columns.map { $0.name.lowercased() })
        for name in dropping {
            guard oldHas(name) else {
                throw ModelStoreError(
                    .invalidQuery,
                    "Migration step '\(step)' drops column \(name), which the table \(source) does not have (its columns: \(oldColumns.map(\.name).joined(separator: ", "))).",
                    model: table.modelName, column: name)
            }
            guard !modelColumns.contains(name.lowercased()) else {
                throw ModelStoreError(
                    .invalidQuery, "Migration step '\(step)' drops column \(name), which \(table.modelName) still has.",
                    model: table.modelName, column: name, suggestion: "Remove the property from the model, or do not drop it.")
            }
        }
        let dropped = Set(dropping.map { $0.lowercased() })
        extras = oldColumns.filter { column in
            let name = column.name.lowercased()
            return !modelColumns.contains(name) && !consumed.contains(name) && !dropped.contains(name)
        }
        if source.lowercased() != table.tableName.lowercased(), try SchemaRenamer.exists("table", table.tableName, on: connection) {
            throw ModelStoreError(
                .schemaMismatch,
                "Migration step '\(step)' would rebuild \(source) into \(table.tableName), which already exists; nothing was changed.",
                model: table.modelName, value: table.tableName,
                suggestion: "Drop or rename \(table.tableName) first, or read from it instead.")
        }
    }

    /// The new table's columns, in the order `fill` must supply them: the model's, then the
    /// carried extras.
    var targetColumns: [String] { table.columns.map(\.name) + extras.map(\.name) }

    /// Runs the procedure; `fill` copies the rows into the table named `TableRebuild.temporaryName`.
    func run(fill: () throws -> Void) throws {
        // The copy changes records without the history's triggers (a transform, values given):
        // where the table keeps history, a change of unknown rows says so, and the new table
        // records its changes from the step on.
        let names = Set([source, table.tableName])
        defer { connection.historyGapsRecorded.subtract(names.map { $0.lowercased() }) }
        for name in names { try SchemaMigrator.recordRewrite(ofTable: name, on: connection) }
        try copy(fill: fill)
        if table.keepsHistory { try SchemaMigrator.prepareHistory(table, on: connection) }
    }

    private func copy(fill: () throws -> Void) throws {
        if let catalog = connection.dialect.rebuildCatalog { return try run(catalog, fill: fill) }
        // The full-text index refers to rows by rowid, which the copy may renumber, and its
        // triggers name the old table: it is dropped here and made again by `prepare` below.
        try SchemaMigrator.dropSearchIndex(ofTable: source, on: connection)
        let saved = try savedSchemaObjects()
        for object in saved.dependents {
            try connection.execute("DROP \(object.type.uppercased()) \(quoted(object.name))")
        }
        try createTemporaryTable()
        try fill()
        try connection.execute("DROP TABLE \(quoted(source))")
        try connection.execute("ALTER TABLE \(quoted(Self.temporaryName)) RENAME TO \(table.quotedTable)")
        let kept = Set(targetColumns.map { $0.lowercased() })
        // An index on a column that is gone goes with it; the others come back as they were
        // (an expression's part has no column name: it is tried, and a failure says why).
        for index in saved.indexes where index.columns.allSatisfy({ $0.isEmpty || kept.contains($0.lowercased()) }) {
            try recreate(index.sql, index.name)
        }
        for object in saved.dependents { try recreate(object.sql, object.name) }
        try SchemaMigrator.prepare(table, on: connection)
    }

    /// Creates the new table under the temporary name: the model's columns, then the carried
    /// ones with their type, NOT NULL and DEFAULT.
    func createTemporaryTable() throws {
        try connection.execute("DROP TABLE IF EXISTS \(quoted(Self.temporaryName))")
        let extraDefinitions = extras.map { column in
            quoted(column.name) + (column.declaredType.isEmpty ? "" : " " + column.declaredType)
                + (column.notNull ? " NOT NULL" : "") + (column.defaultValue.map { " DEFAULT (\($0))" } ?? "")
        }
        try connection.execute(
            SchemaMigrator.createTableSQL(table, named: Self.temporaryName, extraColumns: extraDefinitions, dialect: connection.dialect))
    }

    func recreate(_ sql: String, _ name: String) throws {
        do {
            try connection.execute(sql)
        } catch var error as ModelStoreError {
            error.message =
                "Migration step '\(step)' rebuilt \(table.tableName), but \(name) cannot be created again on it: \(error.message)"
            error.suggestion = "Drop or change \(name) in the step before the rebuild."
            throw error
        }
    }

    private struct SchemaObject {
        let type: String
        let name: String
        let sql: String
        var columns: [String] = []
    }

    /// The old table's own indexes (with their columns; only when the table keeps its name,
    /// since their SQL names it), and every trigger and view of the
    /// file: a view or trigger that names the table would stop the rename, so all are set
    /// aside and made again afterwards.
    private func savedSchemaObjects() throws -> (indexes: [SchemaObject], dependents: [SchemaObject]) {
        var indexes: [SchemaObject] = []
        var dependents: [SchemaObject] = []
        let statement = try connection.makeStatement(
            "SELECT type, name, sql, tbl_name FROM main.sqlite_master WHERE sql IS NOT NULL AND type IN ('index', 'trigger', 'view')")
        try statement.forEachRow {
            let object = SchemaObject(type: statement.string(at: 0), name: statement.string(at: 1), sql: statement.string(at: 2))
            if object.type == "index" {
                let table = statement.string(at: 3).lowercased()
                if table == source.lowercased(), table == self.table.tableName.lowercased() { indexes.append(object) }
            } else {
                dependents.append(object)
            }
        }
        for position in indexes.indices {
            let info = try connection.makeStatement("PRAGMA main.index_info(\(quoted(indexes[position].name)))")
            try info.forEachRow { indexes[position].columns.append(info.isNull(at: 2) ? "" : info.string(at: 2)) }
        }
        // In the file's order, so a view on another view is made after it.
        return (indexes, dependents)
    }
}
