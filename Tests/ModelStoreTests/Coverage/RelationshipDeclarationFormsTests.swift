import Foundation
import Testing
@testable import ModelStore

// MARK: Models, one per declaration form not used elsewhere

/// The "many" end of a one-to-many held in a non-optional array.
struct Shelf: StoredModel, Equatable {
    var id: Int64
    var label: String?
    var volumes: [Volume] = []
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Shelf>] = [.toMany(\.volumes, inverse: \Volume.shelf).loading(.eager)]
}

/// The "one" end of that relationship: its inverse is a non-optional array.
struct Volume: StoredModel, Equatable {
    var id: Int64
    var title: String?
    var shelf: Shelf?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Volume>] = [.toOne(\.shelf, inverse: \Shelf.volumes).loading(.eager)]
}

struct Song: StoredModel, Equatable {
    var id: Int64
    var title: String?
    static let primaryKey = ["id"]
}

/// A one-way to-many held in a non-optional array.
struct Playlist: StoredModel, Equatable {
    var id: Int64
    var songs: [Song] = []
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Playlist>] = [.toMany(\.songs).loading(.eager)]
}

/// A one-way to-many held in an optional array.
struct Album: StoredModel, Equatable {
    var id: Int64
    var tracks: [Song]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Album>] = [.toMany(\.tracks).loading(.eager)]
}

/// Many-to-many: a non-optional array whose inverse is an optional one.
struct Student: StoredModel, Equatable {
    var id: Int64
    var name: String?
    var courses: [Course] = []
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Student>] = [.toMany(\.courses, inverse: \Course.students).loading(.eager)]
}

/// Many-to-many: an optional array whose inverse is a non-optional one.
struct Course: StoredModel, Equatable {
    var id: Int64
    var title: String?
    var students: [Student]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Course>] = [.toMany(\.students, inverse: \Student.courses).loading(.eager)]
}

/// Many-to-many with non-optional arrays on both sides.
struct Ensemble: StoredModel, Equatable {
    var id: Int64
    var name: String?
    var members: [Performer] = []
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Ensemble>] = [.toMany(\.members, inverse: \Performer.bands).loading(.eager)]
}

struct Performer: StoredModel, Equatable {
    var id: Int64
    var name: String?
    var bands: [Ensemble] = []
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Performer>] = [.toMany(\.bands, inverse: \Ensemble.members).loading(.eager)]
}

// MARK: Tests

