import Foundation

/// The keyed container a model's `encode(to:)` writes its properties into.
struct RowKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    // Not strong: the encoder caches its container, so a strong reference would be a cycle.
    // Unsafe, as in `RowKeyedContainer`: a checked `unowned` costs a retain and a check on
    // every property written, and the encoder outlives every use (a model's `encode(to:)`).
    unowned(unsafe) let encoder: RowEncoder
    var codingPath: [any CodingKey] { [] }

    /// An explicit nil (never written by synthesized code, which skips nils) stores NULL.
    mutating func encodeNil(forKey key: Key) throws { try encoder.set(.null, key.stringValue) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try encoder.set(.integer(value ? 1 : 0), key.stringValue) }
    mutating func encode(_ value: String, forKey key: Key) throws { try encoder.set(.text(value), key.stringValue) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try real(value, key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try real(Double(value), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try encoder.set(.integer(Int64(value)), key.stringValue) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try encoder.set(.integer(Int64(value)), key.stringValue) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try encoder.set(.integer(Int64(value)), key.stringValue) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try encoder.set(.integer(Int64(value)), key.stringValue) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try encoder.set(.integer(value), key.stringValue) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try unsigned(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try encoder.set(.integer(Int64(value)), key.stringValue) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try encoder.set(.integer(Int64(value)), key.stringValue) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try encoder.set(.integer(Int64(value)), key.stringValue) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try unsigned(value, key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        // As in `RowKeyedContainer.decode`: a Date in its own form skips the generic casts.
        if T.self == Date.self { return try encoder.setDate(unsafeBitCast(value, to: Date.self), key.stringValue) }
        if T.self == UUID.self { return try encoder.setUUID(unsafeBitCast(value, to: UUID.self), key.stringValue) }
        try encoder.set(value, key.stringValue)
    }

    private func real(_ value: Double, _ key: Key) throws {
        do {
            try encoder.set(try value.sqlValue, key.stringValue)
        } catch let error as ModelStoreError where error.code == .encodingFailed {
            throw encoder.numberFailure(error, key.stringValue)
        }
    }

    private func unsigned<T: FixedWidthInteger & SQLValueConvertible>(_ value: T, _ key: Key) throws {
        do {
            try encoder.set(try value.sqlValue, key.stringValue)
        } catch let error as ModelStoreError where error.code == .encodingFailed {
            throw encoder.numberFailure(error, key.stringValue)
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        encoder.fail(nested(key))
        return KeyedEncodingContainer(DiscardingKeyedContainer<NestedKey>())
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.fail(nested(key))
        return SingleValueColumnEncoder().unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        encoder.fail(nested(nil))
        return SingleValueColumnEncoder()
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        encoder.fail(nested(key))
        return SingleValueColumnEncoder()
    }

    private func nested(_ key: Key?) -> ModelStoreError {
        ModelStoreError(
            .invalidModel,
            "\(encoder.layout.modelName).encode(to:) opens a nested container; each property is one column.",
            model: encoder.layout.modelName, column: key?.stringValue,
            suggestion: "Encode the nested value as its own Codable type with encode(_:forKey:); it is stored as JSON.")
    }
}
