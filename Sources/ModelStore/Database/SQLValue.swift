import Foundation

/// A value as SQLite stores it: one of its five storage classes.
///
/// Every property of a model becomes one `SQLValue` per record, and every value a query
/// compares against is bound as one — never spliced into SQL text.
public enum SQLValue: Sendable, Hashable {
    /// SQL `NULL`: a `nil` optional.
    case null
    /// A 64-bit signed integer (`INTEGER`).
    case integer(Int64)
    /// A 64-bit floating-point number (`REAL`).
    case real(Double)
    /// UTF-8 text (`TEXT`).
    case text(String)
    /// Bytes (`BLOB`).
    case blob(Data)

    /// Whether this is SQL `NULL`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension SQLValue: CustomStringConvertible {
    /// The value as a reader of an error message or a trace would want to see it:
    /// text quoted, long values shortened, blobs summarised.
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        case .text(let value):
            let shown = value.count > 120 ? String(value.prefix(117)) + "…" : value
            return "'" + shown.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let data):
            let hex = data.prefix(16).map { String(format: "%02x", $0) }.joined()
            return data.count > 16 ? "x'\(hex)…' (\(data.count) bytes)" : "x'\(hex)'"
        }
    }
}
