import Foundation

/// A Swift value as SQLite's JSON functions return it from a JSON-stored property: the
/// store writes nested values with `JSONEncoder`, so a date inside one is the number that
/// encoder writes, a UUID its text, a Bool 1 or 0.
enum JSONScalar {
    private struct Box<Value: Encodable>: Encodable {
        let value: Value
    }

    private struct TextBox: Decodable {
        let value: String
    }

    static func value(of value: any Encodable) throws -> SQLValue {
        func encode<Value: Encodable>(_ value: Value) throws -> Data {
            try RowEncoder.makeJSONEncoder().encode(Box(value: value))
        }
        let data = try encode(value)
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any], let inner = object["value"] else {
            throw ModelStoreError(
                .invalidQuery, "\(RowEncoder.describe(value)) has no JSON form to compare with.", value: RowEncoder.describe(value))
        }
        // The encoded text tells numbers, Booleans and null apart on every platform, where
        // NSNumber does not.
        let text = String(decoding: data, as: UTF8.self)
        let literal = text.range(of: "\"value\":").map { String(text[$0.upperBound...].dropLast()) } ?? ""
        switch inner {
        case is NSNull: return .null
        case is String: return .text(try JSONDecoder().decode(TextBox.self, from: data).value)
        default:
            if literal == "true" { return .integer(1) }
            if literal == "false" { return .integer(0) }
            if let integer = Int64(literal) { return .integer(integer) }
            if let real = Double(literal) { return .real(real) }
            throw ModelStoreError(
                .invalidQuery,
                "\(RowEncoder.describe(value)) is stored as \(literal) inside JSON, which a condition cannot compare with one value.",
                value: RowEncoder.describe(value), suggestion: "Compare a property inside it instead.")
        }
    }
}
