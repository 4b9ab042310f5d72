import Foundation
import ModelStore
import Testing

// One body, two stores: the behaviour every backend must share, run on SQLite and on
// PostgreSQL (see `Backend`). Each test opens its own store (a schema of its own on the
// server), so they run side by side.

struct BKSnack: StoredModel, Equatable {
    var snackId: Int64
    var name: String?
    var price: Double?
    var taste: String?
    var size: Int?
    var code: Data?
    var cost: Decimal?
    var madeOn: Date?
    var batch: UUID?
    var tags: [String]?
    static let primaryKey = ["snackId"]
    static let indexes: [TableIndex<BKSnack>] = [.on(\.taste)]
}

struct BKContact: StoredModel, Equatable {
    var id: Int64?
    var accountId: Int64
    var friendId: Int64
    var nickname: String?
    static let primaryKey = ["id"]
    static let indexes: [TableIndex<BKContact>] = [.unique(\.accountId, \.friendId)]
}

struct BKPair: StoredModel, Equatable {
    var region: String
    var number: Int64
    var label: String?
    static let primaryKey = ["region", "number"]
}

struct BKTeam: StoredModel {
    var id: Int64
    var name: String?
    var players: [BKPlayer]?
    @Related var coach: BKCoach?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<BKTeam>] = [
        .toMany(\.players, inverse: \BKPlayer.team, deleteRule: .cascade),
        .toOne(\.coach, inverse: \BKCoach.team, deleteRule: .nullify),
    ]
}

struct BKPlayer: StoredModel {
    var id: Int64
    var name: String?
    var score: Double?
    @Related var team: BKTeam?
    var skills: [BKSkill]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<BKPlayer>] = [
        .toOne(\.team, inverse: \BKTeam.players),
        .toMany(\.skills, inverse: \BKSkill.players),
    ]
}

struct BKCoach: StoredModel {
    var id: Int64
    var name: String?
    @Related var team: BKTeam?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<BKCoach>] = [.toOne(\.team, inverse: \BKTeam.coach)]
}

struct BKSkill: StoredModel {
    var id: Int64
    var title: String?
    var players: [BKPlayer]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<BKSkill>] = [.toMany(\.players, inverse: \BKPlayer.skills)]
}

/// A chain that loops back on itself, for cycle-safe loading.
struct BKNode: StoredModel {
    var id: Int64
    @Related var next: BKNode?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<BKNode>] = [.toOne(\.next)]
}

struct BKSummary: Decodable, Sendable, Equatable {
    var snackId: Int64
    var name: String?
}

@Suite("Shared behaviour, on every backend")
struct SharedBehaviourTests {
    @Test(arguments: Backend.available)
    func saveMergesNilKeepsStoredAndClearingIsExplicit(_ backend: Backend) throws {
        let test = try BackendStore(backend)
        let store = test.store
        try BKSnack(snackId: 1, name: "Pocky", price: 2.5, taste: "sweet", size: 3).save(in: store)
        try BKSnack(snackId: 1, price: 1.5).save(in: store)
        var found = try #require(try BKSnack.find(key: 1, in: store))
        #expect(found.name == "Pocky")
        #expect(found.price == 1.5)
        #expect(found.size == 3)
        try BKSnack(snackId: 1).save(clearing: [\.name], in: store)
        found = try #require(try BKSnack.find(key: 1, in: store))
        #expect(found.name == nil)
        #expect(found.price == 1.5)
    }

    @Test(arguments: Backend.available)
    func everyStoredTypeComesBackExactly(_ backend: Backend) throws {
        let test = try BackendStore(backend)
        let date = Date(timeIntervalSince1970: 1_714_564_800.123_456_7)
        let uuid = UUID()
        let snack = BKSnack(
            snackId: .max, name: "naïve ☕️ 'quoted' \"double\" \\ back", price: -0.1, taste: "", size: .min,
            code: Data([0, 1, 2, 255, 0]), cost: Decimal(string: "12345678901234567890.123456789"), madeOn: date, batch: uuid,
            tags: ["a", "b,c", "\"d\""])
        try snack.save(in: test.store)
        let found = try #require(try BKSnack.find(key: Int64.max, in: test.store))
        #expect(found == snack)
        #expect(try BKSnack.find(key: 1, in: test.store) == nil)
    }

