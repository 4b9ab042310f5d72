import Foundation
import Testing
@testable import ModelStore

struct Kennel: StoredModel, Equatable {
    var id: Int64
    var name: String?
    var dogs: [Dog]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Kennel>] = [.toMany(\.dogs, inverse: \Dog.kennel).loading(.eager)]
}

/// Codes every property through one generic helper, as hand-written Codable code that
/// shares a helper does: the `@Related` wrapper then reaches the coder as a plain
/// non-optional value, not through `Related`'s own `decode(_:forKey:)` overload.
struct Dog: StoredModel, Equatable {
    var id: Int64
    var name: String?
    @Related var kennel: Kennel?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Dog>] = [.toOne(\.kennel, inverse: \Kennel.dogs).loading(.eager)]

    enum CodingKeys: String, CodingKey { case id, name, kennel }

    init(id: Int64, name: String? = nil, kennel: Kennel? = nil) {
        self.id = id
        self.name = name
        _kennel = Related(wrappedValue: kennel)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func field<T: Decodable>(_ key: CodingKeys) throws -> T { try container.decode(T.self, forKey: key) }
        id = try field(.id)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        _kennel = try field(.kennel)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        func put<T: Encodable>(_ value: T, _ key: CodingKeys) throws { try container.encode(value, forKey: key) }
        try put(id, .id)
        try container.encodeIfPresent(name, forKey: .name)
        try put(_kennel, .kennel)
    }
}

struct Pin: StoredModel, Hashable {
    var id: Int64
    var label: String?
    static let primaryKey = ["id"]
}

/// A relationship declared on a computed property, which has no column of its own.
struct ComputedLink: StoredModel {
    var id: Int64
    var ticketId: Int64?
    var ticket: Ticket? {
        get { ticketId.map { Ticket(id: $0) } }
        set { ticketId = newValue?.id }
    }
    static let primaryKey = ["id"]
    static let relationships: [Relationship<ComputedLink>] = [.toOne(\.ticket).loading(.eager)]
}

/// A model whose primary key names no stored property.
struct MisKeyed: StoredModel {
    var id: Int64
    static let primaryKey = ["identifier"]
}

/// A model related to `MisKeyed`, whose key it cannot know.
struct PointsAtMisKeyed: StoredModel {
    var id: Int64
    var target: MisKeyed?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<PointsAtMisKeyed>] = [.toOne(\.target).loading(.eager)]
}

@Suite("Coverage: @Related coded as a plain value, and declarations that name no stored property")
struct RelatedWrapperCodingTests {
    @Test(arguments: Backend.available) func aRelatedWrapperCodedThroughAGenericHelperSavesAndLoadsItsLink(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Dog(id: 1, name: "Rex", kennel: Kennel(id: 5, name: "North")).save(in: test.store)
        #expect(try test.rawRows(#"SELECT "id", "name", "kennel_id" FROM "Dog""#) == [[.integer(1), .text("Rex"), .integer(5)]])
        #expect(try test.tableColumns("Dog").map(\.name) == ["id", "name", "kennel_id"])
        let dog = try #require(try Dog.find(key: 1, in: test.store))
        #expect(dog.kennel?.name == "North")
        #expect(try Kennel.find(key: 5, in: test.store)?.dogs?.map(\.name) == ["Rex"])
        #expect(try Dog.find(key: 1, loading: .none, in: test.store)?.kennel == nil)
    }

    @Test(arguments: Backend.available) func anEmptyRelatedWrapperCodedThroughAGenericHelperLeavesTheStoredLinkAlone(_ backend: Backend)
        throws
    {
        let test = try TestStore(backend)
        try Dog(id: 1, name: "Rex", kennel: Kennel(id: 5)).save(in: test.store)
        try Dog(id: 1, name: "Max").save(in: test.store)
        #expect(try test.rawRows(#"SELECT "name", "kennel_id" FROM "Dog""#) == [[.text("Max"), .integer(5)]])
        #expect(try Dog.find(key: 1, in: test.store)?.kennel?.id == 5)
        try Dog(id: 1).save(clearing: [\.kennel], in: test.store)
        #expect(try test.rawRows(#"SELECT "name", "kennel_id" FROM "Dog""#) == [[.text("Max"), .null]])
        #expect(try Kennel.find(key: 5, in: test.store)?.dogs == [])
    }

