import Foundation

/// How one property is stored, where SQLite has several common forms and a table another
/// tool made uses one that is not ModelStore's own (see `StoredModel.columnStorage`).
///
/// ```swift
/// struct Post: StoredModel {
///     var id: UUID
///     var title: String
///     var createdAt: Date
///     var editedAt: Date?
///     static let primaryKey = ["id"]
///     static let columnStorage: [ColumnStorage<Post>] = [
///         .uuid(\.id, as: .blob),                      // 16 bytes
///         .date(\.createdAt, as: .sqliteText),         // '2024-05-01 12:00:00.123'
///         .date(\.editedAt, as: .unixMilliseconds),    // 1714564800123
///     ]
/// }
/// ```
///
/// The column's declared SQL type follows the form (TEXT, INTEGER, REAL or BLOB), and every
/// value bound for the column takes it: saves, keys (`Post.find(key: id)` binds the 16
/// bytes), conditions (`\.createdAt > date`), batch updates, match keys, and the link
/// columns and join tables of relationships that point at the model. `Bool` needs no
/// declaration: it is always INTEGER 0 or 1, as other tools store it.
public struct ColumnStorage<Model: StoredModel>: Sendable {
    /// The property's name (its coding key), or the key path's description when it names no
    /// stored property.
    let property: String
    /// The declared form; nil for a declaration of a collation alone.
    let format: ColumnFormat?
    /// The Swift type the declaration is for, to check against the property's own.
    let valueType: ObjectIdentifier
    let valueTypeName: String
    /// How the text column compares values, when declared.
    var collation: TextCollation?

    /// Compares the text property `property` by `collation` — in its key, unique indexes,
    /// conditions and sorting (`.caseInsensitive`: `"A@x.org"` and `"a@x.org"` are one value).
    public static func text(_ property: KeyPath<Model, String>, collation: TextCollation) -> ColumnStorage {
        ColumnStorage(
            property: PropertyName.of(property), format: nil, valueType: ObjectIdentifier(String.self), valueTypeName: "String",
            collation: collation)
    }

    /// Compares the optional text property `property` by `collation`.
    public static func text(_ property: KeyPath<Model, String?>, collation: TextCollation) -> ColumnStorage {
        ColumnStorage(
            property: PropertyName.of(property), format: nil, valueType: ObjectIdentifier(String.self), valueTypeName: "String",
            collation: collation)
    }

    /// Stores the `Date` property `property` in the form `storage`.
    public static func date(_ property: KeyPath<Model, Date>, as storage: DateStorage) -> ColumnStorage {
        ColumnStorage(
            property: PropertyName.of(property), format: .date(storage), valueType: ObjectIdentifier(Date.self), valueTypeName: "Date")
    }

    /// Stores the optional `Date` property `property` in the form `storage`; `nil` is NULL.
    public static func date(_ property: KeyPath<Model, Date?>, as storage: DateStorage) -> ColumnStorage {
        ColumnStorage(
            property: PropertyName.of(property), format: .date(storage), valueType: ObjectIdentifier(Date.self), valueTypeName: "Date")
    }

    /// Stores the `UUID` property `property` in the form `storage`.
    public static func uuid(_ property: KeyPath<Model, UUID>, as storage: UUIDStorage) -> ColumnStorage {
        ColumnStorage(
            property: PropertyName.of(property), format: .uuid(storage), valueType: ObjectIdentifier(UUID.self), valueTypeName: "UUID")
    }

    /// Stores the optional `UUID` property `property` in the form `storage`; `nil` is NULL.
    public static func uuid(_ property: KeyPath<Model, UUID?>, as storage: UUIDStorage) -> ColumnStorage {
        ColumnStorage(
            property: PropertyName.of(property), format: .uuid(storage), valueType: ObjectIdentifier(UUID.self), valueTypeName: "UUID")
    }
}

extension StoredModel {
    /// Every property in its type's own form (see `ColumnStorage`).
    public static var columnStorage: [ColumnStorage<Self>] { [] }
}

extension ColumnLayout {
    /// The layout of `M`'s stored properties with their declared forms applied: the one
    /// every table description and key of `M` starts from.
    static func stored<M: StoredModel>(_ type: M.Type) throws -> ColumnLayout {
        try SchemaProbe.cachedLayout(of: type).applying(M.columnStorage)
    }

