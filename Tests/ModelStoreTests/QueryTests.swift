import Foundation
import Testing
@testable import ModelStore

@Suite("Finding: sorting, paging, counting")
struct QueryTests {
    private func seeded(_ backend: Backend, _ count: Int = 25) throws -> TestStore {
        let test = try TestStore(backend)
        try Snack.save(
            (1...count).map { id in
                Snack(snackId: Int64(id), name: "n\(id % 5)", taste: ["sweet", "sour", "salty"][id % 3], price: Double(id % 7))
            }, in: test.store)
        return test
    }

    @Test(arguments: Backend.available) func firstAndAllMatchesByPredicateAndByAttribute(_ backend: Backend) throws {
        let test = try seeded(backend)
        #expect(try Snack.findFirst(where: \.taste == "sour", in: test.store)?.snackId == 1)
        #expect(try Snack.findFirst(where: \.taste == "bitter", in: test.store) == nil)
        #expect(try Snack.findAll(by: \.name, equals: "n3", in: test.store).map(\.snackId) == [3, 8, 13, 18, 23])
        #expect(try Snack.findFirst(by: \.name, equals: "n3", orderBy: [.descending(\.snackId)], in: test.store)?.snackId == 23)
        #expect(try Snack.findAll(by: \.snackId, equals: 7, in: test.store).count == 1)
    }

    @Test(arguments: Backend.available) func sortingByOneOrSeveralColumnsEachWay(_ backend: Backend) throws {
        let test = try seeded(backend, 10)
        let byPriceDown = try Snack.order(.descending(\.price)).findAll(in: test.store)
        #expect(byPriceDown.map(\.price) == byPriceDown.map(\.price).sorted(by: { $0! > $1! }))
        let byTasteThenPrice = try Snack.order(.ascending(\.taste), .descending(\.price)).findAll(in: test.store)
        let tastes = ["sweet", "sour", "salty"]
        let expected: [Int64] = (1...10).sorted { a, b in
            let (tasteA, tasteB) = (tastes[a % 3], tastes[b % 3])
            if tasteA != tasteB { return tasteA < tasteB }
            if a % 7 != b % 7 { return a % 7 > b % 7 }
            return a < b
        }.map { Int64($0) }
        #expect(byTasteThenPrice.map(\.snackId) == expected)
        // Ties are broken by key, so the order is fully determined.
        #expect(try Snack.order(.ascending(\.price)).findAll(in: test.store).map(\.snackId) == [7, 1, 8, 2, 9, 3, 10, 4, 5, 6])
    }

    @Test(arguments: Backend.available) func pagingCountsPagesFromZero(_ backend: Backend) throws {
        let test = try seeded(backend)
        let ordered = Snack.order(.ascending(\.snackId))
        #expect(try ordered.page(0, rows: 10).findAll(in: test.store).map(\.snackId) == Array(1...10))
        #expect(try ordered.page(2, rows: 10).findAll(in: test.store).map(\.snackId) == Array(21...25))
        #expect(try ordered.page(3, rows: 10).findAll(in: test.store).isEmpty)
        #expect(try ordered.limit(3, offset: 5).findAll(in: test.store).map(\.snackId) == [6, 7, 8])
        #expect(try ordered.limit(3).findAll(in: test.store).map(\.snackId) == [1, 2, 3])
        #expect(try ordered.limit(5, offset: 100).findAll(in: test.store).isEmpty)
        #expect(try Snack.filter(\.taste == "sweet").page(1, rows: 3).findAll(in: test.store).map(\.snackId) == [12, 15, 18])
    }

    @Test(arguments: Backend.available) func pagesOfASortedQueryNeitherOverlapNorSkip(_ backend: Backend) throws {
        let test = try seeded(backend, 50)
        let query = Snack.order(.ascending(\.price))
        var seen: [Int64] = []
        for page in 0..<10 { seen += try query.page(page, rows: 7).findAll(in: test.store).map(\.snackId) }
        #expect(seen.count == 50)
        #expect(Set(seen).count == 50)
    }

    @Test(arguments: Backend.available) func invalidPagingIsAnErrorNotAnEmptyResult(_ backend: Backend) throws {
        let test = try seeded(backend)
        for query in [
            Snack.all().page(-1, rows: 10), Snack.all().page(0, rows: 0), Snack.all().page(1, rows: -5),
            Snack.all().limit(-1), Snack.all().limit(5, offset: -2), Snack.all().page(Int.max, rows: 2),
        ] {
            let error = try #require(throws: ModelStoreError.self) { try query.findAll(in: test.store) }
            #expect(error.code == .invalidQuery)
            #expect(error.model == "Snack")
        }
    }

    @Test(arguments: Backend.available) func countAndExistsByPredicate(_ backend: Backend) throws {
        let test = try seeded(backend)
        #expect(try Snack.count(where: \.taste == "sweet", in: test.store) == 8)
        #expect(try Snack.exists(where: \.price == 6, in: test.store))
        #expect(try !Snack.exists(where: \.price > 6, in: test.store))
        #expect(try Snack.filter(\.taste == "sweet").page(2, rows: 3).count(in: test.store) == 2)
        #expect(try Snack.all().page(100, rows: 3).exists(in: test.store) == false)
    }

    @Test(arguments: Backend.available) func threeFormsOfQueries(_ backend: Backend) async throws {
        let test = try seeded(backend)
        let query = Snack.filter(\.taste == "salty").order(.descending(\.snackId))
        #expect(try await query.findAll(in: test.store).first?.snackId == 23)
        #expect(try await query.findFirst(in: test.store)?.snackId == 23)
        #expect(try await query.count(in: test.store) == 8)
        #expect(try await query.exists(in: test.store))
        #expect(try await Snack.findAll(where: \.snackId < 3, in: test.store).count == 2)
        #expect(try await Snack.findFirst(by: \.name, equals: "n1", in: test.store)?.snackId == 1)
        #expect(try await Snack.count(where: \.snackId > 20, in: test.store) == 5)
        let viaCompletion: Result<[Snack], ModelStoreError> = await withCheckedContinuation { continuation in
            Snack.findAll(where: \.snackId > 23, in: test.store) { continuation.resume(returning: $0) }
        }
        #expect(try viaCompletion.get().map(\.snackId) == [24, 25])
        let failed: Result<Int, ModelStoreError> = await withCheckedContinuation { continuation in
            Snack.all().page(-1, rows: 2).count(in: test.store) { continuation.resume(returning: $0) }
        }
        #expect(throws: ModelStoreError.self) { try failed.get() }
    }
}
