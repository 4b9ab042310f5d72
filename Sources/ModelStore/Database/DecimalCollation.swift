import Foundation
import ModelStoreCSQLite

/// The collation `modelstore_decimal`, which orders a `Decimal` column's TEXT by the numbers it
/// spells. A Decimal is stored as its exact digits, and SQLite orders text by bytes ("10" <
/// "9"), so every ordering comparison, sort and `min`/`max` of such a column names this
/// collation. It lives only in query text, never in the schema, so other tools still open and
/// query the file.
///
/// The comparison reads the digits themselves, never a `Decimal` parsed from them: it is exact
/// for any number of digits and allocates nothing, and for every text a `Decimal` writes
/// (`-?digits(.digits)?`, no exponent) it agrees with `Decimal`'s own `<`.
enum DecimalCollation {
    static let name = "modelstore_decimal"

    /// A decimal number's parts, as byte ranges of its text.
    private struct Number {
        var negative: Bool
        /// The integer digits without leading zeros.
        var integer: Range<Int>
        /// The fraction digits without trailing zeros.
        var fraction: Range<Int>
    }

    /// `[+-]? digits? (. digits?)?` with at least one digit; anything else (spaces, exponents,
    /// letters, the empty text) is not a number.
    private static func number(_ text: UnsafeRawBufferPointer) -> Number? {
        var index = 0
        var negative = false
        if index < text.count, text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") {
            negative = text[index] == UInt8(ascii: "-")
            index += 1
        }
        let integerStart = index
        while index < text.count, isDigit(text[index]) { index += 1 }
        var integer = integerStart..<index
        var fraction = index..<index
        if index < text.count, text[index] == UInt8(ascii: ".") {
            index += 1
            let fractionStart = index
            while index < text.count, isDigit(text[index]) { index += 1 }
            fraction = fractionStart..<index
        }
        guard index == text.count, !integer.isEmpty || !fraction.isEmpty else { return nil }
        while let first = integer.first, text[first] == UInt8(ascii: "0") { integer = integer.dropFirst() }
        while let last = fraction.last, text[last] == UInt8(ascii: "0") { fraction = fraction.dropLast() }
        // Zero has one sign: "-0" equals "0", as Decimal's zeros are equal.
        if integer.isEmpty, fraction.isEmpty { negative = false }
        return Number(negative: negative, integer: integer, fraction: fraction)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// Compares two magnitudes: more integer digits is larger; then digit by digit, where a
    /// fraction that runs out is the smaller (its remaining digits would be zeros).
    private static func compareMagnitudes(_ a: Number, _ aText: UnsafeRawBufferPointer, _ b: Number, _ bText: UnsafeRawBufferPointer)
        -> Int32
    {
        if a.integer.count != b.integer.count { return a.integer.count < b.integer.count ? -1 : 1 }
        for (x, y) in zip(a.integer, b.integer) where aText[x] != bText[y] { return aText[x] < bText[y] ? -1 : 1 }
        for (x, y) in zip(a.fraction, b.fraction) where aText[x] != bText[y] { return aText[x] < bText[y] ? -1 : 1 }
        if a.fraction.count != b.fraction.count { return a.fraction.count < b.fraction.count ? -1 : 1 }
        return 0
    }

    /// A total order: numbers by value (equal values with different spellings compare equal);
    /// then every text that is not a number, after all numbers, by its bytes.
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int32 {
        switch (number(a), number(b)) {
        case (let x?, let y?):
            if x.negative != y.negative { return x.negative ? -1 : 1 }
            let magnitude = compareMagnitudes(x, a, y, b)
            return x.negative ? -magnitude : magnitude
        case (_?, nil):
            return -1
        case (nil, _?):
            return 1
        case (nil, nil):
            for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
            return a.count == b.count ? 0 : a.count < b.count ? -1 : 1
        }
    }

    /// `compare` for Swift strings (tests, and callers outside SQLite).
    static func compare(_ a: String, _ b: String) -> Int32 {
        var a = a
        var b = b
        return a.withUTF8 { x in b.withUTF8 { y in compare(UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y)) } }
    }
}

