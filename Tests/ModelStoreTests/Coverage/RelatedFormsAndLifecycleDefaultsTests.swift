import Foundation
import Testing
@testable import ModelStore

private struct CovShelf: StoredModel, Equatable {
    var id: Int64
    var label: String
    var books: [CovBook]
    var tags: Set<String>
    var notes: [String]?
    var codes: Set<Int>?
    var sign: CovSign?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<CovShelf>] = [
        .toMany(\.books, inverse: \CovBook.shelf).loading(.onRequest), .toOne(\.sign, inverse: \CovSign.shelf),
    ]
}

private struct CovBook: StoredModel, Equatable {
    var id: Int64
    var title: String
    var shelf: CovShelf?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<CovBook>] = [.toOne(\.shelf, inverse: \CovShelf.books)]
}

private struct CovSign: StoredModel, Equatable {
    var id: Int64
    var text: String
    @Related var shelf: CovShelf?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<CovSign>] = [.toOne(\.shelf, inverse: \CovShelf.sign)]
}

/// A model with callbacks that implements none of them: the defaults run and do nothing.
private struct CovQuiet: StoredModel, SaveCallbacks, DeleteCallbacks, Equatable {
    var id: Int64
    var stamp: Date
    static let primaryKey = ["id"]
    static let timestamps = Timestamps<CovQuiet>(created: \.stamp)
}

/// Every form of the relationship conditions (non-optional to-many, sets, optional arrays,
/// to-one `any`/`none`), `RelatedCount`'s operators, and the lifecycle's defaults.
@Suite struct RelatedFormsAndLifecycleDefaultsTests {
    private func store(_ backend: Backend) throws -> TestStore {
        let test = try TestStore(backend)
        var north = CovShelf(
            id: 1, label: "north", books: [CovBook(id: 1, title: "A"), CovBook(id: 2, title: "B")], tags: ["x"], notes: ["n"], codes: [1])
        north.sign = CovSign(id: 1, text: "N")
        let south = CovShelf(id: 2, label: "south", books: [], tags: [], notes: nil, codes: nil)
        _ = try CovShelf.save([north, south], in: test.store)
        return test
    }

    @Test(arguments: Backend.available) func everyRelatedConditionFormSelectsTheRightRecords(_ backend: Backend) throws {
        let test = try store(backend)
        let ids = { (condition: Condition<CovShelf>) in try CovShelf.findAll(where: condition, loading: .none, in: test.store).map(\.id) }
        #expect(try ids(.any(\.books)) == [1])
        #expect(try ids(.any(\.books, \.title == "B")) == [1])
        #expect(try ids(.none(\.books)) == [2])
        #expect(try ids(.none(\.books, \.title == "Z")) == [1, 2])
        #expect(try ids(.every(\.books, \.title != "Z")) == [1, 2])
        #expect(try ids(.any(\.sign)) == [1])
        #expect(try ids(.none(\.sign)) == [2])
        #expect(try ids(.any(\.sign, \.text == "N")) == [1])
        #expect(try ids(.none(\.sign, \.text == "N")) == [2])
        #expect(try ids(.related(\.sign, \.text == "N")) == [1])
        #expect(try ids(RelatedCount(\CovShelf.books) == 2) == [1])
        #expect(try ids(RelatedCount(\CovShelf.books) != 2) == [2])
        #expect(try ids(RelatedCount(\CovShelf.books) < 1) == [2])
        #expect(try ids(RelatedCount(\CovShelf.books) <= 2) == [1, 2])
        #expect(try ids(RelatedCount(\CovShelf.books, where: \.title == "A") > 0) == [1])
        #expect(try ids(RelatedCount(\CovShelf.books) >= 1) == [1])
        #expect(try ids(RelatedCount(\CovShelf.sign) == 1) == [1])
        #expect(try ids(.contains(\.tags, "x")) == [1])
        #expect(try ids(.contains(\.notes, "n")) == [1])
        #expect(try ids(.contains(\.codes, 1)) == [1])
        #expect(try CovBook.findAll(where: .any(\.shelf, \.label == "north"), in: test.store).count == 2)
    }

    @Test(arguments: Backend.available) func callbacksAModelDoesNotImplementDoNothing(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let given = Date(timeIntervalSince1970: 0)
        try CovQuiet(id: 1, stamp: given).save(in: test.store)
        let stored = try #require(try CovQuiet.find(key: 1, in: test.store))
        #expect(stored.stamp != given, "a non-optional creation date is the store's")
        try CovQuiet(id: 1, stamp: given).save(in: test.store)
        #expect(try CovQuiet.find(key: 1, in: test.store)?.stamp == stored.stamp)
        #expect(try CovQuiet.delete(key: 1, in: test.store) == 1)
        #expect(try CovQuiet.count(in: test.store) == 0)
        #expect(ValidationError("must be positive", property: "age").description == "age must be positive")
        #expect(ValidationError("is wrong").description == "is wrong")
        // `.refuse` is the default: an untranslatable predicate is refused, not evaluated.
        let refused = #expect(throws: ModelStoreError.self) {
            _ = try CovQuiet.filter(#Predicate { $0.id.description.count > 0 }, untranslated: .refuse).findAll(in: test.store)
        }
        #expect(refused?.code == .invalidQuery)
    }
}
