import Foundation

/// A model's full-text index as every backend sees it: the table, the text columns it
/// indexes, and how much a match in each counts in the ranking. The schema layer makes it
/// from the model's `searchable` declaration and checks it; a backend's `FullTextSQL` keeps
/// it and queries it.
package struct SearchIndexDescription: Sendable, Hashable {
    /// The model's table.
    package let tableName: String
    /// `<table>_fts`: the name of SQLite's FTS5 table, and what a read's stand-ins and copies
    /// of the index are known by.
    package let name: String
    /// The indexed columns, in declaration order (the order snippets are numbered in).
    package let columns: [String]
    /// Each column's weight, in the same order: positive.
    package let weights: [Double]

    package init(tableName: String, columns: [String], weights: [Double]) {
        self.tableName = tableName
        self.name = tableName + "_fts"
        self.columns = columns
        self.weights = weights
    }

    var quotedName: String { quoted(name) }
}

/// How a search marks matched words in a snippet: `SearchHighlight`'s values, as the backend
/// needs them.
package struct SnippetMarks: Sendable, Hashable {
    package let open: String
    package let close: String
    package let ellipsis: String
    /// The most words a snippet holds.
    package let tokens: Int

    package init(open: String, close: String, ellipsis: String, tokens: Int) {
        self.open = open
        self.close = close
        self.ellipsis = ellipsis
        self.tokens = tokens
    }
}

/// What a backend's full-text index keeper may run: the statements of the caller's
/// transaction, on its connection.
package struct FullTextDatabase {
    /// The rows of a query, each as its values.
    package let rows: (_ sql: String, _ values: [SQLValue]) throws -> [[SQLValue]]
    /// Runs a statement.
    package let execute: (_ sql: String) throws -> Void
    /// Whether the main schema has a table of that name, asked without a statement (so a
    /// model without an index runs no more SQL than before).
    package let hasTable: (_ name: String) -> Bool
}

/// How a backend keeps a model's full-text index in step with its table, and searches it.
///
/// The core makes the index's description, checks a search's text (FTS5 query syntax, which
/// `.words` and `.phrase` write for user text, on every backend: see `SearchSyntax`), and
/// runs what this answers; it never asks which backend it runs on. SQLite keeps an FTS5
/// table that triggers fill (`SQLiteFullText`); a server keeps its own kind of index
/// (ModelStorePostgres: an expression index over `tsvector`s).
package protocol FullTextSQL: Sendable {
    /// Why the backend cannot keep `index` as declared (the message names `model`, and a
    /// suggestion), or nil when it can. Asked once, when the model's table is described.
    func refusal(of index: SearchIndexDescription, model: String) -> (message: String, suggestion: String)?
    /// Brings the stored index of `table` up to `index` (nil: removes what an earlier
    /// declaration left), inside the caller's transaction, after the table itself is ready.
    func prepare(_ index: SearchIndexDescription?, table: String, model: String, on database: FullTextDatabase) throws
    /// Whether the stored index answers for every row of the table as it is now; false when
    /// only the writer can make it so (a read then searches a copy: `temporaryCopy`).
    func isComplete(_ index: SearchIndexDescription, on database: FullTextDatabase) throws -> Bool
    /// Removes the index that keeps itself from `table`, if any: before a table rebuild.
    func drop(ofTable table: String, on database: FullTextDatabase) throws
    /// The names (lowercased) of the tables that make up full-text indexes: part of a model's
    /// storage, not tables of their own.
    func indexTables(on database: FullTextDatabase) throws -> Set<String>
    /// The statements, run in the temporary schema, that make what a read of a model nothing
    /// has written searches beside its empty stand-in table.
    func standIn(_ index: SearchIndexDescription) -> [String]
    /// The statements, run in the temporary schema, that make a copy of the index from the
    /// table's rows, for a read that cannot wait for the writer to rebuild a lagging one.
    func temporaryCopy(_ index: SearchIndexDescription) -> [String]
    /// A condition on the model's table (its columns unqualified) that holds for the records
    /// matching `expression`, FTS5 query syntax already checked.
    /// - Throws: `.invalidQuery` naming `model` and `text` for syntax the backend cannot search.
    func condition(_ expression: String, text: String, in index: SearchIndexDescription, model: String) throws -> (
        sql: String, values: [SQLValue]
    )
    /// The ranked search: the table's `columns` (quoted, in this order), the rank (lower is
    /// more relevant), then one column per indexed column that `snippet` turns into its
    /// snippet (NULL where the stored value is). `condition` is on the table (columns
    /// unqualified); ties in rank come in `key` order.
    /// - Throws: `.invalidQuery` naming `model` and `text` for syntax the backend cannot search.
    func rankedSearch(
        _ expression: String, text: String, in index: SearchIndexDescription, model: String, columns: [String], key: [String],
        condition: (sql: String, values: [SQLValue])?, limit: Int, offset: Int, marks: SnippetMarks
    ) throws -> (sql: String, values: [SQLValue])
    /// The snippet of indexed column `column` from what the ranked search selected for it.
    func snippet(_ selected: String, column: Int, expression: String, in index: SearchIndexDescription, marks: SnippetMarks) -> String
}

