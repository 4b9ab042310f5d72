import Foundation
import Testing
@testable import ModelStore

private struct NotAnEmail: Error, Equatable {
    let value: String
}

private struct Member: StoredModel, Equatable {
    var id: Int64
    var name: String
    var age: Int
    var email: String?
    var createdAt: Date?
    var updatedAt: Date?
    static let primaryKey = ["id"]
    static let timestamps = Timestamps<Member>(created: \.createdAt, updated: \.updatedAt)

    func validate() throws {
        guard (0...150).contains(age) else { throw ValidationError("must be between 0 and 150", property: "age") }
        if let email, !email.contains("@") { throw NotAnEmail(value: email) }
    }
}

private struct Guild: StoredModel, Equatable {
    var id: Int64
    var name: String
    var knights: [Knight]?
    var createdAt: Date?
    var updatedAt: Date?
    static let primaryKey = ["id"]
    static let timestamps = Timestamps<Guild>(created: \.createdAt, updated: \.updatedAt)
    static let relationships: [Relationship<Guild>] = [.toMany(\.knights, inverse: \Knight.guild, deleteRule: .cascade)]
}

private struct Knight: StoredModel, Equatable {
    var id: Int64
    var name: String
    var guild: Guild?
    var updatedAt: Date = .distantPast
    static let primaryKey = ["id"]
    static let timestamps = Timestamps<Knight>(updated: \.updatedAt)
    static let relationships: [Relationship<Knight>] = [.toOne(\.guild, inverse: \Guild.knights)]

    func validate() throws {
        guard !name.isEmpty else { throw ValidationError("must not be empty", property: "name") }
    }
}

/// A timestamp on a key property: the store would change the record's identity.
private struct NotStamped: StoredModel {
    var id: Int64
    var createdAt: Date?
    static let primaryKey = ["id"]
    static let timestamps = Timestamps<NotStamped>(created: \.createdAt)
}

private struct BadStamp: StoredModel {
    var id: Date
    var name: String
    static let primaryKey = ["id"]
    static let timestamps = Timestamps<BadStamp>(created: \.id)
}

/// `validate()` on every write path, and `Timestamps` stamped on every write path.
@Suite struct ValidationAndTimestampTests {
    /// A save that stamps `updated` takes its date before it writes: in READ COMMITTED, one
    /// that waited for another store's row would write its older date over the newer one. So
    /// it stays serializable on a server (a conflict runs it again, with a later date), while
    /// a model that only writes given values is saved by upserts alone.
    @Test func aModelThatStampsItsChangesIsSavedSerializablyOnAServer() {
        #expect(Member.saveIsolation == .serializable)
        #expect(Knight.saveIsolation == .serializable)
        #expect(NotStamped.saveIsolation == .upserts)
    }

    private func member(_ id: Int64, age: Int = 30, email: String? = nil) -> Member {
        Member(id: id, name: "m\(id)", age: age, email: email)
    }

    /// Every write path refuses an invalid model with `.validationFailed` naming model, key and
    /// property, keeping the model's own error; the store is left exactly as it was.
    @Test(arguments: Backend.available) func everyWritePathValidatesAndWritesNothingOnRefusal(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        try member(1).save(in: store)
        let before = try Member.findAll(in: store)
        let bad = member(1, age: 200)
        let paths: [(String, () throws -> Void)] = [
            ("save", { try bad.save(in: store) }),
            ("insert", { try member(2, age: -1).insert(in: store) }),
            ("update", { try bad.update(in: store) }),
            ("saved", { _ = try bad.saved(in: store) }),
            ("batch", { _ = try Member.save([member(3), bad], in: store) }),
            ("match keys", { _ = try Member.save([member(4), bad], matching: MatchKeys(varying: [\Member.name]), in: store) }),
            ("save matching a condition", { try bad.save(matching: \.name == "m1", in: store) }),
            ("save matching properties", { try bad.save(matching: [\Member.name], in: store) }),
            (
                "inside a write block",
                {
                    try store.write { _ in
                        try member(5).save(in: store); try bad.save(in: store)
                    }
                }
            ),
        ]
        for (path, write) in paths {
            let error = #expect(throws: ModelStoreError.self, "\(path)") { try write() }
            #expect(error?.code == .validationFailed, "\(path)")
            #expect(error?.model == "Member", "\(path)")
            #expect(error?.column == "age", "\(path)")
            #expect(error?.key != nil, "\(path)")
            #expect((error?.underlying as? ValidationError)?.reason == "must be between 0 and 150", "\(path)")
            #expect(try Member.findAll(in: store) == before, "\(path) wrote something")
        }
        // A model's own error type survives as `underlying`.
        let email = #expect(throws: ModelStoreError.self) { try member(9, email: "nope").save(in: store) }
        #expect(email?.underlying as? NotAnEmail == NotAnEmail(value: "nope"))
        #expect(email?.key == "id = 9")
    }

    @Test(arguments: Backend.available) func aBatchOfTenThousandWithOneInvalidElementWritesNothingAndNamesIt(_ backend: Backend) throws {
        let test = try TestStore(backend)
        var batch = (1...10_000).map { member(Int64($0)) }
        batch[6_789].age = 151
        let error = #expect(throws: ModelStoreError.self) { _ = try Member.save(batch, in: test.store) }
        #expect(error?.code == .validationFailed)
        #expect(error?.message.contains("Element 6789 of a batch of 10000") == true)
        #expect(error?.key == "id = 6790")
        #expect(error?.column == "age")
        #expect(try Member.count(in: test.store) == 0)
    }

