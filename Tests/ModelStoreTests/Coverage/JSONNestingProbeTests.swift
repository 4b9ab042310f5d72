import Foundation
import Testing
@testable import ModelStore

/// A value of every primitive type, alone and in arrays: synthesized coding writes each
/// through the containers' typed methods.
struct EveryPrimitive: Codable, Sendable, Equatable {
    var bool = true
    var string = "text"
    var double = 0.25
    var float: Float = 1.5
    var int = -7
    var int8: Int8 = -8
    var int16: Int16 = -16
    var int32: Int32 = -32
    var int64: Int64 = -64
    var uint: UInt = 7
    var uint8: UInt8 = 8
    var uint16: UInt16 = 16
    var uint32: UInt32 = 32
    var uint64: UInt64 = 1 << 40
    var bools = [true, false]
    var floats: [Float] = [0.5, -2]
    var int8s: [Int8] = [.min, .max]
    var int16s: [Int16] = [.min, .max]
    var int32s: [Int32] = [.min, .max]
    var int64s: [Int64] = [.min, .max]
    var uints: [UInt] = [0, 1 << 33]
    var uint8s: [UInt8] = [0, .max]
    var uint16s: [UInt16] = [0, .max]
    var uint32s: [UInt32] = [0, .max]
    var uint64s: [UInt64] = [0, 1 << 50]
    var maybes: [String?] = ["a", nil, "c"]
}

/// Hand-written coding that uses every method of the keyed and unkeyed containers: typed
/// values, nil, nested containers and super coders.
struct Packed: Codable, Sendable, Equatable {
    var label: String
    var parent: String
    var named: String
    var inner: Int
    var innerList: [String]
    var superValue: Int64
    var values: [Double]
    var tail: [Int]
    /// Not stored: what the containers reported for the nils while this value was decoded.
    var absentWasNull = false
    var listNullWasNull = false

    enum CodingKeys: String, CodingKey { case label, absent, named, list }
    enum InnerKeys: String, CodingKey { case value }

    init(label: String) {
        self.label = label
        parent = label + "-parent"
        named = label + "-named"
        inner = 42
        innerList = ["x", "y"]
        superValue = -99
        values = [1, 2.5, 4, 8, 16, 32, 64, 128, 256, 512, 100, 2048, 4096, 8192]
        tail = [3, 1, 2]
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        label = try container.decode(String.self, forKey: .label)
        absentWasNull = try container.decodeNil(forKey: .absent)
        parent = try String(from: container.superDecoder())
        named = try String(from: container.superDecoder(forKey: .named))
        var list = try container.nestedUnkeyedContainer(forKey: .list)
        inner = try list.nestedContainer(keyedBy: InnerKeys.self).decode(Int.self, forKey: .value)
        var nestedList = try list.nestedUnkeyedContainer()
        innerList = [try nestedList.decode(String.self), try nestedList.decode(String.self)]
        superValue = try Int64(from: list.superDecoder())
        listNullWasNull = try list.decodeNil()
        var values: [Double] = []
        values.append(try list.decode(Bool.self) ? 1 : 0)
        values.append(Double(try list.decode(String.self))!)
        values.append(try list.decode(Double.self))
        values.append(Double(try list.decode(Float.self)))
        values.append(Double(try list.decode(Int.self)))
        values.append(Double(try list.decode(Int8.self)))
        values.append(Double(try list.decode(Int16.self)))
        values.append(Double(try list.decode(Int32.self)))
        values.append(Double(try list.decode(Int64.self)))
        values.append(Double(try list.decode(UInt.self)))
        values.append(Double(try list.decode(UInt8.self)))
        values.append(Double(try list.decode(UInt16.self)))
        values.append(Double(try list.decode(UInt32.self)))
        values.append(Double(try list.decode(UInt64.self)))
        self.values = values
        var tail: [Int] = []
        tail.reserveCapacity(list.count ?? 0)
        while !list.isAtEnd { tail.append(try list.decode(Int.self)) }
        self.tail = tail
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(label, forKey: .label)
        try container.encodeNil(forKey: .absent)
        try parent.encode(to: container.superEncoder())
        try named.encode(to: container.superEncoder(forKey: .named))
        var list = container.nestedUnkeyedContainer(forKey: .list)
        var object = list.nestedContainer(keyedBy: InnerKeys.self)
        try object.encode(inner, forKey: .value)
        var nestedList = list.nestedUnkeyedContainer()
        for text in innerList { try nestedList.encode(text) }
        try superValue.encode(to: list.superEncoder())
        try list.encodeNil()
        try list.encode(values[0] != 0)
        try list.encode(String(values[1]))
        try list.encode(values[2])
        try list.encode(Float(values[3]))
        try list.encode(Int(values[4]))
        try list.encode(Int8(values[5]))
        try list.encode(Int16(values[6]))
        try list.encode(Int32(values[7]))
        try list.encode(Int64(values[8]))
        try list.encode(UInt(values[9]))
        try list.encode(UInt8(values[10]))
        try list.encode(UInt16(values[11]))
        try list.encode(UInt32(values[12]))
        try list.encode(UInt64(values[13]))
        for number in tail { try list.encode(number) }
    }
}

