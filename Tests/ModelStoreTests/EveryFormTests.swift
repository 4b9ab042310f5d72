import Foundation
import Testing
@testable import ModelStore

/// Every public operation exists in all three forms — synchronous, completion handler,
/// `async` — and the three agree. A form missing from the API fails this file's build.
@Suite("Every operation in every form")
struct EveryFormTests {
    /// The result a completion-form call delivers.
    private func delivered<T: Sendable, E: Error>(
        _ call: (@escaping @Sendable (Result<T, E>) -> Void) -> Void
    ) async -> Result<T, E> {
        await withCheckedContinuation { continuation in call { continuation.resume(returning: $0) } }
    }

    private func seeded(_ backend: Backend) throws -> TestStore {
        let test = try TestStore(.file, or: backend)
        _ = try Snack.save(
            (1...6).map { Snack(snackId: $0, name: "s\($0)", taste: $0 % 2 == 0 ? "sweet" : "salty", price: Double($0)) }, in: test.store)
        try Friendship(userId: 1, friendId: "a", note: "n").save(in: test.store)
        try Friendship(userId: 1, friendId: "b").save(in: test.store)
        return test
    }

    @Test(arguments: Backend.available) func findsCountsAndExistsAgreeInEveryForm(_ backend: Backend) async throws {
        let test = try seeded(backend)
        let store = test.store
        let composite: [String: any SQLValueConvertible] = ["userId": 1, "friendId": "a"]

        let find = try synchronously { try Snack.find(key: 3, in: store) }
        #expect(try await delivered { Snack.find(key: 3, in: store, completion: $0) }.get() == find)
        #expect(try await Snack.find(key: 3, in: store) == find)
        let pair = try synchronously { try Friendship.find(key: composite, in: store) }
        #expect(try await delivered { Friendship.find(key: composite, in: store, completion: $0) }.get() == pair)
        #expect(try await Friendship.find(key: composite, in: store) == pair)

        let all = try synchronously { try Snack.findAll(in: store) }
        #expect(try await delivered { Snack.findAll(in: store, completion: $0) }.get() == all)
        #expect(try await Snack.findAll(in: store) == all)

        let count = try synchronously { try Snack.count(in: store) }
        #expect(try await delivered { Snack.count(in: store, completion: $0) }.get() == count)
        #expect(try await Snack.count(in: store) == count)

        for exists in [try synchronously { try Snack.exists(key: 2, in: store) }] {
            #expect(try await delivered { Snack.exists(key: 2, in: store, completion: $0) }.get() == exists)
            #expect(try await Snack.exists(key: 2, in: store) == exists)
        }
        let pairExists = try synchronously { try Friendship.exists(key: composite, in: store) }
        #expect(pairExists)
        #expect(try await delivered { Friendship.exists(key: composite, in: store, completion: $0) }.get() == pairExists)
        #expect(try await Friendship.exists(key: composite, in: store) == pairExists)

        let sweet: Condition<Snack> = \.taste == "sweet"
        let filtered = try synchronously { try Snack.findAll(where: sweet, in: store) }
        #expect(try await delivered { Snack.findAll(where: sweet, in: store, completion: $0) }.get() == filtered)
        #expect(try await Snack.findAll(where: sweet, in: store) == filtered)
        struct Name: Decodable, Sendable, Equatable { var snackId: Int64; var name: String? }
        let names = try synchronously { try Snack.filter(sweet).findAll(as: Name.self, in: store) }
        #expect(names.count == filtered.count)
        #expect(try await delivered { Snack.filter(sweet).findAll(as: Name.self, in: store, completion: $0) }.get() == names)
        #expect(try await Snack.filter(sweet).findAll(as: Name.self, in: store) == names)
        let first = try synchronously { try Snack.findFirst(where: sweet, in: store) }
        #expect(try await delivered { Snack.findFirst(where: sweet, in: store, completion: $0) }.get() == first)
        #expect(try await Snack.findFirst(where: sweet, in: store) == first)
        let counted = try synchronously { try Snack.count(where: sweet, in: store) }
        #expect(try await delivered { Snack.count(where: sweet, in: store, completion: $0) }.get() == counted)
        #expect(try await Snack.count(where: sweet, in: store) == counted)
        let any = try synchronously { try Snack.exists(where: sweet, in: store) }
        #expect(try await delivered { Snack.exists(where: sweet, in: store, completion: $0) }.get() == any)
        #expect(try await Snack.exists(where: sweet, in: store) == any)
    }

