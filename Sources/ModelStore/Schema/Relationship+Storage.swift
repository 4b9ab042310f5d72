/// The names a relationship declaration gives its links' storage, where they must match a
/// table another tool made. Unnamed, ModelStore derives them (`team_id`,
/// `Snack_workers__Worker_snacks`).
struct LinkNames: Sendable, Equatable {
    /// A to-one's columns holding the target's key, in the target's key order.
    var columns: [String]?
    /// A many-to-many's (or one-way to-many's) join table.
    var joinTable: JoinTableNames?
}

/// A join table's name and columns, seen from the side that declares them.
struct JoinTableNames: Sendable, Equatable {
    let name: String
    /// Columns holding the declaring model's key.
    let columns: [String]
    /// Columns holding the target's key.
    let targetColumns: [String]

    /// The same names seen from the other side.
    var flipped: JoinTableNames {
        JoinTableNames(name: name, columns: targetColumns, targetColumns: columns)
    }
}

extension Relationship {
    /// This to-one, storing the target's key in the columns `names` (one per key property
    /// of the target, in its `primaryKey` order) instead of the derived `<property>_<key>`.
    ///
    /// ```swift
    /// .toOne(\.author, inverse: \Author.books).columns(["authorId"])
    /// ```
    ///
    /// Declare the names on the to-one side, whose table holds them; its inverse (a to-many,
    /// or the other side of a one-to-one) finds them there. The side of a one-to-one that
    /// declares columns is the one that holds the link. A declaration that cannot work (a
    /// to-many, a count that differs from the target's key, both sides of a one-to-one)
    /// throws `.invalidModel` on first use.
    public func columns(_ names: [String]) -> Relationship {
        var relationship = self
        relationship.linkNames.columns = names
        return relationship
    }

    /// This to-many, storing its links in the join table `name`, whose `columns` hold this
    /// model's key and `targetColumns` the target's, each in its `primaryKey` order.
    ///
    /// ```swift
    /// .toMany(\.tags, inverse: \Tag.posts).joinTable("postTag", columns: ["postId"], targetColumns: ["tagId"])
    /// ```
    ///
    /// One side of a many-to-many may declare it, or both, seen each from its own side; two
    /// declarations that disagree throw `.invalidModel` on first use. A stored join table
    /// must have those columns, and a primary key or unique index over all of them, or it is
    /// a `.schemaMismatch` before anything is written.
    public func joinTable(_ name: String, columns: [String], targetColumns: [String]) -> Relationship {
        var relationship = self
        relationship.linkNames.joinTable = JoinTableNames(name: name, columns: columns, targetColumns: targetColumns)
        return relationship
    }
}

extension TableDescription {
    /// The names `declaration` and its inverse's declaration (`inverse`) give their links,
    /// checked on both sides, so that either model, prepared first, refuses the same mistake:
    /// columns from the side holding them, the join table from this side.
    static func declaredLinkNames<M: StoredModel>(
        _ declaration: Relationship<M>, inverse: (kind: RelationshipKind, names: LinkNames)?, modelName: String, own: KeyInfo,
        target: KeyInfo
    ) throws -> LinkNames {
        let here = "\(modelName).\(declaration.property)"
        let there = declaration.inverse.map { "\(target.modelName).\($0)" }
        try checkLinkNames(
            declaration.linkNames, kind: declaration.kind, inverseKind: inverse?.kind, owner: here, ownerKey: own, target: target,
            inverse: there, modelName: modelName)
        guard let inverse, let there else { return declaration.linkNames }
        try checkLinkNames(
            inverse.names, kind: inverse.kind, inverseKind: declaration.kind, owner: there, ownerKey: target, target: own,
            inverse: here, modelName: modelName)
        if declaration.linkNames.columns != nil, inverse.names.columns != nil {
            throw ModelStoreError(
                .invalidModel, "\(here) and \(there) both declare link columns, but one side of a one-to-one holds the link.",
                model: modelName, column: declaration.property, suggestion: "Declare columns on the side whose table holds them.")
        }
        var names = declaration.linkNames
        names.columns = names.columns ?? inverse.names.columns
        switch (declaration.linkNames.joinTable, inverse.names.joinTable?.flipped) {
        case (let mine?, let theirs?) where mine != theirs:
            throw ModelStoreError(
                .invalidModel,
                "\(here) and \(there) declare different join tables: \(describe(mine)) and, seen from \(here), \(describe(theirs)).",
                model: modelName, column: declaration.property,
                suggestion: "Declare the join table on one side only, or make the two declarations name the same table and columns.")
        case (nil, let theirs?):
            names.joinTable = theirs
        default:
            break
        }
        return names
    }