/// Containers nested `depth` deep by one `encode(to:)` in a loop (no recursion): lists in
/// lists, objects in objects, or objects and lists in turn.
struct Burrow: Codable, Sendable, Equatable {
    enum Kind: Int, Codable, Sendable, CaseIterable { case objects, lists, mixed }
    var kind: Kind
    var depth: Int

    enum Keys: String, CodingKey { case kind, depth, inner }

    init(_ kind: Kind, depth: Int) {
        self.kind = kind
        self.depth = depth
    }

    init(from decoder: any Decoder) throws {
        if let top = try? decoder.container(keyedBy: Keys.self) {
            kind = try top.decode(Kind.self, forKey: .kind)
            depth = try top.decode(Int.self, forKey: .depth)
            var object: KeyedDecodingContainer<Keys>? = top
            var list: (any UnkeyedDecodingContainer)?
            for _ in 0..<max(depth - 1, 0) {
                if let current = object {
                    if kind == .mixed {
                        list = try current.nestedUnkeyedContainer(forKey: .inner)
                        object = nil
                    } else {
                        object = try current.nestedContainer(keyedBy: Keys.self, forKey: .inner)
                    }
                } else if var current = list {
                    object = try current.nestedContainer(keyedBy: Keys.self)
                    list = nil
                }
            }
        } else {
            var top = try decoder.unkeyedContainer()
            kind = try top.decode(Kind.self)
            depth = try top.decode(Int.self)
            var current: any UnkeyedDecodingContainer = top
            for _ in 0..<max(depth - 1, 0) { current = try current.nestedUnkeyedContainer() }
        }
    }

    func encode(to encoder: any Encoder) throws {
        switch kind {
        case .lists:
            var top = encoder.unkeyedContainer()
            try top.encode(kind)
            try top.encode(depth)
            var current: any UnkeyedEncodingContainer = top
            for _ in 0..<max(depth - 1, 0) { current = current.nestedUnkeyedContainer() }
        case .objects, .mixed:
            var top = encoder.container(keyedBy: Keys.self)
            try top.encode(kind, forKey: .kind)
            try top.encode(depth, forKey: .depth)
            var object: KeyedEncodingContainer<Keys>? = top
            var list: (any UnkeyedEncodingContainer)?
            for _ in 0..<max(depth - 1, 0) {
                if var current = object {
                    if kind == .mixed {
                        list = current.nestedUnkeyedContainer(forKey: .inner)
                        object = nil
                    } else {
                        object = current.nestedContainer(keyedBy: Keys.self, forKey: .inner)
                    }
                } else if var current = list {
                    object = current.nestedContainer(keyedBy: Keys.self)
                    list = nil
                }
            }
        }
    }
}