/// SQLite's full-text index: an *external content* FTS5 table (sqlite.org/fts5.html,
/// "External Content Tables") that stores only the index and reads the text from the model's
/// table by rowid when a snippet needs it. Three triggers on the model's table update it in
/// the same statement as each write, so every path that writes the table — ModelStore's
/// saves, batches, graph saves, `updateAll`, deletes and their cascades, and raw SQL — keeps
/// it in sync, inside the writing transaction, and a rollback undoes both together.
///
/// The index is recognised by its SQL, not trusted by its name: when the FTS5 table or any of
/// its triggers differs from what the declaration makes (a property added to or removed from
/// `searchable`, a column or table renamed, a table rebuilt, a trigger dropped by another
/// tool), the whole index is dropped, made again and rebuilt from the table's rows, inside
/// the caller's transaction. An index that is as declared costs one query.
struct SQLiteFullText: FullTextSQL {
    /// The suffixes FTS5 gives the shadow tables of an external-content table.
    static let shadowSuffixes = ["_data", "_idx", "_docsize", "_config"]
    /// The suffixes of the three triggers, after the index's name.
    static let triggerSuffixes = ["_ai", "_ad", "_au"]
    /// The tokenizer: Unicode-aware, case-folding, and blind to diacritics, so "cafe" finds "Café".
    static let tokenizer = "unicode61 remove_diacritics 2"

    func refusal(of index: SearchIndexDescription, model: String) -> (message: String, suggestion: String)? { nil }

    static func triggerNames(_ index: SearchIndexDescription) -> [String] { triggerSuffixes.map { index.name + $0 } }

    /// The rank expression's argument when some weight is not 1 (`bm25(3.0, 1.0)`), else nil.
    static func rankFunction(_ index: SearchIndexDescription) -> String? {
        guard index.weights.contains(where: { $0 != 1 }) else { return nil }
        return "bm25(" + index.weights.map { String($0) }.joined(separator: ", ") + ")"
    }

    static func createSQL(_ index: SearchIndexDescription) -> String {
        "CREATE VIRTUAL TABLE \(index.quotedName) USING fts5(" + index.columns.map(quoted).joined(separator: ", ")
            + ", content=\(literal(index.tableName)), content_rowid='rowid', tokenize=\(literal(tokenizer)))"
    }

    /// The triggers that keep the index in sync. An external-content index must be told the
    /// exact old values to remove, which only the trigger sees (`old.…`); an update that
    /// changes no indexed value and not the rowid leaves the index alone.
    static func triggerSQL(_ index: SearchIndexDescription) -> [String] {
        let table = quoted(index.tableName)
        let name = index.quotedName
        let list = index.columns.map(quoted).joined(separator: ", ")
        func values(_ row: String) -> String { ([row + ".rowid"] + index.columns.map { row + "." + quoted($0) }).joined(separator: ", ") }
        let insert = "INSERT INTO \(name)(rowid, \(list)) VALUES (\(values("new")));"
        let delete = "INSERT INTO \(name)(\(name), rowid, \(list)) VALUES ('delete', \(values("old")));"
        let changed = (["old.rowid IS NOT new.rowid"] + index.columns.map { "old.\(quoted($0)) IS NOT new.\(quoted($0))" })
            .joined(separator: " OR ")
        let triggers = triggerNames(index)
        return [
            "CREATE TRIGGER \(quoted(triggers[0])) AFTER INSERT ON \(table) BEGIN \(insert) END",
            "CREATE TRIGGER \(quoted(triggers[1])) AFTER DELETE ON \(table) BEGIN \(delete) END",
            "CREATE TRIGGER \(quoted(triggers[2])) AFTER UPDATE ON \(table) WHEN \(changed) BEGIN \(delete) \(insert) END",
        ]
    }

    /// An empty FTS5 table with the index's columns, in the temp schema.
    func standIn(_ index: SearchIndexDescription) -> [String] {
        ["CREATE VIRTUAL TABLE temp.\(index.quotedName) USING fts5(" + index.columns.map(quoted).joined(separator: ", ") + ")"]
    }

