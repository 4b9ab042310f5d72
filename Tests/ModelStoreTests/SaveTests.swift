import Foundation
import Testing
@testable import ModelStore

/// Three optional properties and one non-optional, for exhaustive merge checks.
private struct Trio: StoredModel, Equatable {
    var id: Int
    var a: String?
    var b: Int?
    var c: Double?
    var d: Int = 0
    static let primaryKey = ["id"]
}

@Suite("Save: upsert with merge")
struct SaveTests {
    @Test(arguments: StoreKind.everywhere)
    func saveInsertsANewKeyAndUpdatesAnExistingOne(kind: StoreKind) throws {
        let test = try TestStore(kind)
        #expect(try Snack(snackId: 123, name: "Pocky", price: 1.1).save(in: test.store) == .inserted)
        #expect(try Snack(snackId: 123, size: 999).save(in: test.store) == .updated)
        let snack = try #require(try Snack.find(key: 123, in: test.store))
        #expect(snack.name == "Pocky")
        #expect(snack.price == 1.1)
        #expect(snack.size == 999)
        #expect(try Snack.count(in: test.store) == 1)
    }

    @Test(arguments: Backend.available) func aSaveIsOneUpsertStatementWithNoLookup(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Snack(snackId: 1, name: "a").save(in: test.store)
        test.resetSQL()
        try Snack(snackId: 1, name: "b").save(in: test.store)
        let sent = test.dataSQL
        #expect(try Snack.find(key: 1, in: test.store)?.name == "b")
        #expect(sent.count == 1, "\(sent)")
        #expect(sent.first?.hasPrefix(#"INSERT INTO "Snack" ("snackId", "name", "tags") VALUES ("#) == true)
        #expect(sent.first?.contains(#"ON CONFLICT ("snackId") DO UPDATE SET "name" = excluded."name""#) == true)
        // SQLite's text (a server's has its own placeholders and comparisons).
        guard backend == .sqlite else { return }
        #expect(
            sent == [
                #"INSERT INTO "Snack" ("snackId", "name", "tags") VALUES (?, ?, ?) ON CONFLICT ("snackId") DO UPDATE SET "name" = excluded."name", "tags" = excluded."tags" WHERE "name" IS NOT excluded."name" COLLATE BINARY OR "tags" IS NOT excluded."tags" COLLATE BINARY"#
            ])
    }

    /// Every combination of stored and carried properties: carried ones win, absent ones keep
    /// what was stored, and the non-optional one is always written.
    @Test(arguments: Backend.available) func mergeKeepsEveryStoredValueTheModelDoesNotCarry(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let full = Trio(id: 0, a: "stored", b: 1, c: 1.5, d: 1)
        let update = Trio(id: 0, a: "new", b: 2, c: 2.5, d: 2)
        var id = 0
        for storedMask in 0..<8 {
            for carriedMask in 0..<8 {
                id += 1
                func pick(_ model: Trio, _ mask: Int) -> Trio {
                    Trio(
                        id: id, a: mask & 1 != 0 ? model.a : nil, b: mask & 2 != 0 ? model.b : nil,
                        c: mask & 4 != 0 ? model.c : nil, d: model.d)
                }
                let stored = pick(full, storedMask)
                let carried = pick(update, carriedMask)
                try stored.save(in: test.store)
                #expect(try carried.save(in: test.store) == .updated)
                let expected = Trio(
                    id: id, a: carried.a ?? stored.a, b: carried.b ?? stored.b, c: carried.c ?? stored.c, d: carried.d)
                #expect(try Trio.find(key: id, in: test.store) == expected, "stored \(storedMask) carried \(carriedMask)")
            }
        }
    }

    /// Every combination of cleared properties ends NULL; the others keep their values.
    @Test(arguments: Backend.available) func clearingSetsExactlyTheNamedPropertiesToNull(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let paths: [PartialKeyPath<Trio>] = [\Trio.a, \Trio.b, \Trio.c]
        for mask in 0..<8 {
            let stored = Trio(id: mask, a: "x", b: 1, c: 1.5, d: 7)
            try stored.save(in: test.store)
            let cleared = paths.enumerated().filter { mask & (1 << $0.offset) != 0 }.map(\.element)
            try Trio(id: mask, d: 7).save(clearing: cleared, in: test.store)
            let expected = Trio(
                id: mask, a: mask & 1 != 0 ? nil : "x", b: mask & 2 != 0 ? nil : 1,
                c: mask & 4 != 0 ? nil : 1.5, d: 7)
            #expect(try Trio.find(key: mask, in: test.store) == expected)
        }
    }

    @Test(arguments: Backend.available) func clearingRefusesKeysNonOptionalsCarriedValuesAndUnknownPaths(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Trio(id: 1, a: "x").save(in: test.store)
        let cases: [(PartialKeyPath<Trio>, Trio)] = [
            (\Trio.id, Trio(id: 1)), (\Trio.d, Trio(id: 1)), (\Trio.a, Trio(id: 1, a: "still here")),
            (\Trio.a?.count, Trio(id: 1)),
        ]
        for (path, model) in cases {
            let error = try #require(throws: ModelStoreError.self) { try model.save(clearing: [path], in: test.store) }
            #expect(error.code == .invalidQuery)
            #expect(error.model == "Trio")
        }
        #expect(try Trio.find(key: 1, in: test.store)?.a == "x")
    }

    @Test(arguments: Backend.available) func aSaveOfTheValuesAlreadyStoredIsUnchangedAndWritesNothing(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let snack = Snack(snackId: 1, name: "a", price: 1.5, tags: ["x"])
        #expect(try snack.save(in: test.store) == .inserted)
        #expect(try snack.save(in: test.store) == .unchanged)
        #expect(try Snack(snackId: 1, name: "a", tags: ["x"]).save(in: test.store) == .unchanged)  // nil keeps: nothing differs
        #expect(try Snack(snackId: 1, name: "b", tags: ["x"]).save(in: test.store) == .updated)
        #expect(try Snack(snackId: 1, tags: ["x"]).save(clearing: [\.price], in: test.store) == .updated)
        #expect(try Snack(snackId: 1, tags: ["x"]).save(clearing: [\.price], in: test.store) == .unchanged)
        #expect(try Snack.find(key: 1, in: test.store) == Snack(snackId: 1, name: "b", tags: ["x"]))
    }

    @Test(arguments: Backend.available) func aModelCarryingOnlyItsKeyInsertsOnceAndThenChangesNothing(_ backend: Backend) throws {
        let test = try TestStore(backend)
        #expect(try Friendship(userId: 1, friendId: "b").save(in: test.store) == .inserted)
        try Friendship(userId: 1, friendId: "b", note: "n").save(in: test.store)
        #expect(try Friendship(userId: 1, friendId: "b").save(in: test.store) == .unchanged)
        #expect(try Friendship.find(key: ["userId": 1, "friendId": "b"], in: test.store)?.note == "n")
    }

    @Test(arguments: Backend.available) func insertRefusesATakenKeyAndLeavesTheRecordAlone(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Snack(snackId: 1, name: "first").insert(in: test.store)
        let error = try #require(throws: ModelStoreError.self) { try Snack(snackId: 1, name: "second").insert(in: test.store) }
        #expect(error.code == .alreadyExists)
        #expect(error.model == "Snack")
        #expect(error.key == "snackId = 1")
        #expect(try Snack.find(key: 1, in: test.store)?.name == "first")
    }

    @Test(arguments: Backend.available) func updateRefusesAMissingKeyAndInsertsNothing(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let error = try #require(throws: ModelStoreError.self) { try Snack(snackId: 5, name: "x").update(in: test.store) }
        #expect(error.code == .notFound)
        #expect(error.key == "snackId = 5")
        #expect(try Snack.count(in: test.store) == 0)
        let keyOnly = try #require(throws: ModelStoreError.self) { try Friendship(userId: 1, friendId: "x").update(in: test.store) }
        #expect(keyOnly.code == .notFound)
        #expect(try Friendship.count(in: test.store) == 0)
    }

    @Test(arguments: Backend.available) func updateMergesIntoAnExistingRecord(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Snack(snackId: 5, name: "x", price: 2).save(in: test.store)
        try Snack(snackId: 5, taste: "sweet").update(in: test.store)
        try Snack(snackId: 5).update(clearing: [\.price], in: test.store)
        #expect(try Snack.find(key: 5, in: test.store) == Snack(snackId: 5, name: "x", taste: "sweet"))
    }

    @Test(arguments: Backend.available) func aFailedSaveLeavesTheStoreAsItWas(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Snack(snackId: 1, name: "kept", price: 1).save(in: test.store)
        #expect(throws: ModelStoreError.self) { try Snack(snackId: 1, name: "lost", price: .nan).save(in: test.store) }
        #expect(try Snack.find(key: 1, in: test.store) == Snack(snackId: 1, name: "kept", price: 1))
    }

    @Test(arguments: Backend.available) func completionAndAsyncFormsSaveInsertAndUpdate(_ backend: Backend) async throws {
        let test = try TestStore(backend)
        let outcome = try await withCheckedThrowingContinuation { continuation in
            Snack(snackId: 1, name: "a").save(in: test.store) { continuation.resume(with: $0) }
        }
        #expect(outcome == .inserted)
        #expect(try await Snack(snackId: 1, price: 2).save(in: test.store) == .updated)
        try await Snack(snackId: 2).insert(in: test.store)
        try await Snack(snackId: 2, name: "b").update(in: test.store)
        let failure: Result<Void, ModelStoreError> = await withCheckedContinuation { continuation in
            Snack(snackId: 3).update(in: test.store) { continuation.resume(returning: $0) }
        }
        #expect(throws: ModelStoreError.self) { try failure.get() }
        #expect(
            try await Snack.findAll(in: test.store) == [
                Snack(snackId: 1, name: "a", price: 2), Snack(snackId: 2, name: "b"),
            ])
    }
}
