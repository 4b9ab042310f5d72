import Foundation
import Testing
@testable import ModelStore

// Adversarial tests of the model lifecycle (issue 16): validation, timestamps and callbacks on
// every write path. Each test asserts a documented promise. A test marked `// FINDING:` failed
// when written (the comment says what was expected and what happened then); each was fixed in
// the same change, and every test here now passes.

private struct Boom: Error, Equatable {
    let reason: String
}

/// What callbacks did, written through the store (so it commits or rolls back with the call).
private struct Trail: StoredModel, Equatable {
    var id: Int64?
    var what: String
    static let primaryKey = ["id"]
}

/// Timestamps, no callbacks: the stamp is the only non-key column besides one optional.
private struct Memo: StoredModel, Equatable {
    var id: Int64
    var note: String?
    var createdAt: Date?
    var updatedAt: Date?
    static let primaryKey = ["id"]
    static let timestamps = Timestamps<Memo>(created: \.createdAt, updated: \.updatedAt)
}

/// Save callbacks whose behaviour the model's name picks.
private struct Tally: StoredModel, Equatable {
    var id: Int64
    var name: String
    var createdAt: Date?
    var updatedAt: Date?
    static let primaryKey = ["id"]
    static let timestamps = Timestamps<Tally>(created: \.createdAt, updated: \.updatedAt)
}

extension Tally: SaveCallbacks {
    func willSave(in store: ModelStore) throws {
        try Trail(id: nil, what: "will \(id) \(name)").save(in: store)
        switch name {
        case "spawn":
            // Re-enters the store with another record of the same type, mid-batch.
            try Tally(id: id + 1000, name: "shadow").save(in: store)
        case "store-error":
            throw ModelStoreError(.invalidQuery, "a callback's own store error")
        case "calls":
            // Every call form, from inside the writer.
            _ = try Tally.count(in: store)
            _ = try store.read { try Trail.count(in: store) }
            _ = try store.transaction { try Trail(id: nil, what: "nested transaction").save(in: store) }
            Trail(id: nil, what: "completion form").save(in: store) { _ in }
        default: break
        }
    }

    func didSave(in store: ModelStore, outcome: SaveOutcome) throws {
        try Trail(id: nil, what: "did \(id) \(name) \(outcome)").save(in: store)
        switch name {
        case "boom": throw Boom(reason: "didSave refused")
        case "memo": try Memo(id: id, note: "from didSave").save(in: store)
        default: break
        }
    }
}

/// `validate()` throwing a ModelStoreError of its own.
private struct Strict: StoredModel, Equatable {
    var id: Int64
    var code: String
    static let primaryKey = ["id"]

    func validate() throws {
        if code == "reserved" { throw ModelStoreError(.invalidQuery, "code is reserved", column: "code") }
    }
}

/// Plain model with delete callbacks whose behaviour `note` picks.
private struct Bulb: StoredModel, Equatable {
    var id: Int64
    var lit: Bool
    var note: String?
    static let primaryKey = ["id"]
}

extension Bulb: DeleteCallbacks {
    func willDelete(in store: ModelStore) throws {
        try Trail(id: nil, what: "willDelete \(id)").save(in: store)
        switch note {
        case "spawn": try Bulb(id: 100, lit: true).save(in: store)
        case "unlight 2": try Bulb(id: 2, lit: false).save(in: store)
        case "spawn first": try Bulb(id: 1, lit: true).save(in: store)
        default: break
        }
    }

    func didDelete(in store: ModelStore) throws {
        let stillStored = try Bulb.find(key: id, in: store) != nil
        try Trail(id: nil, what: "didDelete \(id)\(stillStored ? " STILL STORED" : "")").save(in: store)
    }
}

/// `Bulb` on the graph path: a many-to-many whose default nullify only drops join rows, so
/// its deletes need no list of their own — except the one callbacks fix.
private struct Lantern: StoredModel, Equatable {
    var id: Int64
    var lit: Bool
    var note: String?
    var hooks: [Hook]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Lantern>] = [.toMany(\.hooks, inverse: \Hook.lanterns)]
}

private struct Hook: StoredModel, Equatable {
    var id: Int64
    var lanterns: [Lantern]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Hook>] = [.toMany(\.lanterns, inverse: \Lantern.hooks)]
}

extension Lantern: DeleteCallbacks {
    func willDelete(in store: ModelStore) throws {
        try Trail(id: nil, what: "willDelete \(id)").save(in: store)
        if note == "unlight 2" { try Lantern(id: 2, lit: false).save(in: store) }
    }

    func didDelete(in store: ModelStore) throws {
        let stillStored = try Lantern.find(key: id, in: store) != nil
        try Trail(id: nil, what: "didDelete \(id)\(stillStored ? " STILL STORED" : "")").save(in: store)
    }
}