    private static func describe(_ join: JoinTableNames) -> String {
        "\(join.name) (\(join.columns.joined(separator: ", ")) → \(join.targetColumns.joined(separator: ", ")))"
    }

    /// Checks one side's declared names against its kind and both models' keys.
    private static func checkLinkNames(
        _ names: LinkNames, kind: RelationshipKind, inverseKind: RelationshipKind?, owner: String, ownerKey: KeyInfo,
        target: KeyInfo, inverse: String?, modelName: String
    ) throws {
        func refuse(_ message: String, suggestion: String? = nil) -> ModelStoreError {
            ModelStoreError(
                .invalidModel, message, model: modelName, column: owner.split(separator: ".").last.map(String.init), suggestion: suggestion)
        }
        func check(_ columns: [String], holding key: KeyInfo, _ what: String) throws {
            guard columns.count == key.keyNames.count else {
                throw refuse(
                    "\(owner) declares \(columns.count) \(what) (\(columns.joined(separator: ", "))), but \(key.modelName)'s key has \(key.keyNames.count) (\(key.keyNames.joined(separator: ", "))).",
                    suggestion: "Name one column per key property of \(key.modelName), in its primaryKey order.")
            }
            if let empty = columns.firstIndex(where: \.isEmpty) {
                throw refuse("\(owner) declares an empty name for column \(empty + 1) of its \(what).")
            }
        }
        if let columns = names.columns {
            guard kind == .toOne else {
                throw refuse(
                    "\(owner) declares link columns, but it is a to-many, whose links are not stored on its own table.",
                    suggestion: inverseKind == .toOne
                        ? "Declare the columns on the to-one side, \(inverse ?? "its inverse"), whose table holds them."
                        : "Name the join table with joinTable(_:columns:targetColumns:).")
            }
            try check(columns, holding: target, "link columns")
        }
        if let join = names.joinTable {
            guard kind == .toMany, inverseKind != .toOne else {
                throw refuse(
                    "\(owner) declares a join table, but it is stored as link columns (it is a \(kind == .toOne ? "to-one" : "one-to-many")).",
                    suggestion: "Name the link columns with columns(_:) on the to-one side.")
            }
            guard !join.name.isEmpty else { throw refuse("\(owner) declares a join table with an empty name.") }
            try check(join.columns, holding: ownerKey, "join-table columns")
            try check(join.targetColumns, holding: target, "join-table target columns")
        }
    }
}

extension JoinTableDescription {
    /// The same join table under the names a declaration gives, if any.
    func named(_ names: JoinTableNames?) -> JoinTableDescription {
        guard let names else { return self }
        return JoinTableDescription(
            name: names.name, ownerColumns: names.columns, targetColumns: names.targetColumns, ownerTable: ownerTable,
            ownerKey: ownerKey, ownerStorage: ownerStorage, targetTable: targetTable, targetKey: targetKey, targetStorage: targetStorage)
    }
}

extension KeyInfo {
    /// How a link column holding key component `offset` codes its values: in the key's
    /// declared form, so conditions on the link (`Column("authorId") == id`) bind that form.
    func linkCoding(_ offset: Int) -> ColumnCoding {
        if offset < keyCoding.count, case .mapped = keyCoding[offset] { return keyCoding[offset] }
        return .primitive
    }
}
