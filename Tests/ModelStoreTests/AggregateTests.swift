import Foundation
import Testing
@testable import ModelStore

private struct Post: StoredModel, Equatable {
    var id: Int
    var userId: Int64
    var likes: Int
    var rating: Double?
    var topic: String?
    static let primaryKey = ["id"]
}

private struct PostSummary: Decodable, Sendable, Equatable {
    var id: Int
    var topic: String?
}

@Suite("Aggregates and projections")
struct AggregateTests {
    private func seeded(_ backend: Backend) throws -> TestStore {
        let test = try TestStore(backend)
        let posts = [
            Post(id: 1, userId: 1, likes: 10, rating: 4.0, topic: "swift"),
            Post(id: 2, userId: 1, likes: 5, rating: nil, topic: "sqlite"),
            Post(id: 3, userId: 2, likes: 7, rating: 3.0, topic: "swift"),
            Post(id: 4, userId: 3, likes: 0, rating: 5.0, topic: nil),
            Post(id: 5, userId: 1, likes: 3, rating: 2.0, topic: "swift"),
        ]
        try Post.save(posts, in: test.store)
        return test
    }

    @Test(arguments: Backend.available) func sumAverageMinAndMaxWithAndWithoutACondition(_ backend: Backend) throws {
        let test = try seeded(backend)
        #expect(try Post.all().sum(\.likes, in: test.store) == 25)
        #expect(try Post.filter(\.userId == 1).sum(\.likes, in: test.store) == 18)
        #expect(try Post.all().sum(\.rating, in: test.store) == 14.0)
        #expect(try Post.filter(\.userId == 9).sum(\.likes, in: test.store) == 0)
        #expect(try Post.all().average(\.rating, in: test.store) == 3.5)
        #expect(try Post.filter(\.userId == 9).average(\.rating, in: test.store) == nil)
        #expect(try Post.all().min(\.likes, in: test.store) == 0)
        #expect(try Post.all().max(\.rating, in: test.store) == 5.0)
        #expect(try Post.filter(\.topic == "swift").max(\.likes, in: test.store) == 10)
        #expect(try Post.all().min(\.topic, in: test.store) == "sqlite")
        #expect(try Post.filter(\.userId == 9).max(\.likes, in: test.store) == nil)
        // On a page, aggregates cover the page.
        #expect(try Post.order(.descending(\.likes)).limit(2).sum(\.likes, in: test.store) == 17)
    }

    @Test(arguments: Backend.available) func countsGroupedByAColumnArePostsPerUser(_ backend: Backend) throws {
        let test = try seeded(backend)
        #expect(try Post.all().countsGrouped(by: \.userId, in: test.store) == [1: 3, 2: 1, 3: 1])
        #expect(try Post.filter(\.likes > 4).countsGrouped(by: \.userId, in: test.store) == [1: 2, 2: 1])
        #expect(try Post.all().countsGrouped(by: \.topic, in: test.store) == ["swift": 3, "sqlite": 1, nil: 1])
    }

    @Test(arguments: Backend.available) func distinctValuesInAscendingOrder(_ backend: Backend) throws {
        let test = try seeded(backend)
        #expect(try Post.all().distinct(\.userId, in: test.store) == [1, 2, 3])
        #expect(try Post.all().distinct(\.topic, in: test.store) == [nil, "sqlite", "swift"])
        #expect(try Post.filter(\.userId == 1).distinct(\.topic, in: test.store) == ["sqlite", "swift"])
    }

    @Test(arguments: Backend.available) func projectionsReadOnlyTheChosenColumns(_ backend: Backend) throws {
        let test = try seeded(backend)
        test.resetSQL()
        let summaries = try Post.filter(\.userId == 1).order(.descending(\.likes)).findAll(as: PostSummary.self, in: test.store)
        #expect(summaries == [PostSummary(id: 1, topic: "swift"), PostSummary(id: 2, topic: "sqlite"), PostSummary(id: 5, topic: "swift")])
        #expect(test.dataSQL.last?.hasPrefix(#"SELECT "id", "topic" FROM "Post""#) == true)
        #expect(try Post.order(.ascending(\.id)).values(of: \.likes, in: test.store) == [10, 5, 7, 0, 3])
        #expect(try Post.filter(\.id > 3).values(of: \.topic, in: test.store) == [nil, "swift"])
    }

    @Test(arguments: Backend.available) func aProjectionReadingAnUnknownColumnFailsClearly(_ backend: Backend) throws {
        struct Wrong: Decodable, Sendable { var id: Int; var title: String }
        let test = try seeded(backend)
        let error = try #require(throws: ModelStoreError.self) { try Post.all().findAll(as: Wrong.self, in: test.store) }
        #expect(error.code == .invalidQuery)
        #expect(error.column == "title")
        #expect(error.message.contains("Wrong reads 'title'"))
    }

