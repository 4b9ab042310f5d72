import Foundation
import Testing

@testable import ModelStore

/// A parent whose hand-written init(from:) reads its to-many with `decode(T?.self)`.
private struct AdvClub: StoredModel, Equatable {
    var id: Int64
    var name: String?
    var members: [AdvMember]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvClub>] = [.toMany(\.members, inverse: \AdvMember.club)]

    enum CodingKeys: String, CodingKey { case id, name, members }

    init(id: Int64, name: String? = nil, members: [AdvMember]? = nil) {
        self.id = id
        self.name = name
        self.members = members
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        members = try container.decode([AdvMember]?.self, forKey: .members)
    }
}

private struct AdvMember: StoredModel, Equatable {
    var id: Int64
    @Related var club: AdvClub?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvMember>] = [.toOne(\.club, inverse: \AdvClub.members)]
}

/// A one-way to-one read by a hand-written init(from:) with `decode(T?.self)`.
private struct AdvOwner: StoredModel, Equatable {
    var id: Int64
    var name: String?
    static let primaryKey = ["id"]
}

private struct AdvPass: StoredModel, Equatable {
    var id: Int64
    var label: String?
    var owner: AdvOwner?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvPass>] = [.toOne(\.owner)]

    enum CodingKeys: String, CodingKey { case id, label, owner }

    init(id: Int64, label: String? = nil, owner: AdvOwner? = nil) {
        self.id = id
        self.label = label
        self.owner = owner
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        label = try container.decodeIfPresent(String.self, forKey: .label)
        owner = try container.decode(AdvOwner?.self, forKey: .owner)
    }
}

/// A to-many held in a non-optional array, loading on request (the default).
private struct AdvRoster: StoredModel, Equatable {
    var id: Int64
    var name: String?
    var entries: [AdvEntry]
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvRoster>] = [.toMany(\.entries, inverse: \AdvEntry.roster)]
}

private struct AdvEntry: StoredModel, Equatable {
    var id: Int64
    @Related var roster: AdvRoster?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvEntry>] = [.toOne(\.roster, inverse: \AdvRoster.entries)]
}

/// Read, change a stored property, save: a relationship the read did not load must come back
/// as "not loaded" (nil), so that the save leaves its stored links alone.
@Suite("Adversarial: read-modify-save of models whose relationships were not loaded")
struct RoundTripAttackTests {
    @Test(arguments: Backend.available) func aToManyDecodedWithDecodeOfAnOptionalIsNilWhenNotLoaded(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try AdvClub(id: 1, name: "c", members: [AdvMember(id: 1), AdvMember(id: 2)]).save(in: test.store)
        var club = try #require(try AdvClub.find(key: 1, in: test.store))
        #expect(club.members == nil)
        club.name = "renamed"
        try club.save(in: test.store)
        #expect(try AdvClub.find(key: 1, loading: .direct, in: test.store)?.members?.map(\.id) == [1, 2])
    }

    @Test(arguments: Backend.available) func aToOneDecodedWithDecodeOfAnOptionalIsNilWhenNotLoaded(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try AdvPass(id: 1, label: "p", owner: AdvOwner(id: 5, name: "o")).save(in: test.store)
        var pass = try #require(try AdvPass.find(key: 1, in: test.store))
        #expect(pass.owner == nil)
        pass.label = "renamed"
        try pass.save(in: test.store)
        #expect(try AdvOwner.findAll(in: test.store).map(\.id) == [5])
        #expect(try AdvPass.find(key: 1, loading: .direct, in: test.store)?.owner?.id == 5)
    }

    @Test(arguments: Backend.available) func aNonOptionalToManyReadWithoutLoadingKeepsItsLinksWhenSavedBack(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try AdvRoster(id: 1, name: "r", entries: [AdvEntry(id: 1), AdvEntry(id: 2)]).save(in: test.store)
        var roster = try #require(try AdvRoster.find(key: 1, in: test.store))
        roster.name = "renamed"
        try roster.save(in: test.store)
        #expect(try AdvRoster.find(key: 1, loading: .direct, in: test.store)?.entries.map(\.id) == [1, 2])
    }
}
