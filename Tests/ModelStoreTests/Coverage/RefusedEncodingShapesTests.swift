import Foundation
import Testing
@testable import ModelStore

/// Reads itself from a keyed container but writes an unkeyed or a single-value one.
struct ShapeShifter: StoredModel {
    var id: Int64
    var shape: Int
    static let primaryKey = ["id"]

    enum CodingKeys: String, CodingKey { case id, shape }

    init(id: Int64, shape: Int) {
        self.id = id
        self.shape = shape
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        shape = try container.decode(Int.self, forKey: .shape)
    }

    func encode(to encoder: any Encoder) throws {
        switch shape {
        case 1:
            var list = encoder.unkeyedContainer()
            try list.encode(id)
            try list.encode(shape)
        case 2:
            var single = encoder.singleValueContainer()
            try single.encode(id)
        default:
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(shape, forKey: .shape)
        }
    }
}

/// Writes a key its `init(from:)` never reads, as a primitive or as another value.
struct ExtraKeyWriter: StoredModel {
    var id: Int64
    var mode: Int
    static let primaryKey = ["id"]

    enum CodingKeys: String, CodingKey { case id, mode, extra }

    init(id: Int64, mode: Int) {
        self.id = id
        self.mode = mode
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        mode = try container.decode(Int.self, forKey: .mode)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(mode, forKey: .mode)
        switch mode {
        case 1: try container.encode("surplus", forKey: .extra)
        case 2: try container.encode(Date(timeIntervalSinceReferenceDate: 0), forKey: .extra)
        default: break
        }
    }
}

/// A single value that reads a string but writes nothing at all.
struct Mute: Codable, Sendable {
    var text: String

    init(_ text: String) {
        self.text = text
    }

    init(from decoder: any Decoder) throws {
        text = try decoder.singleValueContainer().decode(String.self)
    }

    func encode(to encoder: any Encoder) throws {
        _ = encoder.singleValueContainer()
    }
}

struct HoldsMute: StoredModel {
    var id: Int64
    var mute: Mute?
    static let primaryKey = ["id"]
}

/// Opens a nested keyed container for `body` and, as hand-written code would, keeps
/// writing into it and into the containers and coders it hands out.
struct NestedWriter: StoredModel, Equatable {
    var id: Int64
    var body: String
    var nests: Bool
    static let primaryKey = ["id"]

    enum CodingKeys: String, CodingKey { case id, body, nests }
    enum InnerKeys: String, CodingKey { case text, missing, deeper, list, parent, named }

    init(id: Int64, body: String, nests: Bool) {
        self.id = id
        self.body = body
        self.nests = nests
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        body = try container.decode(String.self, forKey: .body)
        nests = try container.decode(Bool.self, forKey: .nests)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(nests, forKey: .nests)
        guard nests else {
            try container.encode(body, forKey: .body)
            return
        }
        var inner = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .body)
        try inner.encode(body, forKey: .text)
        try inner.encodeNil(forKey: .missing)
        var deeper = inner.nestedContainer(keyedBy: InnerKeys.self, forKey: .deeper)
        try deeper.encode(inner.codingPath.count, forKey: .text)
        var list = inner.nestedUnkeyedContainer(forKey: .list)
        try list.encode(body)
        try body.encode(to: inner.superEncoder())
        try body.encode(to: inner.superEncoder(forKey: .named))
    }
}

@Suite("Coverage: encodings a model's row cannot hold")
struct RefusedEncodingShapesTests {
    @Test(arguments: Backend.available, [1, 2])
    func aModelThatEncodesAnythingButAKeyedContainerIsRefusedAndNothingIsWritten(_ backend: Backend, shape: Int) throws {
        let test = try TestStore(backend)
        try ShapeShifter(id: 1, shape: 0).save(in: test.store)
        let error = try #require(throws: ModelStoreError.self) { try ShapeShifter(id: 1, shape: shape).save(in: test.store) }
        #expect(error.code == .invalidModel)
        #expect(error.model == "ShapeShifter")
        #expect(error.message.contains("must encode to a keyed container"))
        #expect(try test.rawRows(#"SELECT "id", "shape" FROM "ShapeShifter""#) == [[.integer(1), .integer(0)]])
        #expect(throws: ModelStoreError.self) { try ShapeShifter.save([ShapeShifter(id: 2, shape: shape)], in: test.store) }
        #expect(try ShapeShifter.count(in: test.store) == 1)
    }

    @Test(arguments: Backend.available, [1, 2])
    func aKeyTheInitNeverReadsIsRefusedNamingItAndNothingIsWritten(_ backend: Backend, mode: Int) throws {
        let test = try TestStore(backend)
        try ExtraKeyWriter(id: 1, mode: 0).save(in: test.store)
        let error = try #require(throws: ModelStoreError.self) { try ExtraKeyWriter(id: 1, mode: mode).save(in: test.store) }
        #expect(error.code == .invalidModel)
        #expect(error.model == "ExtraKeyWriter")
        #expect(error.column == "extra")
        #expect(error.message.contains("never reads"))
        #expect(error.suggestion != nil)
        #expect(try test.rawRows(#"SELECT "id", "mode" FROM "ExtraKeyWriter""#) == [[.integer(1), .integer(0)]])
    }

    @Test(arguments: Backend.available) func aSingleValueTypeThatEncodesNoValueIsRefusedNamingTheProperty(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try test.rawExecute(#"CREATE TABLE "HoldsMute" ("id" BIGINT PRIMARY KEY NOT NULL, "mute" TEXT)"#)
        try test.rawExecute(#"INSERT INTO "HoldsMute" VALUES (1, 'said')"#)
        #expect(try HoldsMute.find(key: 1, in: test.store)?.mute?.text == "said")
        let error = try #require(throws: ModelStoreError.self) { try HoldsMute(id: 1, mute: Mute("unsaid")).save(in: test.store) }
        #expect(error.code == .encodingFailed)
        #expect(error.model == "HoldsMute")
        #expect(error.column == "mute")
        #expect(error.message.contains("encoded no value"))
        #expect(try test.rawRows(#"SELECT "mute" FROM "HoldsMute""#) == [[.text("said")]])
    }

    @Test(arguments: Backend.available) func writingOnIntoARefusedNestedContainerStillRefusesTheSaveNamingTheProperty(_ backend: Backend)
        throws
    {
        let test = try TestStore(backend)
        let kept = NestedWriter(id: 1, body: "kept", nests: false)
        try kept.save(in: test.store)
        let error = try #require(throws: ModelStoreError.self) {
            try NestedWriter(id: 1, body: "lost", nests: true).save(in: test.store)
        }
        #expect(error.code == .invalidModel)
        #expect(error.model == "NestedWriter")
        #expect(error.column == "body")
        #expect(error.message.contains("nested container"))
        #expect(try NestedWriter.find(key: 1, in: test.store) == kept)
        #expect(throws: ModelStoreError.self) { try NestedWriter.save([NestedWriter(id: 2, body: "x", nests: true)], in: test.store) }
        #expect(try NestedWriter.count(in: test.store) == 1)
    }
}
