/// Captures the one value a single-value `Codable` type (an enum with a raw value) encodes.
struct SingleValueColumnEncoder: Encoder, SingleValueEncodingContainer {
    /// Holds the captured value; a class so the container can fill it while passed by value.
    final class Box {
        var value: SQLValue?
        var failure: ModelStoreError?
        /// How many values deep the encoding is: a type that wraps itself would recurse.
        var depth = 0
    }

    let box = Box()
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        box.failure = shapeChanged()
        return KeyedEncodingContainer(DiscardingKeyedContainer<Key>())
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        box.failure = shapeChanged()
        return DiscardingUnkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    func encodeNil() { box.value = .null }

    func encode<T: Encodable>(_ value: T) throws {
        if let failure = box.failure { throw failure }
        if let convertible = value as? any SQLValueConvertible {
            box.value = try convertible.sqlValue
        } else {
            box.depth += 1
            defer { box.depth -= 1 }
            guard box.depth <= NestingLimit.maximum else { throw NestingLimit.tooDeep(T.self) }
            try value.encode(to: self)
        }
    }

    private func shapeChanged() -> ModelStoreError {
        ModelStoreError(
            .encodingFailed,
            "The property's type encodes a container, but its column holds a single value.",
            suggestion: "The type changed how it is coded; migrate the table or use a new property name.")
    }
}
