/// A key (a record's primary key, a link, the values a match-key batch matches by) as a
/// hashable value: one machine word for the common one-integer key, an array only for
/// composite keys. Two keys are equal when their values are equal as `SQLValue`s: the same
/// storage class and the same value (texts byte for byte).
enum RecordKey: Hashable {
    case integer(Int64)
    case text(String)
    case values([SQLValue])

    init(_ values: [SQLValue]) {
        if values.count == 1 {
            switch values[0] {
            case .integer(let integer): self = .integer(integer)
            case .text(let text): self = .text(text)
            default: self = .values(values)
            }
        } else {
            self = .values(values)
        }
    }

    /// The key in columns `start ..< start + count` of the statement's current row; nil when
    /// any part is NULL (an empty link).
    init?(_ statement: Statement, at start: Int32, count: Int) {
        if count == 1 {
            switch statement.value(at: start) {
            case .null: return nil
            case .integer(let integer): self = .integer(integer)
            case .text(let text): self = .text(text)
            case let other: self = .values([other])
            }
            return
        }
        let values = statement.values(from: start, count: count)
        guard !values.contains(where: \.isNull) else { return nil }
        self = .values(values)
    }

    /// The values at `positions` of a row of values.
    init(_ row: [SQLValue], at positions: [Int]) {
        if positions.count == 1 {
            switch row[positions[0]] {
            case .integer(let integer): self = .integer(integer)
            case .text(let text): self = .text(text)
            case let other: self = .values([other])
            }
        } else {
            self = .values(positions.map { row[$0] })
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
