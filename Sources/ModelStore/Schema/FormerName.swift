/// A name a model's table, or one of its properties, had before: on first use the store
/// renames the stored table or column in place, keeping its data, indexes and links.
///
/// ```swift
/// struct Athlete: StoredModel {          // was `Player`, whose `cost` is now `price`
///     var athleteId: Int64
///     var price: Double?
///     @Related var club: Team?           // was `team`
///     static let primaryKey = ["athleteId"]
///     static let formerNames: [FormerName<Athlete>] = [
///         .table(from: "Player"),
///         .property(\.athleteId, from: "playerId"),
///         .property(\.price, from: "cost"),
///         .property(\.club, from: "team"),
///     ]
/// }
/// ```
///
/// Names ModelStore derives from renamed ones follow: a to-one's link columns
/// (`team_teamId` → `club_teamId`), join tables and their columns, and indexes. Keep a
/// declaration for as long as an old file may still be opened: once the rename has run, the
/// old name no longer exists and the declaration does nothing. A former name that is also a
/// current one, or one claimed by two properties, is refused with `.invalidModel`.
public struct FormerName<Model: StoredModel>: Sendable {
    enum Subject: Sendable, Equatable {
        case table
        /// The property's current name as its key path describes it (checked on first use).
        case property(String)
    }

    let subject: Subject
    let name: String

    /// The model's table was formerly called `name` (the model's type name, or an older
    /// `tableName`).
    public static func table(from name: String) -> FormerName {
        FormerName(subject: .table, name: name)
    }

    /// The property at `property` — a stored property or a relationship — was formerly
    /// called `name` (its coding key, which is the column name).
    public static func property<Value>(_ property: KeyPath<Model, Value>, from name: String) -> FormerName {
        FormerName(subject: .property(PropertyName.of(property)), name: name)
    }

    /// The to-one relationship at `property` (also one held in `@Related`) was formerly
    /// called `name`.
    public static func property<Target: StoredModel>(_ property: KeyPath<Model, Target?>, from name: String) -> FormerName {
        FormerName(subject: .property(PropertyName.of(toOne: property)), name: name)
    }

    /// The property whose coding key is now `current` was formerly called `name`: for a
    /// property a key path cannot name.
    public static func property(named current: String, from name: String) -> FormerName {
        FormerName(subject: .property(current), name: name)
    }
}

/// A model's `formerNames`, checked and resolved to column names.
struct DeclaredFormerNames: Sendable {
    /// Former names of the model's table.
    var tables: [String] = []
    /// Current property (column or relationship) name → its former names, as declared.
    var properties: [String: [String]] = [:]

    var isEmpty: Bool { tables.isEmpty && properties.isEmpty }

    /// `property` and its former names, current first.
    func names(of property: String) -> [String] {
        [property] + (properties[property] ?? [])
    }

    private static let cache = Locked<[ObjectIdentifier: DeclaredFormerNames]>([:])

    /// The checked declarations of `M`, whose properties (relationships included) are `probed`.
    static func of<M: StoredModel>(_ type: M.Type, probed: ColumnLayout) throws -> DeclaredFormerNames {
        let id = ObjectIdentifier(type)
        if let cached = cache.withLock({ $0[id] }) { return cached }
        let declared = M.formerNames
        guard !declared.isEmpty else { return DeclaredFormerNames() }
        let resolved = try resolve(declared, of: type, probed: probed)
        cache.withLock { $0[id] = resolved }
        return resolved
    }

