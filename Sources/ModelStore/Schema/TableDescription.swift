/// Everything ModelStore knows about a model's table, derived from the type alone and
/// checked once per process: name, columns, primary key, and the SQL fragments every
/// statement on the table reuses.
///
/// A class, though nothing in it changes: every call takes the description from the
/// process-wide cache, and copying a struct of twenty-odd fields (a retain each, a release
/// each) cost a `find` by key about 1,250 instructions; a reference is one retain.
final class TableDescription: Sendable {
    let modelName: String
    /// The model type's identity: two types may share a name (nested in different scopes).
    let modelID: ObjectIdentifier
    /// The type's name with its module and enclosing types, to tell such types apart.
    let qualifiedModelName: String
    let tableName: String
    let layout: ColumnLayout
    /// Layout positions of the primary key columns, in the order `primaryKey` lists them.
    let keyPositions: [Int]
    /// Whether a position is part of the primary key.
    let keyMask: ColumnMask

    /// `"Snack"`
    let quotedTable: String
    /// `"snackId", "name", …` — every column, in layout order.
    let selectList: String
    /// `"snackId" = ? AND …` — the primary key, bound in `keyPositions` order.
    let keyCondition: String
    /// Declared indexes; unique ones also take part in upserts.
    let indexes: [IndexDescription]
    /// Whether one of `indexes` is unique: held, since every server batch asks.
    let hasUniqueIndex: Bool
    /// Whether the key is one INTEGER column, which SQLite makes the rowid itself.
    let hasIntegerKey: Bool
    /// Whether a key column declares a collation other than BINARY, so a key a model carries
    /// may be spelled differently from the stored one it matches.
    let hasCollatedKey: Bool
    /// Whether the key is one optional integer property (`var id: Int64?`), which SQLite
    /// assigns when a model is saved without one.
    let assignsKeys: Bool
    /// The model's relationships, in the order `relationships` declares them.
    let relationships: [RelationshipDescription]
    /// Columns holding to-one links (after the property columns in the layout).
    let foreignKeyColumns: [ColumnDescription]
    /// The names an older file may still use for the table, its columns, join tables and
    /// indexes (`formerNames`), which the store renames on first use.
    let former: FormerSchema
    /// The full-text index of the model's `searchable` properties, if it declares any.
    let search: SearchIndexDescription?
    /// Whether the database records the table's changes in the durable history (`keepsHistory`).
    let keepsHistory: Bool
    /// The columns `timestamps` names: stamped on insert (created) and on every change (updated).
    let createdPosition: Int?
    let updatedPosition: Int?

    var columns: [ColumnDescription] { layout.columns }

    /// The columns an update of a stored record writes out of those a row carries: not the
    /// key, and not the creation date, which the record keeps.
    func updatable(_ present: ColumnMask) -> ColumnMask {
        var columns = present
        for position in keyPositions { columns.remove(position) }
        if let createdPosition { columns.remove(createdPosition) }
        return columns
    }

    /// Whether `columns` hold a value other than the change date: an update of the change
    /// date alone changes nothing, so it is not written.
    func changesSomething(_ columns: ColumnMask) -> Bool {
        var others = columns
        if let updatedPosition { others.remove(updatedPosition) }
        return !others.isEmpty
    }
    var keyNames: [String] { keyPositions.map { layout.columns[$0].name } }

    private static let cache = Locked<[ObjectIdentifier: TableDescription]>([:])

    /// The other models of this program, among those described so far, that store a
    /// column `column` in a table named `tableName` (both compared without case, as SQLite
    /// does): a column one of them declares is not the other's to drop.
    static func otherModels(declaring column: String, inTable tableName: String, except model: ObjectIdentifier) -> [String] {
        let table = tableName.lowercased()
        let name = column.lowercased()
        return cache.withLock { Array($0.values) }
            .filter { $0.modelID != model && $0.tableName.lowercased() == table && $0.columns.contains { $0.name.lowercased() == name } }
            .map(\.modelName).sorted()
    }

    /// The description of `M`, derived on first request and cached for the process.
    static func of<M: StoredModel>(_ type: M.Type) throws -> TableDescription {
        let id = ObjectIdentifier(type)
        if let cached = cache.withLock({ $0[id] }) { return cached }
        let description = try TableDescription(type)
        cache.withLock { $0[id] = description }
        return description
    }

