import Foundation
import Testing
@testable import ModelStore

// Composite keys, declared storage names and keys stored in another form: a condition across
// relationships must follow whatever columns the links really live in.

private struct LibShelf: StoredModel, Equatable {
    var aisle: String
    var number: Int64
    var label: String?
    var books: [LibVolume]?
    var tags: [LibSticker]?
    static let primaryKey = ["aisle", "number"]
    static let relationships: [Relationship<LibShelf>] = [
        .toMany(\.books, inverse: \LibVolume.shelf),
        .toMany(\.tags, inverse: \LibSticker.shelves).joinTable(
            "shelf_sticker", columns: ["s_aisle", "s_number"], targetColumns: ["sticker"]),
    ]
}

private struct LibVolume: StoredModel, Equatable {
    var id: UUID
    var title: String?
    var shelf: LibShelf?
    static let primaryKey = ["id"]
    static let columnStorage: [ColumnStorage<LibVolume>] = [.uuid(\.id, as: .blob)]
    static let relationships: [Relationship<LibVolume>] = [.toOne(\.shelf, inverse: \LibShelf.books).columns(["at_aisle", "at_number"])]
}

private struct LibSticker: StoredModel, Equatable {
    var code: String
    var shelves: [LibShelf]?
    static let primaryKey = ["code"]
    static let relationships: [Relationship<LibSticker>] = [
        .toMany(\.shelves, inverse: \LibShelf.tags).joinTable(
            "shelf_sticker", columns: ["sticker"], targetColumns: ["s_aisle", "s_number"])
    ]
}

@Suite struct AcrossRelationshipsAttackTests {
    private let first = UUID()
    private let second = UUID()

    private func library(_ backend: Backend) throws -> TestStore {
        let test = try TestStore(.file, or: backend)
        var a1 = LibShelf(aisle: "A", number: 1, label: "poetry")
        a1.books = [LibVolume(id: first, title: "Odes")]
        a1.tags = [LibSticker(code: "red"), LibSticker(code: "blue")]
        var b1 = LibShelf(aisle: "B", number: 1, label: "prose")
        b1.books = [LibVolume(id: second, title: "Novel")]
        b1.tags = [LibSticker(code: "blue")]
        try LibShelf.save([a1, b1, LibShelf(aisle: "A", number: 2, label: "empty")], in: test.store)
        return test
    }

    @Test(arguments: Backend.available) func compositeKeysDeclaredColumnsAndBlobKeysAreFollowed(_ backend: Backend) throws {
        let test = try library(backend)
        let poetry = try LibVolume.findAll(where: .related(\.shelf, \.label == "poetry"), loading: .none, in: test.store)
        #expect(poetry.map(\.id) == [first])
        let withNovels = try LibShelf.findAll(where: .any(\.books, \.title == "Novel"), loading: .none, in: test.store)
        #expect(withNovels.map(\.aisle) == ["B"])
        let red = try LibShelf.findAll(where: .any(\.tags, \.code == "red"), loading: .none, in: test.store)
        #expect(red.map(\.number) == [1])
        #expect(red.map(\.aisle) == ["A"])
        let bare = try LibShelf.findAll(where: .none(\.tags), loading: .none, in: test.store)
        #expect(bare.map(\.number) == [2])
        let stickersOfA = try LibSticker.findAll(where: .any(\.shelves, \.aisle == "A"), loading: .none, in: test.store)
        #expect(stickersOfA.map(\.code).sorted() == ["blue", "red"])
        #expect(
            try LibSticker.findAll(where: RelatedCount(\LibSticker.shelves) == 2, loading: .none, in: test.store).map(\.code) == ["blue"])
        let byShelf = try LibVolume.order(.descending(\.shelf, \.label)).loading(.none).findAll(in: test.store)
        #expect(byShelf.map(\.id) == [second, first])
        #expect(try LibShelf.findAll(where: .any(\.books, \.id == first), loading: .none, in: test.store).map(\.label) == ["poetry"])
    }

    // SQLite only until PostgreSQL answers the same: observation (live queries, change streams) throws .unsupported on PostgreSQL.
    @Test func aLiveQueryAcrossARelationshipSeesChangesToTheRelatedTable() async throws {
        let test = try library(.sqlite)
        let store = test.store
        let seen = Collected<[String]>()
        let token = store.observe({
            try LibVolume.findAll(where: .related(\.shelf, \.label == "prose"), loading: .none, in: store).compactMap(\.title)
        }) { result in if case .success(let titles) = result { seen.add(titles) } }
        #expect(await eventually { seen.current.last == ["Novel"] })
        // Only the shelf changes: the query must run again, since it reads the shelf table.
        try await LibShelf(aisle: "A", number: 1, label: "prose").save(in: store)
        #expect(await eventually { seen.current.last?.sorted() == ["Novel", "Odes"] })
        token.cancel()
    }

    @Test(arguments: Backend.available) func aReadOnlyStoreFollowsRelationshipsWithoutWriting(_ backend: Backend) throws {
        let test = try library(backend)
        try test.store.close()
        let reader = try test.later(configuration: .init(readOnly: true))
        defer { try? reader.close() }
        #expect(try LibShelf.filter(.any(\.tags, \.code == "blue")).count(in: reader) == 2)
        #expect(try LibVolume.filter(.related(\.shelf, \.aisle == "B")).count(in: reader) == 1)
    }
}