@Suite("Coverage: every form of relationship declaration")
struct RelationshipDeclarationFormsTests {
    @Test(arguments: Backend.available) func aNonOptionalToManyArraySavesItsTargetsAndLinksThemThroughTheirForeignKey(_ backend: Backend)
        throws
    {
        let test = try TestStore(backend)
        try Shelf(id: 1, label: "fiction", volumes: [Volume(id: 2, title: "B"), Volume(id: 1, title: "A")]).save(in: test.store)
        #expect(
            try test.rawRows(#"SELECT "id", "title", "shelf_id" FROM "Volume" ORDER BY "id""#) == [
                [.integer(1), .text("A"), .integer(1)], [.integer(2), .text("B"), .integer(1)],
            ])
        let shelf = try #require(try Shelf.find(key: 1, in: test.store))
        #expect(shelf.label == "fiction")
        #expect(shelf.volumes.map(\.id).sorted() == [1, 2])
        // Each volume's shelf is the shelf's stored values; the inverse is not walked back.
        #expect(shelf.volumes.allSatisfy { $0.shelf?.label == "fiction" && $0.shelf?.volumes == [] })
        #expect(try Volume.find(key: 2, in: test.store)?.shelf?.label == "fiction")
        #expect(try Shelf.find(key: 1, loading: .none, in: test.store)?.volumes == [])
    }

    @Test(arguments: Backend.available) func anEmptyNonOptionalToManyArrayUnlinksEveryStoredTargetAndKeepsTheRecords(_ backend: Backend)
        throws
    {
        let test = try TestStore(backend)
        try Shelf(id: 1, volumes: [Volume(id: 1), Volume(id: 2)]).save(in: test.store)
        try Shelf(id: 1, volumes: [Volume(id: 2)]).save(in: test.store)
        #expect(
            try test.rawRows(#"SELECT "id", "shelf_id" FROM "Volume" ORDER BY "id""#) == [
                [.integer(1), .null], [.integer(2), .integer(1)],
            ])
        try Shelf(id: 1, label: "empty").save(in: test.store)
        #expect(
            try test.rawRows(#"SELECT "id", "shelf_id" FROM "Volume" ORDER BY "id""#) == [[.integer(1), .null], [.integer(2), .null]])
        #expect(try Shelf.find(key: 1, in: test.store)?.volumes == [])
        #expect(try Volume.count(in: test.store) == 2)
    }

    @Test(arguments: Backend.available) func theToOneSideOfANonOptionalArrayLinksAndMovesItsRecord(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Shelf(id: 1, label: "one").save(in: test.store)
        try Shelf(id: 2, label: "two").save(in: test.store)
        var volume = Volume(id: 5, title: "moved")
        volume.shelf = try Shelf.find(key: 1, loading: .none, in: test.store)
        // The shelf it carries holds `[]`, the complete set of its volumes as the model says.
        volume.shelf?.volumes = [Volume(id: 5)]
        try volume.save(in: test.store)
        #expect(try Shelf.find(key: 1, in: test.store)?.volumes.map(\.id) == [5])
        try Volume(id: 5, shelf: Shelf(id: 2, volumes: [Volume(id: 5)])).save(in: test.store)
        #expect(try Shelf.find(key: 1, in: test.store)?.volumes == [])
        #expect(try Shelf.find(key: 2, in: test.store)?.volumes.map(\.id) == [5])
        #expect(try Volume.find(key: 5, in: test.store)?.title == "moved")
    }

    @Test(arguments: Backend.available) func aOneWayNonOptionalArrayIsStoredInAJoinTableAndIsTheCompleteSet(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Playlist(id: 1, songs: [Song(id: 3, title: "c"), Song(id: 1, title: "a")]).save(in: test.store)
        #expect(try Set(Playlist.find(key: 1, in: test.store)?.songs.map(\.id) ?? []) == [1, 3])
        #expect(try Song.find(key: 3, in: test.store)?.title == "c")
        #expect(try test.tableColumns("Song").map(\.name) == ["id", "title"])
        try Playlist(id: 1, songs: [Song(id: 2)]).save(in: test.store)
        #expect(try Playlist.find(key: 1, in: test.store)?.songs.map(\.id) == [2])
        try Playlist(id: 1).save(in: test.store)
        #expect(try Playlist.find(key: 1, in: test.store)?.songs == [])
        #expect(try Song.count(in: test.store) == 3)
    }

    @Test(arguments: Backend.available) func aOneWayOptionalArrayKeepsItsLinksWhenNilAndReplacesThemWhenSet(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Album(id: 1, tracks: [Song(id: 1), Song(id: 2)]).save(in: test.store)
        try Album(id: 1, tracks: nil).save(in: test.store)
        #expect(try Set(Album.find(key: 1, in: test.store)?.tracks?.map(\.id) ?? []) == [1, 2])
        try Album(id: 1, tracks: [Song(id: 2), Song(id: 4)]).save(in: test.store)
        #expect(try Set(Album.find(key: 1, in: test.store)?.tracks?.map(\.id) ?? []) == [2, 4])
        try Album(id: 1, tracks: []).save(in: test.store)
        #expect(try Album.find(key: 1, in: test.store)?.tracks == [])
        #expect(try Song.count(in: test.store) == 3)
    }

    @Test(arguments: Backend.available) func aManyToManyBetweenANonOptionalAndAnOptionalArrayLinksFromEitherSide(_ backend: Backend) throws
    {
        let test = try TestStore(backend)
        try Student(id: 1, name: "Ada", courses: [Course(id: 10, title: "Maths"), Course(id: 11, title: "Logic")]).save(in: test.store)
        #expect(try Set(Student.find(key: 1, in: test.store)?.courses.map(\.id) ?? []) == [10, 11])
        #expect(try Course.find(key: 10, in: test.store)?.students?.map(\.name) == ["Ada"])
        // From the optional side: nil keeps the links, a set array is the complete set.
        try Course(id: 10, title: "Maths II", students: nil).save(in: test.store)
        #expect(try Course.find(key: 10, in: test.store)?.students?.map(\.id) == [1])
        try Course(id: 12, title: "Art", students: [Student(id: 2, name: "Bo")]).save(in: test.store)
        #expect(try Student.find(key: 2, in: test.store)?.courses.map(\.title) == ["Art"])
        try Course(id: 10, students: []).save(in: test.store)
        #expect(try Student.find(key: 1, in: test.store)?.courses.map(\.id) == [11])
        #expect(try Course.count(in: test.store) == 3)
    }

    @Test(arguments: Backend.available) func aManyToManyBetweenTwoNonOptionalArraysLinksAndUnlinks(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Ensemble(id: 1, name: "Loud", members: [Performer(id: 7, name: "Kim")]).save(in: test.store)
        try Ensemble(id: 2, name: "Quiet").save(in: test.store)
        #expect(try Ensemble.find(key: 1, in: test.store)?.members.map(\.name) == ["Kim"])
        #expect(try Performer.find(key: 7, in: test.store)?.bands.map(\.name) == ["Loud"])
        #expect(try Ensemble.find(key: 2, in: test.store)?.members == [])
        try Ensemble(id: 1, name: "Loud").save(in: test.store)
        #expect(try Performer.find(key: 7, in: test.store)?.bands == [])
        #expect(try Performer.count(in: test.store) == 1)
    }
}