/// A gauge reading that its own coding refuses when negative, naming the container's coding path
/// as hand-written Codable code does; it codes as an object, a list or a single value.
struct Gauge: Codable, Sendable, Equatable {
    enum Keys: String, CodingKey { case value }
    var value: Int
    var shape: Int

    init(_ value: Int, shape: Int) {
        self.value = value
        self.shape = shape
    }

    init(from decoder: any Decoder) throws {
        if let object = try? decoder.container(keyedBy: Keys.self) {
            value = try object.decode(Int.self, forKey: .value)
            shape = 0
        } else if var list = try? decoder.unkeyedContainer() {
            value = try list.decode(Int.self)
            shape = 1
        } else {
            value = try decoder.singleValueContainer().decode(Int.self)
            shape = 2
        }
    }

    private func refusal(_ path: [any CodingKey]) -> EncodingError {
        EncodingError.invalidValue(value, .init(codingPath: path, debugDescription: "a gauge of \(value) is below zero"))
    }

    func encode(to encoder: any Encoder) throws {
        switch shape {
        case 0:
            var object = encoder.container(keyedBy: Keys.self)
            if value < 0 { throw refusal(object.codingPath) }
            try object.encode(value, forKey: .value)
        case 1:
            var list = encoder.unkeyedContainer()
            if value < 0 { throw refusal(list.codingPath) }
            try list.encode(value)
        default:
            var single = encoder.singleValueContainer()
            if value < 0 { throw refusal(single.codingPath) }
            try single.encode(value)
        }
    }
}

/// Properties stored as JSON, measured before they are encoded.
struct Warren: StoredModel {
    var id: Int64
    var primitives: EveryPrimitive?
    var packed: Packed?
    var burrow: Burrow?
    var dolls: [Matryoshka]?
    var gauges: [Gauge]?
    var climate: [Temperature]?
    var percents: [Percent]?
    static let primaryKey = ["id"]
}

@Suite("Coverage: measuring how deeply a JSON property nests")
struct JSONNestingProbeTests {
    @Test(arguments: Backend.available) func aValueOfEveryPrimitiveTypeRoundTripsAsJSON(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let primitives = EveryPrimitive()
        try Warren(id: 1, primitives: primitives).save(in: test.store)
        #expect(try Warren.find(key: 1, in: test.store)?.primitives == primitives)
        let stored = try test.rawRows(
            #"SELECT \#(test.jsonText("primitives", "$.int8s[0]")), \#(test.jsonText("primitives", "$.maybes[1]")) FROM "Warren""#)
        #expect(stored == [[.text("-128"), .null]])
    }

    @Test(arguments: Backend.available) func aValueUsingEveryContainerMethodRoundTripsAsJSON(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let packed = Packed(label: "p")
        try Warren(id: 1, packed: packed).save(in: test.store)
        let loaded = try #require(try Warren.find(key: 1, in: test.store)?.packed)
        #expect(loaded.absentWasNull)
        #expect(loaded.listNullWasNull)
        var expected = packed
        expected.absentWasNull = true
        expected.listNullWasNull = true
        #expect(loaded == expected)
        #expect(loaded.parent == "p-parent")
        #expect(loaded.innerList == ["x", "y"])
        #expect(
            try test.rawRows(#"SELECT \#(test.jsonText("packed", "$.super")), \#(test.jsonType("packed", "$.absent")) FROM "Warren""#) == [
                [.text("p-parent"), .text("null")]
            ])
    }

