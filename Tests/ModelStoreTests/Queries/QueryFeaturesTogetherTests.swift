import Foundation
import Testing
@testable import ModelStore

private struct Stop: Codable, Sendable, Equatable {
    var city: String
    var day: Int
}

private struct Tour: StoredModel, Equatable {
    var id: Int64?
    var name: String
    var stops: [Stop] = []
    var headliner: Stop?
    var band: Band?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Tour>] = [.toOne(\.band, inverse: \Band.tours)]
}

private struct Band: StoredModel, Equatable {
    var code: String
    var genre: String?
    var tours: [Tour]?
    static let primaryKey = ["code"]
    static let columnStorage: [ColumnStorage<Band>] = [.text(\.code, collation: .caseInsensitive)]
    static let relationships: [Relationship<Band>] = [.toMany(\.tours, inverse: \Tour.band)]
}

private struct CityCount: Decodable, Sendable, Equatable {
    var city: String?
    var count: Int
}

/// The query features of one release used together: streams and grouped queries over
/// conditions across relationships and inside JSON, assigned keys with collated links.
@Suite struct QueryFeaturesTogetherTests {
    private func tours(_ backend: Backend) throws -> TestStore {
        let test = try TestStore(.file, or: backend)
        try Band.save([Band(code: "abba", genre: "pop"), Band(code: "acdc", genre: "rock")], in: test.store)
        var first = Tour(id: nil, name: "Waterloo", stops: [Stop(city: "Paris", day: 1)], headliner: Stop(city: "Paris", day: 1))
        first.band = Band(code: "ABBA")
        var second = Tour(id: nil, name: "Thunder", stops: [Stop(city: "Lyon", day: 2)], headliner: Stop(city: "Lyon", day: 2))
        second.band = Band(code: "AcDc")
        var third = Tour(id: nil, name: "Encore", stops: [], headliner: Stop(city: "Paris", day: 9))
        third.band = Band(code: "abba")
        let outcome = try Tour.save([first, second, third], related: .mustExist, in: test.store)
        #expect(outcome.assignedKeys == [1, 2, 3])
        return test
    }

    // SQLite only until PostgreSQL answers the same: the NOCASE collation throws .unsupported on PostgreSQL.
    @Test func aStreamAndForEachTakeConditionsAcrossRelationshipsAndInsideJSON() async throws {
        let test = try tours(.sqlite)
        let condition: Condition<Tour> = .related(\.band, \.genre == "pop") && \.headliner?.city == "Paris"
        var names: [String] = []
        try Tour.filter(condition).order(.ascending(\.name)).forEach(in: test.store) { names.append($0.name) }
        #expect(names == ["Encore", "Waterloo"])
        var streamed: [String] = []
        for try await tour in Tour.filter(condition).order(.ascending(\.name)).stream(in: test.store) { streamed.append(tour.name) }
        #expect(streamed == names)
    }

    // SQLite only until PostgreSQL answers the same: the NOCASE collation throws .unsupported on PostgreSQL.
    @Test func groupsByAPropertyInsideJSONAcrossARelationship() throws {
        let test = try tours(.sqlite)
        let perCity = try Tour.filter(.related(\.band, \.code == "ABBA")).grouped(by: \.headliner?.city)
            .findAll(as: CityCount.self, .count(), in: test.store)
        #expect(perCity == [CityCount(city: "Paris", count: 2)])
    }

    // SQLite only until PostgreSQL answers the same: the NOCASE collation throws .unsupported on PostgreSQL.
    @Test func linksThroughACollatedKeyLoadWhateverSpellingTheSaveCarried() throws {
        let test = try tours(.sqlite)
        let abba = try Band.find(key: "Abba", loading: .direct, in: test.store)
        #expect(abba?.tours?.map(\.name).sorted() == ["Encore", "Waterloo"])
        #expect(try Band.findAll(where: RelatedCount(\Band.tours) == 2, in: test.store).map(\.code) == ["abba"])
        let saved = try Band(code: "ACDC", genre: "hard rock").saved(in: test.store)
        #expect(saved.code == "acdc")
        #expect(saved.genre == "hard rock")
    }
}
