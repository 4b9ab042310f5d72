import Foundation

/// A Swift value that has one exact stored form as an `SQLValue`.
///
/// Keys passed to `find(key:)`, values in predicates, and most model properties go through
/// this protocol, so a value compares in SQL exactly as it was stored. ModelStore conforms
/// the standard types; an enum with a raw value conforms by declaring it:
///
/// ```swift
/// enum Taste: String, Codable, SQLValueConvertible { case sweet, sour }
/// ```
///
/// How the standard types are stored:
/// - `Bool`: INTEGER 0 or 1. Integers of every width: INTEGER; a `UInt64` or `UInt` above
///   `Int64.max` is refused rather than wrapped.
/// - `Double`, `Float`: REAL. NaN is refused, because SQLite would turn it into NULL;
///   `-0.0` is stored as `0.0`, the zero SQLite keeps.
/// - `String`: TEXT, NUL characters included. `Data`: BLOB.
/// - `Date`: REAL, the exact `timeIntervalSinceReferenceDate` (seconds since
///   2001-01-01 00:00:00 UTC), so it round-trips bit for bit and sorts in time order.
///   In SQL, `datetime(column + 978307200, 'unixepoch')` shows it as text.
/// - `Decimal`: TEXT, its exact decimal digits. `UUID`: TEXT, `uuidString`.
///   `URL`: TEXT, `absoluteString`.
public protocol SQLValueConvertible: Sendable {
    /// The stored form of the value.
    /// - Throws: `ModelStoreError` with code `.encodingFailed` when the value has none.
    var sqlValue: SQLValue { get throws }

    /// Creates the value from its stored form.
    /// - Throws: `ModelStoreError` with code `.decodingFailed` when `sqlValue` cannot be one.
    init(sqlValue: SQLValue) throws
}

extension SQLValueConvertible {
    /// The value as a query or key lookup compares it: its stored form, so `-0.0` finds the
    /// zero it was stored as.
    var comparisonValue: SQLValue {
        get throws { try sqlValue }
    }

    static func mismatch(_ value: SQLValue, expected: String? = nil) -> ModelStoreError {
        ModelStoreError(
            .decodingFailed,
            "The stored value \(value) cannot be read as \(expected ?? String(describing: Self.self)).",
            value: value.description, suggestion: storedValueSuggestion)
    }
}

/// What to do about a stored value that does not convert: it is never guessed at.
let storedValueSuggestion = "The stored value does not fit the property; migrate the stored values or change the property's type."

extension SQLValueConvertible where Self: RawRepresentable, RawValue: SQLValueConvertible {
    /// The raw value's stored form.
    public var sqlValue: SQLValue {
        get throws { try rawValue.sqlValue }
    }

    /// Reads the raw value and refuses one that names no case.
    /// - Throws: `ModelStoreError` `.decodingFailed` when the stored value is not exactly one of this type.
    public init(sqlValue: SQLValue) throws {
        let raw = try RawValue(sqlValue: sqlValue)
        guard let value = Self(rawValue: raw) else {
            throw ModelStoreError(
                .decodingFailed,
                "The stored value \(sqlValue) is not a raw value of \(Self.self).",
                value: sqlValue.description, suggestion: storedValueSuggestion)
        }
        self = value
    }
}

// MARK: - Integers

extension SQLValueConvertible where Self: FixedWidthInteger {
    /// The integer as INTEGER; values beyond `Int64`'s range are refused.
    public var sqlValue: SQLValue {
        get throws {
            guard let exact = Int64(exactly: self) else {
                throw ModelStoreError(
                    .encodingFailed,
                    "The integer \(self) is larger than SQLite's 64-bit signed INTEGER can hold.",
                    value: String(self), suggestion: "Store it as a String or Decimal instead.")
            }
            return .integer(exact)
        }
    }