    @Test(arguments: Backend.available) func queriesAndAggregatesAgreeInEveryForm(_ backend: Backend) async throws {
        let test = try seeded(backend)
        let store = test.store
        let query = Snack.filter(\.price > 1).order(.descending(\.price)).limit(3)

        let page = try synchronously { try query.findAll(in: store) }
        #expect(try await delivered { query.findAll(in: store, completion: $0) }.get() == page)
        #expect(try await query.findAll(in: store) == page)
        let first = try synchronously { try query.findFirst(in: store) }
        #expect(try await delivered { query.findFirst(in: store, completion: $0) }.get() == first)
        #expect(try await query.findFirst(in: store) == first)
        let count = try synchronously { try query.count(in: store) }
        #expect(try await delivered { query.count(in: store, completion: $0) }.get() == count)
        #expect(try await query.count(in: store) == count)
        let exists = try synchronously { try query.exists(in: store) }
        #expect(try await delivered { query.exists(in: store, completion: $0) }.get() == exists)
        #expect(try await query.exists(in: store) == exists)

        let all = Snack.all()
        let sum = try synchronously { try all.sum(\.price, in: store) }
        #expect(try await delivered { all.sum(\.price, in: store, completion: $0) }.get() == sum)
        #expect(try await all.sum(\.price, in: store) == sum)
        let average = try synchronously { try all.average(\.price, in: store) }
        #expect(try await delivered { all.average(\.price, in: store, completion: $0) }.get() == average)
        #expect(try await all.average(\.price, in: store) == average)
        let minimum = try synchronously { try all.min(\.price, in: store) }
        #expect(try await delivered { all.min(\.price, in: store, completion: $0) }.get() == minimum)
        #expect(try await all.min(\.price, in: store) == minimum)
        let maximum = try synchronously { try all.max(\.price, in: store) }
        #expect(try await delivered { all.max(\.price, in: store, completion: $0) }.get() == maximum)
        #expect(try await all.max(\.price, in: store) == maximum)
        let groups = try synchronously { try all.countsGrouped(by: \.taste, in: store) }
        #expect(try await delivered { all.countsGrouped(by: \.taste, in: store, completion: $0) }.get() == groups)
        #expect(try await all.countsGrouped(by: \.taste, in: store) == groups)
        let distinct = try synchronously { try all.distinct(\.taste, in: store) }
        #expect(try await delivered { all.distinct(\.taste, in: store, completion: $0) }.get() == distinct)
        #expect(try await all.distinct(\.taste, in: store) == distinct)
        let values = try synchronously { try all.values(of: \.name, in: store) }
        #expect(try await delivered { all.values(of: \.name, in: store, completion: $0) }.get() == values)
        #expect(try await all.values(of: \.name, in: store) == values)
    }