    @Test(arguments: Backend.available) func threeFormsOfAggregates(_ backend: Backend) async throws {
        let test = try seeded(backend)
        #expect(try await Post.all().sum(\.likes, in: test.store) == 25)
        #expect(try await Post.all().average(\.likes, in: test.store) == 5)
        #expect(try await Post.all().max(\.likes, in: test.store) == 10)
        #expect(try await Post.all().min(\.rating, in: test.store) == 2.0)
        #expect(try await Post.all().countsGrouped(by: \.userId, in: test.store)[1] == 3)
        #expect(try await Post.all().distinct(\.userId, in: test.store).count == 3)
        #expect(try await Post.all().values(of: \.id, in: test.store) == [1, 2, 3, 4, 5])
        #expect(try await Post.filter(\.id == 4).findAll(as: PostSummary.self, in: test.store) == [PostSummary(id: 4, topic: nil)])
        let sum: Result<Int, ModelStoreError> = await withCheckedContinuation { continuation in
            Post.all().sum(\.likes, in: test.store) { continuation.resume(returning: $0) }
        }
        #expect(try sum.get() == 25)
    }
}

@Suite("Batch update and delete by condition")
struct BatchChangeTests {
    private func seeded(_ backend: Backend) throws -> TestStore {
        let test = try TestStore(backend)
        try Snack.save(
            (1...20).map { Snack(snackId: Int64($0), name: "n\($0)", taste: $0 % 2 == 0 ? "sweet" : "sour", price: Double($0)) },
            in: test.store)
        return test
    }

    @Test(arguments: Backend.available) func updateAllSetsColumnsOnEveryMatchInOneStatement(_ backend: Backend) throws {
        let test = try seeded(backend)
        test.resetSQL()
        let changed = try Snack.updateAll(where: \.taste == "sweet", set: [.set(\.price, to: 0.5), .set(\.size, to: 2)], in: test.store)
        #expect(changed == 10)
        #expect(test.dataSQL.count == 1 && test.dataSQL.first?.hasPrefix(#"UPDATE "Snack" SET "price" = "#) == true, "\(test.dataSQL)")
        if backend == .sqlite {
            // SQLite's text (a server numbers its placeholders).
            #expect(test.dataSQL == [#"UPDATE "Snack" SET "price" = ?, "size" = ? WHERE "taste" = ?"#])
        }
        #expect(try Snack.count(where: \.price == 0.5 && \.size == 2, in: test.store) == 10)
        #expect(try Snack.count(where: \.price == 1, in: test.store) == 1)
    }

    @Test(arguments: Backend.available) func updateAllCanClearOptionalsAndStoresJSONAsSavesDo(_ backend: Backend) throws {
        let test = try seeded(backend)
        #expect(try Snack.filter(\.snackId <= 3).updateAll(.set(\.name, to: nil), .set(\.tags, to: ["a", "b"]), in: test.store) == 3)
        let first = try #require(try Snack.find(key: 1, in: test.store))
        #expect(first.name == nil)
        #expect(first.tags == ["a", "b"])
        #expect(try Snack.find(key: 4, in: test.store)?.name == "n4")
    }

    @Test(arguments: Backend.available) func updateAllRefusesNullForNonOptionalsAndUnknownColumns(_ backend: Backend) throws {
        let test = try seeded(backend)
        let null = try #require(throws: ModelStoreError.self) {
            try Snack.all().updateAll(.set(Column("tags"), to: String?.none), in: test.store)
        }
        #expect(null.code == .invalidQuery)
        #expect(null.column == "tags")
        let unknown = try #require(throws: ModelStoreError.self) {
            try Snack.all().updateAll(.set(Column("colour"), to: "red"), in: test.store)
        }
        #expect(unknown.code == .invalidQuery)
        #expect(unknown.column == "colour")
        #expect(try Snack.count(where: \.name == "n1", in: test.store) == 1)
    }

    @Test(arguments: Backend.available) func updateAllOnAPageChangesOnlyThePage(_ backend: Backend) throws {
        let test = try seeded(backend)
        #expect(try Snack.order(.descending(\.price)).limit(3).updateAll(.set(\.taste, to: "top"), in: test.store) == 3)
        #expect(try Snack.filter(\.taste == "top").values(of: \.snackId, in: test.store) == [18, 19, 20])
    }

    @Test(arguments: Backend.available) func deleteAllWhereReportsTheCount(_ backend: Backend) throws {
        let test = try seeded(backend)
        #expect(try Snack.deleteAll(where: \.price < 5, in: test.store) == 4)
        #expect(try Snack.deleteAll(where: \.price < 5, in: test.store) == 0)
        #expect(try Snack.filter(\.taste == "sour").order(.ascending(\.price)).limit(2).deleteAll(in: test.store) == 2)
        #expect(try Snack.count(in: test.store) == 14)
        #expect(try Snack.exists(key: 5, in: test.store) == false)
        #expect(try Snack.exists(key: 7, in: test.store) == false)
        #expect(try Snack.exists(key: 9, in: test.store))
    }

    @Test(arguments: Backend.available) func threeFormsOfBatchChanges(_ backend: Backend) async throws {
        let test = try seeded(backend)
        #expect(try await Snack.updateAll(where: \.snackId == 1, set: [.set(\.price, to: 9)], in: test.store) == 1)
        #expect(try await Snack.filter(\.snackId == 2).updateAll(.set(\.price, to: 9), in: test.store) == 1)
        #expect(try await Snack.deleteAll(where: \.price == 9, in: test.store) == 3)
        let deleted: Result<Int, ModelStoreError> = await withCheckedContinuation { continuation in
            Snack.deleteAll(where: \.snackId > 18, in: test.store) { continuation.resume(returning: $0) }
        }
        #expect(try deleted.get() == 2)
        let updated: Result<Int, ModelStoreError> = await withCheckedContinuation { continuation in
            Snack.updateAll(where: \.snackId < 5, set: [.set(\.name, to: "x")], in: test.store) { continuation.resume(returning: $0) }
        }
        #expect(try updated.get() == 2)
    }
}