    private static func resolve<M: StoredModel>(
        _ declared: [FormerName<M>], of type: M.Type, probed: ColumnLayout
    ) throws -> DeclaredFormerNames {
        let modelName = String(describing: type)
        var result = DeclaredFormerNames()
        let current = Set(probed.columns.map { $0.name.lowercased() }).union(M.relationships.map { $0.property.lowercased() })
        var claimed: [String: String] = [:]
        for former in declared {
            guard !former.name.isEmpty else {
                throw ModelStoreError(.invalidModel, "\(modelName).formerNames declares an empty former name.", model: modelName)
            }
            switch former.subject {
            case .table:
                guard former.name.lowercased() != M.tableName.lowercased() else {
                    throw ModelStoreError(
                        .invalidModel,
                        "\(modelName).formerNames declares '\(former.name)' as a former table name, but it is the table's current name.",
                        model: modelName, value: former.name, suggestion: "Remove the declaration, or name the table's old name.")
                }
                if !result.tables.contains(where: { $0.lowercased() == former.name.lowercased() }) {
                    result.tables.append(former.name)
                }
            case .property(let described):
                let property = PropertyName.column(named: described, of: type, in: probed)
                guard current.contains(property.lowercased()) else {
                    throw ModelStoreError(
                        .invalidModel,
                        "\(modelName).formerNames renames \(property), which is not a stored property or relationship of \(modelName).",
                        model: modelName, column: property,
                        suggestion: "Name the property by its key path (\\.\("name")), or by its coding key with property(named:from:).")
                }
                let key = former.name.lowercased()
                guard !current.contains(key) else {
                    throw ModelStoreError(
                        .invalidModel,
                        "\(modelName).formerNames says \(property) was formerly '\(former.name)', which is also a current property of \(modelName): the store could not tell their columns apart.",
                        model: modelName, column: property, value: former.name,
                        suggestion: "Rename in two releases: first the other property away, then this one.")
                }
                if let other = claimed[key], other != property {
                    throw ModelStoreError(
                        .invalidModel,
                        "\(modelName).formerNames gives '\(former.name)' as the former name of both \(other) and \(property); one stored column cannot become two.",
                        model: modelName, column: property, value: former.name)
                }
                claimed[key] = property
                if !(result.properties[property] ?? []).contains(former.name) {
                    result.properties[property, default: []].append(former.name)
                }
            }
        }
        return result
    }
}

/// The former names of everything ModelStore stores for one model: its table, its columns
/// (link columns derived from renamed names included), its join tables and its indexes.
/// Each current name maps to the names it may still have in an older file.
struct FormerSchema: Sendable {
    struct Join: Sendable {
        var names: [String]
        /// Current column → former names.
        var columns: [String: [String]]
    }

    var tables: [String] = []
    /// Current column → former names.
    var columns: [String: [String]] = [:]
    /// Current join table name → its former names and columns.
    var joinTables: [String: Join] = [:]
    /// Current index name → former index names.
    var indexes: [String: [String]] = [:]

    var isEmpty: Bool { tables.isEmpty && columns.isEmpty && joinTables.isEmpty && indexes.isEmpty }

    /// Every name `derive` makes from the variants of its parts (the current name of each
    /// first), except the current name itself. Derived names join parts, so a few renames
    /// make few variants; the count is capped so a pathological declaration cannot explode.
    static func variants(_ parts: [[String]], _ derive: ([String]) -> String) -> [String] {
        var combinations: [[String]] = [[]]
        for options in parts {
            combinations = combinations.flatMap { prefix in options.map { prefix + [$0] } }
            if combinations.count > 256 { combinations = Array(combinations.prefix(256)) }
        }
        let current = derive(parts.map { $0[0] })
        var seen = Set([current.lowercased()])
        var result: [String] = []
        for combination in combinations {
            let name = derive(combination)
            if seen.insert(name.lowercased()).inserted { result.append(name) }
        }
        return result
    }
}

extension KeyInfo {
    /// The model's table name, then its former names.
    var tableNames: [String] { [tableName] + formerNames.tables }

    /// The key column at `index`, then its former names.
    func keyNames(at index: Int) -> [String] { formerNames.names(of: keyNames[index]) }
}

