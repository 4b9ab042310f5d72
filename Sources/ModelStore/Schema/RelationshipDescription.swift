/// A relationship as the schema stores it: checked against its inverse, with the columns or
/// join table that hold its links.
struct RelationshipDescription: Sendable {
    enum Storage: Sendable {
        /// Key columns of the target on this model's table (a to-one). `unique` for the side
        /// of a one-to-one that holds the key.
        case foreignKeyHere(positions: [Int], unique: Bool)
        /// Key columns of this model on the target's table (a to-many, or the side of a
        /// one-to-one that does not hold the key).
        case foreignKeyThere(columns: [String])
        /// A join table (many-to-many, or a one-way to-many).
        case joinTable(JoinTableDescription)
    }

    let property: String
    let kind: RelationshipKind
    let target: any StoredModel.Type
    let targetName: String
    let inverse: String?
    let deleteRule: DeleteRule
    /// Whether a read that does not say loads it (`RelationshipLoading.eager`).
    let loadsWithRecord: Bool
    let storage: Storage
}

/// The join table of a many-to-many (or one-way to-many) relationship.
struct JoinTableDescription: Sendable, Hashable {
    let name: String
    /// Columns holding the owning model's key, in its key order.
    let ownerColumns: [String]
    /// Columns holding the target's key, in its key order.
    let targetColumns: [String]
    let ownerTable: String
    let ownerKey: [String]
    let ownerStorage: [StorageType]
    let targetTable: String
    let targetKey: [String]
    let targetStorage: [StorageType]

    /// The same table seen from the target's side.
    var flipped: JoinTableDescription {
        JoinTableDescription(
            name: name, ownerColumns: targetColumns, targetColumns: ownerColumns, ownerTable: targetTable,
            ownerKey: targetKey, ownerStorage: targetStorage, targetTable: ownerTable, targetKey: ownerKey,
            targetStorage: ownerStorage)
    }

    /// `CREATE TABLE IF NOT EXISTS` with both keys, a primary key over the pair, and foreign
    /// keys that remove a link when either record is deleted.
    var createSQL: [String] { createSQL(dialect: SQLiteDialect()) }

    func createSQL(dialect: any SQLDialect) -> [String] {
        func columns(_ names: [String], _ storage: [StorageType]) -> [String] {
            zip(names, storage).map { "\(quoted($0)) \(dialect.columnType($1.rawValue, isDecimal: false)) NOT NULL" }
        }
        func list(_ names: [String]) -> String { names.map(quoted).joined(separator: ", ") }
        let definitions =
            columns(ownerColumns, ownerStorage) + columns(targetColumns, targetStorage) + [
                "PRIMARY KEY (\(list(ownerColumns + targetColumns)))",
                "FOREIGN KEY (\(list(ownerColumns))) REFERENCES \(quoted(ownerTable)) (\(list(ownerKey))) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED",
                "FOREIGN KEY (\(list(targetColumns))) REFERENCES \(quoted(targetTable)) (\(list(targetKey))) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED",
            ]
        return [
            "CREATE TABLE IF NOT EXISTS \(quoted(name)) (" + definitions.joined(separator: ", ") + ")",
            "CREATE INDEX IF NOT EXISTS \(quoted(SchemaMigrator.shortened("index_" + name + "_target", to: dialect.maximumNameLength))) ON \(quoted(name)) (\(list(targetColumns)))",
        ]
    }
}

/// The parts of a model's table that relationships of other models need: its name and key,
/// derived without looking at its own relationships (which may lead back here).
struct KeyInfo: Sendable {
    let modelName: String
    let tableName: String
    let keyNames: [String]
    let keyStorage: [StorageType]
    /// The model's declared former names (of its table and key among others).
    let formerNames: DeclaredFormerNames
    /// How each key column's values travel (a declared form, for links that hold them).
    var keyCoding: [ColumnCoding] = []

    static func of<M: StoredModel>(_ type: M.Type) throws -> KeyInfo {
        let modelName = String(describing: type)
        let layout = try ColumnLayout.stored(type)
        var names: [String] = []
        var storage: [StorageType] = []
        var coding: [ColumnCoding] = []
        for declared in M.primaryKey {
            let name = PropertyName.column(named: declared, of: type, in: layout)
            guard let position = layout.position(of: name) else {
                throw ModelStoreError(
                    .invalidModel, "\(modelName).primaryKey names '\(name)', which is not a stored property of \(modelName).",
                    model: modelName, column: name)
            }
            names.append(name)
            storage.append(layout.columns[position].storage == .untyped ? .untyped : layout.columns[position].storage)
            coding.append(layout.columns[position].coding)
        }
        return KeyInfo(
            modelName: modelName, tableName: M.tableName, keyNames: names, keyStorage: storage,
            formerNames: try DeclaredFormerNames.of(type, probed: layout), keyCoding: coding)
    }
}