    /// Reads an INTEGER that fits the type; anything else is refused.
    /// - Throws: `ModelStoreError` `.decodingFailed` when the stored value is not exactly one of this type.
    public init(sqlValue: SQLValue) throws {
        guard case .integer(let stored) = sqlValue else { throw Self.mismatch(sqlValue) }
        guard let exact = Self(exactly: stored) else {
            throw ModelStoreError(
                .decodingFailed, "The stored integer \(stored) does not fit in \(Self.self).",
                value: String(stored), suggestion: storedValueSuggestion)
        }
        self = exact
    }
}

extension Int: SQLValueConvertible {}
extension Int8: SQLValueConvertible {}
extension Int16: SQLValueConvertible {}
extension Int32: SQLValueConvertible {}
extension Int64: SQLValueConvertible {}
extension UInt: SQLValueConvertible {}
extension UInt8: SQLValueConvertible {}
extension UInt16: SQLValueConvertible {}
extension UInt32: SQLValueConvertible {}
extension UInt64: SQLValueConvertible {}

extension Bool: SQLValueConvertible {
    /// `true` as 1, `false` as 0.
    public var sqlValue: SQLValue { .integer(self ? 1 : 0) }

    /// Reads 0 or 1; any other value is refused rather than guessed.
    /// - Throws: `ModelStoreError` `.decodingFailed` when the stored value is not exactly one of this type.
    public init(sqlValue: SQLValue) throws {
        switch sqlValue {
        case .integer(0): self = false
        case .integer(1): self = true
        default: throw Self.mismatch(sqlValue, expected: "Bool (0 or 1)")
        }
    }
}

// MARK: - Floating point

extension Double: SQLValueConvertible {
    /// The number as REAL. NaN is refused: SQLite would store NULL for it.
    ///
    /// `-0.0` is stored as `0.0`. Ordinary arithmetic produces it (`(-0.3).rounded()`), so
    /// refusing it would make saves fail at random on normal data; and SQLite cannot keep
    /// the sign anyway (a REAL column writes an integral value as the integer 0). Dropping
    /// it here, always, means every column and every query sees the same zero. `-0.0 == 0.0`
    /// in Swift, so the value reads back equal, though not bit for bit.
    public var sqlValue: SQLValue {
        get throws {
            guard !isNaN else {
                throw ModelStoreError(
                    .encodingFailed, "NaN cannot be stored: SQLite would silently turn it into NULL.",
                    value: "nan", suggestion: "Use an Optional and nil for a missing number.")
            }
            // Adding +0.0 turns -0.0 into 0.0 and leaves every other number as it is.
            return .real(self + 0)
        }
    }

    /// Reads a REAL, or an INTEGER that converts exactly.
    /// - Throws: `ModelStoreError` `.decodingFailed` when the stored value is not exactly one of this type.
    public init(sqlValue: SQLValue) throws {
        switch sqlValue {
        case .real(let real): self = real
        case .integer(let integer):
            guard let exact = Double(exactly: integer) else { throw Self.mismatch(sqlValue) }
            self = exact
        default: throw Self.mismatch(sqlValue)
        }
    }
}

extension Float: SQLValueConvertible {
    /// The number widened to a REAL (exactly); NaN is refused and `-0.0` stored as `0.0`, as for `Double`.
    public var sqlValue: SQLValue {
        get throws { try Double(self).sqlValue }
    }

    /// Reads a number that a `Float` holds exactly.
    /// - Throws: `ModelStoreError` `.decodingFailed` when the stored value is not exactly one of this type.
    public init(sqlValue: SQLValue) throws {
        let double = try Double(sqlValue: sqlValue)
        let float = Float(double)
        guard Double(float) == double || double.isInfinite else {
            throw ModelStoreError(
                .decodingFailed, "The stored number \(double) does not fit in Float without rounding.",
                value: sqlValue.description, suggestion: storedValueSuggestion)
        }
        self = float
    }
}

// MARK: - Text and bytes

extension String: SQLValueConvertible {
    /// The string as TEXT.
    public var sqlValue: SQLValue { .text(self) }