/// Graph model with a cascade rule whose willDelete deletes other records of its type by condition.
private struct Keep: StoredModel, Equatable {
    var id: Int64
    var name: String
    var rooms: [Room]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Keep>] = [.toMany(\.rooms, inverse: \Room.keep, deleteRule: .cascade)]
}

private struct Room: StoredModel, Equatable {
    var id: Int64
    var name: String
    @Related var keep: Keep?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Room>] = [.toOne(\.keep, inverse: \Keep.rooms)]
}

extension Keep: DeleteCallbacks {
    func willDelete(in store: ModelStore) throws {
        if name == "main" { _ = try Keep.deleteAll(where: \.name == "annex", in: store) }
    }
}

/// Self-relationship with validation and callbacks, for deep graphs and cycles.
private struct Boss: StoredModel, Equatable {
    var id: Int64
    var name: String
    @Related var manager: Boss?
    var reports: [Boss]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Boss>] = [
        .toOne(\.manager, inverse: \Boss.reports),
        .toMany(\.reports, inverse: \Boss.manager),
    ]

    func validate() throws {
        if name == "bad" { throw ValidationError("must not be bad", property: "name") }
    }
}

extension Boss: SaveCallbacks {
    func willSave(in store: ModelStore) throws { try Trail(id: nil, what: "will boss \(id)").save(in: store) }
}

/// Assigned key and a unique index: upserts that land on another record.
private struct Account: StoredModel, Equatable {
    var id: Int64?
    var email: String
    var name: String
    var createdAt: Date?
    var updatedAt: Date?
    static let primaryKey = ["id"]
    static let indexes: [TableIndex<Account>] = [.unique(\.email)]
    static let timestamps = Timestamps<Account>(created: \.createdAt, updated: \.updatedAt)
}

/// Declared date storage for the timestamp columns.
private struct Ledger: StoredModel, Equatable {
    var id: Int64
    var amount: Int
    var createdAt: Date?
    var updatedAt: Date?
    static let primaryKey = ["id"]
    static let columnStorage: [ColumnStorage<Ledger>] = [.date(\.createdAt, as: .iso8601), .date(\.updatedAt, as: .unixSeconds)]
    static let timestamps = Timestamps<Ledger>(created: \.createdAt, updated: \.updatedAt)
}

/// Non-optional timestamp properties.
private struct Entry: StoredModel, Equatable {
    var id: Int64
    var text: String
    var createdAt: Date = .distantPast
    var updatedAt: Date = .distantPast
    static let primaryKey = ["id"]
    static let timestamps = Timestamps<Entry>(created: \.createdAt, updated: \.updatedAt)
}

/// Composite key with a change date.
private struct Pair: StoredModel, Equatable {
    var a: String
    var b: Int64
    var value: String
    var updatedAt: Date?
    static let primaryKey = ["a", "b"]
    static let timestamps = Timestamps<Pair>(updated: \.updatedAt)
}

/// save(matching:updatingAll:) over several records.
private struct Job: StoredModel, Equatable {
    var id: Int64
    var group: String
    var state: String
    var createdAt: Date?
    var updatedAt: Date?
    static let primaryKey = ["id"]
    static let timestamps = Timestamps<Job>(created: \.createdAt, updated: \.updatedAt)
}

extension Job: SaveCallbacks {
    func didSave(in store: ModelStore, outcome: SaveOutcome) throws {
        try Trail(id: nil, what: "did job \(id) \(outcome)").save(in: store)
    }
}

private func trail(_ store: ModelStore) throws -> [String] {
    try Trail.all().order(.ascending(\.id)).findAll(in: store).map(\.what)
}

private func tick() { Thread.sleep(forTimeInterval: 0.03) }

// Serialized: the async test of every call form from inside callbacks has a time limit of a minute, which side by side
// with the rest of the suite and a full run on two cores it overran; the 10,000-record batch runs in a suite of its own
// (LifecycleBatchAttackTests), so a full run does not wait for it at the end of this one.
@Suite(.serialized) struct LifecycleAttackTests {
    // MARK: Timestamps

    /// An upsert whose only written non-key value is the stamp changes nothing.
    @Test(arguments: Backend.available) func anUnchangedUpsertCarryingOnlyTheStampKeepsTheChangeDate(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        try Memo(id: 1, note: "a").save(in: store)
        let before = try #require(try Memo.find(key: 1, in: store))
        tick()
        #expect(try Memo(id: 1, note: nil).save(in: store) == .unchanged)
        #expect(try Memo.find(key: 1, in: store) == before)
    }