extension TableDescription {
    /// Works out the former names of `M`'s stored names from its own declarations and those
    /// of the models its relationships point at.
    static func formerSchema<M: StoredModel>(
        of type: M.Type, own: KeyInfo, layout: ColumnLayout, indexes: [IndexDescription],
        relationships: [RelationshipDescription]
    ) throws -> FormerSchema {
        var schema = FormerSchema()
        schema.tables = own.formerNames.tables
        let declared = own.formerNames
        for column in layout.columns {
            if let formers = declared.properties[column.name], !formers.isEmpty { schema.columns[column.name] = formers }
        }
        for relationship in relationships {
            let target = try KeyInfo.of(relationship.target)
            switch relationship.storage {
            case .foreignKeyHere(let positions, _):
                for (index, position) in positions.enumerated() {
                    // Declared link names (`columns(_:)`) are not derived: no former names.
                    guard
                        layout.columns[position].name
                            == own.foreignKeyColumn(for: relationship.property, targetKey: target.keyNames[index])
                    else { continue }
                    let formers = FormerSchema.variants([declared.names(of: relationship.property), target.keyNames(at: index)]) {
                        own.foreignKeyColumn(for: $0[0], targetKey: $0[1])
                    }
                    if !formers.isEmpty { schema.columns[layout.columns[position].name] = formers }
                }
            case .foreignKeyThere:
                break  // The target's own table: renamed when the target is prepared.
            case .joinTable(let join):
                let targetProperty = relationship.inverse
                let targetProperties = targetProperty.map { target.formerNames.names(of: $0) } ?? [""]
                let ownerKeys = own.keyNames.indices.map { own.keyNames(at: $0) }
                let targetKeys = target.keyNames.indices.map { target.keyNames(at: $0) }
                let parts =
                    [own.tableNames, declared.names(of: relationship.property), target.tableNames, targetProperties]
                func described(_ parts: [String]) -> JoinTableDescription {
                    let ownerKey = KeyInfo(
                        modelName: own.modelName, tableName: parts[0], keyNames: Array(parts[4..<(4 + ownerKeys.count)]),
                        keyStorage: own.keyStorage, formerNames: own.formerNames)
                    let targetKey = KeyInfo(
                        modelName: target.modelName, tableName: parts[2], keyNames: Array(parts[(4 + ownerKeys.count)...]),
                        keyStorage: target.keyStorage, formerNames: target.formerNames)
                    return JoinTableDescription(
                        owner: ownerKey, ownerProperty: parts[1], target: targetKey,
                        targetProperty: targetProperty == nil ? nil : parts[3])
                }
                let allParts = parts + ownerKeys + targetKeys
                // A declared join table (`joinTable(_:columns:targetColumns:)`) has no former names.
                guard described(allParts.map { $0[0] }).name == join.name else { continue }
                var former = FormerSchema.Join(
                    names: FormerSchema.variants(Array(allParts.prefix(4))) {
                        described($0 + own.keyNames + target.keyNames).name
                    }, columns: [:])
                let columns = join.ownerColumns + join.targetColumns
                for (index, column) in columns.enumerated() {
                    let formers = FormerSchema.variants(allParts) {
                        let join = described($0)
                        return (join.ownerColumns + join.targetColumns)[index]
                    }
                    if !formers.isEmpty { former.columns[column] = formers }
                }
                if !former.names.isEmpty || !former.columns.isEmpty { schema.joinTables[join.name] = former }
                if !former.names.isEmpty {
                    schema.indexes["index_" + join.name + "_target"] = former.names.map { "index_" + $0 + "_target" }
                }
            }
        }
        for index in indexes {
            let columnNames = index.columns.map { column in [column] + (schema.columns[column] ?? []) }
            let formers = FormerSchema.variants([own.tableNames] + columnNames) {
                (index.isUnique ? "unique_" : "index_") + $0.joined(separator: "_")
            }
            if !formers.isEmpty { schema.indexes[index.name] = formers }
        }
        return schema
    }
}