extension TableDescription {
    /// Checks `M`'s relationship declarations and works out their storage. Returns the
    /// descriptions and the foreign-key columns to add to the layout.
    static func relationships<M: StoredModel>(
        of type: M.Type, layout: ColumnLayout, modelName: String
    ) throws -> (relationships: [RelationshipDescription], foreignKeys: [ColumnDescription]) {
        var descriptions: [RelationshipDescription] = []
        var foreignKeys: [ColumnDescription] = []
        var seen = Set<String>()
        let own = try KeyInfo.of(type)
        for declaration in M.relationships {
            let name = declaration.property
            guard !name.hasPrefix("\\") else {
                throw ModelStoreError(
                    .invalidModel, "\(modelName).relationships declares \(name), which is not a stored property of \(modelName).",
                    model: modelName, column: name)
            }
            guard seen.insert(name).inserted else {
                throw ModelStoreError(.invalidModel, "\(modelName).relationships declares '\(name)' twice.", model: modelName, column: name)
            }
            let target = try KeyInfo.of(declaration.target)
            let inverseDeclaration = try checkInverse(declaration, modelName: modelName, model: M.self, target: target)
            let names = try declaredLinkNames(
                declaration, inverse: inverseDeclaration.map { ($0.kind, $0.names) }, modelName: modelName, own: own, target: target)
            let storage: RelationshipDescription.Storage
            switch (declaration.kind, inverseDeclaration?.kind) {
            case (.toOne, .toMany?), (.toOne, nil):
                storage = .foreignKeyHere(positions: [], unique: false)
            case (.toOne, .toOne?):
                let here = "\(M.tableName).\(name)"
                let there = "\(target.tableName).\(declaration.inverse!)"
                // The side that names the link columns holds them; otherwise the first by name.
                let holdsLink = declaration.linkNames.columns != nil || (names.columns == nil && here <= there)
                storage =
                    holdsLink
                    ? .foreignKeyHere(positions: [], unique: true)
                    : .foreignKeyThere(columns: names.columns ?? target.foreignKeyColumns(for: declaration.inverse!, referencing: own))
            case (.toMany, .toOne?):
                storage = .foreignKeyThere(columns: names.columns ?? target.foreignKeyColumns(for: declaration.inverse!, referencing: own))
            case (.toMany, .toMany?), (.toMany, nil):
                storage = .joinTable(
                    JoinTableDescription(
                        owner: own, ownerProperty: name, target: target, targetProperty: declaration.inverse
                    ).named(names.joinTable))
            }
            var resolved = storage
            if case .foreignKeyHere(_, let unique) = storage {
                var positions: [Int] = []
                for (offset, (keyName, keyStorage)) in zip(target.keyNames, target.keyStorage).enumerated() {
                    let column = names.columns?[offset] ?? own.foreignKeyColumn(for: name, targetKey: keyName)
                    if layout.position(of: column) != nil || foreignKeys.contains(where: { $0.name == column }) {
                        throw ModelStoreError(
                            .invalidModel,
                            "\(modelName).\(name) stores its link in a column named '\(column)', which \(modelName) already has.",
                            model: modelName, column: column, suggestion: "Rename the property '\(column)'.")
                    }
                    positions.append(layout.columns.count + foreignKeys.count)
                    foreignKeys.append(
                        ColumnDescription(
                            // A link holds the target's key in the target's declared form.
                            name: column, storage: keyStorage, isOptional: true, coding: target.linkCoding(offset),
                            typeName: "\(target.modelName).\(keyName)"))
                }
                resolved = .foreignKeyHere(positions: positions, unique: unique)
            }
            descriptions.append(
                RelationshipDescription(
                    property: name, kind: declaration.kind, target: declaration.target,
                    targetName: target.modelName, inverse: declaration.inverse, deleteRule: declaration.deleteRule,
                    loadsWithRecord: declaration.loading == .eager, storage: resolved))
        }
        return (descriptions, foreignKeys)
    }

