/// Decodes a `Codable` type that stores itself as one value (an enum with a raw value that
/// does not conform to `SQLValueConvertible`) from that column's value.
struct SingleValueColumnDecoder: Decoder, SingleValueDecodingContainer {
    let value: SQLValue
    /// How many values deep the decoding is: a type that wraps itself would recurse.
    var depth = 0
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw shapeChanged()
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw shapeChanged()
    }

    func singleValueContainer() -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { value.isNull }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let convertible = type as? any SQLValueConvertible.Type {
            return try convertible.init(sqlValue: value) as! T
        }
        guard depth < NestingLimit.maximum else {
            throw ModelStoreError(
                .decodingFailed,
                "\(T.self) nests more than \(NestingLimit.maximum) levels deep inside one column's value, the most ModelStore decodes.",
                value: value.description, suggestion: NestingLimit.suggestion)
        }
        return try T(from: SingleValueColumnDecoder(value: value, depth: depth + 1))
    }

    private func shapeChanged() -> ModelStoreError {
        ModelStoreError(
            .decodingFailed,
            "The column holds a single value, but the property's type now decodes a container.",
            value: value.description,
            suggestion: "The property's type changed how it is coded; migrate the stored values.")
    }
}