    @Test(arguments: Backend.available) func aGraphSaveValidatesRelatedModelsAndWritesNothingOnRefusal(_ backend: Backend) throws {
        let test = try TestStore(backend)
        var guild = Guild(id: 1, name: "North")
        guild.knights = [Knight(id: 1, name: "Ann"), Knight(id: 2, name: "")]
        let error = #expect(throws: ModelStoreError.self) { try guild.save(in: test.store) }
        #expect(error?.code == .validationFailed)
        #expect(error?.model == "Knight")
        #expect(error?.key == "id = 2")
        #expect(error?.column == "name")
        #expect(try Guild.count(in: test.store) == 0)
        #expect(try Knight.count(in: test.store) == 0)
    }

    @Test(arguments: Backend.available) func timestampsAreSetOnInsertAndMoveOnlyWhenSomethingChanges(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        let start = Date()
        try member(1).save(in: store)
        let inserted = try #require(try Member.find(key: 1, in: store))
        let created = try #require(inserted.createdAt)
        #expect(created >= start.addingTimeInterval(-1) && created <= Date())
        #expect(inserted.updatedAt == created)

        // Unchanged: neither date moves, and the save says so.
        Thread.sleep(forTimeInterval: 0.01)
        #expect(try member(1).saved(in: store) == inserted)
        _ = try Member.save([member(1)], in: store)
        try member(1).update(in: store)
        _ = try Member.save([member(1)], matching: MatchKeys(varying: [\Member.name]), in: store)
        try member(1).save(matching: \.name == "m1", in: store)
        #expect(try Member.find(key: 1, in: store) == inserted)

        // Changed, on every path: the change date moves, the creation date stays.
        let paths: [(String, (Member) throws -> Void)] = [
            ("save", { try $0.save(in: store) }),
            ("update", { try $0.update(in: store) }),
            ("batch", { _ = try Member.save([$0], in: store) }),
            ("match keys", { _ = try Member.save([$0], matching: MatchKeys(varying: [\Member.name]), in: store) }),
            ("save matching", { try $0.save(matching: \.name == "m1", in: store) }),
        ]
        var age = 30
        var last = try #require(inserted.updatedAt)
        for (path, write) in paths {
            Thread.sleep(forTimeInterval: 0.01)
            age += 1
            var changed = member(1, age: age)
            changed.createdAt = nil
            try write(changed)
            let stored = try #require(try Member.find(key: 1, in: store))
            #expect(stored.age == age, "\(path)")
            #expect(stored.createdAt == created, "\(path) moved the creation date")
            #expect(try #require(stored.updatedAt) > last, "\(path) did not move the change date")
            last = try #require(stored.updatedAt)
        }
    }

    @Test(arguments: Backend.available) func oneTransactionStampsEveryRecordWithOneDate(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        _ = try Member.save((1...500).map { member(Int64($0)) }, in: store)
        let dates = Set(try Member.findAll(in: store).map(\.updatedAt))
        #expect(dates.count == 1)
        try store.write { _ in
            try member(600).save(in: store)
            Thread.sleep(forTimeInterval: 0.01)
            try member(601).save(in: store)
        }
        #expect(try Member.find(key: 600, in: store)?.createdAt == Member.find(key: 601, in: store)?.createdAt)
        // Separate calls are separate transactions, with their own dates.
        Thread.sleep(forTimeInterval: 0.01)
        try member(700).save(in: store)
        #expect(try Member.find(key: 700, in: store)?.createdAt != Member.find(key: 600, in: store)?.createdAt)
        // A graph is one transaction too.
        var guild = Guild(id: 1, name: "North")
        guild.knights = [Knight(id: 1, name: "Ann"), Knight(id: 2, name: "Bo")]
        try guild.save(in: store)
        let stamped = try #require(try Guild.find(key: 1, in: store)?.updatedAt)
        #expect(try Knight.findAll(in: store).allSatisfy { $0.updatedAt == stamped })
    }

    @Test(arguments: Backend.available) func aCreationDateTheModelCarriesIsKept(_ backend: Backend) throws {
        let test = try TestStore(backend)
        var imported = member(1)
        imported.createdAt = Date(timeIntervalSince1970: 1_000_000)
        try imported.save(in: test.store)
        let stored = try #require(try Member.find(key: 1, in: test.store))
        #expect(stored.createdAt == Date(timeIntervalSince1970: 1_000_000))
        #expect(stored.updatedAt != stored.createdAt)
    }

    @Test(arguments: Backend.available) func aTimestampMustNameAStoredDateProperty(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let error = #expect(throws: ModelStoreError.self) { try BadStamp(id: Date(), name: "x").save(in: test.store) }
        #expect(error?.code == .invalidModel)
        #expect(error?.column == "id")
    }

    @Test(arguments: Backend.available) func asyncAndCompletionFormsValidateToo(_ backend: Backend) async throws {
        let test = try TestStore(backend)
        let store = test.store
        let bad = Member(id: 1, name: "x", age: 999)
        let viaAsync = await #expect(throws: ModelStoreError.self) { try await bad.save(in: store) }
        #expect(viaAsync?.code == .validationFailed)
        let viaCompletion: Result<SaveOutcome, ModelStoreError> = await withCheckedContinuation { continuation in
            bad.save(in: store) { continuation.resume(returning: $0) }
        }
        #expect(throws: ModelStoreError.self) { try viaCompletion.get() }
        #expect(try await Member.count(in: store) == 0)
    }
}