    @Test(arguments: Backend.available)
    func insertRefusesAnExistingKeyAndUpdateAMissingOne(_ backend: Backend) throws {
        let test = try BackendStore(backend)
        try BKSnack(snackId: 1, name: "a").insert(in: test.store)
        #expect { try BKSnack(snackId: 1, name: "b").insert(in: test.store) } throws: { ($0 as? ModelStoreError)?.code == .alreadyExists }
        #expect { try BKSnack(snackId: 2, name: "b").update(in: test.store) } throws: { ($0 as? ModelStoreError)?.code == .notFound }
        try BKSnack(snackId: 1, name: "c").update(in: test.store)
        #expect(try BKSnack.find(key: 1, in: test.store)?.name == "c")
        #expect(try BKSnack.count(in: test.store) == 1)
    }

    @Test(arguments: Backend.available)
    func batchSaveDedupesByKeyAndMergesLikeSave(_ backend: Backend) throws {
        let test = try BackendStore(backend)
        let first = (1...500).map { BKSnack(snackId: Int64($0), name: "n\($0)", price: Double($0)) }
        _ = try BKSnack.save(first, in: test.store)
        // The same key twice in one batch: the later one wins; nil keeps what is stored.
        _ = try BKSnack.save(
            [BKSnack(snackId: 7, name: "first"), BKSnack(snackId: 7, taste: "sour"), BKSnack(snackId: 501, name: "new")], in: test.store)
        #expect(try BKSnack.count(in: test.store) == 501)
        let seven = try #require(try BKSnack.find(key: 7, in: test.store))
        #expect(seven.taste == "sour")
        #expect(seven.price == 7)
        // Re-saving the same values changes nothing.
        _ = try BKSnack.save(first, in: test.store)
        #expect(try BKSnack.count(in: test.store) == 501)
    }

    @Test(arguments: Backend.available)
    func batchWithMatchKeysFindsRecordsByTheirValues(_ backend: Backend) throws {
        let test = try BackendStore(backend)
        _ = try BKContact.save(
            [BKContact(id: 1, accountId: 1, friendId: 2, nickname: "a"), BKContact(id: 2, accountId: 1, friendId: 3, nickname: "b")],
            matching: MatchKeys(shared: [\.accountId], varying: [\.friendId]), in: test.store)
        _ = try BKContact.save(
            [BKContact(id: 10, accountId: 1, friendId: 2, nickname: "A"), BKContact(id: 11, accountId: 1, friendId: 4, nickname: "c")],
            matching: MatchKeys(shared: [\.accountId], varying: [\.friendId]), in: test.store)
        let all = try BKContact.all().order(.ascending(\.friendId)).findAll(in: test.store)
        #expect(all.map(\.nickname) == ["A", "b", "c"])
        #expect(Set(all.compactMap(\.id)).count == 3)
    }

    @Test(arguments: Backend.available)
    func assignedKeysAreReadBackAndUniqueIndexesMerge(_ backend: Backend) throws {
        let test = try BackendStore(backend)
        var contact = BKContact(accountId: 9, friendId: 1, nickname: "x")
        try contact.save(in: test.store)
        let saved = try #require(try BKContact.findFirst(where: \.accountId == 9, in: test.store))
        #expect(saved.id != nil)
        contact.nickname = "y"
        try contact.save(in: test.store)  // no key: the unique index finds the record
        #expect(try BKContact.count(in: test.store) == 1)
        #expect(try BKContact.find(key: saved.id!, in: test.store)?.nickname == "y")
    }

    @Test(arguments: Backend.available)
    func compositeKeysFindSaveAndDelete(_ backend: Backend) throws {
        let test = try BackendStore(backend)
        _ = try BKPair.save([BKPair(region: "eu", number: 1, label: "a"), BKPair(region: "us", number: 1, label: "b")], in: test.store)
        #expect(try BKPair.find(key: ["region": "eu", "number": 1], in: test.store)?.label == "a")
        _ = try BKPair.delete(key: ["region": "us", "number": 1], in: test.store)
        #expect(try BKPair.count(in: test.store) == 1)
    }

