/// An index a model declares on one or more of its properties.
///
/// ```swift
/// struct User: StoredModel {
///     var id: UUID
///     var email: String
///     var city: String?
///     var age: Int?
///     static let primaryKey = ["id"]
///     static let indexes: [TableIndex<User>] = [
///         .unique(\.email),           // save() updates the record with this email
///         .on(\.city, \.age),         // composite
///     ]
/// }
/// ```
///
/// Indexes are created with the table, and added to an existing table when declared later.
/// A unique index also makes `save` dedupe on it: a model whose key is new but whose unique
/// properties match a stored record updates that record (keeping its key) instead of
/// failing. That needs SQLite 3.35 or later.
public struct TableIndex<Model: StoredModel>: Sendable {
    /// The indexed properties, in order.
    public let columns: [String]
    /// Whether no two records may share the indexed values.
    public let isUnique: Bool

    /// An index on `properties`, in that order.
    public static func on(_ properties: PartialKeyPath<Model>..., unique: Bool = false) -> TableIndex {
        TableIndex(columns: properties.map(PropertyName.of), isUnique: unique)
    }

    /// A unique index on `properties`.
    public static func unique(_ properties: PartialKeyPath<Model>...) -> TableIndex {
        TableIndex(columns: properties.map(PropertyName.of), isUnique: true)
    }

    /// An index on properties named by string.
    public static func on(columns: [String], unique: Bool = false) -> TableIndex {
        TableIndex(columns: columns, isUnique: unique)
    }
}

/// A model's index as the schema layer keeps it: checked, named, independent of the model.
struct IndexDescription: Sendable, Hashable {
    let columns: [String]
    let isUnique: Bool
    /// Layout positions of the columns.
    let positions: [Int]
    let name: String

    /// `CREATE [UNIQUE] INDEX IF NOT EXISTS …`, each column in the order queries ask for
    /// (where the backend names where NULL sorts, NULL first, as every ascending ORDER BY
    /// says): an index in another order cannot serve an ordered query without a sort.
    func createSQL(on table: TableDescription, dialect: any SQLDialect) -> String {
        let order = dialect.nullsOrder(descending: false)
        return "CREATE \(isUnique ? "UNIQUE " : "")INDEX IF NOT EXISTS \(quoted(name)) ON \(table.quotedTable) ("
            + columns.map { quoted($0) + order }.joined(separator: ", ") + ")"
    }
}

extension TableDescription {
    static func indexes(_ declared: [(columns: [String], isUnique: Bool)], layout: ColumnLayout, tableName: String, modelName: String)
        throws -> [IndexDescription]
    {
        try declared.map { index in
            guard !index.columns.isEmpty else {
                throw ModelStoreError(.invalidModel, "\(modelName).indexes declares an index without properties.", model: modelName)
            }
            let positions = try index.columns.map { name -> Int in
                guard let position = layout.position(of: name) else {
                    throw ModelStoreError(
                        .invalidModel, "\(modelName).indexes names '\(name)', which is not a stored property of \(modelName).",
                        model: modelName, column: name)
                }
                return position
            }
            let name = (index.isUnique ? "unique_" : "index_") + ([tableName] + index.columns).joined(separator: "_")
            return IndexDescription(columns: index.columns, isUnique: index.isUnique, positions: positions, name: name)
        }
    }
}