    /// A copy whose declared columns take their declared form. Declarations that name no
    /// property, one of another type, or one property twice are `.invalidModel`; a form equal
    /// to the type's own changes nothing, so such a model pays for no conversion.
    func applying<M: StoredModel>(_ declarations: [ColumnStorage<M>]) throws -> ColumnLayout {
        guard !declarations.isEmpty else { return self }
        var columns = self.columns
        var seen = Set<String>()
        for declaration in declarations {
            let name = declaration.property
            let declared =
                "\(modelName).columnStorage declares " + (declaration.format.map { "\($0)" } ?? "a collation") + " for '\(name)'"
            guard seen.insert(name).inserted else {
                throw ModelStoreError(
                    .invalidModel, "\(modelName).columnStorage declares '\(name)' twice.", model: modelName, column: name,
                    suggestion: "Keep one declaration per property.")
            }
            guard let position = position(of: name) else {
                throw ModelStoreError(
                    .invalidModel,
                    "\(declared), which is not a stored property of \(modelName)"
                        + (skippedKeys.contains(name) ? " (it is a relationship)." : "."),
                    model: modelName, column: name,
                    suggestion: "Name a stored Date, UUID or String property directly, as \\\(modelName).property.")
            }
            guard let format = declaration.format else {
                // A collation: the property must be stored as text.
                guard columns[position].storage == .text, !columns[position].isJSON else {
                    throw ModelStoreError(
                        .invalidModel, "\(declared), but it is stored as \(columns[position].typeName), not as text.",
                        model: modelName, column: name, suggestion: "Declare collations for String properties only.")
                }
                columns[position].collation = declaration.collation
                continue
            }
            guard case .convertible(let type) = columns[position].coding, ObjectIdentifier(type) == declaration.valueType else {
                throw ModelStoreError(
                    .invalidModel,
                    "\(declared), but its init(from:) reads it as \(columns[position].typeName), not \(declaration.valueTypeName).",
                    model: modelName, column: name,
                    suggestion: "Declare a form of the type the property is coded as, or none.")
            }
            if case .date(let storage) = format, !storage.isValid {
                throw ModelStoreError(
                    .invalidModel, "\(declared): a date text holds 0 to 3 digits after the seconds, not \(storage.fractionDigits).",
                    model: modelName, column: name, value: String(storage.fractionDigits))
            }
            if format == .date(.referenceSeconds) || format == .uuid(.text) { continue }
            let column = columns[position]
            var mapped = ColumnDescription(
                name: column.name, storage: format.storage, isOptional: column.isOptional,
                coding: .mapped(format), typeName: column.typeName)
            mapped.isRelationshipWrapper = column.isRelationshipWrapper
            columns[position] = mapped
        }
        return ColumnLayout(modelName: modelName, columns: columns, skippedKeys: skippedKeys, wrapperKeys: wrapperKeys)
    }

    /// A projection's layout with the declared forms of the model's same-named columns, so
    /// `findAll(as:)` reads a mapped column as the model does.
    func adoptingForms(of model: ColumnLayout) -> ColumnLayout {
        var changed = false
        let columns = self.columns.map { column -> ColumnDescription in
            guard case .convertible(let type) = column.coding, let position = model.position(of: column.name),
                case .mapped(let format) = model.columns[position].coding, format.accepts(type)
            else { return column }
            changed = true
            return ColumnDescription(
                name: column.name, storage: format.storage, isOptional: column.isOptional, coding: .mapped(format),
                typeName: column.typeName)
        }
        return changed ? ColumnLayout(modelName: modelName, columns: columns, skippedKeys: skippedKeys, wrapperKeys: wrapperKeys) : self
    }

    /// The declared form of the column named `name`, if it has one.
    func format(of name: String) -> ColumnFormat? {
        guard let position = position(of: name), case .mapped(let format) = columns[position].coding else { return nil }
        return format
    }
}

extension ColumnFormat {
    /// Whether the format is for values of `type`.
    func accepts(_ type: any SQLValueConvertible.Type) -> Bool {
        switch self {
        case .date: return type == Date.self
        case .uuid: return type == UUID.self
        }
    }
}

extension ColumnDescription {
    /// The storage the column-type check compares with the stored column's affinity: a
    /// declared text form that no affinity converts is kept by every column, as a BLOB is.
    var checkedStorage: StorageType {
        if case .mapped(let format) = coding, format.isTextNoAffinityConverts { return .blob }
        return storage
    }
}
