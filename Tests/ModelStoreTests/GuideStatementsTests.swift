import Foundation
import Testing

@testable import ModelStore

private struct PricedTicket: StoredModel, Equatable {
    var id: Int64
    var price: Double
    static let primaryKey = ["id"]

    func validate() throws {
        guard price >= 0 else { throw ValidationError("must not be negative", property: "price") }
    }
}

private struct Refusal: Error, Equatable {
    var reason: String
}

/// What the guides say of the limits of validation and of ModelStoreError, as the library
/// does it (Coming from Core Data, Coming from GRDB, Reliability).
@Suite("What the guides say of validation and errors")
struct GuideStatementsTests {
    /// `validate()` runs on every path that writes a model's values: `updateAll` and raw SQL
    /// write rows without models, and do not call it.
    @Test(arguments: Backend.available) func updateAllAndRawSQLWriteRowsWithoutValidating(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try PricedTicket(id: 1, price: 5).save(in: test.store)
        #expect(throws: ModelStoreError.self) { try PricedTicket(id: 1, price: -1).save(in: test.store) }
        #expect(try PricedTicket.updateAll(where: \.id == 1, set: [.set(\.price, to: -2)], in: test.store) == 1)
        #expect(try PricedTicket.find(key: 1, in: test.store)?.price == -2)
        _ = try test.store.execute(#"UPDATE "PricedTicket" SET "price" = \#(-3.0) WHERE "id" = \#(1)"#)
        #expect(try PricedTicket.find(key: 1, in: test.store)?.price == -3)
    }

    /// An error a block's own code throws reaches the caller as the type it threw, in every
    /// form, after the block rolled back; only ModelStore's calls throw `ModelStoreError`.
    @Test(arguments: Backend.available) func aBlocksOwnErrorReachesTheCallerAsItsOwnTypeInEveryForm(_ backend: Backend) async throws {
        let test = try TestStore(backend)
        let store = test.store
        let refusal = Refusal(reason: "sold out")
        #expect(throws: refusal) {
            try synchronously {
                try store.transaction {
                    try PricedTicket(id: 1, price: 5).save(in: store)
                    throw refusal
                }
            }
        }
        await #expect(throws: refusal) {
            try await store.transaction {
                try PricedTicket(id: 2, price: 5).save(in: store)
                throw refusal
            }
        }
        let delivered: Result<Void, any Error> = await withCheckedContinuation { continuation in
            store.transaction(
                {
                    try PricedTicket(id: 3, price: 5).save(in: store)
                    throw refusal
                }, completion: { continuation.resume(returning: $0) })
        }
        #expect(throws: refusal) { try delivered.get() }
        #expect(try synchronously { try PricedTicket.count(in: store) } == 0)
    }
}
