/// A text property a model declares searchable: ModelStore keeps a full-text index (SQLite's
/// FTS5) of it in sync with every write, and `search(_:)` and `.matches(_:)` query it.
///
/// ```swift
/// struct Recipe: StoredModel {
///     var id: Int64
///     var title: String
///     var body: String?
///     var minutes: Int
///     static let primaryKey = ["id"]
///     static let searchable: [SearchableText<Recipe>] = [.text(\.title, weight: 3), .text(\.body)]
/// }
///
/// let hits = try Recipe.search("choc*", where: \.minutes < 30)   // best first, with snippets
/// ```
///
/// Only `String` and `String?` properties can be searchable (the key path overloads make the
/// compiler check it; `.column(_:)` is checked on first use). A property's `weight` scales
/// its matches in the ranking (bm25): a word in a title of weight 3 counts three times one
/// in a body of weight 1.
public struct SearchableText<Model: StoredModel>: Sendable {
    /// The property's name (its coding key, which is also its column's name).
    public let property: String
    /// How much a match in this property counts in the ranking, relative to the others.
    public let weight: Double

    /// A `String` property, weighted `weight` in the ranking.
    public static func text(_ property: KeyPath<Model, String>, weight: Double = 1) -> SearchableText {
        SearchableText(property: PropertyName.of(property), weight: weight)
    }

    /// A `String?` property, weighted `weight` in the ranking.
    public static func text(_ property: KeyPath<Model, String?>, weight: Double = 1) -> SearchableText {
        SearchableText(property: PropertyName.of(property), weight: weight)
    }

    /// A property named by its coding key, where a key path cannot reach (checked on first use:
    /// it must be a `String` or `String?` stored property).
    public static func column(_ name: String, weight: Double = 1) -> SearchableText {
        SearchableText(property: name, weight: weight)
    }
}

/// A model's full-text index as the schema layer keeps it: the FTS5 table, the columns it
/// indexes, their weights, and the SQL that creates it and keeps it in sync.
///
/// The index is an *external content* FTS5 table (sqlite.org/fts5.html, "External Content
/// Tables"): it stores only the index, and reads the text from the model's table by rowid
/// when a snippet needs it. Three triggers on the model's table update it in the same
/// statement as each write, so every path that writes the table — ModelStore's saves,
/// batches, graph saves, `updateAll`, deletes and their cascades, and raw SQL — keeps it in
/// sync, inside the writing transaction, and a rollback undoes both together.
struct SearchIndexDescription: Sendable, Hashable {
    /// The model's table.
    let tableName: String
    /// `<table>_fts`; FTS5 adds its shadow tables as `<table>_fts_data`, `_idx`, `_docsize`, `_config`.
    let name: String
    /// The indexed columns, in declaration order (the order `snippet` numbers them).
    let columns: [String]
    let weights: [Double]

    /// The suffixes FTS5 gives the shadow tables of an external-content table.
    static let shadowSuffixes = ["_data", "_idx", "_docsize", "_config"]
    /// The suffixes of the three triggers, after `name`.
    static let triggerSuffixes = ["_ai", "_ad", "_au"]

    var quotedName: String { quoted(name) }

    /// Every table the index consists of: the FTS5 table and its shadow tables.
    var tableNames: [String] { [name] + Self.shadowSuffixes.map { name + $0 } }

    var triggerNames: [String] { Self.triggerSuffixes.map { name + $0 } }

    /// The rank expression's argument when some weight is not 1 (`bm25(3.0, 1.0)`), else nil.
    var rankFunction: String? {
        guard weights.contains(where: { $0 != 1 }) else { return nil }
        return "bm25(" + weights.map { String($0) }.joined(separator: ", ") + ")"
    }

    /// The tokenizer: Unicode-aware, case-folding, and blind to diacritics, so "cafe" finds "Café".
    static let tokenizer = "unicode61 remove_diacritics 2"

    var createSQL: String {
        "CREATE VIRTUAL TABLE \(quotedName) USING fts5(" + columns.map(quoted).joined(separator: ", ")
            + ", content=\(literal(tableName)), content_rowid='rowid', tokenize=\(literal(Self.tokenizer)))"
    }

    /// The triggers that keep the index in sync. An external-content index must be told the
    /// exact old values to remove, which only the trigger sees (`old.…`); an update that
    /// changes no indexed value and not the rowid leaves the index alone.
    var triggerSQL: [String] {
        let table = quoted(tableName)
        let list = columns.map(quoted).joined(separator: ", ")
        func values(_ row: String) -> String { ([row + ".rowid"] + columns.map { row + "." + quoted($0) }).joined(separator: ", ") }
        let insert = "INSERT INTO \(quotedName)(rowid, \(list)) VALUES (\(values("new")));"
        let delete = "INSERT INTO \(quotedName)(\(quotedName), rowid, \(list)) VALUES ('delete', \(values("old")));"
        let changed = (["old.rowid IS NOT new.rowid"] + columns.map { "old.\(quoted($0)) IS NOT new.\(quoted($0))" })
            .joined(separator: " OR ")
        return [
            "CREATE TRIGGER \(quoted(triggerNames[0])) AFTER INSERT ON \(table) BEGIN \(insert) END",
            "CREATE TRIGGER \(quoted(triggerNames[1])) AFTER DELETE ON \(table) BEGIN \(delete) END",
            "CREATE TRIGGER \(quoted(triggerNames[2])) AFTER UPDATE ON \(table) WHEN \(changed) BEGIN \(delete) \(insert) END",
        ]
    }

