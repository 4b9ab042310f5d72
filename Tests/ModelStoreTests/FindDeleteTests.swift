import Foundation
import Testing
@testable import ModelStore

@Suite("Find and delete by key")
struct FindDeleteTests {
    private func seeded(_ kind: StoreKind = .memory) throws -> TestStore {
        let test = try TestStore(kind)
        for id in [3, 1, 2] { try Snack(snackId: Int64(id), name: "s\(id)").save(in: test.store) }
        for (user, friend) in [(1, "a"), (1, "b"), (2, "a")] {
            try Friendship(userId: Int64(user), friendId: friend, note: "\(user)\(friend)").save(in: test.store)
        }
        return test
    }

    @Test(arguments: StoreKind.everywhere)
    func findByKeyReturnsTheModelOrNil(kind: StoreKind) throws {
        let test = try seeded(kind)
        #expect(try Snack.find(key: 2, in: test.store)?.name == "s2")
        #expect(try Snack.find(key: Int64(2), in: test.store)?.name == "s2")
        #expect(try Snack.find(key: 99, in: test.store) == nil)
    }

    @Test(arguments: Backend.available) func findAllReturnsEveryModelInKeyOrder(_ backend: Backend) throws {
        let test = try seeded(StoreKind.memory.or(backend))
        #expect(try Snack.findAll(in: test.store).map(\.snackId) == [1, 2, 3])
        #expect(try Friendship.findAll(in: test.store).map(\.note) == ["1a", "1b", "2a"])
    }

    @Test(arguments: Backend.available) func countAndExists(_ backend: Backend) throws {
        let test = try seeded(StoreKind.memory.or(backend))
        #expect(try Snack.count(in: test.store) == 3)
        #expect(try Snack.exists(key: 1, in: test.store))
        #expect(try !Snack.exists(key: 4, in: test.store))
        #expect(try Friendship.exists(key: ["userId": 2, "friendId": "a"], in: test.store))
        #expect(try !Friendship.exists(key: ["userId": 2, "friendId": "b"], in: test.store))
    }

    @Test(arguments: Backend.available) func aCompositeKeyIsPassedByComponentName(_ backend: Backend) throws {
        let test = try seeded(StoreKind.memory.or(backend))
        #expect(try Friendship.find(key: ["userId": 1, "friendId": "b"], in: test.store)?.note == "1b")
        #expect(try Friendship.find(key: ["friendId": "a", "userId": 2], in: test.store)?.note == "2a")
        #expect(try Friendship.find(key: ["userId": 3, "friendId": "a"], in: test.store) == nil)
    }