extension Connection {
    /// Registers `modelstore_decimal` (the collation) and `modelstore_decimal_sum` (the
    /// aggregate) on this connection; every connection ModelStore opens has them.
    func registerDecimalFunctions() throws {
        var rc = sqlite3_create_collation_v2(
            handle, DecimalCollation.name, SQLITE_UTF8, nil,
            { _, aCount, a, bCount, b in
                DecimalCollation.compare(
                    UnsafeRawBufferPointer(start: a, count: Int(aCount)), UnsafeRawBufferPointer(start: b, count: Int(bCount)))
            }, nil)
        if rc == SQLITE_OK {
            rc = sqlite3_create_function_v2(
                handle, DecimalSum.name, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nil, nil,
                { context, _, arguments in DecimalSum.step(context, arguments?[0]) }, { context in DecimalSum.finish(context) }, nil)
        }
        guard rc == SQLITE_OK else {
            throw ModelStoreError.sqlite(resultCode: rc, message: String(cString: sqlite3_errmsg(handle)), sql: nil)
        }
    }
}

/// The aggregate `modelstore_decimal_sum(column)`: the exact sum of a Decimal column, as the
/// Decimal's TEXT (NULL when no value). SQL's own `sum` turns text into binary floating point
/// (0.1 + 0.2 is 0.30000000000000004 there). A sum that needs more than Decimal's 38 digits, or
/// a stored value that is not a Decimal, fails the statement with a message starting with
/// `errorPrefix`, which the engine turns into `.invalidQuery` or `.decodingFailed`.
enum DecimalSum {
    static let name = "modelstore_decimal_sum"
    static let errorPrefix = "modelstore_decimal_sum: "
    static let overflowMarker = "more than 38 significant digits"

    /// The running sum, in memory SQLite zeroes and frees (`sqlite3_aggregate_context`):
    /// all-zero bytes are "nothing seen" and a Decimal zero, so it needs no initializer.
    private struct State {
        var seen: Bool
        var total: Decimal
    }

    static func step(_ context: OpaquePointer?, _ argument: OpaquePointer?) {
        guard let argument, sqlite3_value_type(argument) != SQLITE_NULL else { return }
        guard let raw = sqlite3_aggregate_context(context, Int32(MemoryLayout<State>.size)) else {
            return sqlite3_result_error_nomem(context)
        }
        let state = raw.bindMemory(to: State.self, capacity: 1)
        let value: SQLValue
        switch sqlite3_value_type(argument) {
        case SQLITE_INTEGER: value = .integer(sqlite3_value_int64(argument))
        case SQLITE_FLOAT: value = .real(sqlite3_value_double(argument))
        case SQLITE_TEXT:
            let count = Int(sqlite3_value_bytes(argument))
            value = .text(
                sqlite3_value_text(argument).map { String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self) } ?? "")
        default: value = .blob(Data())
        }
        guard var addend = try? Decimal(sqlValue: value) else {
            return sqlite3_result_error(context, errorPrefix + "the stored value \(value) is not a Decimal.", -1)
        }
        var total = state.pointee.total
        var sum = Decimal()
        guard NSDecimalAdd(&sum, &total, &addend, .plain) == .noError else {
            return sqlite3_result_error(
                context, errorPrefix + "the sum needs \(overflowMarker), which a Decimal cannot hold exactly.", -1)
        }
        state.pointee = State(seen: true, total: sum)
    }

    static func finish(_ context: OpaquePointer?) {
        guard let raw = sqlite3_aggregate_context(context, 0) else { return sqlite3_result_null(context) }
        let state = raw.bindMemory(to: State.self, capacity: 1).pointee
        guard state.seen else { return sqlite3_result_null(context) }
        // SQLITE_TRANSIENT: SQLite copies the text before the Swift string goes away.
        sqlite3_result_text(context, state.total.description, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
    }

    /// A sum that a Decimal cannot hold exactly.
    static func overflow(
        model: String, column: String, reason: String = "the sum needs \(overflowMarker), which a Decimal cannot hold exactly."
    ) -> ModelStoreError {
        ModelStoreError(
            .invalidQuery, "The sum of \(model).\(column) cannot be computed exactly: \(reason)", model: model, column: column,
            suggestion: "Sum fewer records, or read the values and add them with a rounding rule of your choice.")
    }

    /// A failure of the aggregate as the error its cause deserves, or nil for any other error.
    static func refined(_ error: ModelStoreError, model: String, column: String) -> ModelStoreError? {
        guard let message = error.sqliteMessage, message.hasPrefix(errorPrefix) else { return nil }
        let reason = String(message.dropFirst(errorPrefix.count))
        if message.contains(overflowMarker) { return overflow(model: model, column: column, reason: reason) }
        return ModelStoreError(.decodingFailed, "The sum of \(model).\(column) failed: \(reason)", model: model, column: column)
    }
}
