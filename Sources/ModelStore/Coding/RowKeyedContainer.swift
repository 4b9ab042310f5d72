import Foundation

/// The keyed container a model's `init(from:)` reads its properties from.
///
/// Every typed method is spelled out so that primitives take the direct path; `decodeIfPresent`
/// is implemented too, because the protocol's default would look the column up three times.
struct RowKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    // Not strong: the decoder caches its container, so a strong reference here would be a
    // cycle that leaks the decoder and its statement, keeping the connection (and its files)
    // open. Unsafe: a checked `unowned` costs a retain and a check on every property of every
    // row (W3 +20%). Safe in practice because the decoder outlives every use of its
    // containers: a model's `init(from:)` reads them while the decoder decodes that row.
    unowned(unsafe) let decoder: RowDecoder
    var codingPath: [any CodingKey] { [] }

    var allKeys: [Key] {
        decoder.layout.columns.compactMap { decoder.column($0.name) == nil ? nil : Key(stringValue: $0.name) }
    }

    func contains(_ key: Key) -> Bool {
        decoder.column(key.stringValue) != nil
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let (_, index) = decoder.column(key.stringValue) else { return true }
        return decoder.statement.isNull(at: index)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoder.bool(key.stringValue, optional: false)! }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoder.string(key.stringValue, optional: false)! }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoder.double(key.stringValue, optional: false)! }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decoder.float(key.stringValue, optional: false)! }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try int(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try int(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try int(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try int(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try int(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try int(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try int(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try int(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try int(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try int(type, key) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        // The one common type the protocol has no method for: compared by metadata, which
        // costs far less than the generic path's casts.
        if T.self == Date.self { return unsafeBitCast(try decoder.date(key.stringValue, optional: false)!, to: T.self) }
        if T.self == UUID.self { return unsafeBitCast(try decoder.uuid(key.stringValue, optional: false)!, to: T.self) }
        return try decoder.required(type, key.stringValue)
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try decoder.bool(key.stringValue, optional: true) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try decoder.string(key.stringValue, optional: true) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try decoder.double(key.stringValue, optional: true) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try decoder.float(key.stringValue, optional: true) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try intIfPresent(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try intIfPresent(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try intIfPresent(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try intIfPresent(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try intIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try intIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try intIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try intIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try intIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try intIfPresent(type, key) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        let name = key.stringValue
        // A relationship decodes as nil (the graph loader fills the ones a read loads, after
        // decoding): answered before any column lookup, so a relationship nobody asked for
        // costs a read nearly nothing. Only the parent handed to a child is found by `value`.
        if decoder.decodesAsNil(name) { return nil }
        if T.self == Date.self {
            guard let date = try decoder.date(name, optional: true) else { return nil }
            return unsafeBitCast(date, to: T.self)
        }
        if T.self == UUID.self {
            guard let uuid = try decoder.uuid(name, optional: true) else { return nil }
            return unsafeBitCast(uuid, to: T.self)
        }
        return try decoder.value(type, name, optional: true)
    }

    @inline(__always)
    private func int<T: FixedWidthInteger>(_ type: T.Type, _ key: Key) throws -> T {
        try decoder.integer(type, key.stringValue, optional: false)!
    }

    @inline(__always)
    private func intIfPresent<T: FixedWidthInteger>(_ type: T.Type, _ key: Key) throws -> T? {
        try decoder.integer(type, key.stringValue, optional: true)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        throw nested(key)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw nested(key)
    }

    func superDecoder() throws -> any Decoder { throw nested(nil) }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw nested(key) }

    private func nested(_ key: Key?) -> ModelStoreError {
        ModelStoreError(
            .invalidModel, "\(decoder.layout.modelName) opens a nested container; each property is one column.",
            model: decoder.layout.modelName, column: key?.stringValue)
    }
}