    /// An empty FTS5 table with the index's columns, in the temp schema: the stand-in a read
    /// of a model nothing has written searches (and finds nothing in).
    var standInSQL: String {
        "CREATE VIRTUAL TABLE temp.\(quotedName) USING fts5(" + columns.map(quoted).joined(separator: ", ") + ")"
    }

    /// A copy of the index in the temp schema, filled from the table's rows: what a read that
    /// cannot rebuild an index lagging its table (in a read block, on a read-only store)
    /// searches instead. It holds its own copy of the text, so ranks and snippets are the same.
    var temporaryCopySQL: [String] {
        let list = columns.map(quoted).joined(separator: ", ")
        return [
            "CREATE VIRTUAL TABLE temp.\(quotedName) USING fts5(\(list), tokenize=\(literal(Self.tokenizer)))",
            "INSERT INTO temp.\(quotedName)(rowid, \(list)) SELECT rowid, \(list) FROM main.\(quoted(tableName))",
        ]
    }

    private func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}

extension TableDescription {
    /// The model's full-text index, or nil when it declares no searchable property.
    static func searchIndex<M: StoredModel>(of type: M.Type, layout: ColumnLayout, tableName: String, modelName: String) throws
        -> SearchIndexDescription?
    {
        let declared = M.searchable
        guard !declared.isEmpty else { return nil }
        try FullTextSupport.require(for: modelName)
        // The index finds records by rowid; a column by that name would hide it.
        if let shadowing = layout.names.first(where: { ["rowid", "oid", "_rowid_"].contains($0.lowercased()) }) {
            throw ModelStoreError(
                .invalidModel,
                "\(modelName) declares searchable properties and has a property named '\(shadowing)', which hides the rowid a full-text index needs.",
                model: modelName, column: shadowing, suggestion: "Give '\(shadowing)' another CodingKey.")
        }
        var columns: [String] = []
        for entry in declared {
            let name = PropertyName.column(named: entry.property, of: type, in: layout)
            guard let position = layout.position(of: name) else {
                throw ModelStoreError(
                    .invalidModel,
                    "\(modelName).searchable names '\(entry.property)', which is not a stored property of \(modelName) (its properties: \(layout.names.joined(separator: ", "))).",
                    model: modelName, column: entry.property,
                    suggestion: "Name a stored String or String? property, as .text(\\\(modelName).property).")
            }
            let column = layout.columns[position]
            guard column.storage == .text, case .primitive = column.coding else {
                throw ModelStoreError(
                    .invalidModel,
                    "\(modelName).searchable names '\(name)' of type \(column.typeName); only String and String? properties can be searched as text.",
                    model: modelName, column: name, value: column.typeName,
                    suggestion: "Remove '\(name)' from searchable, or keep a String copy of it to search.")
            }
            guard !columns.contains(name) else {
                throw ModelStoreError(
                    .invalidModel, "\(modelName).searchable names '\(name)' twice.", model: modelName, column: name,
                    suggestion: "Declare each property once; give it a larger weight to make it count more.")
            }
            guard entry.weight.isFinite, entry.weight > 0 else {
                throw ModelStoreError(
                    .invalidModel,
                    "\(modelName).searchable gives '\(name)' the weight \(entry.weight); a weight must be a positive number.",
                    model: modelName, column: name, value: String(entry.weight))
            }
            columns.append(name)
        }
        return SearchIndexDescription(
            tableName: tableName, name: tableName + "_fts", columns: columns, weights: declared.map(\.weight))
    }
}

/// Whether the SQLite ModelStore runs on has FTS5 (`SQLiteLibrary.hasFTS5`).
enum FullTextSupport {
    static var isAvailable: Bool { SQLiteLibrary.hasFTS5 }

    /// Refuses a searchable declaration where SQLite has no FTS5.
    static func require(for modelName: String, available: Bool = isAvailable) throws {
        guard !available else { return }
        throw ModelStoreError(
            .invalidModel,
            "\(modelName).searchable needs SQLite's full-text search (FTS5), which this platform's SQLite \(SQLiteLibrary.version) lacks.",
            model: modelName,
            suggestion: "Link an SQLite built with SQLITE_ENABLE_FTS5, or remove \(modelName).searchable.")
    }
}