    /// The inverse's declaration on the target, checked to point back with a fitting kind.
    private static func checkInverse<M: StoredModel>(
        _ declaration: Relationship<M>, modelName: String, model: M.Type, target: KeyInfo
    ) throws -> (kind: RelationshipKind, inverse: String?, names: LinkNames)? {
        guard let inverse = declaration.inverse else { return nil }
        func inverseOf<T: StoredModel>(_ type: T.Type) -> (
            kind: RelationshipKind, target: any StoredModel.Type, inverse: String?, names: LinkNames
        )? {
            guard let found = T.relationships.first(where: { $0.property == inverse }) else { return nil }
            return (found.kind, found.target, found.inverse, found.linkNames)
        }
        let both = "\(modelName).\(declaration.property) and \(target.modelName).\(inverse)"
        guard let found = inverseOf(declaration.target) else {
            throw ModelStoreError(
                .invalidModel,
                "\(modelName).\(declaration.property) names \(target.modelName).\(inverse) as its inverse, but \(target.modelName).relationships declares no relationship '\(inverse)'.",
                model: modelName, column: declaration.property,
                suggestion:
                    "Declare \(target.modelName).\(inverse) in \(target.modelName).relationships with inverse \\\(modelName).\(declaration.property)."
            )
        }
        guard ObjectIdentifier(found.target) == ObjectIdentifier(M.self), found.inverse == declaration.property else {
            let pointsTo = found.inverse.map { "\(String(describing: found.target)).\($0)" } ?? "no inverse"
            throw ModelStoreError(
                .invalidModel,
                "\(both) do not point back at each other: \(target.modelName).\(inverse) names \(pointsTo) as its inverse.",
                model: modelName, column: declaration.property,
                suggestion: "Make each name the other as its inverse.")
        }
        guard found.kind == declaration.inverseKind else {
            throw ModelStoreError(
                .invalidModel, "\(both) have kinds that do not fit together.", model: modelName, column: declaration.property)
        }
        return (found.kind, found.inverse, found.names)
    }
}

extension KeyInfo {
    /// `team_id`: the column holding a to-one's target key component.
    func foreignKeyColumn(for property: String, targetKey: String) -> String {
        property + "_" + targetKey
    }

    /// The columns this (target) model's table uses for its to-one `property` that points at `owner`.
    func foreignKeyColumns(for property: String, referencing owner: KeyInfo) -> [String] {
        owner.keyNames.map { foreignKeyColumn(for: property, targetKey: $0) }
    }
}

extension JoinTableDescription {
    /// The join table of `owner.ownerProperty` (and its inverse, if any). Both sides derive
    /// the same name and columns, whichever is prepared first.
    init(owner: KeyInfo, ownerProperty: String, target: KeyInfo, targetProperty: String?) {
        let ownerSide = "\(owner.tableName)_\(ownerProperty)"
        let targetSide = targetProperty.map { "\(target.tableName)_\($0)" } ?? target.tableName
        let ownerColumns = owner.keyNames.map { ownerSide + "_" + $0 }
        let targetColumns = target.keyNames.map { targetSide + "_" + $0 }
        let sides = [ownerSide, targetSide].sorted()
        self.init(
            name: targetProperty == nil ? ownerSide : sides.joined(separator: "__"), ownerColumns: ownerColumns,
            targetColumns: targetColumns, ownerTable: owner.tableName, ownerKey: owner.keyNames,
            ownerStorage: owner.keyStorage, targetTable: target.tableName, targetKey: target.keyNames,
            targetStorage: target.keyStorage)
    }
}

extension TableDescription {
    /// `FOREIGN KEY (…) REFERENCES …` for each to-one stored here. Checks are deferred to
    /// commit, so a graph may be saved in any order; deletes apply the delete rules first.
    var foreignKeyConstraints: [String] {
        relationships.compactMap { relationship in
            guard case .foreignKeyHere(let positions, _) = relationship.storage,
                let target = try? KeyInfo.of(relationship.target)
            else { return nil }
            let columns = positions.map { quoted(layout.columns[$0].name) }.joined(separator: ", ")
            return "FOREIGN KEY (\(columns)) REFERENCES \(quoted(target.tableName)) ("
                + target.keyNames.map(quoted).joined(separator: ", ") + ")" + relationship.onDelete
        }
    }

    /// `REFERENCES …` for a link column added to an existing table (single-column keys only:
    /// SQLite cannot add a table constraint later).
    func singleColumnReference(for column: String) -> String? {
        for relationship in relationships {
            guard case .foreignKeyHere(let positions, _) = relationship.storage, positions.count == 1,
                layout.columns[positions[0]].name == column, let target = try? KeyInfo.of(relationship.target)
            else { continue }
            return "REFERENCES \(quoted(target.tableName)) (\(quoted(target.keyNames[0])))" + relationship.onDelete
        }
        return nil
    }

    /// The relationship named `property`, if the model declares one.
    func relationship(named property: String) -> RelationshipDescription? {
        relationships.first { $0.property == property }
    }
}

extension RelationshipDescription {
    /// The foreign key's action: a one-way to-one's target knows nothing of it, so SQLite
    /// clears the link when the target goes; a two-way one is handled by the inverse's
    /// delete rule, which ModelStore applies before deleting.
    var onDelete: String {
        (inverse == nil ? " ON DELETE SET NULL" : "") + " DEFERRABLE INITIALLY DEFERRED"
    }
}
