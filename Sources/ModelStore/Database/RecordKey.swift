/// A key (a record's primary key, a link, the values a match-key batch matches by) as a
/// hashable value: one machine word for the common one-integer key, an array only for
/// composite keys. Two keys are equal when SQL's `=` (BINARY collation) says so: texts byte
/// for byte (Swift's `String ==` would also match canonically equivalent texts, such as a
/// precomposed and a decomposed "é"), and a REAL with no fraction equals the INTEGER of the
/// same value (which is how SQLite may store it).
enum RecordKey: Hashable {
    case integer(Int64)
    case text(String)
    case values([SQLValue])

    init(_ values: [SQLValue]) {
        if values.count == 1 {
            switch Self.normalized(values[0]) {
            case .integer(let integer): self = .integer(integer)
            case .text(let text): self = .text(text)
            case let other: self = .values([other])
            }
        } else {
            self = .values(values.map(Self.normalized))
        }
    }

    /// A REAL with no fraction, within INTEGER's range, as that INTEGER: SQL compares the two
    /// as equal, and SQLite stores such a REAL in an INTEGER column as the INTEGER.
    @inline(__always)
    static func normalized(_ value: SQLValue) -> SQLValue {
        guard case .real(let real) = value, real.rounded() == real, real >= -9.223_372_036_854_775_808e18,
            real < 9.223_372_036_854_775_808e18
        else { return value }
        return .integer(Int64(real))
    }

    static func == (left: RecordKey, right: RecordKey) -> Bool {
        switch (left, right) {
        case (.integer(let a), .integer(let b)): return a == b
        case (.text(let a), .text(let b)): return sameBytes(a, b)
        case (.values(let a), .values(let b)):
            guard a.count == b.count else { return false }
            for (x, y) in zip(a, b) {
                if case .text(let p) = x, case .text(let q) = y {
                    if !sameBytes(p, q) { return false }
                } else if x != y {
                    return false
                }
            }
            return true
        default: return false
        }
    }

    /// Equal as stored: byte for byte. (Equal bytes are equal Strings, so `String`'s hash,
    /// which the synthesized `hash(into:)` uses, agrees with this equality.)
    @inline(__always)
    private static func sameBytes(_ a: String, _ b: String) -> Bool {
        a == b && a.utf8.elementsEqual(b.utf8)
    }

    /// The key in columns `start ..< start + count` of the statement's current row; nil when
    /// any part is NULL (an empty link).
    init?(_ statement: Statement, at start: Int32, count: Int) {
        if count == 1 {
            switch statement.value(at: start) {
            case .null: return nil
            case .integer(let integer): self = .integer(integer)
            case .text(let text): self = .text(text)
            case let other: self.init([other])
            }
            return
        }
        let values = statement.values(from: start, count: count)
        guard !values.contains(where: \.isNull) else { return nil }
        self = .values(values.map(Self.normalized))
    }

    /// The values at `positions` of a row of values.
    init(_ row: [SQLValue], at positions: [Int]) {
        if positions.count == 1 {
            switch row[positions[0]] {
            case .integer(let integer): self = .integer(integer)
            case .text(let text): self = .text(text)
            case let other: self.init([other])
            }
        } else {
            self = .values(positions.map { Self.normalized(row[$0]) })
        }
    }

    var values: [SQLValue] {
        switch self {
        case .integer(let integer): return [.integer(integer)]
        case .text(let text): return [.text(text)]
        case .values(let values): return values
        }
    }
}