    /// It holds its own copy of the text, so ranks and snippets are the same.
    func temporaryCopy(_ index: SearchIndexDescription) -> [String] {
        let list = index.columns.map(quoted).joined(separator: ", ")
        return [
            "CREATE VIRTUAL TABLE temp.\(index.quotedName) USING fts5(\(list), tokenize=\(Self.literal(Self.tokenizer)))",
            "INSERT INTO temp.\(index.quotedName)(rowid, \(list)) SELECT rowid, \(list) FROM main.\(quoted(index.tableName))",
        ]
    }

    /// What of a full-text index the file holds for one table.
    struct Stored {
        /// Triggers on the table that maintain an FTS5 table of ModelStore's: name → SQL.
        var triggers: [String: String] = [:]
        /// ModelStore's FTS5 tables those triggers feed, or that index the table: name → SQL.
        var indexes: [String: String] = [:]

        /// Whether it is exactly `index`, with nothing left over from an older declaration.
        func matches(_ index: SearchIndexDescription) -> Bool {
            indexes == [index.name: SQLiteFullText.createSQL(index)]
                && triggers == Dictionary(uniqueKeysWithValues: zip(triggerNames(index), triggerSQL(index)))
        }
    }

    func prepare(_ index: SearchIndexDescription?, table: String, model: String, on database: FullTextDatabase) throws {
        guard let index else {
            // The declaration was removed: triggers maintaining an index nobody reads would
            // only slow every write down.
            guard database.hasTable(table + "_fts") else { return }
            try drop(try stored(ofTable: table, on: database), on: database)
            return
        }
        let stored = try stored(ofTable: table, on: database)
        guard !stored.matches(index) else { return }
        try checkRowid(table, model: model, on: database)
        if stored.indexes[index.name] == nil,
            try !database.rows("SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE", [.text(index.name)])
                .isEmpty
        {
            throw ModelStoreError(
                .schemaMismatch,
                "\(model) declares searchable properties, but the file already has a table \(index.name) that is not its full-text index. Nothing was written.",
                model: model, value: index.name,
                suggestion: "Rename or drop the table \(index.name), or give \(model) another tableName.")
        }
        try drop(stored, on: database)
        try database.execute(Self.createSQL(index))
        for sql in Self.triggerSQL(index) { try database.execute(sql) }
        // Index the records the table already holds (none, for a table created just now).
        try database.execute("INSERT INTO \(index.quotedName)(\(index.quotedName)) VALUES ('rebuild')")
    }

    func isComplete(_ index: SearchIndexDescription, on database: FullTextDatabase) throws -> Bool {
        try stored(ofTable: index.tableName, on: database).matches(index)
    }

    /// A table rebuild renumbers the rowids the index refers to, and would carry its triggers
    /// over unchanged; the next `prepare` makes it again from the rows.
    func drop(ofTable table: String, on database: FullTextDatabase) throws {
        try drop(try stored(ofTable: table, on: database), on: database)
    }

    func indexTables(on database: FullTextDatabase) throws -> Set<String> {
        var names = Set<String>()
        let rows = try database.rows(
            "SELECT name, sql FROM main.sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE %USING fts5(%'", [])
        for row in rows {
            guard case .text(let name) = row[0], name.hasSuffix("_fts") else { continue }
            names.insert(name.lowercased())
            for suffix in Self.shadowSuffixes { names.insert((name + suffix).lowercased()) }
        }
        return names
    }

    /// The rowids the index finds. SQLite runs the subquery once, so a `DELETE` or `UPDATE`
    /// by it is not disturbed by the index changing under it.
    func condition(_ expression: String, text: String, in index: SearchIndexDescription, model: String) throws -> (
        sql: String, values: [SQLValue]
    ) {
        ("rowid IN (SELECT rowid FROM \(index.quotedName) WHERE \(index.quotedName) MATCH ?)", [.text(expression)])
    }

