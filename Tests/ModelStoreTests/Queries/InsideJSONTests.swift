import Foundation
import Testing
@testable import ModelStore

private struct Venue: Codable, Sendable, Equatable {
    var city: String
    var capacity: Int?
    var opened: Date?
    var gates: [String] = []
    var id: UUID?
}

private struct Gig: StoredModel, Equatable {
    var id: Int64
    var tags: [String] = []
    var ratings: Set<Int>?
    var venue: Venue
    var backup: Venue?
    static let primaryKey = ["id"]
}

/// Conditions and orderings that reach inside JSON-stored arrays, sets and nested values.
@Suite struct InsideJSONTests {
    private let opened = Date(timeIntervalSince1970: 1_700_000_000.25)
    private let venueID = UUID()

    private func gigs(_ backend: Backend) throws -> TestStore {
        let test = try TestStore(backend)
        try Gig.save(
            [
                Gig(
                    id: 1, tags: ["rock", "loud"], ratings: [4, 5],
                    venue: Venue(city: "Paris", capacity: 900, opened: opened, gates: ["A", "B"])),
                Gig(id: 2, tags: ["rockabilly"], ratings: nil, venue: Venue(city: "Lyon", capacity: nil, id: venueID)),
                Gig(
                    id: 3, tags: [], ratings: [5], venue: Venue(city: "Nice", capacity: 120, gates: ["B"]),
                    backup: Venue(city: "Paris", capacity: 50)),
            ], in: test.store)
        return test
    }

    @Test(arguments: Backend.available) func anArrayContainsAnElementNotASubstring(_ backend: Backend) throws {
        let test = try gigs(backend)
        #expect(try Gig.findAll(where: .contains(\.tags, "rock"), in: test.store).map(\.id) == [1])
        #expect(try Gig.findAll(where: !.contains(\.tags, "rock"), in: test.store).map(\.id) == [2, 3])
        #expect(try Gig.findAll(where: .contains(\.ratings, 5), in: test.store).map(\.id) == [1, 3])
        // A nil set holds nothing, and "not contains" matches it.
        #expect(try Gig.findAll(where: !.contains(\.ratings, 4), in: test.store).map(\.id) == [2, 3])
        // Values with quotes stay values.
        #expect(try Gig.findAll(where: .contains(\.tags, "rock\"]"), in: test.store).isEmpty)
    }

    @Test(arguments: Backend.available) func aNestedPropertyComparesByKeyPath(_ backend: Backend) throws {
        let test = try gigs(backend)
        test.resetSQL()
        #expect(try Gig.findAll(where: \.venue.city == "Paris", in: test.store).map(\.id) == [1])
        if backend == .sqlite {
            #expect(test.sql.contains { $0.contains("json_extract(\"venue\", '$.\"city\"')") }, "\(test.sql)")
        }
        #expect(try Gig.findAll(where: \.venue.capacity > 100, in: test.store).map(\.id) == [1, 3])
        // `!=` follows Swift: a nil capacity differs from 900.
        #expect(try Gig.findAll(where: \.venue.capacity != 900, in: test.store).map(\.id) == [2, 3])
        #expect(try Gig.findAll(where: \.venue.capacity == nil, in: test.store).map(\.id) == [2])
        #expect(try Gig.findAll(where: \.backup?.city == "Paris", in: test.store).map(\.id) == [3])
        #expect(try Gig.findAll(where: .in(\.venue.city, ["Lyon", "Nice"]), in: test.store).map(\.id) == [2, 3])
        #expect(try Gig.findAll(where: .hasPrefix(\.venue.city, "Pa"), in: test.store).map(\.id) == [1])
        #expect(try Gig.findAll(where: .contains(\.venue.gates, "B"), in: test.store).map(\.id) == [1, 3])
    }

    @Test(arguments: Backend.available) func datesAndUUIDsInsideCompareInTheFormJSONGivesThem(_ backend: Backend) throws {
        let test = try gigs(backend)
        #expect(try Gig.findAll(where: \.venue.opened == opened, in: test.store).map(\.id) == [1])
        #expect(try Gig.findAll(where: \.venue.opened > opened.addingTimeInterval(-1), in: test.store).map(\.id) == [1])
        #expect(try Gig.findAll(where: \.venue.id == venueID, in: test.store).map(\.id) == [2])
    }

    @Test(arguments: Backend.available) func ordersByANestedProperty(_ backend: Backend) throws {
        let test = try gigs(backend)
        #expect(try Gig.order(.ascending(\.venue.city)).findAll(in: test.store).map(\.id) == [2, 3, 1])
        #expect(try Gig.order(.descending(\.venue.capacity)).findAll(in: test.store).map(\.id) == [1, 3, 2])
    }

    @Test(arguments: Backend.available) func writesAndAggregatesCannotReachInside(_ backend: Backend) throws {
        let test = try gigs(backend)
        let update = #expect(throws: ModelStoreError.self) {
            _ = try Gig.all().updateAll(.set(\.venue.city, to: "Rome"), in: test.store)
        }
        #expect(update?.code == .invalidQuery)
        #expect(update?.column == "venue.city")
        #expect(try Gig.find(key: 1, in: test.store)?.venue.city == "Paris")
        let notJSON = #expect(throws: ModelStoreError.self) {
            _ = try Gig.findAll(where: .contains(\Gig.id.description, "1"), in: test.store)
        }
        #expect(notJSON?.code == .invalidQuery)
    }

    @Test(arguments: Backend.available) func everyCallForm(_ backend: Backend) async throws {
        let test = try gigs(backend)
        #expect(try await Gig.findAll(where: .contains(\.tags, "loud"), in: test.store).map(\.id) == [1])
        let viaCompletion: [Gig] = try await withCheckedThrowingContinuation { continuation in
            Gig.findAll(where: \.venue.city == "Nice", in: test.store) { continuation.resume(with: $0.mapError { $0 as any Error }) }
        }
        #expect(viaCompletion.map(\.id) == [3])
    }
}