    /// Reads TEXT. (Stored text that is not UTF-8 arrives as its bytes, a BLOB, and is refused.)
    /// - Throws: `ModelStoreError` `.decodingFailed` when the stored value is not exactly one of this type.
    public init(sqlValue: SQLValue) throws {
        guard case .text(let text) = sqlValue else { throw Self.mismatch(sqlValue, expected: "String (UTF-8 text)") }
        self = text
    }
}

extension Data: SQLValueConvertible {
    /// The bytes as a BLOB.
    public var sqlValue: SQLValue { .blob(self) }

    /// Reads a BLOB.
    /// - Throws: `ModelStoreError` `.decodingFailed` when the stored value is not exactly one of this type.
    public init(sqlValue: SQLValue) throws {
        guard case .blob(let data) = sqlValue else { throw Self.mismatch(sqlValue) }
        self = data
    }
}

// MARK: - Foundation values

extension Date: SQLValueConvertible {
    /// The date as REAL seconds since the reference date: the exact `Double` it holds (a
    /// `-0.0` interval as `0.0`, as for `Double`). A NaN interval is refused, as for `Double`:
    /// SQLite would store NULL.
    public var sqlValue: SQLValue {
        get throws {
            let seconds = timeIntervalSinceReferenceDate
            guard !seconds.isNaN else {
                throw ModelStoreError(
                    .encodingFailed, "A Date whose time interval is NaN cannot be stored: SQLite would silently turn it into NULL.",
                    value: "nan", suggestion: "Use an Optional and nil for a missing date.")
            }
            return .real(seconds + 0)
        }
    }

    /// Reads REAL seconds since 2001-01-01 00:00:00 UTC, or INTEGER seconds that a `Double`
    /// holds exactly; an integer beyond 2^53 that would be rounded is refused.
    /// - Throws: `ModelStoreError` `.decodingFailed` when the stored value is not exactly one of this type.
    public init(sqlValue: SQLValue) throws {
        switch sqlValue {
        case .real(let seconds): self = Date(timeIntervalSinceReferenceDate: seconds)
        case .integer(let seconds):
            guard let exact = Double(exactly: seconds) else {
                throw Self.mismatch(sqlValue, expected: "Date (a number of seconds that a Double holds exactly)")
            }
            self = Date(timeIntervalSinceReferenceDate: exact)
        default: throw Self.mismatch(sqlValue)
        }
    }
}

extension Decimal: SQLValueConvertible {
    /// The decimal's exact digits as TEXT; a NaN decimal is refused.
    public var sqlValue: SQLValue {
        get throws {
            guard !isNaN else {
                throw ModelStoreError(.encodingFailed, "A NaN Decimal cannot be stored.", value: "NaN")
            }
            return .text(description)
        }
    }

    /// Reads decimal digits from TEXT, or an INTEGER or REAL written by other tools.
    ///
    /// Text must be exactly the digits a Decimal writes (its `description`): `Decimal(string:)`
    /// alone reads "12abc" as 12, " 7" as 7, and drops digits beyond 38 without a word.
    /// Demanding the canonical form also keeps queries honest: they compare the column with a
    /// Decimal's text, so "1.50" would never match the 1.5 it was read as.
    ///
    /// A REAL is read as the shortest decimal that converts back to the same Double — the
    /// REAL 1234567890.1234567 as 1234567890.1234567, where `Decimal(Double)` gives
    /// 1234567890.1234569216 — and one that no Decimal holds (1e300, infinity) is refused
    /// (`Decimal(Double)` makes it NaN).
    /// - Throws: `ModelStoreError` `.decodingFailed` when the stored value is not exactly one of this type.
    public init(sqlValue: SQLValue) throws {
        switch sqlValue {
        case .text(let text):
            guard let decimal = Self.exactly(text) else {
                throw Self.mismatch(sqlValue, expected: "Decimal (its exact digits, as Decimal.description writes them)")
            }
            self = decimal
        case .integer(let integer): self = Decimal(integer)
        case .real(let real):
            guard real.isFinite, let decimal = Decimal(string: real.description, locale: Self.posix), !decimal.isNaN,
                Double(decimal.description) == real
            else { throw Self.mismatch(sqlValue, expected: "Decimal (the number is out of Decimal's range)") }
            self = decimal
        default: throw Self.mismatch(sqlValue)
        }
    }