    private init<M: StoredModel>(_ type: M.Type) throws {
        let modelName = String(describing: type)
        // Declared forms first (`columnStorage`): keys, and links to this model, store them.
        let probed = try ColumnLayout.stored(type)
        // Relationship properties are not columns; their links live in key columns.
        let properties = probed.removing(Set(M.relationships.map(\.property)))
        // The key comes first: relationships of other models need it.
        let keyNames = M.primaryKey.map { PropertyName.column(named: $0, of: type, in: properties) }
        let keyPositions = try Self.keyPositions(keyNames, layout: properties, modelName: modelName)
        let (relationships, foreignKeys) = try Self.relationships(of: type, layout: properties, modelName: modelName)
        let layout = ColumnLayout(
            modelName: modelName, columns: properties.columns + foreignKeys, skippedKeys: properties.skippedKeys,
            wrapperKeys: properties.wrapperKeys)
        let tableName = M.tableName
        try Self.validate(tableName: tableName, layout: layout, modelName: modelName)
        var declared = M.indexes.map { index in
            (columns: index.columns.map { PropertyName.column(named: $0, of: type, in: layout) }, isUnique: index.isUnique)
        }
        for relationship in relationships {
            // Links are looked up by these columns; a one-to-one allows one link per target.
            if case .foreignKeyHere(let positions, let unique) = relationship.storage {
                declared.append((positions.map { layout.columns[$0].name }, unique))
            }
        }
        let indexes = try Self.indexes(declared, layout: layout, tableName: tableName, modelName: modelName)

        self.modelName = modelName
        self.modelID = ObjectIdentifier(type)
        self.qualifiedModelName = String(reflecting: type)
        self.tableName = tableName
        self.layout = layout
        self.keyPositions = keyPositions
        self.keyMask = ColumnMask(keyPositions)
        self.quotedTable = quoted(tableName)
        self.selectList = layout.columns.map { quoted($0.name) }.joined(separator: ", ")
        self.keyCondition = keyPositions.map { quoted(layout.columns[$0].name) + " = ?" }
            .joined(separator: " AND ")
        self.indexes = indexes
        self.hasUniqueIndex = indexes.contains(where: \.isUnique)
        self.relationships = relationships
        self.foreignKeyColumns = foreignKeys
        let hasIntegerKey = keyPositions.count == 1 && layout.columns[keyPositions[0]].storage == .integer
        self.hasIntegerKey = hasIntegerKey
        self.assignsKeys = hasIntegerKey && layout.columns[keyPositions[0]].isOptional
        self.hasCollatedKey = keyPositions.contains { (layout.columns[$0].collation ?? .binary) != .binary }
        self.search = try Self.searchIndex(of: type, layout: layout, tableName: tableName, modelName: modelName)
        self.keepsHistory = M.keepsHistory
        let timestamps = M.timestamps
        self.createdPosition = try timestamps.created.map { try Self.timestampPosition($0, "created", layout, keyPositions, modelName) }
        self.updatedPosition = try timestamps.updated.map { try Self.timestampPosition($0, "updated", layout, keyPositions, modelName) }
        self.former = try Self.formerSchema(
            of: type, own: KeyInfo.of(type), layout: layout, indexes: indexes, relationships: relationships)
    }

    /// The column a timestamp names: a stored `Date` property that is not part of the key.
    private static func timestampPosition(
        _ name: String, _ role: String, _ layout: ColumnLayout, _ keyPositions: [Int], _ modelName: String
    ) throws -> Int {
        guard let position = layout.position(of: name), !keyPositions.contains(position),
            ["Date", "Optional<Date>"].contains(layout.columns[position].typeName)
        else {
            throw ModelStoreError(
                .invalidModel,
                "\(modelName).timestamps names '\(name)' as its \(role) date, which is not a stored Date property outside the primary key.",
                model: modelName, column: name, suggestion: "Name a `Date` or `Date?` property of \(modelName).")
        }
        return position
    }

