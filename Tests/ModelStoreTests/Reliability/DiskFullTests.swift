import Foundation
import Testing
@testable import ModelStore

// SQLite-only: a full SQLite file on a small disk.
/// Promise 3: a save that does not fit fails as "store full", keeps earlier data, and the store
/// works again once there is room. The database is capped with `PRAGMA max_page_count`, which
/// makes SQLite fail exactly as it does on a full disk (SQLITE_FULL).
@Suite("Reliability: a full store")
struct DiskFullTests {
    private func pageCount(_ test: TestStore) throws -> Int64 {
        guard case .integer(let pages) = try test.rawRows("PRAGMA page_count").first?.first else {
            throw ModelStoreError(.sqlite, "no page count")
        }
        return pages
    }

    @Test(arguments: StoreKind.allCases)
    func aSaveThatDoesNotFitFailsAsStoreFullKeepsEarlierDataAndWorksOnceThereIsRoom(kind: StoreKind) throws {
        let test = try TestStore(kind)
        let earlier = (1...50).map { Snack(snackId: $0, name: "snack \($0)", price: Double($0)) }
        _ = try Snack.save(earlier, in: test.store)
        let bulky = Snack(snackId: 99, name: String(repeating: "b", count: 40_000))
        try bulky.save(in: test.store)
        try test.rawExecute("PRAGMA max_page_count = \(try pageCount(test) + 2)")

        let big = Snack(snackId: 1000, name: String(repeating: "x", count: 1_000_000))
        let error = try #require(throws: ModelStoreError.self) { try big.save(in: test.store) }
        #expect(error.code == .storeFull)
        #expect(error.model == "Snack")
        #expect(error.key == "snackId = 1000")
        #expect(error.message.contains("The store is full"))

        let batch = (2000..<4000).map { Snack(snackId: Int64($0), name: String(repeating: "y", count: 500)) }
        let batchError = try #require(throws: ModelStoreError.self) { try Snack.save(batch, in: test.store) }
        #expect(batchError.code == .storeFull)
        #expect(batchError.message.contains("none were saved"))

        // Everything stored before is intact, and nothing of the failed saves is there.
        #expect(try Snack.findAll(in: test.store) == earlier + [bulky])
        #expect(try test.store.integrityCheck() == "ok")

        // Deleting frees pages inside the file; a save that fits in them succeeds.
        #expect(try Snack.delete(key: 99, in: test.store) == 1)
        let fits = Snack(snackId: 98, name: String(repeating: "f", count: 20_000))
        try fits.save(in: test.store)
        #expect(try Snack.find(key: 98, in: test.store) == fits)

        // Lifting the cap (the disk gaining space) makes room for the big saves too.
        try test.rawExecute("PRAGMA max_page_count = 1073741823")
        try big.save(in: test.store)
        #expect(try Snack.save(batch, in: test.store).inserted == batch.count)
        #expect(try Snack.count(in: test.store) == earlier.count + 2 + batch.count)
        #expect(try test.store.integrityCheck() == "ok")
    }
}
