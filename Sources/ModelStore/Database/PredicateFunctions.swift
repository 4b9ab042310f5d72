import Foundation
import ModelStoreCSQLite

/// SQL functions a translated `#Predicate` calls where SQLite's own would answer differently
/// from Swift:
/// - `modelstore_contains(text, part)` and `modelstore_starts(text, prefix)` compare as
///   Foundation's predicate does — by `Character`s, so "👍" is not in "👍🏽" and "\r" is not in
///   "\r\n" — by evaluating Foundation's own expression on the two strings;
/// - `modelstore_refuse(message)` fails the statement: a predicate reached a record on which
///   Swift's evaluation would stop the program (a division by zero, an overflow), and the store
///   answers with `.invalidQuery` rather than a value Swift never gives.
///
/// They live only in query text, like the Decimal collation.
enum PredicateFunctions {
    static let refusalPrefix = "modelstore_refuse: "

    /// The text of a TEXT argument, its full length (NUL included); nil for NULL.
    static func text(_ value: OpaquePointer?) -> String? {
        guard let value, sqlite3_value_type(value) != SQLITE_NULL else { return nil }
        let count = Int(sqlite3_value_bytes(value))
        guard let bytes = sqlite3_value_text(value) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    static func contains(_ text: String, _ part: String) -> Bool {
        if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
            let expression = PredicateExpressions.CollectionContainsCollection(
                base: PredicateExpressions.Value(text), other: PredicateExpressions.Value(part))
            return (try? expression.evaluate(PredicateBindings())) ?? false
        }
        return text.contains(part)
    }

    static func starts(_ text: String, _ prefix: String) -> Bool {
        if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
            let expression = PredicateExpressions.SequenceStartsWith(
                base: PredicateExpressions.Value(text), prefix: PredicateExpressions.Value(prefix))
            return (try? expression.evaluate(PredicateBindings())) ?? false
        }
        return text.starts(with: prefix)
    }
}

extension Connection {
    /// Registers `modelstore_contains`, `modelstore_starts`, `modelstore_integer`,
    /// `modelstore_real` and `modelstore_refuse`.
    func registerPredicateFunctions() throws {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
        var rc = sqlite3_create_function_v2(
            handle, "modelstore_contains", 2, flags, nil,
            { context, _, arguments in
                guard let text = PredicateFunctions.text(arguments?[0]), let part = PredicateFunctions.text(arguments?[1]) else {
                    return sqlite3_result_null(context)
                }
                sqlite3_result_int(context, PredicateFunctions.contains(text, part) ? 1 : 0)
            }, nil, nil, nil)
        if rc == SQLITE_OK {
            rc = sqlite3_create_function_v2(
                handle, "modelstore_starts", 2, flags, nil,
                { context, _, arguments in
                    guard let text = PredicateFunctions.text(arguments?[0]), let prefix = PredicateFunctions.text(arguments?[1]) else {
                        return sqlite3_result_null(context)
                    }
                    sqlite3_result_int(context, PredicateFunctions.starts(text, prefix) ? 1 : 0)
                }, nil, nil, nil)
        }
        if rc == SQLITE_OK {
            // modelstore_integer(value, min, max, message): the value when it is an integer in
            // [min, max] (SQLite makes an overflowing result REAL), else the statement fails.
            rc = sqlite3_create_function_v2(
                handle, "modelstore_integer", 4, flags, nil,
                { context, _, arguments in
                    guard let arguments, let value = arguments[0] else { return sqlite3_result_null(context) }
                    if sqlite3_value_type(value) == SQLITE_INTEGER {
                        let number = sqlite3_value_int64(value)
                        if number >= sqlite3_value_int64(arguments[1]), number <= sqlite3_value_int64(arguments[2]) {
                            return sqlite3_result_int64(context, number)
                        }
                    } else if sqlite3_value_type(value) == SQLITE_NULL {
                        return sqlite3_result_null(context)
                    }
                    let message = PredicateFunctions.text(arguments[3]) ?? ""
                    sqlite3_result_error(context, PredicateFunctions.refusalPrefix + message, -1)
                }, nil, nil, nil)
        }
        if rc == SQLITE_OK {
            // modelstore_real(value, message): the value, unless SQLite's arithmetic gave NULL
            // (a division by zero, infinity minus infinity), where the statement fails.
            rc = sqlite3_create_function_v2(
                handle, "modelstore_real", 2, flags, nil,
                { context, _, arguments in
                    guard let arguments, let value = arguments[0] else { return sqlite3_result_null(context) }
                    guard sqlite3_value_type(value) == SQLITE_NULL else { return sqlite3_result_value(context, value) }
                    let message = PredicateFunctions.text(arguments[1]) ?? ""
                    sqlite3_result_error(context, PredicateFunctions.refusalPrefix + message, -1)
                }, nil, nil, nil)
        }
        if rc == SQLITE_OK {
            rc = sqlite3_create_function_v2(
                handle, "modelstore_refuse", 1, SQLITE_UTF8 | SQLITE_INNOCUOUS, nil,
                { context, _, arguments in
                    let message = PredicateFunctions.text(arguments?[0]) ?? "a record stops the predicate"
                    sqlite3_result_error(context, PredicateFunctions.refusalPrefix + message, -1)
                }, nil, nil, nil)
        }
        guard rc == SQLITE_OK else {
            throw ModelStoreError.sqlite(resultCode: rc, message: String(cString: sqlite3_errmsg(handle)), sql: nil)
        }
    }
}
