import Foundation
import Testing
@testable import ModelStore

/// Decodes itself from one value: it has no properties to store as columns.
struct SingleValueModel: StoredModel {
    var id: Int64
    static let primaryKey = ["id"]
    init(id: Int64) { self.id = id }
    init(from decoder: any Decoder) throws { id = try decoder.singleValueContainer().decode(Int64.self) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(id)
    }
}

/// Decodes itself from a list.
struct UnkeyedModel: StoredModel {
    var id: Int64
    static let primaryKey = ["id"]
    init(id: Int64) { self.id = id }
    init(from decoder: any Decoder) throws {
        var list = try decoder.unkeyedContainer()
        id = try list.decode(Int64.self)
    }
    func encode(to encoder: any Encoder) throws {
        var list = encoder.unkeyedContainer()
        try list.encode(id)
    }
}

/// Reads its tags from a nested list: one column cannot hold it.
struct ListInInit: StoredModel {
    var id: Int64
    var tags: [String] = []
    static let primaryKey = ["id"]
    enum CodingKeys: String, CodingKey { case id, tags }
    init(id: Int64) { self.id = id }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        var list = try container.nestedUnkeyedContainer(forKey: .tags)
        while !list.isAtEnd { tags.append(try list.decode(String.self)) }
    }
}

/// Reads a value through a plain super decoder.
struct SuperInInit: StoredModel {
    var id: Int64
    var base: String = ""
    static let primaryKey = ["id"]
    enum CodingKeys: String, CodingKey { case id }
    init(id: Int64) { self.id = id }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        base = try String(from: container.superDecoder())
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
    }
}

/// Reads a value through a super decoder for a key.
struct NamedSuperInInit: StoredModel {
    var id: Int64
    var body: String = ""
    static let primaryKey = ["id"]
    enum CodingKeys: String, CodingKey { case id, body }
    init(id: Int64) { self.id = id }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        body = try String(from: container.superDecoder(forKey: .body))
    }
}

/// Refuses an empty code, the stand-in value the probe offers.
struct PickyModel: StoredModel {
    var id: Int64
    var code: String
    static let primaryKey = ["id"]
    enum CodingKeys: String, CodingKey { case id, code }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        code = try container.decode(String.self, forKey: .code)
        if code.isEmpty { throw DecodingError.dataCorruptedError(forKey: .code, in: container, debugDescription: "no code") }
    }
}

/// Spells an optional as `decode(String?.self, forKey:)`, as some hand-written code does.
struct SpelledOptional: StoredModel, Equatable {
    var id: Int64
    var note: String?
    static let primaryKey = ["id"]
    enum CodingKeys: String, CodingKey { case id, note }
    init(id: Int64, note: String?) {
        self.id = id
        self.note = note
    }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        note = try container.decode(String?.self, forKey: .note)
    }
}

/// A single value that refuses the empty string.
struct NonEmptyName: Codable, Sendable, Equatable {
    var text: String
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        text = try container.decode(String.self)
        if text.isEmpty { throw DecodingError.dataCorruptedError(in: container, debugDescription: "an empty name") }
    }
}

struct NeedsName: StoredModel {
    var id: Int64
    var name: NonEmptyName
    static let primaryKey = ["id"]
}

@Suite("Coverage: models whose table cannot be derived, and unusual spellings that can")
struct ModelDerivationRefusalsTests {
    @Test(arguments: Backend.available) func aModelThatDecodesFromASingleValueIsAnInvalidModelAndNoTableIsMade(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let error = try #require(throws: ModelStoreError.self) { try SingleValueModel(id: 1).save(in: test.store) }
        #expect(error.code == .invalidModel)
        #expect(error.model == "SingleValueModel")
        #expect(error.message.contains("does not decode from a keyed container"))
        #expect(error.suggestion != nil)
        #expect(throws: ModelStoreError.self) { try SingleValueModel.find(key: 1, in: test.store) }
        #expect(try !test.tableNames().contains("SingleValueModel"))
    }

    @Test(arguments: Backend.available) func aModelThatDecodesFromAListIsAnInvalidModel(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let error = try #require(throws: ModelStoreError.self) { try UnkeyedModel(id: 1).save(in: test.store) }
        #expect(error.code == .invalidModel)
        #expect(error.model == "UnkeyedModel")
        #expect(error.message.contains("does not decode from a keyed container"))
    }

    @Test(arguments: Backend.available) func aModelWhoseInitOpensANestedListOrSuperDecoderIsAnInvalidModelNamingTheKey(_ backend: Backend)
        throws
    {
        let test = try TestStore(backend)
        let list = try #require(throws: ModelStoreError.self) { try ListInInit(id: 1).save(in: test.store) }
        #expect(list.code == .invalidModel)
        #expect(list.model == "ListInInit")
        #expect(list.column == "tags")
        #expect(list.message.contains("nested container"))
        let plain = try #require(throws: ModelStoreError.self) { try SuperInInit(id: 1).save(in: test.store) }
        #expect(plain.code == .invalidModel)
        #expect(plain.model == "SuperInInit")
        #expect(plain.column == nil)
        let named = try #require(throws: ModelStoreError.self) { try NamedSuperInInit.findAll(in: test.store) }
        #expect(named.code == .invalidModel)
        #expect(named.column == "body")
    }

    @Test(arguments: Backend.available) func aModelWhoseInitRejectsTheStandInValuesIsAnInvalidModelNamingTheProperty(_ backend: Backend)
        throws
    {
        let test = try TestStore(backend)
        let error = try #require(throws: ModelStoreError.self) { try PickyModel.count(in: test.store) }
        #expect(error.code == .invalidModel)
        #expect(error.model == "PickyModel")
        #expect(error.column == "code")
        #expect(error.message.contains("no code"))
    }

    @Test(arguments: Backend.available) func aPropertyTypeThatRejectsEveryStandInIsAnInvalidModelSuggestingAFix(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let error = try #require(throws: ModelStoreError.self) { try NeedsName.findAll(in: test.store) }
        #expect(error.code == .invalidModel)
        #expect(error.model == "NeedsName")
        #expect(error.column == "name")
        #expect(error.message.contains("rejected every one"))
        #expect(error.message.contains("an empty name"))
        #expect(error.suggestion?.contains("Optional") == true)
    }

    @Test(arguments: Backend.available) func anOptionalDecodedWithDecodeRatherThanDecodeIfPresentIsANullableColumn(_ backend: Backend)
        throws
    {
        let test = try TestStore(backend)
        try SpelledOptional(id: 1, note: nil).save(in: test.store)
        try SpelledOptional(id: 2, note: "two").save(in: test.store)
        #expect(try SpelledOptional.findAll(in: test.store) == [SpelledOptional(id: 1, note: nil), SpelledOptional(id: 2, note: "two")])
        #expect(try test.declaredColumns("SpelledOptional")["note"]?.notNull == false)
        #expect(try test.rawRows(#"SELECT "note" FROM "SpelledOptional" ORDER BY "id""#) == [[.null], [.text("two")]])
    }
}