    /// The index is the outer loop and delivers rows in rank order (FTS5 consumes
    /// `ORDER BY rank`), so SQLite stops after `limit` rows and makes snippets for those
    /// alone. A condition runs as a correlated `EXISTS` on the table, where its column names
    /// cannot be mistaken for the index's columns of the same names. Ties in rank come in
    /// rowid order, which is the index's.
    func rankedSearch(
        _ expression: String, text: String, in index: SearchIndexDescription, model: String, columns: [String], key: [String],
        condition: (sql: String, values: [SQLValue])?, limit: Int, offset: Int, marks: SnippetMarks
    ) throws -> (sql: String, values: [SQLValue]) {
        let name = index.quotedName
        let alias = "modelstore_hit"
        var selected = columns.map { alias + "." + $0 }
        selected.append("\(name).rank")
        var values: [SQLValue] = []
        for (position, column) in index.columns.enumerated() {
            selected.append("CASE WHEN \(alias).\(quoted(column)) IS NULL THEN NULL ELSE snippet(\(name), \(position), ?, ?, ?, ?) END")
            values += [.text(marks.open), .text(marks.close), .text(marks.ellipsis), .integer(Int64(marks.tokens))]
        }
        var sql =
            "SELECT " + selected.joined(separator: ", ")
            + " FROM \(name) JOIN \(quoted(index.tableName)) AS \(alias) ON \(alias).rowid = \(name).rowid"
            + " WHERE \(name) MATCH ?"
        values.append(.text(expression))
        if let rank = Self.rankFunction(index) {
            sql += " AND \(name).rank MATCH ?"
            values.append(.text(rank))
        }
        if let condition {
            sql += " AND EXISTS (SELECT 1 FROM \(quoted(index.tableName)) WHERE rowid = \(alias).rowid AND (\(condition.sql)))"
            values += condition.values
        }
        sql += " ORDER BY \(name).rank LIMIT ? OFFSET ?"
        values += [.integer(Int64(limit)), .integer(Int64(offset))]
        return (sql, values)
    }

    /// FTS5's `snippet()` made it.
    func snippet(_ selected: String, column: Int, expression: String, in index: SearchIndexDescription, marks: SnippetMarks) -> String {
        selected
    }

    private func stored(ofTable tableName: String, on database: FullTextDatabase) throws -> Stored {
        var stored = Stored()
        var feeds = Set<String>([tableName + "_fts"])
        let triggers = try database.rows(
            "SELECT name, sql FROM main.sqlite_master WHERE type = 'trigger' AND tbl_name = ? COLLATE NOCASE AND sql IS NOT NULL",
            [.text(tableName)])
        for row in triggers {
            guard case .text(let name) = row[0], case .text(let sql) = row[1] else { continue }
            // `<index>_ai`, `_ad`, `_au`, writing into `<index>`: an index made for this table
            // under its current name or a former one (a rename keeps trigger names).
            guard let suffix = Self.triggerSuffixes.first(where: { name.hasSuffix($0) }) else { continue }
            let index = String(name.dropLast(suffix.count))
            guard index.hasSuffix("_fts"), sql.contains("INSERT INTO \(quoted(index))(") else { continue }
            stored.triggers[name] = sql
            feeds.insert(index)
        }
        for index in feeds {
            guard
                case .text(let sql)? = try database.rows(
                    "SELECT sql FROM main.sqlite_master WHERE type = 'table' AND name = ?", [.text(index)]
                ).first?.first,
                sql.hasPrefix("CREATE VIRTUAL TABLE"), sql.contains("USING fts5(")
            else { continue }
            // The current name's index counts only if it indexes this table (content=…).
            if index == tableName + "_fts", stored.triggers.isEmpty, !sql.contains("content=" + Self.literal(tableName)) {
                continue
            }
            stored.indexes[index] = sql
        }
        return stored
    }

    private func drop(_ stored: Stored, on database: FullTextDatabase) throws {
        for name in stored.triggers.keys.sorted() { try database.execute("DROP TRIGGER IF EXISTS main.\(quoted(name))") }
        // Dropping an FTS5 table drops its shadow tables too.
        for name in stored.indexes.keys.sorted() { try database.execute("DROP TABLE IF EXISTS main.\(quoted(name))") }
    }

    /// An external-content index finds records by rowid: a WITHOUT ROWID table (which another
    /// tool may have made) has none.
    private func checkRowid(_ table: String, model: String, on database: FullTextDatabase) throws {
        do {
            _ = try database.rows("SELECT rowid FROM main.\(quoted(table)) LIMIT 0", [])
        } catch {
            throw ModelStoreError(
                .schemaMismatch,
                "\(model) declares searchable properties, but its stored table \(table) has no rowid (WITHOUT ROWID), which a full-text index needs to find records. Nothing was written.",
                model: model, value: table,
                suggestion: "Rebuild the table as an ordinary rowid table (a migration step can), or remove \(model).searchable.")
        }
    }

    private static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}

extension Connection {
    /// This connection as a full-text index keeper runs statements on it.
    var fullTextDatabase: FullTextDatabase {
        FullTextDatabase(
            rows: { sql, values in
                let statement = try self.cachedStatement(sql)
                defer { statement.reset() }
                try statement.bind(values)
                var rows: [[SQLValue]] = []
                // (A server's statement knows its columns once it has run.)
                while try statement.step() { rows.append((0..<statement.columnCount).map { statement.value(at: $0) }) }
                return rows
            },
            execute: { try self.execute($0) },
            hasTable: { self.hasTable($0) })
    }
}
