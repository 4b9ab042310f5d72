/// Learns a model's columns without an instance.
///
/// Swift's synthesized `init(from:)` asks its decoder for every stored property in order,
/// with its type, using `decodeIfPresent` for optionals. The probe answers each request
/// with a placeholder and writes down name, type and optionality: the column layout.
enum SchemaProbe {
    private static let cache = Locked<[ObjectIdentifier: ColumnLayout]>([:])

    /// The layout of any decodable type (a projection's row type), derived once per process.
    static func cachedLayout<T: Decodable>(of type: T.Type) throws -> ColumnLayout {
        let id = ObjectIdentifier(type)
        if let layout = cache.withLock({ $0[id] }) { return layout }
        let layout = try layout(of: type, modelName: String(describing: type))
        cache.withLock { $0[id] = layout }
        return layout
    }

    /// An instance made of placeholders (nil optionals, empty relationships), for finding
    /// out which property a key path reaches.
    static func placeholder<M: Decodable>(of type: M.Type) throws -> M {
        try M(from: ProbeDecoder(modelName: String(describing: type)))
    }

    /// An instance made of placeholders except for `key`, which holds a different value.
    static func placeholder<M: Decodable>(of type: M.Type, marking key: String) throws -> M {
        let probe = ProbeDecoder(modelName: String(describing: type))
        probe.marked = key
        return try M(from: probe)
    }

    static func layout<M: Decodable>(of type: M.Type, modelName: String) throws -> ColumnLayout {
        let probe = ProbeDecoder(modelName: modelName)
        do {
            _ = try M(from: probe)
        } catch let error as ModelStoreError {
            throw error
        } catch {
            throw ModelStoreError(
                .invalidModel,
                "\(modelName)'s init(from:) failed while ModelStore derived its table: \(error)",
                model: modelName, column: probe.lastKey)
        }
        return ColumnLayout(modelName: modelName, columns: probe.columns)
    }
}

final class ProbeDecoder: Decoder {
    let modelName: String
    /// The key that gets a value other than its placeholder (a present optional, an
    /// alternate value), so the property it fills can be told apart from the rest.
    var marked: String?
    private(set) var columns: [ColumnDescription] = []
    private var seen: Set<String> = []
    private(set) var lastKey: String?
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(modelName: String) {
        self.modelName = modelName
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(ProbeKeyedContainer(probe: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw notKeyed()
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw notKeyed()
    }

    private func notKeyed() -> ModelStoreError {
        ModelStoreError(
            .invalidModel,
            "\(modelName) does not decode from a keyed container, so it has no properties to store as columns.",
            model: modelName,
            suggestion: "Use the synthesized Codable conformance, or a custom one with a keyed container.")
    }

    /// Records the property `key` of type `T` and returns a placeholder (or nil when optional).
    func probe<T: Decodable>(_ type: T.Type, key: String, optional: Bool) throws -> T? {
        lastKey = key
        var isOptional = optional
        var valueType: any Decodable.Type = type
        if let wrapper = type as? any OptionalDecodable.Type {
            isOptional = true
            valueType = wrapper.wrappedDecodableType
        }
        let (coding, storage, value, failure) = classify(valueType)
        if key == marked, let empty = valueType as? any EmptyRelationshipValue.Type, let holding = empty.holdingPlaceholder as? T {
            return holding
        }
        if !optional, let empty = type as? any EmptyRelationshipValue.Type {
            // A @Related relationship: never a column, and empty until loaded.
            record(key, storage: storage, isOptional: true, coding: coding, typeName: String(describing: valueType), wrapper: true)
            return (empty.emptyValue as! T)
        }
        record(key, storage: storage, isOptional: isOptional, coding: coding, typeName: String(describing: valueType))
        if key == marked {
            if optional { return value as? T }
            if let alternate = Placeholder.alternate(T.self) { return alternate }
        }
        if optional { return nil }
        if let wrapper = type as? any OptionalDecodable.Type { return (wrapper.nilValue as! T) }
        if let value = value as? T { return value }
        throw ModelStoreError(
            .invalidModel,
            "ModelStore cannot derive \(modelName)'s table: it needs a stand-in value of \(T.self) for the non-optional property '\(key)', and \(T.self)'s init(from:) rejected every one"
                + (failure.map { " (\($0))" } ?? "") + ".",
            model: modelName, column: key,
            suggestion: "Make \(T.self) CaseIterable, or make '\(key)' Optional.")
    }

    private func record(
        _ key: String, storage: StorageType, isOptional: Bool, coding: ColumnCoding, typeName: String, wrapper: Bool = false
    ) {
        guard seen.insert(key).inserted else { return }
        var column = ColumnDescription(name: key, storage: storage, isOptional: isOptional, coding: coding, typeName: typeName)
        column.isRelationshipWrapper = wrapper
        columns.append(column)
    }

    private func classify(_ type: any Decodable.Type) -> (ColumnCoding, StorageType, Any?, (any Error)?) {
        func open<T: Decodable>(_ type: T.Type) -> (ColumnCoding, StorageType, Any?, (any Error)?) {
            if let standard = Placeholder.standard(type) {
                return (standard.coding, standard.storage, standard.value, nil)
            }
            let made = Placeholder.make(type, depth: 0)
            if let convertible = type as? any SQLValueConvertible.Type {
                var storage = StorageType.untyped
                if let value = made.value as? any SQLValueConvertible, let stored = try? value.sqlValue {
                    storage = Self.storage(of: stored)
                } else if case .single(let requested?)? = made.request {
                    storage = requested
                }
                return (.convertible(convertible), storage, made.value, made.failure)
            }
            switch made.request {
            case .single(let storage)?:
                return (.singleValue, storage ?? .untyped, made.value, made.failure)
            case .keyed?, .unkeyed?, nil:
                return (.json, .text, made.value, made.failure)
            }
        }
        return open(type)
    }

    private static func storage(of value: SQLValue) -> StorageType {
        switch value {
        case .integer: return .integer
        case .real: return .real
        case .text: return .text
        case .blob: return .blob
        case .null: return .untyped
        }
    }
}

private struct ProbeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let probe: ProbeDecoder
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { true }
    func decodeNil(forKey key: Key) -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try probe.probe(type, key: key.stringValue, optional: false)!
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try optional(type, key)
    }

    // The standard library's defaults for these would call decodeNil and then decode,
    // and the probe would see a non-optional property.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optional(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optional(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optional(type, key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try optional(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optional(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optional(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optional(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optional(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optional(type, key) }

    private func optional<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        try probe.probe(type, key: key.stringValue, optional: true)
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
            .invalidModel,
            "\(probe.modelName)'s init(from:) opens a nested container"
                + (key.map { " for '\($0.stringValue)'" } ?? "")
                + "; ModelStore stores each top-level property as one column.",
            model: probe.modelName, column: key?.stringValue,
            suggestion: "Decode the nested value as its own Codable type with decode(_:forKey:); it is stored as JSON.")
    }
}