    /// `update()` of a model that carries no value but the key (its optionals nil) changes
    /// nothing, so the change date must not move.
    @Test(arguments: Backend.available) func anUpdateThatWritesOnlyTheStampDoesNotMoveTheChangeDate(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        try Memo(id: 1, note: "a").save(in: store)
        let before = try #require(try Memo.find(key: 1, in: store))
        tick()
        try Memo(id: 1, note: nil).update(in: store)
        let after = try #require(try Memo.find(key: 1, in: store))
        // FINDING: expected updatedAt unchanged (nothing changed); actual: it moves, because the
        // UPDATE's shape is only the stamp column, and `updateByKey` guards the stamp with
        // "changed" only when the shape has more than one column.
        #expect(after.updatedAt == before.updatedAt)
        #expect(after.note == "a")
        #expect(after.createdAt == before.createdAt)
    }

    /// save(matching:) (condition and properties) has the same single-column UPDATE.
    @Test(arguments: Backend.available) func saveMatchingThatChangesNothingDoesNotMoveTheChangeDate(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        try Memo(id: 1, note: "a").save(in: store)
        let before = try #require(try Memo.find(key: 1, in: store))
        tick()
        try Memo(id: 1, note: nil).save(matching: \.id == 1, in: store)
        // FINDING: expected updatedAt unchanged; actual: moved (single-column UPDATE of the stamp).
        #expect(try Memo.find(key: 1, in: store)?.updatedAt == before.updatedAt)
        tick()
        try Memo(id: 1, note: nil).save(matching: [\Memo.id], updatingAll: true, in: store)
        // FINDING: same, through save(matching: properties, updatingAll: true).
        #expect(try Memo.find(key: 1, in: store)?.updatedAt == before.updatedAt)
    }