    private static let posix = Locale(identifier: "en_US_POSIX")

    /// The Decimal whose description is `text`, or nil when there is none.
    private static func exactly(_ text: String) -> Decimal? {
        guard let decimal = Decimal(string: text, locale: posix), !decimal.isNaN, decimal.description == text else { return nil }
        return decimal
    }
}

extension UUID {
    /// The UUID `text` spells in `uuidString`'s form; nil for any other spelling. What
    /// `UUID(uuidString:)` and a comparison with `uuidString` decide, without Foundation's
    /// formatted parse and print (on Linux, `sscanf` and `sprintf`: thousands of instructions
    /// a value, paid for every key, condition and row).
    init?(ownText text: String) {
        var text = text
        guard let uuid = text.withUTF8({ $0.count == 36 ? Statement.parseUpperCaseUUID($0.baseAddress!) : nil }) else {
            return nil
        }
        self = uuid
    }
}

extension UUID: SQLValueConvertible {
    /// The UUID as TEXT (`uuidString`, upper case).
    public var sqlValue: SQLValue { .text(Statement.upperCaseText(of: self)) }

    /// Reads a UUID string as `uuidString` writes it, or 16 bytes as other libraries store it.
    ///
    /// Lower-case text is refused although `UUID(uuidString:)` reads it: queries compare the
    /// column with `uuidString`, so a record read with that UUID would not be found by it.
    /// - Throws: `ModelStoreError` `.decodingFailed` when the stored value is not exactly one of this type.
    public init(sqlValue: SQLValue) throws {
        switch sqlValue {
        case .text(let text):
            guard let uuid = UUID(ownText: text) else {
                throw ModelStoreError(
                    .decodingFailed,
                    "The stored value \(sqlValue) is not a UUID in the upper-case form ModelStore writes and compares (uuidString).",
                    value: sqlValue.description,
                    suggestion: "If the column holds lower-case UUIDs, convert them once: UPDATE <table> SET <column> = upper(<column>).")
            }
            self = uuid
        case .blob(let data) where data.count == 16:
            let b = Array(data)
            self = UUID(
                uuid: (
                    b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                    b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]
                ))
        default: throw Self.mismatch(sqlValue)
        }
    }
}

extension URL: SQLValueConvertible {
    /// The URL as TEXT (`absoluteString`).
    public var sqlValue: SQLValue { .text(absoluteString) }

    /// Reads a URL string that is exactly a URL's `absoluteString`. `URL(string:)` may repair
    /// text (percent-encoding a space), which would read a different URL than was stored.
    /// - Throws: `ModelStoreError` `.decodingFailed` when the stored value is not exactly one of this type.
    public init(sqlValue: SQLValue) throws {
        guard case .text(let text) = sqlValue, let url = URL(string: text), url.absoluteString == text else {
            throw Self.mismatch(sqlValue, expected: "URL (exactly its absoluteString)")
        }
        self = url
    }
}

extension Optional: SQLValueConvertible where Wrapped: SQLValueConvertible {
    /// `nil` as NULL, otherwise the wrapped value's stored form.
    public var sqlValue: SQLValue {
        get throws {
            switch self {
            case .none: return .null
            case .some(let wrapped): return try wrapped.sqlValue
            }
        }
    }

    /// NULL as `nil`, otherwise the wrapped value.
    /// - Throws: `ModelStoreError` `.decodingFailed` when the stored value is not exactly one of this type.
    public init(sqlValue: SQLValue) throws {
        self = sqlValue.isNull ? .none : .some(try Wrapped(sqlValue: sqlValue))
    }
}

extension SQLValue: SQLValueConvertible {
    /// Itself.
    public var sqlValue: SQLValue { self }

    /// Itself.
    public init(sqlValue: SQLValue) { self = sqlValue }
}
