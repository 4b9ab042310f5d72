import Foundation
import Testing

@testable import ModelStore

/// Counts how often a value is encoded, across threads.
private let encodings = Locked(0)

/// A name that counts its own encodings.
private struct CountedName: Codable, Sendable, Equatable {
    var text: String
    init(_ text: String) { self.text = text }
    init(from decoder: any Decoder) throws { text = try decoder.singleValueContainer().decode(String.self) }
    func encode(to encoder: any Encoder) throws {
        encodings.withLock { $0 += 1 }
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}

private struct Band: StoredModel, Equatable {
    var id: Int64
    var name: CountedName?
    var members: [Musician]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Band>] = [.toMany(\.members, inverse: \Musician.band)]
}

private struct Musician: StoredModel, Equatable {
    var id: Int64
    var name: String?
    @Related var band: Band?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Musician>] = [.toOne(\.band, inverse: \Band.members)]
}

private struct Gig: StoredModel, Equatable {
    var id: Int64
    var venue: Venue?
    var acts: [Act]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Gig>] = [
        .toOne(\.venue, inverse: \Venue.gigs).loading(.eager),
        .toMany(\.acts, inverse: \Act.gig),
    ]
}

private struct Venue: StoredModel, Equatable {
    var id: Int64
    var name: String?
    var gigs: [Gig]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Venue>] = [.toMany(\.gigs, inverse: \Gig.venue)]
}

private struct Act: StoredModel, Equatable {
    var id: Int64
    @Related var gig: Gig?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Act>] = [.toOne(\.gig, inverse: \Gig.acts)]
}

/// One decision, above the Engine and the graph code, between the plain path and the graph
/// path: no work the call did not ask for, and none done twice.
@Suite("One decision between the plain path and the graph path", .serialized)
struct PathTests {
    @Test(arguments: Backend.available) func aGraphBatchEncodesEachElementOnce(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Band(id: 0, name: CountedName("warm-up")).save(in: test.store)  // the schema probe encodes too
        let bands = (1...100).map { Band(id: Int64($0), name: CountedName("band \($0)"), members: []) }
        encodings.withLock { $0 = 0 }
        let result = try Band.save(bands, in: test.store)
        #expect(result == BatchSaveOutcome(inserted: 100, updated: 0))
        #expect(encodings.current == 100)
        #expect(try Band.find(key: 42, in: test.store)?.name == CountedName("band 42"))
    }

