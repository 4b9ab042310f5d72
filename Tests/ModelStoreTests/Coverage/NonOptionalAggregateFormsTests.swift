import Foundation
import Testing
@testable import ModelStore

@Suite("Coverage: min and max of a non-optional property in every form")
struct NonOptionalAggregateFormsTests {
    private func delivered<T: Sendable, E: Error>(
        _ call: (@escaping @Sendable (Result<T, E>) -> Void) -> Void
    ) async -> Result<T, E> {
        await withCheckedContinuation { continuation in call { continuation.resume(returning: $0) } }
    }

    @Test(arguments: Backend.available) func minAndMaxOfANonOptionalPropertyAgreeInEveryForm(_ backend: Backend) async throws {
        let test = try TestStore(backend)
        let store = test.store
        _ = try synchronously { try Snack.save([7, 3, 11, 5].map { Snack(snackId: $0, name: "s\($0)") }, in: store) }
        let all = Snack.all()
        #expect(try synchronously { try all.min(\.snackId, in: store) } == 3)
        #expect(try await all.min(\.snackId, in: store) == 3)
        #expect(try await delivered { all.min(\.snackId, in: store, completion: $0) }.get() == 3)
        #expect(try synchronously { try all.max(\.snackId, in: store) } == 11)
        #expect(try await all.max(\.snackId, in: store) == 11)
        #expect(try await delivered { all.max(\.snackId, in: store, completion: $0) }.get() == 11)
        let filtered = Snack.filter(\.snackId < 7)
        #expect(try await filtered.min(\.snackId, in: store) == 3)
        #expect(try await delivered { filtered.max(\.snackId, in: store, completion: $0) }.get() == 5)
    }

    @Test(arguments: Backend.available) func minAndMaxOfANonOptionalPropertyAreNilWhenNothingMatchesInEveryForm(_ backend: Backend)
        async throws
    {
        let test = try TestStore(backend)
        let store = test.store
        try synchronously { try Snack(snackId: 1).save(in: store) }
        let none = Snack.filter(\.snackId > 100)
        #expect(try await none.min(\.snackId, in: store) == nil)
        #expect(try await delivered { none.min(\.snackId, in: store, completion: $0) }.get() == nil)
        #expect(try await delivered { none.max(\.snackId, in: store, completion: $0) }.get() == nil)
    }

    @Test(arguments: Backend.available) func theCompletionFormsDeliverAFailedQueryAsAFailure(_ backend: Backend) async throws {
        let test = try TestStore(backend)
        let store = test.store
        try synchronously { try Snack(snackId: 1).save(in: store) }
        let broken = Snack.filter(Column("nope") == 1)
        let minimum = await delivered { broken.min(\.snackId, in: store, completion: $0) }
        #expect(throws: ModelStoreError.self) { try minimum.get() }
        let maximum = await delivered { broken.max(\.snackId, in: store, completion: $0) }
        #expect(throws: ModelStoreError.self) { try maximum.get() }
        await #expect(throws: ModelStoreError.self) { try await broken.min(\.snackId, in: store) }
    }
}
