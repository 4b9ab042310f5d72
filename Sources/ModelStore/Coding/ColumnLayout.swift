import Foundation

/// The SQL type a column is declared with; it sets SQLite's type affinity.
enum StorageType: String, Sendable {
    case integer = "INTEGER"
    case real = "REAL"
    case text = "TEXT"
    case blob = "BLOB"
    /// No declared type: SQLite keeps values exactly as bound (BLOB affinity).
    case untyped = ""
}

/// How a property's values travel between Swift and its column.
enum ColumnCoding: Sendable {
    /// Bool, integers, floating point, String: handled by the containers' typed methods.
    case primitive
    /// A type with one exact stored form (Date, UUID, Decimal, user enums that opt in).
    case convertible(any SQLValueConvertible.Type)
    /// A `Codable` type that encodes itself as one primitive (an enum with a raw value).
    case singleValue
    /// Arrays, sets, dictionaries and nested structs: JSON text.
    case json
    /// A Date or UUID stored in a declared form other than its own (`StoredModel.columnStorage`).
    case mapped(ColumnFormat)
}

/// One stored property of a model: a column.
struct ColumnDescription: Sendable {
    /// The property's coding key, which is also the column name.
    let name: String
    let storage: StorageType
    let isOptional: Bool
    let coding: ColumnCoding
    /// The Swift type's name, for messages.
    let typeName: String
    /// Whether the property is a `@Related` wrapper (known only for relationship properties).
    var isRelationshipWrapper = false
    /// The collation a text property declares (`ColumnStorage.text(_:collation:)`), if any.
    var collation: TextCollation?

    var isJSON: Bool {
        if case .json = coding { return true }
        return false
    }

    /// Whether the column holds a `Decimal` as its exact text, which orders by bytes ("10" <
    /// "9"): ordering comparisons, sorts and min/max of it need the decimal collation.
    var holdsDecimal: Bool {
        if case .convertible(let type) = coding { return type == Decimal.self }
        return false
    }
}

/// The columns of a model, in the order its `init(from:)` asks for them, with a fast lookup
/// from coding key to position.
struct ColumnLayout: Sendable {
    let modelName: String
    let columns: [ColumnDescription]
    /// Properties that are not columns (relationships); coders skip them.
    let skippedKeys: Set<String>
    /// Skipped properties whose type is a wrapper (`@Related`) that encodes even when empty.
    let wrapperKeys: Set<String>
    /// Column names alone, for the hinted lookup: comparing names should not copy whole
    /// column descriptions (and retain their strings) on every property of every row.
    let names: [String]
    /// `skippedKeys` as a list: a model has few relationships, and comparing a handful of
    /// short names costs less than hashing one, on every row of a read.
    let skippedNames: [String]
    /// Whether a column has a declared form (`.mapped`): paths that bind values for columns
    /// check this one flag before looking for a form, so other models pay nothing more.
    let hasDeclaredForms: Bool
    /// Whether each column holds a `Date` in its own stored form (REAL seconds since 2001):
    /// the coders read and write those directly, without the generic path's casts.
    let holdsOwnDate: [Bool]
    /// Whether each column holds a `UUID` in its own stored form (upper-case text as
    /// `uuidString` writes it; 16 bytes read too): read and written directly, likewise.
    let holdsOwnUUID: [Bool]
    /// Whether each column holds a `UUID` declared in the 16-byte form (`.uuid(_, as: .blob)`),
    /// which other libraries use: read and written directly too.
    let holdsBlobUUID: [Bool]
    private let positions: [String: Int]

    init(modelName: String, columns: [ColumnDescription], skippedKeys: Set<String> = [], wrapperKeys: Set<String> = []) {
        self.modelName = modelName
        self.columns = columns
        self.skippedKeys = skippedKeys
        self.wrapperKeys = wrapperKeys
        self.names = columns.map(\.name)
        self.skippedNames = skippedKeys.sorted()
        self.hasDeclaredForms = columns.contains {
            if case .mapped = $0.coding { return true }
            return false
        }
        self.holdsOwnDate = columns.map {
            if case .convertible(let type) = $0.coding { return type == Date.self }
            return false
        }
        self.holdsOwnUUID = columns.map {
            if case .convertible(let type) = $0.coding { return type == UUID.self }
            return false
        }
        self.holdsBlobUUID = columns.map {
            if case .mapped(.uuid(.blob)) = $0.coding { return true }
            return false
        }
        var positions: [String: Int] = [:]
        for (position, column) in columns.enumerated() { positions[column.name] = position }
        self.positions = positions
    }

    /// The position of the column named `name`.
    func position(of name: String) -> Int? {
        positions[name]
    }

    /// The position of `name`, trying `hint` first. Synthesized coders visit properties in
    /// declaration order, so the hint almost always hits and no string is hashed.
    @inline(__always)
    func position(of name: String, hint: inout Int) -> Int? {
        var candidate = hint
        // Encoding skips nil optionals, so look a few columns ahead before hashing.
        let end = min(names.count, hint + 4)
        while candidate < end {
            if names[candidate] == name {
                hint = candidate + 1
                return candidate
            }
            candidate += 1
        }
        guard let found = positions[name] else { return nil }
        hint = found + 1
        return found
    }

    /// A copy with `keys` removed from the columns: relationship properties.
    func removing(_ keys: Set<String>) -> ColumnLayout {
        let wrappers = columns.filter { keys.contains($0.name) && $0.isRelationshipWrapper }.map(\.name)
        return ColumnLayout(
            modelName: modelName, columns: columns.filter { !keys.contains($0.name) },
            skippedKeys: skippedKeys.union(keys), wrapperKeys: wrapperKeys.union(wrappers))
    }
}