    @Test(arguments: Backend.available, Burrow.Kind.allCases)
    func containersNestedExactlyToTheLimitAreStoredAndReadBack(_ backend: Backend, kind: Burrow.Kind) throws {
        let test = try TestStore(backend)
        let burrow = Burrow(kind, depth: NestingLimit.maximum)
        try Warren(id: 1, burrow: burrow).save(in: test.store)
        #expect(try Warren.find(key: 1, in: test.store)?.burrow == burrow)
        let text = try test.rawRows(#"SELECT "burrow" FROM "Warren""#)
        guard case .text(let json)? = text.first?.first else {
            Issue.record("burrow is not stored as text: \(text)")
            return
        }
        #expect(NestingLimit.depth(ofJSON: json, limit: 1000) == NestingLimit.maximum)
    }

    @Test(arguments: Backend.available, Burrow.Kind.allCases)
    func containersNestedOneLevelPastTheLimitAreRefusedAndNothingIsWritten(_ backend: Backend, kind: Burrow.Kind) throws {
        let test = try TestStore(backend)
        try Warren(id: 1, burrow: Burrow(kind, depth: 3)).save(in: test.store)
        let error = try #require(throws: ModelStoreError.self) {
            try Warren(id: 1, burrow: Burrow(kind, depth: NestingLimit.maximum + 1)).save(in: test.store)
        }
        #expect(error.code == .encodingFailed)
        #expect(error.model == "Warren")
        #expect(error.column == "burrow")
        #expect(error.suggestion == NestingLimit.suggestion)
        #expect(try Warren.find(key: 1, in: test.store)?.burrow == Burrow(kind, depth: 3))
    }

    @Test(arguments: Backend.available) func singleValueWrappersInsideJSONRoundTripAndCountTowardTheLimit(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Warren(id: 1, dolls: [Matryoshka(layers: 8, core: 5), Matryoshka(layers: 0, core: 6)]).save(in: test.store)
        #expect(try test.rawRows(#"SELECT "dolls" FROM "Warren""#) == [[.text("[5,6]")]])
        #expect(try Warren.find(key: 1, in: test.store)?.dolls == [Matryoshka(layers: 0, core: 5), Matryoshka(layers: 0, core: 6)])
        // Wrapping adds no JSON nesting, but each wrapper is one more call deep.
        let error = try #require(throws: ModelStoreError.self) {
            try Warren(id: 1, dolls: [Matryoshka(layers: 2 * NestingLimit.maximum, core: 7)]).save(in: test.store)
        }
        #expect(error.code == .encodingFailed)
        #expect(error.column == "dolls")
        #expect(error.suggestion == NestingLimit.suggestion)
        #expect(try test.rawRows(#"SELECT "dolls" FROM "Warren""#) == [[.text("[5,6]")]])
    }

    @Test(arguments: Backend.available, [0, 1, 2])
    func aNestedTypesOwnEncodingErrorInsideJSONIsRefusedNamingTheProperty(_ backend: Backend, shape: Int) throws {
        let test = try TestStore(backend)
        try Warren(id: 1, gauges: [Gauge(4, shape: shape)]).save(in: test.store)
        #expect(try Warren.find(key: 1, in: test.store)?.gauges == [Gauge(4, shape: shape)])
        let error = try #require(throws: ModelStoreError.self) {
            try Warren(id: 1, gauges: [Gauge(5, shape: shape), Gauge(-1, shape: shape)]).save(in: test.store)
        }
        #expect(error.code == .encodingFailed)
        #expect(error.model == "Warren")
        #expect(error.column == "gauges")
        #expect(error.message.contains("a gauge of -1 is below zero"))
        #expect(try Warren.find(key: 1, in: test.store)?.gauges == [Gauge(4, shape: shape)])
    }

    @Test(arguments: Backend.available) func typesInsideJSONThatConsultTheEncoderSeeNoUserInfoAndAnEmptyPath(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Warren(id: 1, climate: [Temperature(celsius: 20)], percents: [Percent(50)]).save(in: test.store)
        #expect(
            try test.rawRows(#"SELECT \#(test.jsonText("climate", "$[0]")), "percents" FROM "Warren""#) == [[.text("20"), .text("[50]")]])
        let loaded = try #require(try Warren.find(key: 1, in: test.store))
        #expect(loaded.climate == [Temperature(celsius: 20)])
        #expect(loaded.percents == [Percent(50)])
        let error = try #require(throws: ModelStoreError.self) {
            try Warren(id: 1, percents: [Percent(50), Percent(101)]).save(in: test.store)
        }
        #expect(error.code == .encodingFailed)
        #expect(error.column == "percents")
        #expect(error.message.contains("101 is not a percentage"))
    }
}