    /// A transaction that rolls back forgets its date; the next one takes a new one.
    @Test(arguments: Backend.available) func aRolledBackTransactionDoesNotLeakItsDateIntoTheNextOne(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        #expect(throws: Boom.self) {
            try store.transaction {
                try Memo(id: 1, note: "a").save(in: store)
                throw Boom(reason: "roll back")
            }
        }
        #expect(try Memo.count(in: store) == 0)
        tick()
        let start = Date()
        try Memo(id: 2, note: "b").save(in: store)
        let stamp = try #require(try Memo.find(key: 2, in: store)?.createdAt)
        #expect(stamp.timeIntervalSince(start) > -0.005)
    }

    /// One date per transaction, also for the records callbacks write.
    @Test(arguments: Backend.available) func aCallbacksWritesShareTheTransactionsDate(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        try store.transaction {
            try Tally(id: 1, name: "memo").save(in: store)
            tick()
            try Tally(id: 2, name: "memo").save(in: store)
        }
        let tallies = try Tally.findAll(in: store)
        let memos = try Memo.findAll(in: store)
        let dates = Set((tallies.map(\.createdAt) + tallies.map(\.updatedAt) + memos.map(\.createdAt) + memos.map(\.updatedAt)))
        #expect(tallies.count == 2 && memos.count == 2)
        #expect(dates.count == 1)
        #expect(!dates.contains(nil))
    }

    /// A unique-index conflict updates the stored record: its creation date stays, the change
    /// date moves, and an unchanged re-save moves nothing — with an assigned key and without.
    @Test(arguments: Backend.available) func aUniqueIndexUpsertKeepsTheCreationDate(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        try Account(id: nil, email: "a@x", name: "A").save(in: store)
        let first = try #require(try Account.findFirst(where: \.email == "a@x", in: store))
        tick()
        #expect(try Account(id: nil, email: "a@x", name: "B").save(in: store) == .updated)
        let second = try #require(try Account.findFirst(where: \.email == "a@x", in: store))
        #expect(try Account.count(in: store) == 1)
        #expect(second.id == first.id)
        #expect(second.createdAt == first.createdAt)
        #expect(second.updatedAt! > first.updatedAt!)
        tick()
        #expect(try Account(id: 77, email: "a@x", name: "C").save(in: store) == .updated)
        let third = try #require(try Account.findFirst(where: \.email == "a@x", in: store))
        #expect(try Account.count(in: store) == 1)
        #expect(third.createdAt == first.createdAt)
        tick()
        let unchanged = try Account(id: nil, email: "a@x", name: "C").saved(in: store)
        #expect(unchanged.createdAt == first.createdAt)
        #expect(unchanged.updatedAt == third.updatedAt)
        #expect(unchanged.id == first.id)
        // insert() is refused, and does not touch the dates.
        #expect(throws: ModelStoreError.self) { try Account(id: nil, email: "a@x", name: "D").insert(in: store) }
        #expect(try Account.findFirst(where: \.email == "a@x", in: store) == third)
    }

    /// Declared storage for the timestamp columns: the stamp is stored in the declared form,
    /// reads back as the same moment, and an unchanged save keeps it.
    @Test(arguments: Backend.available) func declaredDateStorageForTimestampsRoundTrips(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        let start = Date()
        // FINDING: expected the save to stamp the dates in their declared forms; actual: every save of
        // the model throws `.encodingFailed` ("iso8601 holds 3 digits after the seconds, and rounding
        // would change the date"): the stamp is the raw transaction Date (sub-millisecond), which the
        // declared form refuses to round — a model declaring date storage for a timestamp cannot be saved.
        try Ledger(id: 1, amount: 5).save(in: store)
        let first = try #require(try Ledger.find(key: 1, in: store))
        let created = try #require(first.createdAt)
        let updated = try #require(first.updatedAt)
        #expect(abs(created.timeIntervalSince(start)) < 2)
        #expect(abs(updated.timeIntervalSince(start)) < 2)
        // Same transaction date, in two precisions.
        #expect(abs(created.timeIntervalSince(updated)) < 1)
        #expect(try Ledger(id: 1, amount: 5).save(in: store) == .unchanged)
        #expect(try Ledger(id: 1, amount: 5).saved(in: store) == first)
        try Ledger(id: 1, amount: 5).update(in: store)
        #expect(try Ledger.find(key: 1, in: store) == first)
        Thread.sleep(forTimeInterval: 1.1)
        #expect(try Ledger(id: 1, amount: 6).save(in: store) == .updated)
        let changed = try #require(try Ledger.find(key: 1, in: store))
        #expect(changed.createdAt == first.createdAt)
        #expect(changed.updatedAt! > first.updatedAt!)
        let raw = try test.rawRows(#"SELECT "createdAt", "updatedAt" FROM \#(quoted(TableDescription.of(Ledger.self).tableName))"#)
        // ISO 8601 is TEXT; `.unixSeconds` is REAL seconds (DateStorage's table).
        guard case .text = raw.first?[0], case .real = raw.first?[1] else {
            Issue.record("createdAt is not text or updatedAt is not a real number: \(raw)")
            return
        }
    }

    /// Non-optional `Date` timestamps: the creation date is the first save's, whatever later
    /// models carry, on every update path.
    @Test(arguments: Backend.available) func nonOptionalCreationDateNeverMoves(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        try Entry(id: 1, text: "a").insert(in: store)
        let first = try #require(try Entry.find(key: 1, in: store))
        #expect(first.createdAt != .distantPast)
        #expect(first.createdAt == first.updatedAt)
        var moved = first
        moved.createdAt = .distantFuture
        moved.text = "b"
        let paths: [(String, () throws -> Void)] = [
            ("save", { try moved.save(in: store) }),
            (
                "update",
                {
                    moved.text = "c"; try moved.update(in: store)
                }
            ),
            (
                "saved",
                {
                    moved.text = "d"; _ = try moved.saved(in: store)
                }
            ),
            (
                "batch",
                {
                    moved.text = "e"; _ = try Entry.save([moved], in: store)
                }
            ),
            (
                "match keys",
                {
                    moved.text = "f"; _ = try Entry.save([moved], matching: MatchKeys(varying: [\Entry.id]), in: store)
                }
            ),
            (
                "save matching",
                {
                    moved.text = "g"; try moved.save(matching: \.id == 1, in: store)
                }
            ),
        ]
        for (path, write) in paths {
            tick()
            let before = try #require(try Entry.find(key: 1, in: store))
            try write()
            let after = try #require(try Entry.find(key: 1, in: store))
            #expect(after.createdAt == first.createdAt, "\(path)")
            #expect(after.updatedAt > before.updatedAt, "\(path)")
            #expect(after.text == moved.text, "\(path)")
        }
    }

    /// Composite keys: unchanged saves through every path keep the change date.
    @Test(arguments: Backend.available) func compositeKeyUnchangedSavesKeepTheChangeDate(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        try Pair(a: "x", b: 1, value: "v").save(in: store)
        let first = try #require(try Pair.find(key: ["a": "x", "b": 1], in: store))
        tick()
        #expect(try Pair(a: "x", b: 1, value: "v").save(in: store) == .unchanged)
        try Pair(a: "x", b: 1, value: "v").update(in: store)
        let outcome = try Pair.save(
            [Pair(a: "x", b: 1, value: "v")], matching: MatchKeys(shared: [\Pair.a], varying: [\Pair.b]), in: store)
        #expect(outcome.unchanged == 1)
        #expect(try Pair.save([Pair(a: "x", b: 1, value: "v"), Pair(a: "x", b: 1, value: "v")], in: store).unchanged == 2)
        #expect(try Pair.find(key: ["a": "x", "b": 1], in: store) == first)
    }

    /// save(matching:updatingAll: true) stamps every record it changes with one date, keeps
    /// their creation dates, and an unchanged repeat moves nothing.
    @Test(arguments: Backend.available) func saveMatchingUpdatingAllStampsEveryRecordOnce(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        _ = try Job.save((1...3).map { Job(id: $0, group: "g", state: "new") } + [Job(id: 4, group: "h", state: "new")], in: store)
        let before = try Job.all().order(.ascending(\.id)).findAll(in: store)
        tick()
        #expect(try Job(id: 99, group: "g", state: "done").save(matching: \.group == "g", updatingAll: true, in: store) == .updated)
        let after = try Job.all().order(.ascending(\.id)).findAll(in: store)
        #expect(after.count == 4)
        #expect(after.prefix(3).allSatisfy { $0.state == "done" })
        #expect(Set(after.prefix(3).map(\.updatedAt)).count == 1)
        #expect(after[0].updatedAt! > before[0].updatedAt!)
        #expect(after.map(\.createdAt) == before.map(\.createdAt))
        #expect(after[3] == before[3])
        tick()
        _ = try Job(id: 99, group: "g", state: "done").save(matching: \.group == "g", updatingAll: true, in: store)
        #expect(try Job.all().order(.ascending(\.id)).findAll(in: store) == after)
        #expect(try trail(store).contains("did job 99 updated"))
    }

    // MARK: Validation

    /// A `validate()` that throws a ModelStoreError of its own is still a validation refusal.
    @Test(arguments: Backend.available) func aValidateThatThrowsAModelStoreErrorIsReportedAsValidationFailed(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        try Strict(id: 1, code: "ok").save(in: store)
        let error = #expect(throws: ModelStoreError.self) { try Strict(id: 2, code: "reserved").save(in: store) }
        // FINDING: expected `.validationFailed` naming Strict and key id = 2 with the model's error in
        // `underlying` (README: "A refusal throws .validationFailed … the model's own error is kept in
        // error.underlying"); actual: the model's ModelStoreError passes through as it is
        // (`.invalidQuery`, no model, no key), because `failure` lets every ModelStoreError through.
        #expect(error?.code == .validationFailed)
        #expect(error?.model == "Strict")
        #expect(error?.key == "id = 2")
        #expect(error?.underlying is ModelStoreError)
        #expect(try Strict.count(in: store) == 1)
    }

    /// A graph 5 levels deep whose deepest model is invalid writes nothing, callbacks' writes included.
    @Test(arguments: Backend.available) func anInvalidModelFiveLevelsDeepWritesNothing(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        var node = Boss(id: 5, name: "bad")
        for id in stride(from: 4, through: 1, by: -1) { node = Boss(id: Int64(id), name: "b\(id)", reports: [node]) }
        let error = #expect(throws: ModelStoreError.self) { try node.save(in: store) }
        #expect(error?.code == .validationFailed)
        #expect(error?.model == "Boss")
        #expect(error?.key == "id = 5")
        #expect(error?.column == "name")
        #expect(try Boss.count(in: store) == 0)
        #expect(try trail(store).isEmpty)
        // Batch of such graphs, the bad one last.
        var good = Boss(id: 10, name: "ok")
        good.reports = [Boss(id: 11, name: "ok")]
        #expect(throws: ModelStoreError.self) { _ = try Boss.save([good, node], in: store) }
        #expect(try Boss.count(in: store) == 0)
        #expect(try trail(store).isEmpty)
    }

    /// A model reachable twice in one graph (a cycle) is validated, stamped and announced once.
    @Test(arguments: Backend.available) func aCycleCallsWillSaveOncePerRecord(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        var one = Boss(id: 1, name: "one")
        one.reports = [Boss(id: 2, name: "two", reports: [Boss(id: 1, name: "one again"), Boss(id: 3, name: "three")])]
        try one.save(in: store)
        let events = try trail(store)
        #expect(events.filter { $0 == "will boss 1" }.count == 1)
        #expect(events.filter { $0 == "will boss 2" }.count == 1)
        #expect(events.filter { $0 == "will boss 3" }.count == 1)
        #expect(try Boss.count(in: store) == 3)
    }

    /// Under `.mustExist`, a related model is a reference: not validated, not written, not announced.
    @Test(arguments: Backend.available) func aMustExistReferenceIsNotValidatedNorAnnounced(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        try Boss(id: 10, name: "legacy").save(in: store)
        #expect(try Boss.updateAll(where: \.id == 10, set: [.set(\.name, to: "bad")], in: store) == 1)
        try Trail.deleteAll(in: store)
        var root = Boss(id: 11, name: "root")
        root.reports = [Boss(id: 10, name: "bad")]
        #expect(try root.save(related: .mustExist, in: store) == .inserted)
        #expect(try trail(store) == ["will boss 11"])
        let stored = try #require(try Boss.find(key: 10, loading: .direct, in: store))
        #expect(stored.name == "bad")
        #expect(stored.manager?.id == 11)
    }

    // MARK: Callbacks

    /// Duplicate keys in a batch: callbacks run per element, with each element's own outcome.
    @Test(arguments: Backend.available) func batchDuplicatesCallBackPerElementWithTheirOutcomes(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        let outcome = try Tally.save(
            [Tally(id: 1, name: "a"), Tally(id: 1, name: "b"), Tally(id: 2, name: "c"), Tally(id: 1, name: "b")], in: store)
        #expect(outcome == BatchSaveOutcome(inserted: 2, updated: 1, unchanged: 1))
        #expect(
            try trail(store) == [
                "will 1 a", "did 1 a inserted", "will 1 b", "did 1 b updated", "will 2 c", "did 2 c inserted", "will 1 b",
                "did 1 b unchanged",
            ])
        let one = try #require(try Tally.find(key: 1, in: store))
        #expect(one.name == "b")
        #expect(one.createdAt == one.updatedAt)
    }

    /// A willSave that saves another record of the same type, mid-batch (the batch reuses one
    /// statement for its elements): every record is written as given.
    @Test(arguments: Backend.available) func aWillSaveThatSavesTheSameTypeMidBatchBreaksNothing(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        let outcome = try Tally.save((1...50).map { Tally(id: Int64($0), name: "spawn") }, in: store)
        #expect(outcome.inserted == 50)
        let all = try Tally.all().order(.ascending(\.id)).findAll(in: store)
        #expect(all.count == 100)
        #expect(all.prefix(50).allSatisfy { $0.name == "spawn" })
        #expect(all.suffix(50).allSatisfy { $0.name == "shadow" })
        #expect(all.map(\.id) == Array(1...50) + Array(1001...1050))
        // Match-key batches and save-matching too.
        _ = try Tally.save((60...70).map { Tally(id: Int64($0), name: "spawn") }, matching: MatchKeys(varying: [\Tally.id]), in: store)
        try Tally(id: 80, name: "spawn").save(matching: \.id == 80, in: store)
        #expect(try Tally.count(in: store) == 124)
        #expect(try Tally.find(key: 1080, in: store)?.name == "shadow")
    }

    /// A callback that throws a ModelStoreError rolls the call back.
    @Test(arguments: Backend.available) func aCallbackThrowingAModelStoreErrorRollsBackEverything(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        let error = #expect(throws: ModelStoreError.self) {
            _ = try Tally.save([Tally(id: 1, name: "a"), Tally(id: 2, name: "store-error")], in: store)
        }
        #expect(error != nil)
        #expect(try Tally.count(in: store) == 0)
        #expect(try Trail.count(in: store) == 0)
    }

    /// update() of a missing record: notFound, and nothing its willSave wrote is kept.
    @Test(arguments: Backend.available) func anUpdateOfAMissingRecordWritesNothing(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        let error = #expect(throws: ModelStoreError.self) { try Tally(id: 9, name: "x").update(in: store) }
        #expect(error?.code == .notFound)
        #expect(try Trail.count(in: store) == 0)
        #expect(try Tally.count(in: store) == 0)
    }

    /// Callbacks inside a transaction that then throws: everything, callbacks' writes included, goes.
    @Test(arguments: Backend.available) func aThrowingTransactionRollsBackTheCallbacksWrites(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        #expect(throws: Boom.self) {
            try store.transaction {
                try Tally(id: 1, name: "memo").save(in: store)
                _ = try Tally.save([Tally(id: 2, name: "a")], in: store)
                throw Boom(reason: "after")
            }
        }
        #expect(try Tally.count(in: store) == 0)
        #expect(try Trail.count(in: store) == 0)
        #expect(try Memo.count(in: store) == 0)
        // A callback failing inside a transaction whose block catches it: the failed call is
        // rolled back, the rest of the block commits.
        try store.transaction {
            try Tally(id: 3, name: "a").save(in: store)
            #expect(throws: ModelStoreError.self) { try Tally(id: 4, name: "boom").save(in: store) }
        }
        #expect(try Tally.findAll(in: store).map(\.id) == [3])
        #expect(try trail(store) == ["will 3 a", "did 3 a inserted"])
    }

    /// The synchronous call forms of `callbacksCallingTheStoreInEveryFormDoNotDeadlock`.
    private func syncForms(_ store: ModelStore) throws {
        try Tally(id: 1, name: "calls").save(in: store)
        _ = try store.transaction { try Tally(id: 4, name: "calls").save(in: store) }
        _ = try Tally.save([Tally(id: 6, name: "calls")], in: store)
    }

    /// A read block around a save: refused, not deadlocked.
    private func saveInsideReadBlock(_ store: ModelStore) -> ModelStoreError? {
        #expect(throws: ModelStoreError.self) { try store.read { try Tally(id: 8, name: "calls").save(in: store) } }
    }

    private func counts(_ store: ModelStore) throws -> (tallies: Int, events: [String]) {
        (try Tally.count(in: store), try trail(store))
    }

    /// Callbacks calling the store in every form, from every call form of the outer save.
    @Test(.timeLimit(.minutes(1)), arguments: Backend.available) func callbacksCallingTheStoreInEveryFormDoNotDeadlock(_ backend: Backend)
        async throws
    {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try syncForms(store)
        let outcome: SaveOutcome = try await withCheckedThrowingContinuation { continuation in
            Tally(id: 2, name: "calls").save(in: store) { continuation.resume(with: $0.mapError { $0 as any Error }) }
        }
        #expect(outcome == .inserted)
        try await Tally(id: 3, name: "calls").save(in: store)
        _ = try await store.transaction { try Tally(id: 5, name: "calls").save(in: store) }
        _ = try await Tally.save([Tally(id: 7, name: "calls")], matching: MatchKeys(varying: [\Tally.id]), in: store)
        let refused = saveInsideReadBlock(store)
        #expect(refused?.code == .reentrancy)
        // The completion-form save inside willSave joins the transaction, so it is stored.
        try await Task.sleep(nanoseconds: 100_000_000)
        let (tallies, events) = try counts(store)
        #expect(tallies == 7)
        #expect(events.filter { $0 == "completion form" }.count == 7)
        #expect(events.filter { $0 == "nested transaction" }.count == 7)
    }

    /// The same model saved from 8 threads at once: every save and every callback write lands.
    @Test(arguments: Backend.available) func callbacksFromEightThreadsAtOnce(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        let failures = Locked(0)
        onThreads(8) { thread in
            for n in 0..<50 {
                do {
                    try Tally(id: Int64(thread * 1000 + n), name: "t").save(in: store)
                    if n % 10 == 0 { _ = try Tally.save([Tally(id: Int64(thread * 1000 + n), name: "u")], in: store) }
                } catch {
                    failures.withLock { $0 += 1 }
                }
            }
        }
        #expect(failures.current == 0)
        #expect(try Tally.count(in: store) == 400)
        #expect(try Trail.count(in: store) == 2 * (400 + 40))
    }

    // MARK: Delete callbacks

    /// A willDelete that creates a record the same deleteAll() then removes: every removed record
    /// must get its callbacks (or the new record must survive).
    @Test(arguments: Backend.available) func aRecordCreatedByWillDeleteIsNotDeletedWithoutCallbacks(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        _ = try Bulb.save([Bulb(id: 1, lit: true, note: "spawn"), Bulb(id: 2, lit: true)], in: store)
        let count = try Bulb.deleteAll(in: store)
        let remaining = Set(try Bulb.findAll(in: store).map(\.id))
        let events = try trail(store)
        for id: Int64 in [1, 2, 100] where !remaining.contains(id) {
            // FINDING: expected every deleted record to have had willDelete/didDelete; actual: record 100
            // (saved by record 1's willDelete) is deleted by the same DELETE without any callback, since
            // the records were read for callbacks before the willDelete ran.
            #expect(events.contains("willDelete \(id)"), "record \(id) deleted without willDelete")
            #expect(events.contains("didDelete \(id)"), "record \(id) deleted without didDelete")
        }
        #expect(count == events.filter { $0.hasPrefix("didDelete") }.count)
    }

    /// A willDelete that takes another selected record out of a deleteAll(where:) condition: a
    /// record must not get didDelete while it is still stored.
    @Test(arguments: Backend.available) func didDeleteIsNotCalledForARecordTheDeleteKept(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        _ = try Bulb.save([Bulb(id: 1, lit: true, note: "unlight 2"), Bulb(id: 2, lit: true), Bulb(id: 3, lit: true)], in: store)
        let count = try Bulb.deleteAll(where: \.lit == true, in: store)
        let events = try trail(store)
        // FINDING: expected no didDelete for a record still stored (or record 2 deleted, as the callbacks
        // announced); actual: "didDelete 2 STILL STORED" — the plain path reads the records for the
        // callbacks, then runs the DELETE with the condition again after willDelete changed record 2.
        #expect(!events.contains { $0.contains("STILL STORED") }, "\(events)")
        #expect(count == events.filter { $0.hasPrefix("didDelete") }.count)
    }

    /// The same on the graph path, for a model whose rules change no row before its DELETE
    /// (a many-to-many's nullify): the records the callbacks saw are the records deleted.
    @Test(arguments: Backend.available) func didDeleteIsNotCalledForAGraphRecordTheDeleteKept(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        _ = try Lantern.save(
            [Lantern(id: 1, lit: true, note: "unlight 2", hooks: [Hook(id: 7)]), Lantern(id: 2, lit: true), Lantern(id: 3, lit: true)],
            in: store)
        let count = try Lantern.deleteAll(where: \.lit == true, in: store)
        let events = try trail(store)
        #expect(!events.contains { $0.contains("STILL STORED") }, "\(events)")
        #expect(count == events.filter { $0.hasPrefix("didDelete") }.count)
        #expect(try Lantern.count(in: store) == 3 - count)
        #expect(try Hook.find(key: 7, loading: .direct, in: store)?.lanterns == [])
    }

    /// The same with a paged selection (order + limit): the page the callbacks saw is the page deleted.
    @Test(arguments: Backend.available) func aPagedDeleteDeletesThePageItsCallbacksSaw(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        _ = try Bulb.save([Bulb(id: 5, lit: true, note: "spawn first"), Bulb(id: 6, lit: true), Bulb(id: 7, lit: true)], in: store)
        _ = try Bulb.all().order(.ascending(\.id)).limit(2).deleteAll(in: store)
        let events = try trail(store)
        let remaining = Set(try Bulb.findAll(in: store).map(\.id))
        // FINDING: expected records 5 and 6 deleted (their callbacks ran); actual: the DELETE re-runs the
        // page after willDelete inserted record 1, deleting 1 (no callbacks) and 5, keeping 6 whose
        // didDelete ran while it is still stored.
        #expect(!events.contains { $0.contains("STILL STORED") }, "\(events)")
        #expect(!remaining.contains(6))
        for id: Int64 in [1, 5, 6, 7] where !remaining.contains(id) {
            #expect(events.contains("didDelete \(id)"), "record \(id) deleted without didDelete")
        }
    }

    /// A willDelete that itself deletes records of a graph model by condition, inside a graph
    /// deleteAll(where:): both deletes complete, cascades included.
    @Test(arguments: Backend.available) func aWillDeleteThatDeletesByConditionInsideADeleteByCondition(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        try Keep(id: 1, name: "main", rooms: [Room(id: 1, name: "r1"), Room(id: 2, name: "r2")]).save(in: store)
        try Keep(id: 2, name: "annex", rooms: [Room(id: 3, name: "r3")]).save(in: store)
        try Keep(id: 3, name: "other", rooms: [Room(id: 4, name: "r4")]).save(in: store)
        // FINDING: expected both deletes to complete; actual: the nested delete reuses and drops the
        // outer's scratch table `temp.modelstore_deleting_0`, so the outer call fails (no such table).
        #expect(throws: Never.self) { _ = try Keep.deleteAll(where: \.name == "main", in: store) }
        #expect(try Keep.findAll(in: store).map(\.id) == [3])
        #expect(try Room.findAll(in: store).map(\.id) == [4])
    }

    /// deleteAll of 10,000 records with delete callbacks: every callback runs, in reasonable time.
    // SQLite-only: too many records for the PostgreSQL half of the suite (slow over a server).
    @Test func deleteCallbacksOnTenThousandRecords() throws {
        let test = try TestStore()
        let store = test.store
        _ = try Bulb.save((1...10_000).map { Bulb(id: Int64($0), lit: $0 % 2 == 0) }, in: store)
        let start = Date()
        #expect(try Bulb.deleteAll(in: store) == 10_000)
        #expect(Date().timeIntervalSince(start) < 30)
        #expect(try Bulb.count(in: store) == 0)
        #expect(try Trail.count(in: store) == 20_000)
        #expect(try Trail.count(where: \.what == "didDelete 10000", in: store) == 1)
    }
}

/// The long batch of the attack, beside the serialized suite rather than in its line.
@Suite struct LifecycleBatchAttackTests {
    /// A batch of 10,000 with callbacks whose last element's didSave throws writes nothing.
    @Test(arguments: Backend.available) func aBatchWhoseLastDidSaveThrowsWritesNothing(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        var batch = (1...10_000).map { Tally(id: Int64($0), name: "t\($0)") }
        batch[9_999].name = "boom"
        let error = #expect(throws: ModelStoreError.self) { _ = try Tally.save(batch, in: store) }
        #expect(error?.code == .callbackFailed)
        #expect(error?.message.contains("Element 9999 of a batch of 10000") == true)
        #expect((error?.underlying as? Boom)?.reason == "didSave refused")
        #expect(try Tally.count(in: store) == 0)
        #expect(try Trail.count(in: store) == 0)
    }
}