@Suite("Save matching chosen properties or a condition")
struct SaveMatchingTests {
    @Test(arguments: Backend.available) func savingMatchingPropertiesUpdatesTheMatchedRecordKeepingItsKey(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Snack(snackId: 1, name: "Pocky", taste: "sweet", price: 1).save(in: test.store)
        try Snack(snackId: 2, name: "Pocky", taste: "sour", price: 1).save(in: test.store)
        let outcome = try Snack(snackId: 99, name: "Pocky", taste: "sour", price: 3).save(matching: [\.name, \.taste], in: test.store)
        #expect(outcome == .updated)
        #expect(try Snack.find(key: 2, in: test.store)?.price == 3)
        #expect(try Snack.find(key: 1, in: test.store)?.price == 1)
        #expect(try Snack.exists(key: 99, in: test.store) == false)
    }

    @Test(arguments: Backend.available) func savingMatchingInsertsWhenNothingMatches(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Snack(snackId: 1, name: "Pocky").save(in: test.store)
        #expect(try Snack(snackId: 5, name: "KitKat", price: 2).save(matching: \.name == "KitKat", in: test.store) == .inserted)
        #expect(try Snack.find(key: 5, in: test.store)?.price == 2)
    }

    @Test(arguments: Backend.available) func savingMatchingAConditionMergesByTheUsualRules(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Snack(snackId: 123, name: "name1", price: 1.1).save(in: test.store)
        try Snack(snackId: 0, name: "xxx", size: 999).save(matching: \.snackId == 123, in: test.store)
        #expect(try Snack.find(key: 123, in: test.store) == Snack(snackId: 123, name: "xxx", size: 999, price: 1.1))
        #expect(try Snack.count(in: test.store) == 1)
    }

    @Test(arguments: Backend.available) func moreThanOneMatchIsAnErrorUnlessAskedFor(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Snack.save(
            [Snack(snackId: 1, taste: "sweet"), Snack(snackId: 2, taste: "sweet"), Snack(snackId: 3, taste: "sour")], in: test.store)
        let error = try #require(throws: ModelStoreError.self) {
            try Snack(snackId: 9, price: 5).save(matching: \.taste == "sweet", in: test.store)
        }
        #expect(error.code == .ambiguousMatch)
        #expect(try Snack.count(where: \.price == 5, in: test.store) == 0)
        #expect(try Snack(snackId: 9, price: 5).save(matching: \.taste == "sweet", updatingAll: true, in: test.store) == .updated)
        #expect(try Snack.filter(\.price == 5).values(of: \.snackId, in: test.store) == [1, 2])
    }

    @Test(arguments: Backend.available) func matchingOnAPropertyTheModelDoesNotCarryIsRefused(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let error = try #require(throws: ModelStoreError.self) { try Snack(snackId: 1).save(matching: [\.name], in: test.store) }
        #expect(error.code == .invalidQuery)
        #expect(error.column == "name")
    }

    @Test(arguments: Backend.available) func threeFormsOfSaveMatching(_ backend: Backend) async throws {
        let test = try TestStore(backend)
        #expect(try await Snack(snackId: 1, name: "a").save(matching: [\.name], in: test.store) == .inserted)
        #expect(try await Snack(snackId: 2, name: "a", price: 1).save(matching: \.name == "a", in: test.store) == .updated)
        let outcome: Result<SaveOutcome, ModelStoreError> = await withCheckedContinuation { continuation in
            Snack(snackId: 3, name: "a", price: 2).save(matching: [\.name], in: test.store) { continuation.resume(returning: $0) }
        }
        #expect(try outcome.get() == .updated)
        #expect(try await Snack.findAll(in: test.store) == [Snack(snackId: 1, name: "a", price: 2)])
    }
}
