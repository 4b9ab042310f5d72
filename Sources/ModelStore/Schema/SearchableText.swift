/// A text property a model declares searchable: ModelStore keeps a full-text index of it in
/// sync with every write (SQLite's FTS5; on PostgreSQL a GIN index over a `tsvector`), and
/// `search(_:)` and `.matches(_:)` query it.
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
        return SearchIndexDescription(tableName: tableName, columns: columns, weights: declared.map(\.weight))
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