    @Test(arguments: Backend.available) func aCompositeKeyWithAMissingOrExtraComponentIsRejected(_ backend: Backend) throws {
        let test = try seeded(StoreKind.memory.or(backend))
        let missing = try #require(throws: ModelStoreError.self) { try Friendship.find(key: ["userId": 1], in: test.store) }
        #expect(missing.code == .invalidKey)
        #expect(missing.model == "Friendship")
        #expect(missing.message.contains("missing friendId"))
        let extra = try #require(throws: ModelStoreError.self) {
            try Friendship.find(key: ["userId": 1, "friendId": "a", "since": 0], in: test.store)
        }
        #expect(extra.code == .invalidKey)
        #expect(extra.message.contains("not part of the key: since"))
        let single = try #require(throws: ModelStoreError.self) { try Friendship.find(key: 1, in: test.store) }
        #expect(single.code == .invalidKey)
        #expect(single.suggestion?.contains("friendId") == true)
        let forSingle = try #require(throws: ModelStoreError.self) { try Snack.find(key: ["snackId": 1, "name": "x"], in: test.store) }
        #expect(forSingle.code == .invalidKey)
    }

    @Test(arguments: Backend.available) func aKeyOfATypeItsColumnCanNeverMatchIsRejected(_ backend: Backend) throws {
        let test = try seeded(StoreKind.memory.or(backend))
        let error = try #require(throws: ModelStoreError.self) { try Snack.find(key: "one", in: test.store) }
        #expect(error.code == .invalidKey)
        #expect(error.column == "snackId")
        #expect(error.value == "'one'")
        #expect(throws: ModelStoreError.self) { try Friendship.find(key: ["userId": 1, "friendId": 2], in: test.store) }
        let tooBig = try #require(throws: ModelStoreError.self) { try Snack.find(key: UInt64.max, in: test.store) }
        #expect(tooBig.code == .invalidKey)
    }

    @Test(arguments: Backend.available) func deleteByKeyReportsHowManyRecordsWent(_ backend: Backend) throws {
        let test = try seeded(StoreKind.memory.or(backend))
        #expect(try Snack.delete(key: 2, in: test.store) == 1)
        #expect(try Snack.delete(key: 2, in: test.store) == 0)
        #expect(try Friendship.delete(key: ["userId": 1, "friendId": "a"], in: test.store) == 1)
        #expect(try Snack.findAll(in: test.store).map(\.snackId) == [1, 3])
        #expect(try Friendship.count(in: test.store) == 2)
    }

    @Test(arguments: Backend.available) func deletingAModelUsesItsKey(_ backend: Backend) throws {
        let test = try seeded(StoreKind.memory.or(backend))
        #expect(try Snack(snackId: 3, name: "ignored").delete(in: test.store) == 1)
        #expect(try Friendship(userId: 2, friendId: "a").delete(in: test.store) == 1)
        #expect(try Snack(snackId: 3).delete(in: test.store) == 0)
        #expect(try Snack.exists(key: 3, in: test.store) == false)
    }

    @Test(arguments: Backend.available) func deleteAllReportsTheCount(_ backend: Backend) throws {
        let test = try seeded(StoreKind.memory.or(backend))
        #expect(try Snack.deleteAll(in: test.store) == 3)
        #expect(try Snack.deleteAll(in: test.store) == 0)
        #expect(try Snack.count(in: test.store) == 0)
        #expect(try Friendship.count(in: test.store) == 3)
    }

    @Test(arguments: Backend.available) func completionHandlerFormsDeliverResults(_ backend: Backend) throws {
        let test = try seeded(StoreKind.memory.or(backend))
        let found = Locked<[String]>([])
        let group = DispatchGroup()
        func track<T>(_ label: String) -> @Sendable (Result<T, ModelStoreError>) -> Void {
            group.enter()
            return { result in
                found.withLock { $0.append("\(label)=\((try? result.get()).map { "\($0)" } ?? "error")") }
                group.leave()
            }
        }
        Snack.find(key: 1, in: test.store, completion: track("find"))
        Snack.findAll(in: test.store, completion: track("findAll"))
        Snack.count(in: test.store, completion: track("count"))
        Snack.exists(key: 2, in: test.store, completion: track("exists"))
        Friendship.find(key: ["userId": 1, "friendId": "a"], in: test.store, completion: track("composite"))
        Snack.find(key: "bad", in: test.store, completion: track("badKey"))
        #expect(group.wait(timeout: .now() + 10) == .success)
        let results = Set(found.current.map { String($0.prefix(while: { $0 != "=" })) + ($0.hasSuffix("=error") ? "!" : "") })
        #expect(results == ["find", "findAll", "count", "exists", "composite", "badKey!"])

        let deleted = Locked<[Int]>([])
        let done = DispatchGroup()
        for _ in 0..<3 { done.enter() }
        Snack.delete(key: 1, in: test.store) { result in
            deleted.withLock { $0.append((try? result.get()) ?? -1) }; done.leave()
        }
        Snack(snackId: 2).delete(in: test.store) { result in
            deleted.withLock { $0.append((try? result.get()) ?? -1) }; done.leave()
        }
        Snack.deleteAll(in: test.store) { result in
            deleted.withLock { $0.append((try? result.get()) ?? -1) }; done.leave()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        // Writes are barriers and run in submission order: 1, then 1, then the last one.
        #expect(deleted.current == [1, 1, 1])
    }

    @Test(arguments: Backend.available) func asyncFormsReturnResults(_ backend: Backend) async throws {
        let test = try seeded(StoreKind.memory.or(backend))
        #expect(try await Snack.find(key: 1, in: test.store)?.name == "s1")
        #expect(try await Friendship.find(key: ["userId": 1, "friendId": "a"], in: test.store)?.note == "1a")
        #expect(try await Snack.findAll(in: test.store).count == 3)
        #expect(try await Snack.count(in: test.store) == 3)
        #expect(try await Snack.exists(key: 3, in: test.store))
        #expect(try await Snack.delete(key: 3, in: test.store) == 1)
        #expect(try await Snack(snackId: 2).delete(in: test.store) == 1)
        #expect(try await Snack.deleteAll(in: test.store) == 1)
    }
}

@Suite("Decoding into a sized result")
struct SizedDecodeTests {
    @Test(arguments: Backend.available) func rowsBeyondTheExpectedCountAreStillReturnedInOrder(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Snack.save((1...9).map { Snack(snackId: Int64($0)) }, in: test.store)
        for expected in [1, 5, 9, 20] {
            let ids = try test.store.read { session -> [Int64] in
                let table = try session.table(Snack.self)
                let statement = try session.connection.makeStatement("SELECT \(table.selectList) FROM \"Snack\" ORDER BY \"snackId\"")
                return try session.decodeAll(Snack.self, from: statement, table: table, expected: expected).map(\.snackId)
            }
            #expect(ids == Array(1...9), "expected \(expected)")
        }
    }
}
