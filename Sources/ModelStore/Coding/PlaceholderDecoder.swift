/// A decoder that answers every request with a stand-in value, recording what kind of
/// container the decoded type asked for first. Used only by the schema probe.
final class PlaceholderDecoder: Decoder {
    let depth: Int
    private(set) var request: ContainerRequest?
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(depth: Int) {
        self.depth = depth
    }

    func note(_ request: ContainerRequest) {
        if self.request == nil { self.request = request }
    }

    func noteStorage(_ storage: StorageType) {
        if case .single(nil)? = request { request = .single(storage) }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        note(.keyed)
        return KeyedDecodingContainer(PlaceholderKeyedContainer(decoder: self))
    }

    func unkeyedContainer() -> any UnkeyedDecodingContainer {
        note(.unkeyed)
        return PlaceholderUnkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueDecodingContainer {
        note(.single(nil))
        return PlaceholderSingleValueContainer(decoder: self)
    }

    /// A nested value: a standard placeholder, or one built by decoding from stand-ins.
    func placeholder<T: Decodable>(_ type: T.Type) throws -> T {
        let made = Placeholder.make(type, depth: depth)
        if let value = made.value { return value }
        throw made.failure ?? ModelStoreError(.invalidModel, "No placeholder for \(T.self).")
    }
}

private struct PlaceholderSingleValueContainer: SingleValueDecodingContainer {
    let decoder: PlaceholderDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let standard = Placeholder.standard(type) {
            decoder.noteStorage(standard.storage)
            return standard.value
        }
        // A wrapper of a wrapper (`OneValue<OneValue<Int16>>`) is stored as the innermost
        // value: its storage too, or the column would be declared without a type (TEXT on a
        // server, which then turns the integer into text).
        let made = Placeholder.make(type, depth: decoder.depth)
        if case .single(let storage?)? = made.request { decoder.noteStorage(storage) }
        if let value = made.value { return value }
        throw made.failure ?? ModelStoreError(.invalidModel, "No placeholder for \(T.self).")
    }
}

private struct PlaceholderKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: PlaceholderDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }
    // No keys: dictionaries decode empty; structs ask for their keys by name anyway.
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { true }
    func decodeNil(forKey key: Key) -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.placeholder(type)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { nil }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(PlaceholderKeyedContainer<NestedKey>(decoder: decoder))
    }

    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedDecodingContainer {
        PlaceholderUnkeyedContainer()
    }

    func superDecoder() -> any Decoder { PlaceholderDecoder(depth: decoder.depth + 1) }
    func superDecoder(forKey key: Key) -> any Decoder { PlaceholderDecoder(depth: decoder.depth + 1) }
}

/// Always empty: arrays and sets decode as empty collections.
private struct PlaceholderUnkeyedContainer: UnkeyedDecodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int? { 0 }
    var isAtEnd: Bool { true }
    var currentIndex: Int { 0 }

    mutating func decodeNil() -> Bool { false }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        throw DecodingError.valueNotFound(
            type, .init(codingPath: [], debugDescription: "Placeholder collections are empty."))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(PlaceholderKeyedContainer<NestedKey>(decoder: PlaceholderDecoder(depth: 32)))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedDecodingContainer { PlaceholderUnkeyedContainer() }
    mutating func superDecoder() -> any Decoder { PlaceholderDecoder(depth: 32) }
}
