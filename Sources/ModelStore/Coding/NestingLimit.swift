/// How deeply a property's value may nest, for values stored as JSON.
///
/// `Codable` walks a value by recursion through the type's own (usually synthesized) code,
/// which ModelStore cannot make iterative: a value nested thousands of levels deep (a tree
/// built by a program, a list made of nested structs) would run the thread out of stack and
/// crash the process. So a JSON property is measured before it is encoded, and stored JSON
/// before it is decoded, and a deeper value is refused with `.encodingFailed` or
/// `.decodingFailed` naming the model and property.
///
/// 128 levels is far beyond hand-written data, and below Foundation's own JSON limit (512,
/// whose error names no property). It is chosen for the 512 KiB stack Apple platforms give
/// secondary threads (Dispatch threads on Linux get 8 MiB): measured in a debug build, a
/// save and load of a value at the limit needs under 320 KiB of stack with a struct of
/// eleven properties per level; at twice the limit it needed over 448 KiB.
enum NestingLimit {
    static let maximum = 128

    static let suggestion =
        "Store deeply nested data flat (for example as records that refer to their parent by key), or split it into several properties."

    /// The error for a value of `type` nested deeper than the limit, before the model and
    /// property are added by the caller.
    static func tooDeep(_ type: Any.Type) -> ModelStoreError {
        ModelStoreError(
            .encodingFailed,
            "The value nests more than \(maximum) levels deep, the most ModelStore encodes; "
                + "a deeper one could run the thread out of stack, so nothing was written.",
            value: "\(type) nested more than \(maximum) levels deep", suggestion: suggestion)
    }

    /// The depth of the deepest array or object in JSON text, counting no further than
    /// `limit + 1`: a scan of the bytes, without recursion or allocation.
    static func depth(ofJSON text: String, limit: Int = maximum) -> Int {
        var depth = 0
        var deepest = 0
        var inString = false
        var escaped = false
        for byte in text.utf8 {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > deepest {
                    deepest = depth
                    if deepest > limit { return deepest }
                }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
            default:
                break
            }
        }
        return deepest
    }
}

/// Measures how deeply a value nests, without encoding anything: it runs the value's
/// `encode(to:)` and throws `TooDeep` as soon as a nested value would pass the limit, so its
/// own recursion stops there.
///
/// Levels are counted as JSON counts them — each keyed or unkeyed container one level — so
/// whatever the encoder accepts, the decoder's scan of the stored JSON accepts too. A value
/// wrapped in a single-value container counts a level as well: it adds no JSON nesting, but
/// it does recurse.
final class NestingProbe: Encoder {
    struct TooDeep: Error {}

    /// How many levels enclose the value being encoded.
    fileprivate var level = 0
    fileprivate var tooDeep = false
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Throws `TooDeep` when `value` nests more than `NestingLimit.maximum` levels.
    func measure<T: Encodable>(_ value: T) throws {
        level = 0
        tooDeep = false
        try value.encode(to: self)
        if tooDeep { throw TooDeep() }
    }

    /// Encodes a value that `level` levels enclose.
    fileprivate func nested<T: Encodable>(_ value: T, at level: Int) throws {
        guard !tooDeep, level <= NestingLimit.maximum else {
            tooDeep = true
            throw TooDeep()
        }
        self.level = level
        try value.encode(to: self)
    }

    /// The level of a container opened inside `level` levels. The containers cannot throw,
    /// so passing the limit is noted, and thrown at the next value or at the end.
    fileprivate func container(inside level: Int) -> Int {
        if level + 1 > NestingLimit.maximum { tooDeep = true }
        return level + 1
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(NestingKeyedContainer<Key>(probe: self, level: container(inside: level)))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        NestingUnkeyedContainer(probe: self, level: container(inside: level))
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        NestingSingleValueContainer(probe: self, level: level)
    }
}

private struct NestingKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let probe: NestingProbe
    let level: Int
    var codingPath: [any CodingKey] { [] }

    // Primitives nest nothing; the standard library's defaults route them here too.
    mutating func encodeNil(forKey key: Key) {}
    mutating func encode(_ value: Bool, forKey key: Key) {}
    mutating func encode(_ value: String, forKey key: Key) {}
    mutating func encode(_ value: Double, forKey key: Key) {}
    mutating func encode(_ value: Float, forKey key: Key) {}
    mutating func encode(_ value: Int, forKey key: Key) {}
    mutating func encode(_ value: Int8, forKey key: Key) {}
    mutating func encode(_ value: Int16, forKey key: Key) {}
    mutating func encode(_ value: Int32, forKey key: Key) {}
    mutating func encode(_ value: Int64, forKey key: Key) {}
    mutating func encode(_ value: UInt, forKey key: Key) {}
    mutating func encode(_ value: UInt8, forKey key: Key) {}
    mutating func encode(_ value: UInt16, forKey key: Key) {}
    mutating func encode(_ value: UInt32, forKey key: Key) {}
    mutating func encode(_ value: UInt64, forKey key: Key) {}
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try probe.nested(value, at: level) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<
        NestedKey
    > {
        KeyedEncodingContainer(NestingKeyedContainer<NestedKey>(probe: probe, level: probe.container(inside: level)))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        NestingUnkeyedContainer(probe: probe, level: probe.container(inside: level))
    }

    mutating func superEncoder() -> any Encoder { probe }
    mutating func superEncoder(forKey key: Key) -> any Encoder { probe }
}

private struct NestingUnkeyedContainer: UnkeyedEncodingContainer {
    let probe: NestingProbe
    let level: Int
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }

    mutating func encodeNil() {}
    mutating func encode(_ value: Bool) {}
    mutating func encode(_ value: String) {}
    mutating func encode(_ value: Double) {}
    mutating func encode(_ value: Float) {}
    mutating func encode(_ value: Int) {}
    mutating func encode(_ value: Int8) {}
    mutating func encode(_ value: Int16) {}
    mutating func encode(_ value: Int32) {}
    mutating func encode(_ value: Int64) {}
    mutating func encode(_ value: UInt) {}
    mutating func encode(_ value: UInt8) {}
    mutating func encode(_ value: UInt16) {}
    mutating func encode(_ value: UInt32) {}
    mutating func encode(_ value: UInt64) {}
    mutating func encode<T: Encodable>(_ value: T) throws { try probe.nested(value, at: level) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(NestingKeyedContainer<NestedKey>(probe: probe, level: probe.container(inside: level)))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        NestingUnkeyedContainer(probe: probe, level: probe.container(inside: level))
    }

    mutating func superEncoder() -> any Encoder { probe }
}

private struct NestingSingleValueContainer: SingleValueEncodingContainer {
    let probe: NestingProbe
    let level: Int
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() {}
    mutating func encode(_ value: Bool) {}
    mutating func encode(_ value: String) {}
    mutating func encode(_ value: Double) {}
    mutating func encode(_ value: Float) {}
    mutating func encode(_ value: Int) {}
    mutating func encode(_ value: Int8) {}
    mutating func encode(_ value: Int16) {}
    mutating func encode(_ value: Int32) {}
    mutating func encode(_ value: Int64) {}
    mutating func encode(_ value: UInt) {}
    mutating func encode(_ value: UInt8) {}
    mutating func encode(_ value: UInt16) {}
    mutating func encode(_ value: UInt32) {}
    mutating func encode(_ value: UInt64) {}
    /// A value wrapped in a single value still nests one call deeper on the stack.
    mutating func encode<T: Encodable>(_ value: T) throws { try probe.nested(value, at: level + 1) }
}