    @Test(arguments: Backend.available) func aRelatedWrapperCodedThroughAGenericHelperMovesToAnotherTarget(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Dog(id: 1, kennel: Kennel(id: 5)).save(in: test.store)
        try Dog(id: 1, kennel: Kennel(id: 6, name: "South")).save(in: test.store)
        #expect(try Dog.find(key: 1, in: test.store)?.kennel?.name == "South")
        #expect(try Kennel.find(key: 5, in: test.store)?.dogs == [])
        #expect(try Kennel.count(in: test.store) == 2)
    }

    // SQLite-only: no store behind it (JSON coding and equality of the wrapper).
    @Test func aRelatedWrapperCodesAsItsValueOrNullInJSON() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let held = [Related(wrappedValue: Ticket(id: 3, seat: "12A")), Related<Ticket>()]
        let text = String(decoding: try encoder.encode(held), as: UTF8.self)
        #expect(text == #"[{"id":3,"seat":"12A"},null]"#)
        let decoded = try JSONDecoder().decode([Related<Ticket>].self, from: Data(text.utf8))
        #expect(decoded.map(\.wrappedValue) == [Ticket(id: 3, seat: "12A"), nil])
        #expect(decoded == held)
    }

    // SQLite-only: no store behind it (JSON coding and equality of the wrapper).
    @Test func aModelHoldingARelatedWrapperRoundTripsThroughJSONAndAMissingKeyIsNil() throws {
        var coach = Coach(id: 1, name: "Kay")
        coach.team = Team(id: 2, name: "Rockets")
        let data = try JSONEncoder().encode(coach)
        #expect(try JSONDecoder().decode(Coach.self, from: data) == coach)
        let bare = try JSONDecoder().decode(Coach.self, from: Data(#"{"id":4}"#.utf8))
        #expect(bare.team == nil)
        #expect(bare.id == 4)
    }

    // SQLite-only: no store behind it (JSON coding and equality of the wrapper).
    @Test func relatedWrappersAreEqualAndHashAsTheModelsTheyHold() {
        let first = Related(wrappedValue: Pin(id: 1, label: "a"))
        let same = Related(wrappedValue: Pin(id: 1, label: "a"))
        let other = Related(wrappedValue: Pin(id: 2, label: "a"))
        #expect(first == same)
        #expect(first != other)
        #expect(first.hashValue == same.hashValue)
        #expect(Set([first, same, other, Related(), Related()]).count == 3)
        var changed = first
        changed.wrappedValue = nil
        #expect(changed == Related())
    }

    @Test(arguments: Backend.available) func aRelationshipDeclaredOnAComputedPropertyIsAnInvalidModel(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let error = try #require(throws: ModelStoreError.self) { try ComputedLink(id: 1).save(in: test.store) }
        #expect(error.code == .invalidModel)
        #expect(error.model == "ComputedLink")
        #expect(error.message.contains("not a stored property"))
        #expect(throws: ModelStoreError.self) { try ComputedLink.findAll(in: test.store) }
    }

    @Test(arguments: Backend.available) func aRelationshipToAModelWhosePrimaryKeyNamesNoPropertyIsAnInvalidModel(_ backend: Backend) throws
    {
        let test = try TestStore(backend)
        let error = try #require(throws: ModelStoreError.self) { try PointsAtMisKeyed(id: 1).save(in: test.store) }
        #expect(error.code == .invalidModel)
        #expect(error.model == "MisKeyed")
        #expect(error.column == "identifier")
        #expect(error.message.contains("primaryKey"))
        #expect(throws: ModelStoreError.self) { try MisKeyed(id: 1).save(in: test.store) }
    }
}