    @Test(arguments: Backend.available)
    func conditionsOrderingAndPaging(_ backend: Backend) throws {
        let test = try BackendStore(backend)
        let store = test.store
        _ = try BKSnack.save(
            (1...30).map {
                BKSnack(
                    snackId: Int64($0), name: $0 % 3 == 0 ? nil : "Snack \($0)", price: Double($0) / 2,
                    taste: $0.isMultiple(of: 2) ? "sweet" : "salty")
            }, in: store)
        #expect(try BKSnack.count(where: \.taste == "sweet", in: store) == 15)
        #expect(try BKSnack.count(where: \.name == nil, in: store) == 10)
        #expect(try BKSnack.count(where: \.name != "Snack 1", in: store) == 29)  // NULLs included, as Swift's !=
        #expect(try BKSnack.count(where: \.price > 10 && \.taste == "salty", in: store) == 5)
        #expect(try BKSnack.count(where: .in(\.snackId, [1, 2, 3, 99]), in: store) == 3)
        #expect(try BKSnack.count(where: .in(\.snackId, (1...900).map { Int64($0) }), in: store) == 30)
        #expect(try BKSnack.count(where: .contains(\.name, "nack 2"), in: store) == 8)
        #expect(try BKSnack.count(where: .hasPrefix(\.name, "Snack 1"), in: store) == 8)
        #expect(try BKSnack.count(where: .hasSuffix(\.name, "5"), in: store) == 2)
        let page = try BKSnack.filter(\.taste == "sweet").order(.descending(\.price)).page(1, rows: 4).findAll(in: store)
        #expect(page.map(\.snackId) == [22, 20, 18, 16])
        let first = try BKSnack.findFirst(where: \.taste == "salty", orderBy: [.ascending(\.price)], in: store)
        #expect(first?.snackId == 1)
    }

    @Test(arguments: Backend.available)
    func aggregatesAndProjections(_ backend: Backend) throws {
        let test = try BackendStore(backend)
        let store = test.store
        _ = try BKSnack.save(
            (1...10).map { BKSnack(snackId: Int64($0), name: "s\($0)", price: Double($0), size: $0, cost: Decimal($0) / 10) }, in: store)
        #expect(try BKSnack.all().sum(\.size, in: store) == 55)
        #expect(try BKSnack.all().sum(\.price, in: store) == 55.0)
        #expect(try BKSnack.filter(\.size > 5).max(\.price, in: store) == 10.0)
        #expect(try BKSnack.all().min(\.size, in: store) == 1)
        #expect(try BKSnack.all().average(\.size, in: store) == 5.5)
        #expect(try BKSnack.all().sum(\.cost, in: store) == Decimal(string: "5.5"))
        let summaries = try BKSnack.filter(\.size <= 2).order(.ascending(\.snackId)).findAll(as: BKSummary.self, in: store)
        #expect(summaries == [BKSummary(snackId: 1, name: "s1"), BKSummary(snackId: 2, name: "s2")])
    }

