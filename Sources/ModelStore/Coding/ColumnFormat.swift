import Foundation

/// How a `UUID` property is stored, for a column another tool made (see
/// `StoredModel.columnStorage`).
///
/// ```swift
/// static let columnStorage: [ColumnStorage<Author>] = [.uuid(\.id, as: .blob)]   // GRDB's default
/// ```
///
/// | format | column | stored value |
/// |---|---|---|
/// | `text` (the default) | TEXT | `E621E1F8-C36C-495A-93FC-0C247A3E6E5F` (`uuidString`) |
/// | `lowercaseText` | TEXT | `e621e1f8-c36c-495a-93fc-0c247a3e6e5f` |
/// | `blob` | BLOB | the 16 bytes of `uuid`, in order, as GRDB and Fluent store them |
///
/// A stored value must be exactly in the declared form (a lower-case UUID in a `text` column
/// is a `.decodingFailed`): queries compare the column with the UUID's stored form.
public enum UUIDStorage: Sendable, Hashable, CustomStringConvertible {
    /// TEXT in upper case, as `uuidString` writes it: how ModelStore stores a `UUID` undeclared.
    case text
    /// TEXT in lower case.
    case lowercaseText
    /// A 16-byte BLOB.
    case blob

    /// The format's name as a declaration writes it.
    public var description: String {
        switch self {
        case .text: return "text"
        case .lowercaseText: return "lowercaseText"
        case .blob: return "blob"
        }
    }

    var storage: StorageType { self == .blob ? .blob : .text }

    /// The stored form of a UUID given in its own stored form (upper-case text).
    func store(_ value: SQLValue) throws -> SQLValue {
        let uuid = try UUID(sqlValue: value)
        switch self {
        case .text: return uuid.sqlValue
        case .lowercaseText: return .text(Statement.upperCaseText(of: uuid).lowercased())
        case .blob: return withUnsafeBytes(of: uuid.uuid) { .blob(Data($0)) }
        }
    }

    /// The UUID's own stored form (upper-case text) of a stored value in this form.
    func load(_ value: SQLValue) throws -> SQLValue {
        switch (self, value) {
        case (.blob, .blob(let data)) where data.count == 16:
            return try UUID(sqlValue: value).sqlValue
        case (.text, .text(let text)):
            if UUID(ownText: text) != nil { return value }
        case (.lowercaseText, .text(let text)):
            // Lower case exactly as `uuidString.lowercased()` writes it, and nothing else.
            if let uuid = UUID(ownText: text.uppercased()), Statement.upperCaseText(of: uuid).lowercased() == text { return uuid.sqlValue }
        default:
            break
        }
        let form: String
        switch self {
        case .text: form = "upper-case text such as 'E621E1F8-C36C-495A-93FC-0C247A3E6E5F'"
        case .lowercaseText: form = "lower-case text such as 'e621e1f8-c36c-495a-93fc-0c247a3e6e5f'"
        case .blob: form = "a BLOB of 16 bytes"
        }
        throw ModelStoreError(
            .decodingFailed, "The stored value \(value) is not a UUID in the declared form \(description) (\(form)).",
            value: value.description,
            suggestion: "Declare the form the column holds in columnStorage, or convert the stored values to it.")
    }
}

/// A column's declared stored form, where it differs from its type's own: what the encoder,
/// the decoder, keys, conditions and aggregates convert through.
///
/// Every conversion goes between two stored forms — the type's own (`Date`: REAL seconds
/// since 2001; `UUID`: upper-case text) and the declared one — so the paths that already
/// turn Swift values into their own form (conditions, keys) need only this one extra step.
enum ColumnFormat: Sendable, Hashable {
    case date(DateStorage)
    case uuid(UUIDStorage)

    /// The column's declared SQL type.
    var storage: StorageType {
        switch self {
        case .date(let format): return format.storage
        case .uuid(let format): return format.storage
        }
    }

    /// Whether every value the format writes is text that no SQLite affinity converts: a
    /// date or UUID text never reads as a number, so a NUMERIC column (GRDB declares dates
    /// `DATETIME`) keeps it as it is.
    var isTextNoAffinityConverts: Bool {
        switch self {
        case .date(let format): return format.isText
        case .uuid(let format): return format != .blob
        }
    }

    /// The declared form of a value given in the type's own stored form.
    func store(_ value: SQLValue) throws -> SQLValue {
        if value.isNull { return value }
        switch self {
        case .date(let format): return try format.store(referenceSeconds: try Date(sqlValue: value).timeIntervalSinceReferenceDate)
        case .uuid(let format): return try format.store(value)
        }
    }

    /// The type's own stored form of a value stored in the declared form.
    func load(_ value: SQLValue) throws -> SQLValue {
        if value.isNull { return value }
        switch self {
        case .date(let format): return .real(try format.load(value))
        case .uuid(let format): return try format.load(value)
        }
    }

    /// `store`, for a value a caller passed (a key, a condition): its failure carries `code`
    /// and names the model and column.
    func store(_ value: SQLValue, code: ModelStoreError.Code, model: String, column: String) throws -> SQLValue {
        do {
            return try store(value)
        } catch var error as ModelStoreError {
            // A value that is not even the type's own form (text for a date) was never a
            // stored value: say what it is instead of repeating the conversion's words.
            let problem = error.code == .decodingFailed ? "\(value) is not a \(typeName) value." : error.message
            error.code = code
            error.model = model
            error.column = column
            error.message = "\(model).\(column) is stored as \(self): " + problem
            throw error
        }
    }

    private var typeName: String {
        switch self {
        case .date: return "Date"
        case .uuid: return "UUID"
        }
    }

    /// `load`, for a value read outside a model (an aggregate): its failure names the model
    /// and column.
    func load(_ value: SQLValue, model: String, column: String) throws -> SQLValue {
        do {
            return try load(value)
        } catch var error as ModelStoreError {
            error.model = model
            error.column = column
            error.message = "\(model).\(column): " + error.message
            throw error
        }
    }
}

extension ColumnFormat: CustomStringConvertible {
    var description: String {
        switch self {
        case .date(let format): return ".date(\(format))"
        case .uuid(let format): return ".uuid(\(format))"
        }
    }
}
