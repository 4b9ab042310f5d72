import Foundation
import Testing

@testable import ModelStore

private struct Member: StoredModel, Equatable {
    var localId: String
    var accountId: Int
    var email: String
    var name: String?
    static let primaryKey = ["localId"]
}

/// A save that matches nothing inserts the model under its own key, as `insert()` does: a key
/// another record holds is `.alreadyExists` naming it, with a fix, never SQLite's bare
/// constraint failure, and nothing of the call is written.
@Suite("Saving into a matching record: a model that matches none")
struct SaveMatchingInsertTests {
    /// The example of Saving and merging: on a fresh store, the second line matched nothing
    /// and inserted key 7, which the first line had taken.
    @Test(arguments: Backend.available) func aSaveMatchingNothingWhoseKeyIsTakenThrowsAlreadyExistsInEveryForm(_ backend: Backend)
        async throws
    {
        let test = try TestStore(backend)
        let store = test.store
        try synchronously { try Snack(snackId: 7, name: "Pocky", size: 999).save(matching: \.name == "Pocky", in: store) }
        let taken = Snack(snackId: 7, name: "Pocky", taste: "sweet", price: 2)
        func check(_ error: ModelStoreError?, _ form: Comment) {
            #expect(error?.code == .alreadyExists, form)
            #expect(error?.model == "Snack", form)
            #expect(error?.key?.contains("7") == true, form)
            #expect(error?.suggestion?.contains("key no record has") == true, form)
        }
        check(
            #expect(throws: ModelStoreError.self) { try synchronously { try taken.save(matching: [\.name, \.taste], in: store) } }, "sync")
        check(
            #expect(throws: ModelStoreError.self) { try synchronously { try taken.save(matching: \.taste == "sweet", in: store) } }, "sync")
        check(await #expect(throws: ModelStoreError.self) { try await taken.save(matching: [\.name, \.taste], in: store) }, "async")
        check(await #expect(throws: ModelStoreError.self) { try await taken.save(matching: \.taste == "sweet", in: store) }, "async")
        let completed = await withCheckedContinuation { continuation in
            taken.save(matching: [\.name, \.taste], in: store) { continuation.resume(returning: $0) }
        }
        check(#expect(throws: ModelStoreError.self) { try completed.get() }, "completion")
        let conditioned = await withCheckedContinuation { continuation in
            taken.save(matching: \.taste == "sweet", in: store) { continuation.resume(returning: $0) }
        }
        check(#expect(throws: ModelStoreError.self) { try conditioned.get() }, "completion")
        #expect(try synchronously { try Snack.findAll(in: store) } == [Snack(snackId: 7, name: "Pocky", size: 999)])
        // With a free key, the same call inserts, as the article now shows.
        var free = taken
        free.snackId = 8
        #expect(try synchronously { try free.save(matching: [\.name, \.taste], in: store) } == .inserted)
        #expect(try synchronously { try Snack.count(in: store) } == 2)
    }

    /// A `MatchKeys` batch element that matches nothing is inserted under its own key: one
    /// another record holds fails the batch with `.alreadyExists` naming the element, and
    /// nothing of the batch is written.
    @Test(arguments: Backend.available) func aMatchKeysElementMatchingNothingWhoseKeyIsTakenFailsTheBatchWithAlreadyExists(
        _ backend: Backend
    ) async throws {
        let test = try TestStore(backend)
        let store = test.store
        try synchronously { try Member.save([Member(localId: "a", accountId: 1, email: "ann@example.com", name: "Ann")], in: store) }
        let batch = [
            Member(localId: "b", accountId: 1, email: "bo@example.com"),  // new
            Member(localId: "a", accountId: 1, email: "al@example.com"),  // no match, and key "a" is Ann's
        ]
        let keys = MatchKeys<Member>(shared: [\.accountId], varying: [\.email])
        let synchronousError = #expect(throws: ModelStoreError.self) {
            try synchronously { try Member.save(batch, matching: keys, in: store) }
        }
        let asynchronousError = await #expect(throws: ModelStoreError.self) { try await Member.save(batch, matching: keys, in: store) }
        for (form, error) in [("sync", synchronousError), ("async", asynchronousError)] {
            #expect(error?.code == .alreadyExists, "\(form)")
            #expect(error?.key?.contains("a") == true, "\(form)")
            #expect(error?.message.hasPrefix("Element 1 of a batch of 2") == true, "\(form): \(String(describing: error))")
        }
        let completed = await withCheckedContinuation { continuation in
            Member.save(batch, matching: keys, in: store) { continuation.resume(returning: $0) }
        }
        #expect(throws: ModelStoreError.self) { try completed.get() }
        #expect(
            try synchronously { try Member.findAll(in: store) } == [
                Member(localId: "a", accountId: 1, email: "ann@example.com", name: "Ann")
            ])
    }
}
