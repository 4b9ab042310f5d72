import Foundation

/// How a `Date` property is stored, for a column another tool made (see
/// `StoredModel.columnStorage`).
///
/// ```swift
/// static let columnStorage: [ColumnStorage<Post>] = [
///     .date(\.createdAt, as: .sqliteText),    // GRDB's default: 2024-05-01 12:00:00.123
///     .date(\.publishedAt, as: .iso8601),     // 2024-05-01T12:00:00.123Z
///     .date(\.seenAt, as: .unixMilliseconds), // 1714564800123
/// ]
/// ```
///
/// | format | column | stored value |
/// |---|---|---|
/// | `referenceSeconds` (the default) | REAL | seconds since 2001-01-01 UTC, the `Date`'s own `Double` |
/// | `unixSeconds` | REAL | `timeIntervalSince1970` |
/// | `unixMilliseconds` | INTEGER | milliseconds since 1970-01-01 UTC |
/// | `iso8601` | TEXT | `2024-05-01T12:00:00.123Z` (UTC, always three fraction digits) |
/// | `sqliteText` | TEXT | `2024-05-01 12:00:00.123` (UTC), what GRDB writes by default |
///
/// `iso8601(fractionDigits:)` and `sqliteText(fractionDigits:)` take 0 to 3 digits:
/// `.iso8601(fractionDigits: 0)` is `2024-05-01T12:00:00Z` (GRDB's `.iso8601` strategy),
/// `.sqliteText(fractionDigits: 0)` is SQLite's own `CURRENT_TIMESTAMP`.
///
/// **Exactness.** Each format holds a resolution: a millisecond for `unixMilliseconds` and
/// the three-digit texts, a second for texts without fraction, and the `Double` itself for
/// the two numeric forms. A date finer than its column's resolution is refused with
/// `.encodingFailed`, never rounded: round it first
/// (`Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded() / 1000)`).
/// Only the error of the binary `Double` that holds a time is allowed for, so a date made
/// from whole milliseconds in either epoch is accepted. `unixSeconds` stores the `Double`
/// that `timeIntervalSince1970` gives, which keeps a date to the last place of that
/// `Double` (about 0.2 µs today). Texts hold the years 0001 to 9999.
///
/// **Reading.** A stored value must be exactly in the declared form: `iso8601` reads only
/// `YYYY-MM-DDTHH:MM:SS.sssZ` with as many digits as declared. Queries compare the stored text
/// with a date's text, so a value in another spelling (no fraction, an offset) would be read
/// but not found by `==` or sorted in time order; it is a `.decodingFailed` instead. Each form
/// sorts in time order, so orderings and ranges work on the stored values as they are.
public struct DateStorage: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Sendable, Hashable {
        case referenceSeconds, unixSeconds, unixMilliseconds
        case iso8601, sqliteText
    }

    let kind: Kind
    /// Digits after the seconds, for the text forms.
    let fractionDigits: Int

    /// REAL seconds since 2001-01-01 00:00:00 UTC: how ModelStore stores a `Date` undeclared.
    public static let referenceSeconds = DateStorage(kind: .referenceSeconds, fractionDigits: 0)
    /// REAL seconds since 1970-01-01 00:00:00 UTC (`timeIntervalSince1970`).
    public static let unixSeconds = DateStorage(kind: .unixSeconds, fractionDigits: 0)
    /// INTEGER milliseconds since 1970-01-01 00:00:00 UTC.
    public static let unixMilliseconds = DateStorage(kind: .unixMilliseconds, fractionDigits: 3)
    /// TEXT `2024-05-01T12:00:00.123Z`: ISO 8601 in UTC with milliseconds.
    public static let iso8601 = DateStorage(kind: .iso8601, fractionDigits: 3)
    /// TEXT `2024-05-01 12:00:00.123`: SQLite's date-time form in UTC, as GRDB stores dates.
    public static let sqliteText = DateStorage(kind: .sqliteText, fractionDigits: 3)

    /// ISO 8601 text in UTC with `fractionDigits` (0 to 3) digits after the seconds:
    /// `2024-05-01T12:00:00Z` for 0.
    public static func iso8601(fractionDigits: Int) -> DateStorage {
        DateStorage(kind: .iso8601, fractionDigits: fractionDigits)
    }

    /// SQLite's date-time text in UTC with `fractionDigits` (0 to 3) digits after the
    /// seconds: `2024-05-01 12:00:00` for 0, as `CURRENT_TIMESTAMP` writes.
    public static func sqliteText(fractionDigits: Int) -> DateStorage {
        DateStorage(kind: .sqliteText, fractionDigits: fractionDigits)
    }

    /// The format's name as a declaration writes it.
    public var description: String {
        switch kind {
        case .referenceSeconds: return "referenceSeconds"
        case .unixSeconds: return "unixSeconds"
        case .unixMilliseconds: return "unixMilliseconds"
        case .iso8601: return fractionDigits == 3 ? "iso8601" : "iso8601(fractionDigits: \(fractionDigits))"
        case .sqliteText: return fractionDigits == 3 ? "sqliteText" : "sqliteText(fractionDigits: \(fractionDigits))"
        }
    }

    var storage: StorageType {
        switch kind {
        case .referenceSeconds, .unixSeconds: return .real
        case .unixMilliseconds: return .integer
        case .iso8601, .sqliteText: return .text
        }
    }

    var isText: Bool { storage == .text }

    /// Whether the declaration can work: text forms take 0 to 3 fraction digits.
    var isValid: Bool { (0...3).contains(fractionDigits) }

    /// Seconds from 1970 to 2001, the two epochs.
    private static let epochGap: Int64 = 978_307_200
    /// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z in Unix seconds: four-digit years.
    private static let textRange: ClosedRange<Int64> = -62_135_596_800...253_402_300_799

    // MARK: Storing

    /// The stored form of a date given as seconds since 2001 (its own stored form).
    func store(referenceSeconds seconds: Double) throws -> SQLValue {
        switch kind {
        case .referenceSeconds:
            return .real(seconds + 0)
        case .unixSeconds:
            guard seconds.isFinite else { throw notStorable(seconds, "it is not a finite time") }
            return .real(seconds + Double(Self.epochGap))
        case .unixMilliseconds, .iso8601, .sqliteText:
            let unit = Self.unit(fractionDigits)
            let ticks = try unixTicks(seconds, unit: unit)
            guard isText else { return .integer(ticks) }
            let (whole, fraction) = Self.divide(ticks, by: unit)
            guard Self.textRange.contains(whole) else {
                throw notStorable(seconds, "it lies outside the years 0001 to 9999 that the text holds")
            }
            return .text(text(unixSeconds: whole, fraction: fraction))
        }
    }

    /// The date in Unix ticks of `unit` per second, refused when finer than a tick.
    private func unixTicks(_ seconds: Double, unit: Int64) throws -> Int64 {
        guard seconds.isFinite else { throw notStorable(seconds, "it is not a finite time") }
        let scaled = seconds * Double(unit)
        let ticks = scaled.rounded()
        // A time held as a Double in either epoch is off its exact value by up to half a
        // unit in the last place; anything beyond that is a real fraction of a tick.
        let noise = 2 * max(abs(seconds).ulp, abs(seconds + Double(Self.epochGap)).ulp) * Double(unit)
        guard abs(scaled - ticks) <= noise else {
            let resolution = unit == 1 ? "whole seconds" : "\(fractionDigits) digits after the seconds"
            throw notStorable(seconds, "\(description) holds \(resolution), and rounding would change the date")
        }
        guard abs(ticks) <= 9_007_199_254_740_992, let exact = Int64(exactly: ticks) else {
            throw notStorable(seconds, "it is too far from 1970 for \(description)")
        }
        return exact + Self.epochGap * unit
    }

    private func text(unixSeconds: Int64, fraction: Int64) -> String {
        let (days, secondOfDay) = Self.divide(unixSeconds, by: 86_400)
        let (year, month, day) = Self.civil(fromDays: days)
        var text = Self.pad(year, 4) + "-" + Self.pad(month, 2) + "-" + Self.pad(day, 2)
        text += kind == .iso8601 ? "T" : " "
        text += Self.pad(secondOfDay / 3600, 2) + ":" + Self.pad(secondOfDay / 60 % 60, 2) + ":" + Self.pad(secondOfDay % 60, 2)
        if fractionDigits > 0 { text += "." + Self.pad(fraction, fractionDigits) }
        if kind == .iso8601 { text += "Z" }
        return text
    }

    private func notStorable(_ seconds: Double, _ reason: String) -> ModelStoreError {
        ModelStoreError(
            .encodingFailed, "The date \(Self.describe(seconds)) cannot be stored as \(description): \(reason).",
            value: Self.describe(seconds),
            suggestion: fractionDigits < 3 || kind == .unixSeconds
                ? "Store a date the format holds exactly."
                : "Round the date to milliseconds first: Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded() / 1000)."
        )
    }

    // MARK: Loading

    /// Seconds since 2001 of a stored value, or `.decodingFailed` when it is not exactly
    /// in this form.
    func load(_ value: SQLValue) throws -> Double {
        switch (kind, value) {
        case (.referenceSeconds, .real(let seconds)):
            return seconds
        case (.unixSeconds, .real(let seconds)):
            return seconds - Double(Self.epochGap)
        case (.referenceSeconds, .integer(let seconds)), (.unixSeconds, .integer(let seconds)):
            guard let exact = Double(exactly: seconds) else { break }
            return kind == .unixSeconds ? exact - Double(Self.epochGap) : exact
        case (.unixMilliseconds, .integer(let ticks)):
            return try reference(unixTicks: ticks, unit: 1000, value)
        case (.iso8601, .text(let text)), (.sqliteText, .text(let text)):
            guard let (seconds, fraction) = parse(text) else { break }
            let unit = Self.unit(fractionDigits)
            return try reference(unixTicks: seconds * unit + fraction, unit: unit, value)
        default:
            break
        }
        throw ModelStoreError(
            .decodingFailed, "The stored value \(value) is not a date in the declared form \(description) (\(example)).",
            value: value.description,
            suggestion:
                "Declare the form the column holds in columnStorage, or convert the stored values to it; ModelStore does not guess at other spellings, which queries would not match."
        )
    }

    private var example: String {
        switch kind {
        case .referenceSeconds: return "REAL seconds since 2001"
        case .unixSeconds: return "REAL seconds since 1970"
        case .unixMilliseconds: return "INTEGER milliseconds since 1970"
        case .iso8601, .sqliteText:
            return "TEXT such as '\(text(unixSeconds: 1_714_564_800, fraction: 123 / (1000 / Self.unit(fractionDigits))))'"
        }
    }

    private func reference(unixTicks ticks: Int64, unit: Int64, _ value: SQLValue) throws -> Double {
        let (shifted, overflow) = ticks.subtractingReportingOverflow(Self.epochGap * unit)
        // Beyond 2^53 ticks a Double no longer holds every tick: the date would be rounded.
        guard !overflow, let exact = Double(exactly: shifted), abs(shifted) <= 9_007_199_254_740_992 else {
            throw ModelStoreError(
                .decodingFailed, "The stored value \(value) is too far from 1970 for a Date to hold exactly.",
                value: value.description)
        }
        return exact / Double(unit)
    }

    /// Unix seconds and the fraction in ticks of the exact text this format writes, or nil.
    private func parse(_ text: String) -> (seconds: Int64, fraction: Int64)? {
        let bytes = Array(text.utf8)
        let expected = 19 + (fractionDigits > 0 ? 1 + fractionDigits : 0) + (kind == .iso8601 ? 1 : 0)
        guard bytes.count == expected else { return nil }
        func number(_ start: Int, _ count: Int) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[start..<start + count] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            return value
        }
        let separator: UInt8 = kind == .iso8601 ? 84 : 32  // "T" or " "
        guard bytes[4] == 45, bytes[7] == 45, bytes[10] == separator, bytes[13] == 58, bytes[16] == 58,
            let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            year >= 1, (1...12).contains(month), day >= 1, day <= Self.days(inMonth: month, of: year),
            hour < 24, minute < 60, second < 60
        else { return nil }
        var fraction: Int64 = 0
        if fractionDigits > 0 {
            guard bytes[19] == 46, let digits = number(20, fractionDigits) else { return nil }
            fraction = digits
        }
        if kind == .iso8601, bytes[expected - 1] != 90 { return nil }  // "Z"
        let days = Self.days(fromCivil: year, month, day)
        return (days * 86_400 + hour * 3600 + minute * 60 + second, fraction)
    }

    // MARK: Calendar arithmetic (proleptic Gregorian, UTC)

    private static func unit(_ digits: Int) -> Int64 {
        [1, 10, 100, 1000][min(max(digits, 0), 3)]
    }

    /// Floor division: the remainder is never negative, so times before 1970 print right.
    private static func divide(_ value: Int64, by divisor: Int64) -> (Int64, Int64) {
        let quotient = value >= 0 ? value / divisor : -((-value - 1) / divisor) - 1
        return (quotient, value - quotient * divisor)
    }

    /// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date of a day counted from 1970-01-01.
    static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func days(inMonth month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    private static func describe(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "\(seconds) seconds since 2001" }
        return "\(Date(timeIntervalSinceReferenceDate: seconds)) (\(seconds) seconds since 2001)"
    }
}