    @Test(arguments: Backend.available)
    func updateAllAndDeleteAllChangeExactlyTheirRecords(_ backend: Backend) throws {
        let test = try BackendStore(backend)
        let store = test.store
        _ = try BKSnack.save((1...20).map { BKSnack(snackId: Int64($0), price: Double($0), taste: $0 <= 10 ? "sweet" : "sour") }, in: store)
        #expect(try BKSnack.updateAll(where: \.taste == "sweet", set: [.set(\.price, to: 0.5)], in: store) == 10)
        #expect(try BKSnack.count(where: \.price == 0.5, in: store) == 10)
        // A sorted, paged update touches only its page.
        #expect(
            try BKSnack.filter(\.taste == "sour").order(.descending(\.price)).page(0, rows: 3).updateAll(.set(\.name, to: "top"), in: store)
                == 3)
        #expect(try BKSnack.findAll(where: \.name == "top", in: store).map(\.snackId).sorted() == [18, 19, 20])
        #expect(try BKSnack.deleteAll(where: \.price < 5, in: store) == 10)
        #expect(try BKSnack.deleteAll(where: \.price < 5, in: store) == 0)
        #expect(try BKSnack.count(in: store) == 10)
    }

    @Test(arguments: Backend.available)
    func graphSaveLoadsInBulkAndDeleteRulesApply(_ backend: Backend) throws {
        let test = try BackendStore(backend)
        let store = test.store
        let fast = BKSkill(id: 1, title: "fast")
        let strong = BKSkill(id: 2, title: "strong")
        var team = BKTeam(id: 1, name: "Rockets")
        team.players = [
            BKPlayer(id: 1, name: "Ann", score: 12, skills: [fast, strong]),
            BKPlayer(id: 2, name: "Bo", skills: [fast]),
        ]
        team.coach = BKCoach(id: 1, name: "Cy")
        try team.save(in: store)
        let loaded = try #require(try BKTeam.find(key: 1, loading: .direct, in: store))
        #expect(loaded.players?.map(\.id).sorted() == [1, 2])
        #expect(loaded.coach?.name == "Cy")
        let ann = try #require(try BKPlayer.find(key: 1, loading: .direct, in: store))
        #expect(ann.skills?.map(\.id).sorted() == [1, 2])
        #expect(ann.team?.id == 1)
        #expect(try BKPlayer.count(where: .related(\.team, \.name == "Rockets"), in: store) == 2)
        #expect(try BKSkill.find(key: 1, loading: .direct, in: store)?.players?.count == 2)
        // Cascade deletes the players; nullify unlinks the coach.
        _ = try BKTeam.delete(key: 1, in: store)
        #expect(try BKPlayer.count(in: store) == 0)
        #expect(try BKCoach.find(key: 1, loading: .direct, in: store)?.team == nil)
        #expect(try BKSkill.count(in: store) == 2)
    }

    @Test(arguments: Backend.available)
    func cyclesLoadOnceAndDeepChainsLoad(_ backend: Backend) throws {
        let test = try BackendStore(backend)
        let store = test.store
        _ = try BKNode.save((1...200).map { BKNode(id: Int64($0)) }, in: store)
        // Link each node to the next, and the last back to the first.
        for id in 1...200 {
            var node = BKNode(id: Int64(id))
            node.next = BKNode(id: Int64(id % 200 + 1))
            try node.save(in: store)
        }
        let first = try #require(try BKNode.find(key: 1, loading: .all, in: store))
        var seen = 1
        var current = first.next
        while let node = current, node.id != 1, seen < 500 {
            seen += 1
            current = node.next
        }
        #expect(seen == 200)
    }

    @Test(arguments: Backend.available)
    func aFailedTransactionLeavesTheStoreAsItWas(_ backend: Backend) throws {
        let test = try BackendStore(backend)
        let store = test.store
        try BKSnack(snackId: 1, name: "kept").save(in: store)
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try store.transaction { () throws -> Void in
                try BKSnack(snackId: 1, name: "changed").save(in: store)
                try BKSnack(snackId: 2, name: "added").save(in: store)
                throw Stop()
            }
        }
        #expect(try BKSnack.find(key: 1, in: store)?.name == "kept")
        #expect(try BKSnack.count(in: store) == 1)
        // A constraint failing mid-batch writes nothing of it.
        try BKContact(accountId: 1, friendId: 1).insert(in: store)
        #expect(throws: ModelStoreError.self) {
            _ = try store.transaction { () throws -> Int in
                try BKSnack(snackId: 3, name: "x").save(in: store)
                try BKContact(id: 99, accountId: 1, friendId: 1).insert(in: store)
                return 0
            }
        }
        #expect(try BKSnack.find(key: 3, in: store) == nil)
        // And the store goes on working.
        try BKSnack(snackId: 4, name: "after").save(in: store)
        #expect(try BKSnack.count(in: store) == 2)
    }

    @Test(arguments: Backend.available)
    func completionAndAsyncFormsAgreeWithTheSyncForm(_ backend: Backend) async throws {
        let test = try BackendStore(backend)
        let store = test.store
        try await BKSnack(snackId: 1, name: "async").save(in: store)
        let found = try await BKSnack.find(key: 1, in: store)
        #expect(found?.name == "async")
        let counted: Int = try await withCheckedThrowingContinuation { continuation in
            BKSnack.count(in: store) { continuation.resume(with: $0.mapError { $0 as any Error }) }
        }
        #expect(counted == 1)
        _ = try await store.transaction {
            try BKSnack(snackId: 2, name: "in a block").save(in: store)
        }
        #expect(try await BKSnack.count(in: store) == 2)
    }

    @Test(arguments: Backend.available)
    func concurrentWritersLoseNothing(_ backend: Backend) throws {
        let test = try BackendStore(backend)
        let store = test.store
        onThreads(8) { worker in
            for round in 0..<25 {
                let id = Int64(worker * 1000 + round)
                _ = try? BKSnack(snackId: id, name: "w\(worker)", size: round).save(in: store)
                let found: BKSnack?? = try? BKSnack.find(key: id, in: store)
                _ = found
            }
        }
        #expect(try BKSnack.count(in: store) == 200)
    }

    @Test(arguments: Backend.available)
    func traceSeesEveryStatement(_ backend: Backend) throws {
        let test = try BackendStore(backend)
        let seen = Collected<String>()
        test.store.setTrace { seen.add($0) }
        try BKSnack(snackId: 1, name: "traced").save(in: test.store)
        _ = try BKSnack.find(key: 1, in: test.store)
        test.store.setTrace(nil)
        #expect(seen.current.contains { $0.contains("INSERT INTO \"BKSnack\"") })
        #expect(seen.current.contains { $0.hasPrefix("SELECT") && $0.contains("\"BKSnack\"") })
    }

    @Test(arguments: Backend.available)
    func liveQueriesAndChangeStreamsHearEachCommitWithItsKeys(_ backend: Backend) throws {
        let test = try BackendStore(backend)
        let store = test.store
        let results = Collected<Result<Int, ModelStoreError>>()
        let token = store.observe({ try BKSnack.count(in: store) }) { results.add($0) }
        #expect(eventually { !results.current.isEmpty })
        let changes = Collected<ModelChanges<BKSnack>>()
        let stream = try store.changes(of: BKSnack.self) { changes.add($0) }
        try BKSnack(snackId: 1, name: "written while observed").save(in: store)
        #expect(try BKSnack.count(in: store) == 1)
        #expect(eventually { results.current.contains { (try? $0.get()) == 1 } }, "\(results.current)")
        #expect(eventually { !changes.current.isEmpty })
        #expect(changes.current.first?.keysAreKnown == true)
        #expect(try changes.current.first?.keys(\.inserted, as: Int64.self) == [1])
        stream.cancel()
        withExtendedLifetime(token) {}
    }

    @Test(arguments: Backend.available) func aSecondStoreUsesTheTablesAndJoinTablesTheFirstMade(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        var team = BKTeam(id: 1, name: "Rockets")
        team.players = [BKPlayer(id: 1, name: "Ann", skills: [BKSkill(id: 1, title: "fast")])]
        team.coach = BKCoach(id: 1, name: "Cy")
        try team.save(in: test.store)
        // Another process's store on the same tables: it checks them (join tables included)
        // and writes and reads through them.
        let second = try test.later()
        defer { try? second.close() }
        var other = BKTeam(id: 2, name: "Comets")
        other.players = [BKPlayer(id: 2, name: "Bo", skills: [BKSkill(id: 1, title: "fast"), BKSkill(id: 2, title: "tall")])]
        try other.save(in: second)
        #expect(try BKPlayer.count(in: second) == 2)
        #expect(try BKSkill.find(key: 1, loading: .direct, in: second)?.players?.count == 2)
        #expect(try BKTeam.find(key: 1, loading: .direct, in: second)?.coach?.name == "Cy")
        #expect(try BKSkill.count(in: test.store) == 2)
    }
}