    /// Saves whose relationships are all nil are their records alone: every link stays as
    /// stored, the outcomes count as through the graph, and on a server a batch goes out as
    /// one multi-row statement. One element holding a related model takes the graph again.
    @Test(arguments: Backend.available)
    func savesHoldingNoRelatedModelWriteTheirRecordsAloneAndKeepEveryLink(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Band(id: 1, name: CountedName("a"), members: [Musician(id: 1, name: "m"), Musician(id: 2, name: "n")]).save(
            in: test.store)
        test.resetSQL()
        let result = try Musician.save(
            [Musician(id: 1, name: "renamed"), Musician(id: 2, name: "n"), Musician(id: 3, name: "new")], in: test.store)
        #expect(result == BatchSaveOutcome(inserted: 1, updated: 1, unchanged: 1))
        if backend == .postgres { #expect(test.dataSQL.count == 1, "\(test.dataSQL)") }
        #expect(!test.dataSQL.contains { $0.contains(#""Band""#) }, "\(test.dataSQL)")
        var members = try Musician.findAll(loading: .direct, in: test.store)
        #expect(members.map(\.name) == ["renamed", "n", "new"])
        #expect(members.map { $0.band?.id } == [1, 1, nil])

        #expect(try Band(id: 1, name: CountedName("b")).save(in: test.store) == .updated)
        #expect(try Musician(id: 3, name: "newer").save(in: test.store) == .updated)
        #expect(try Band.find(key: 1, loading: .direct, in: test.store)?.members?.map(\.id).sorted() == [1, 2])
        #expect(try Band.find(key: 1, in: test.store)?.name == CountedName("b"))

        // One element with a related model: the whole batch takes the graph path.
        let linked = try Musician.save(
            [
                Musician(id: 3, name: "newer"),
                Musician(id: 4, name: "drummer", band: Related(wrappedValue: Band(id: 2, name: CountedName("c")))),
            ],
            in: test.store)
        #expect(linked == BatchSaveOutcome(inserted: 2, updated: 0, unchanged: 1))
        #expect(try Musician(id: 3, name: "newer", band: Related(wrappedValue: Band(id: 2))).save(in: test.store) == .updated)
        members = try Musician.findAll(loading: .direct, in: test.store)
        #expect(members.map { $0.band?.id } == [1, 1, 2, 2])
    }

    /// A batch holding no related model (duplicates, unchanged, updated and new elements,
    /// over several of a server's 500-row statements) stores and counts exactly what the graph
    /// path does with the same elements (forced by one more element holding a related model).
    @Test(arguments: Backend.available)
    func aBatchHoldingNoRelatedModelEndsAsTheGraphPathWithTheSameElements(_ backend: Backend) throws {
        func seed(_ store: ModelStore) throws {
            try Band(id: 1, name: CountedName("a"), members: (0..<300).map { Musician(id: Int64($0 * 3), name: "m\($0 * 3)") })
                .save(in: store)
        }
        let batch = (0..<1_300).map { (index: Int) -> Musician in
            let id = Int64((index * 7) % 1_100)
            let name: String? = index % 4 == 0 ? nil : (index % 5 == 0 ? "m\(id)" : "b\(index)")
            return Musician(id: id, name: name)
        }
        let plain = try TestStore(backend)
        try seed(plain.store)
        let graph = try TestStore(backend)
        try seed(graph.store)
        let plainResult = try Musician.save(batch, in: plain.store)
        let extra = Musician(id: 5_000, name: "extra", band: Related(wrappedValue: Band(id: 9, name: CountedName("z"))))
        var graphResult = try Musician.save(batch + [extra], in: graph.store)
        graphResult.inserted -= 2
        #expect(plainResult == graphResult)
        let plainRecords = try Musician.findAll(loading: .direct, in: plain.store)
        let graphRecords = try Musician.findAll(loading: .direct, in: graph.store).filter { $0.id != 5_000 }
        #expect(plainRecords.map(\.id) == graphRecords.map(\.id))
        #expect(plainRecords.map(\.name) == graphRecords.map(\.name))
        #expect(plainRecords.map { $0.band?.id } == graphRecords.map { $0.band?.id })
    }

    @Test(arguments: Backend.available) func aFailingGraphBatchElementIsNamedWithItsKeyAndNothingIsSaved(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try test.rawExecute(#"CREATE TABLE "Band" ("id" BIGINT PRIMARY KEY, "name" TEXT CHECK ("name" <> 'refused'))"#)
        let bands = [Band(id: 1, name: CountedName("fine")), Band(id: 2, name: CountedName("refused"))]
        let error = try #require(throws: ModelStoreError.self) { try Band.save(bands, in: test.store) }
        #expect(error.message.hasPrefix("Element 1 of a batch of 2 Band models failed"))
        #expect(error.key == "id = 2")
        #expect(try Band.count(in: test.store) == 0)
    }

    @Test(arguments: Backend.available) func aReadThatLoadsNoRelationshipRunsOnlyItsOwnSelect(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Band(id: 1, name: CountedName("a"), members: [Musician(id: 1, name: "m")]).save(in: test.store)
        for read in [
            { _ = try Band.find(key: 1, loading: .none, in: test.store) },
            { _ = try Band.findAll(loading: .none, in: test.store) },
            { _ = try Band.filter(Column("id") > 0).loading(.none).findAll(in: test.store) },
        ] as [() throws -> Void] {
            test.resetSQL()
            try read()
            #expect(test.dataSQL.count <= 2, "\(test.dataSQL)")
            #expect(!test.dataSQL.contains { $0.contains(#""Musician""#) }, "\(test.dataSQL)")
        }
    }

    @Test(arguments: Backend.available) func aReadThatLoadsRelationshipsFillsThem(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Band(id: 1, name: CountedName("a"), members: [Musician(id: 1, name: "m"), Musician(id: 2, name: "n")]).save(
            in: test.store)
        #expect(try Band.find(key: 1, loading: .direct, in: test.store)?.members?.map(\.id).sorted() == [1, 2])
        #expect(try Band.findAll(loading: .direct, in: test.store).first?.members?.count == 2)
        #expect(try Band.filter(Column("id") == 1).loading(.direct).findAll(in: test.store).first?.members?.count == 2)
        #expect(try Band.findAll(where: Column("id") == 1, loading: .direct, in: test.store).first?.members?.count == 2)
        #expect(try Band.findFirst(where: Column("id") == 1, loading: .direct, in: test.store)?.members?.count == 2)
        #expect(try Band.findAll(by: \.id, equals: 1, loading: .only("members"), in: test.store).first?.members?.count == 2)
        #expect(try Band.findFirst(by: \.id, equals: 1, loading: .direct, in: test.store)?.members?.count == 2)
        #expect(try Band.find(key: 1, loading: .none, in: test.store)?.members == nil)
        let held = Band(id: 1, name: CountedName("a"))
        #expect(try held.loadingRelationships(in: test.store).members?.count == 2)
        #expect(try held.loadingRelationships(.none, in: test.store).members == nil)
    }

    @Test(arguments: Backend.available) func aPlainFinderLoadsNoRelationshipNobodyAskedForAndRunsOnlyItsOwnSelect(_ backend: Backend) throws
    {
        let test = try TestStore(backend)
        try Band(id: 1, name: CountedName("a"), members: [Musician(id: 1, name: "m")]).save(in: test.store)
        let reads: [() throws -> Band?] = [
            { try Band.find(key: 1, in: test.store) },
            { try Band.findAll(in: test.store).first },
            { try Band.findAll(where: Column("id") == 1, in: test.store).first },
            { try Band.findFirst(where: Column("id") == 1, in: test.store) },
            { try Band.findAll(by: \.id, equals: 1, in: test.store).first },
            { try Band.filter(Column("id") > 0).findFirst(in: test.store) },
        ]
        for read in reads {
            test.resetSQL()
            let band = try #require(try read())
            #expect(band.members == nil)
            #expect(test.dataSQL.allSatisfy { !$0.contains(#""Musician""#) && !$0.hasPrefix("BEGIN") }, "\(test.dataSQL)")
        }
        // Asking for the members of a band held in memory still loads them.
        #expect(try Band(id: 1).loadingRelationships(in: test.store).members?.map(\.id) == [1])
    }

    @Test(arguments: Backend.available) func aRelationshipDeclaredEagerLoadsWithEveryReadThatDoesNotSay(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let venue = Venue(id: 1, name: "hall")
        try Gig(id: 1, venue: venue, acts: [Act(id: 1), Act(id: 2)]).save(in: test.store)
        let plain = try #require(try Gig.find(key: 1, in: test.store))
        #expect(plain.venue == venue)  // declared eager
        #expect(plain.acts == nil)  // on request
        #expect(try Gig.findAll(in: test.store).first?.venue == venue)
        #expect(try Gig.filter(Column("id") == 1).findAll(in: test.store).first?.venue == venue)
        let none = try #require(try Gig.find(key: 1, loading: .none, in: test.store))
        #expect(none.venue == nil && none.acts == nil)
        let direct = try #require(try Gig.find(key: 1, loading: .direct, in: test.store))
        #expect(direct.venue == venue && direct.acts?.count == 2)
        // One level: the venue reached from a gig is not filled further, and a venue read on
        // its own loads its gigs only when asked.
        #expect(plain.venue?.gigs == nil)
        #expect(try Venue.find(key: 1, in: test.store)?.gigs == nil)
        #expect(try Venue.find(key: 1, loading: .direct, in: test.store)?.gigs?.map(\.id) == [1])
    }

    @Test(arguments: Backend.available) func aLoadPathNamingNoRelationshipIsRefusedOnThePlainPathToo(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Snack(snackId: 1, name: "a").save(in: test.store)
        try Band(id: 1).save(in: test.store)
        let reads: [() throws -> Void] = [
            { _ = try Snack.find(key: 1, loading: .only("nope"), in: test.store) },
            { _ = try Snack.findAll(loading: .only("nope"), in: test.store) },
            { _ = try Snack.all().loading(.only("nope")).findAll(in: test.store) },
            { _ = try Snack(snackId: 1).loadingRelationships(.only("nope"), in: test.store) },
            { _ = try Band.findAll(loading: .only("members.nope"), in: test.store) },
        ]
        for read in reads {
            let error = try #require(throws: ModelStoreError.self) { try read() }
            #expect(error.code == .invalidQuery)
            #expect(error.message.contains("nope"))
        }
    }

    @Test(arguments: Backend.available) func deletesOfModelsWithRelationshipsApplyTheirRulesInEveryShape(_ backend: Backend) throws {
        let test = try TestStore(backend)
        func reset() throws {
            _ = try Musician.deleteAll(in: test.store)
            _ = try Band.deleteAll(in: test.store)
            try Band(id: 1, name: CountedName("a"), members: [Musician(id: 1), Musician(id: 2)]).save(in: test.store)
        }
        // The default rule nullifies the members' link to a deleted band.
        for delete in [
            { _ = try Band.delete(key: 1, in: test.store) },
            { _ = try Band(id: 1).delete(in: test.store) },
            { _ = try Band.deleteAll(in: test.store) },
            { _ = try Band.filter(Column("id") == 1).deleteAll(in: test.store) },
        ] as [() throws -> Void] {
            try reset()
            try delete()
            #expect(try Band.count(in: test.store) == 0)
            #expect(try test.rawRows(#"SELECT "band_id" FROM "Musician" ORDER BY "id""#) == [[.null], [.null]])
        }
    }
}