    private static func validate(tableName: String, layout: ColumnLayout, modelName: String) throws {
        guard !tableName.isEmpty else {
            throw ModelStoreError(.invalidModel, "\(modelName).tableName is empty.", model: modelName)
        }
        guard !tableName.lowercased().hasPrefix("sqlite_") else {
            throw ModelStoreError(
                .invalidModel, "\(modelName).tableName '\(tableName)' starts with 'sqlite_', which SQLite reserves.",
                model: modelName, suggestion: "Choose another tableName.")
        }
        // The store's own bookkeeping tables (migrations, rebuilds) must not be a model's.
        guard !(["modelstore_migrations", "modelstore_rebuild"] + HistoryNames.tables).contains(tableName.lowercased()) else {
            throw ModelStoreError(
                .invalidModel, "\(modelName).tableName '\(tableName)' is the name of a table ModelStore keeps for itself.",
                model: modelName, suggestion: "Choose another tableName.")
        }
        guard !layout.columns.isEmpty else {
            throw ModelStoreError(
                .invalidModel, "\(modelName) has no stored properties to make columns of.", model: modelName)
        }
        // SQLite compares column names without regard to ASCII case.
        var seen: [String: String] = [:]
        for column in layout.columns {
            if let other = seen[column.name.lowercased()] {
                throw ModelStoreError(
                    .invalidModel,
                    "\(modelName) has properties '\(other)' and '\(column.name)', which SQLite treats as the same column name.",
                    model: modelName, column: column.name, suggestion: "Rename one of them, or give it another CodingKey.")
            }
            seen[column.name.lowercased()] = column.name
        }
    }

    private static func keyPositions(_ primaryKey: [String], layout: ColumnLayout, modelName: String) throws -> [Int] {
        guard !primaryKey.isEmpty else {
            throw ModelStoreError(
                .invalidModel, "\(modelName).primaryKey is empty; a model needs at least one key property.",
                model: modelName, suggestion: "Declare `static let primaryKey = [\"id\"]` naming the identifying property.")
        }
        var positions: [Int] = []
        for name in primaryKey {
            guard let position = layout.position(of: name) else {
                let known = layout.columns.map(\.name).joined(separator: ", ")
                throw ModelStoreError(
                    .invalidModel,
                    "\(modelName).primaryKey names '\(name)', which is not a stored property of \(modelName) (its properties: \(known)).",
                    model: modelName, column: name)
            }
            guard !positions.contains(position) else {
                throw ModelStoreError(
                    .invalidModel, "\(modelName).primaryKey names '\(name)' twice.", model: modelName, column: name)
            }
            let column = layout.columns[position]
            // One optional integer key is assigned by SQLite (its rowid) when a model has none.
            let assigned = primaryKey.count == 1 && column.storage == .integer && !column.isJSON
            guard !column.isOptional || assigned else {
                throw ModelStoreError(
                    .invalidModel,
                    "\(modelName).primaryKey names '\(name)', which is Optional; only a single integer key may be (SQLite assigns it), and this one is \(primaryKey.count == 1 ? column.typeName : "part of a composite key").",
                    model: modelName, column: name, suggestion: "Make '\(name)' non-optional.")
            }
            guard !column.isJSON else {
                throw ModelStoreError(
                    .invalidModel,
                    "\(modelName).primaryKey names '\(name)' of type \(column.typeName), which is stored as JSON and cannot be a key.",
                    model: modelName, column: name, suggestion: "Use a number, string, UUID, Date or enum property as the key.")
            }
            positions.append(position)
        }
        return positions
    }
}

extension TableDescription {
    /// `key` (values of the columns at `positions`) with texts folded by their columns'
    /// collations, so keys SQL calls equal are equal in Swift too.
    func folded(_ key: RecordKey, at positions: [Int]) -> RecordKey {
        let collations = positions.map { layout.columns[$0].collation ?? .binary }
        guard collations.contains(where: { $0 != .binary }) else { return key }
        switch key {
        case .integer: return key
        case .text(let text): return .text(collations[0].folded(text))
        case .values(let values):
            return .values(
                zip(values, collations).map { value, collation in
                    if case .text(let text) = value { return .text(collation.folded(text)) }
                    return value
                })
        }
    }
}