    @Test(arguments: Backend.available) func writesWorkInEveryForm(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        #expect(try synchronously { try Snack(snackId: 1, name: "a").save(in: store) } == .inserted)
        #expect(try await delivered { Snack(snackId: 2, name: "b").save(in: store, completion: $0) }.get() == .inserted)
        #expect(try await Snack(snackId: 3, name: "c").save(in: store) == .inserted)

        try synchronously { try Snack(snackId: 4).insert(in: store) }
        try await delivered { Snack(snackId: 5).insert(in: store, completion: $0) }.get()
        try await Snack(snackId: 6).insert(in: store)
        try synchronously { try Snack(snackId: 4, price: 1).update(in: store) }
        try await delivered { Snack(snackId: 5, price: 1).update(in: store, completion: $0) }.get()
        try await Snack(snackId: 6, price: 1).update(in: store)

        let batch = (10...12).map { Snack(snackId: $0) }
        #expect(try synchronously { try Snack.save(batch, in: store) }.inserted == 3)
        #expect(try await delivered { Snack.save(batch, in: store, completion: $0) }.get().unchanged == 3)
        #expect(try await Snack.save(batch, in: store).unchanged == 3)

        let cheap: Condition<Snack> = \.price == 1
        #expect(try synchronously { try Snack.updateAll(where: cheap, set: [.set(\.taste, to: "x")], in: store) } == 3)
        #expect(try await delivered { Snack.updateAll(where: cheap, set: [.set(\.taste, to: "y")], in: store, completion: $0) }.get() == 3)
        #expect(try await Snack.updateAll(where: cheap, set: [.set(\.taste, to: "z")], in: store) == 3)
        let query = Snack.filter(cheap)
        #expect(
            try synchronously {
                try query.updateAll(.set(\.name, to: "v"), in: store) + query.updateAll([.set(\.name, to: "w")], in: store)
            } == 6)
        #expect(try await delivered { query.updateAll(.set(\.name, to: "v"), in: store, completion: $0) }.get() == 3)
        #expect(try await delivered { query.updateAll([.set(\.name, to: "w")], in: store, completion: $0) }.get() == 3)
        #expect(try await query.updateAll(.set(\.name, to: "v"), in: store) == 3)
        #expect(try await query.updateAll([.set(\.name, to: "w")], in: store) == 3)

        #expect(try synchronously { try Snack.delete(key: 10, in: store) } == 1)
        #expect(try await delivered { Snack.delete(key: 11, in: store, completion: $0) }.get() == 1)
        #expect(try await Snack.delete(key: 12, in: store) == 1)
        try await Friendship(userId: 1, friendId: "a").save(in: store)
        try await Friendship(userId: 1, friendId: "b").save(in: store)
        try await Friendship(userId: 1, friendId: "c").save(in: store)
        #expect(try synchronously { try Friendship.delete(key: ["userId": 1, "friendId": "a"], in: store) } == 1)
        #expect(try await delivered { Friendship.delete(key: ["userId": 1, "friendId": "b"], in: store, completion: $0) }.get() == 1)
        #expect(try await Friendship.delete(key: ["userId": 1, "friendId": "c"], in: store) == 1)
        #expect(try synchronously { try Snack(snackId: 1).delete(in: store) } == 1)
        #expect(try await delivered { Snack(snackId: 2).delete(in: store, completion: $0) }.get() == 1)
        #expect(try await Snack(snackId: 3).delete(in: store) == 1)
        #expect(try synchronously { try Snack.deleteAll(where: \.taste == "z", in: store) } == 3)
        #expect(try await delivered { Snack.filter(\.price == nil).deleteAll(in: store, completion: $0) }.get() == 0)
        #expect(try await Snack.deleteAll(in: store) == 0)
    }

    @Test(arguments: Backend.available) func blocksExistInEveryForm(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        #expect(try synchronously { try store.transaction { try Snack(snackId: 1).save(in: store) } } == .inserted)
        #expect(try await delivered { store.transaction({ try Snack(snackId: 2).save(in: store) }, completion: $0) }.get() == .inserted)
        #expect(try await store.transaction { try Snack(snackId: 3).save(in: store) } == .inserted)
        #expect(try synchronously { try store.read { try Snack.count(in: store) } } == 3)
        #expect(try await delivered { store.read({ try Snack.count(in: store) }, completion: $0) }.get() == 3)
        #expect(try await store.read { try Snack.count(in: store) } == 3)
    }
}
