import Foundation
import Testing
@testable import ModelStore

// Adversarial tests of observation (issue 13): live queries and change streams.

private struct OANote: StoredModel, Equatable {
    var id: Int64
    var text: String
    static let primaryKey = ["id"]
}

private struct OAThing: StoredModel, Equatable {
    var id: Int64
    var name: String
    static let primaryKey = ["id"]
}

private struct OALog: StoredModel, Equatable {
    var id: Int64
    var line: String
    static let primaryKey = ["id"]
}

private struct OANever: StoredModel, Equatable {
    var id: Int64
    static let primaryKey = ["id"]
}

/// A key of nine properties: more than the eight key columns a trigger records.
private struct OANine: StoredModel, Equatable {
    var a: Int64
    var b: Int64
    var c: Int64
    var d: Int64
    var e: Int64
    var f: Int64
    var g: Int64
    var h: Int64
    var i: Int64
    var note: String?
    static let primaryKey = ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
}

/// The table as an older version of the app named it.
private struct OABox: StoredModel, Equatable {
    var id: Int64
    var label: String
    static let primaryKey = ["id"]
}

/// The same table, renamed from `OABox` by a declared former name.
private struct OACrate: StoredModel, Equatable {
    var id: Int64
    var label: String
    static let primaryKey = ["id"]
    static let formerNames: [FormerName<OACrate>] = [.table(from: "OABox")]
}

private struct OAUser: StoredModel, Equatable {
    var id: UUID
    var name: String
    static let primaryKey = ["id"]
    static let columnStorage: [ColumnStorage<OAUser>] = [.uuid(\.id, as: .blob)]
}

private struct OAUnique: StoredModel, Equatable {
    var id: Int64
    var code: String
    static let primaryKey = ["id"]
    static let indexes: [TableIndex<OAUnique>] = [.unique(\.code)]
}

private struct OAPair: StoredModel, Equatable {
    var left: String
    var right: Int64
    var note: String?
    static let primaryKey = ["left", "right"]
}

private struct Abort: Error {}

/// Runs `body` on a thread of its own; false when it has not returned within `seconds` (a hang).
private func finishes(within seconds: Double, _ body: @escaping @Sendable () -> Void) async -> Bool {
    let done = Locked(false)
    Thread.detachNewThread {
        body()
        done.withLock { $0 = true }
    }
    return await eventually(seconds) { done.current }
}

private func ints(_ keys: [[SQLValue]]) -> [Int64] {
    keys.map { if case .integer(let value) = $0.first { return value } else { return -1 } }
}

/// The writer's temp schema: what the triggers left behind.
private func writerLeftovers(_ store: ModelStore) throws -> (rows: SQLValue?, triggers: SQLValue?) {
    try store.write { session in
        (
            try session.connection.scalar("SELECT count(*) FROM temp.modelstore_changes"),
            try session.connection.scalar("SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger'")
        )
    }
}

/// Nothing of observation is left once no observer is: SQLite's writer holds no temp
/// triggers and no recorded rows; a server store's change feed has closed its connection
/// (the server's triggers stay, by design: other processes may observe).
private func expectNothingLeftBehind(_ store: ModelStore, _ backend: Backend) throws {
    switch backend {
    case .sqlite:
        let leftovers = try writerLeftovers(store)
        #expect(leftovers.triggers == .integer(0), "triggers left on the writer: \(String(describing: leftovers.triggers))")
        #expect(leftovers.rows == .integer(0), "rows piling up in temp.modelstore_changes: \(String(describing: leftovers.rows))")
    case .postgres:
        #expect(store.changeTracker.activeFeed == nil, "the change feed stays open with no observer")
    }
}

// Both backends but where a test says why not: SQLite's temp triggers, and the server's
// change log (PostgresChangeFeed).
@Suite("Observation attacks")
struct ObservationAttackTests {
    // MARK: Missed changes

    /// The first fetch of a live query reads, then (slowly) returns; a commit lands in between.
    /// The observer has no tables yet, so the commit records nothing and the tracker's
    /// generation did not move: the commit is dropped and the query is stale forever.
    @Test(arguments: StoreKind.allCases)
    func aCommitDuringTheFirstFetchIsNotMissed(_ kind: StoreKind) async throws {
        let test = try TestStore(kind)
        let store = test.store
        try await OANote(id: 1, text: "a").save(in: store)
        let read = Locked(false)
        let counts = Collected<Int>()
        let token = store.observe({ () throws -> Int in
            let count = try OANote.count(in: store)
            if !read.current {
                read.withLock { $0 = true }
                // Another thread commits after this read and before the fetch returns.
                let committed = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    _ = try? OANote(id: 2, text: "b").save(in: store)
                    committed.signal()
                }
                _ = committed.wait(timeout: .now() + 5)
            }
            return count
        }) { result in if case .success(let count) = result { counts.add(count) } }
        #expect(await eventually { read.current })
        #expect(await eventually { !counts.current.isEmpty })
        #expect(try await OANote.count(in: store) == 2)
        #expect(await eventually(3) { counts.current.last == 2 }, "live query stuck at \(counts.current); the store holds 2")
        token.cancel()
    }

    /// A fetch that reads another table on its next run: a commit to the new table while that
    /// run is underway is judged against the old run's tables, and dropped.
    @Test(arguments: [false, true])
    func aConditionalFetchHearsOfCommitsToItsNewTable(_ bIsAlsoStreamed: Bool) async throws {
        let test = try TestStore(.file)
        let store = test.store
        try await OANote(id: 1, text: "a").save(in: store)
        try await OAThing(id: 1, name: "t").save(in: store)
        let readsThing = Locked(false)
        let readThing = Locked(false)
        let seen = Collected<String>()
        let stream: ObservationToken? = bIsAlsoStreamed ? try store.changes(of: OAThing.self) { _ in } : nil
        let token = store.observe({ () throws -> String in
            if readsThing.current {
                let count = try OAThing.count(in: store)
                if !readThing.current {
                    readThing.withLock { $0 = true }
                    let committed = DispatchSemaphore(value: 0)
                    Thread.detachNewThread {
                        _ = try? OAThing(id: 2, name: "u").save(in: store)
                        committed.signal()
                    }
                    _ = committed.wait(timeout: .now() + 5)
                }
                return "thing \(count)"
            }
            return "note \(try OANote.count(in: store))"
        }) { result in if case .success(let value) = result { seen.add(value) } }
        #expect(await eventually { seen.current == ["note 1"] })
        readsThing.withLock { $0 = true }
        try await OANote(id: 2, text: "b").save(in: store)  // re-runs the fetch, which now reads OAThing
        #expect(await eventually { readThing.current })
        // The flag is set before the other thread starts its save: wait for the commit.
        #expect(await eventually { (try? OAThing.count(in: store)) == 2 })
        #expect(await eventually(3) { seen.current.last == "thing 2" }, "\(seen.current)")
        token.cancel()
        stream?.cancel()
    }

    /// A fetch may use every call form: the completion-handler form (waited for) reads on
    /// another thread, where the fetch's table recorder is not set.
    @Test(arguments: Backend.available)
    func aFetchUsingTheCompletionFormIsReRun(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try await OANote(id: 1, text: "a").save(in: store)
        let counts = Collected<Int>()
        let token = store.observe({ () throws -> Int in
            let done = DispatchSemaphore(value: 0)
            let result = Locked<Result<Int, ModelStoreError>?>(nil)
            OANote.count(in: store) { value in
                result.withLock { $0 = value }
                done.signal()
            }
            guard done.wait(timeout: .now() + 5) == .success else { throw Abort() }
            return try result.current!.get()
        }) { result in if case .success(let count) = result { counts.add(count) } }
        #expect(await eventually { counts.current == [1] })
        try await OANote(id: 2, text: "b").save(in: store)
        #expect(await eventually(3) { counts.current.last == 2 }, "live query stuck at \(counts.current)")
        token.cancel()
    }

    /// A fetch that reads inside a transaction block (on the writer).
    @Test(arguments: Backend.available)
    func aFetchReadingInsideATransactionBlockIsReRun(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try await OANote(id: 1, text: "a").save(in: store)
        let counts = Collected<Int>()
        let token = store.observe({ () throws -> Int in
            try store.transaction { try OANote.count(in: store) }
        }) { result in if case .success(let count) = result { counts.add(count) } }
        #expect(await eventually { counts.current == [1] })
        try await OANote(id: 2, text: "b").save(in: store)
        #expect(await eventually(3) { counts.current.last == 2 }, "live query stuck at \(counts.current)")
        token.cancel()
    }

    /// A fetch that reads inside a read block: should be recorded.
    @Test(arguments: Backend.available)
    func aFetchReadingInsideAReadBlockIsReRun(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try await OANote(id: 1, text: "a").save(in: store)
        let counts = Collected<Int>()
        let token = store.observe({ () throws -> Int in
            try store.read { try OANote.count(in: store) }
        }) { result in if case .success(let count) = result { counts.add(count) } }
        #expect(await eventually { counts.current == [1] })
        try await OANote(id: 2, text: "b").save(in: store)
        #expect(await eventually(3) { counts.current.last == 2 }, "live query stuck at \(counts.current)")
        token.cancel()
    }

    /// A read-only store (a viewer process) observing a file another store writes.
    @Test(arguments: Backend.available)
    func aReadOnlyStoreHearsOfAnotherStoresCommits(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let writer = test.store
        try await OANote(id: 1, text: "a").save(in: writer)
        let viewer = try test.another(configuration: .init(readOnly: true))
        defer { try? viewer.close() }
        let counts = Collected<Int>()
        let token = viewer.observe({ try OANote.count(in: viewer) }) { result in
            if case .success(let count) = result { counts.add(count) }
        }
        let changes = Collected<ModelChanges<OANote>>()
        let stream = try viewer.changes(of: OANote.self) { changes.add($0) }
        #expect(await eventually { counts.current == [1] })
        try await OANote(id: 2, text: "b").save(in: writer)
        #expect(await eventually(3) { counts.current.last == 2 }, "read-only store's live query stuck at \(counts.current)")
        #expect(await eventually(1) { !changes.current.isEmpty }, "read-only store's change stream heard nothing")
        token.cancel()
        stream.cancel()
    }

    /// Raw SQL on the store's own writer that drops and recreates an observed table (and
    /// fills it) in one transaction: DROP TABLE takes the triggers and fires none.
    @Test(arguments: Backend.available)
    func rawSQLThatRecreatesAnObservedTableReachesObservers(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try await OANote(id: 1, text: "a").save(in: store)
        let counts = Collected<Int>()
        let token = store.observe({ try OANote.count(in: store) }) { result in if case .success(let count) = result { counts.add(count) } }
        let changes = Collected<ModelChanges<OANote>>()
        let stream = try store.changes(of: OANote.self) { changes.add($0) }
        #expect(await eventually { counts.current == [1] })
        try await OANote(id: 2, text: "b").save(in: store)  // triggers are in place
        #expect(await eventually { counts.current.last == 2 && changes.current.count == 1 })
        try await store.write { session in
            try session.connection.execute("DROP TABLE \"OANote\"")
            try session.connection.execute("CREATE TABLE \"OANote\" (id BIGINT PRIMARY KEY NOT NULL, text TEXT NOT NULL)")
            try session.connection.execute("INSERT INTO \"OANote\" VALUES (7, 'x'), (8, 'y'), (9, 'z')")
        }
        #expect(await eventually(3) { counts.current.last == 3 }, "live query stuck at \(counts.current)")
        #expect(
            await eventually(1) { changes.current.count == 2 }, "change stream heard \(changes.current.count - 1) changes of the recreation"
        )
        token.cancel()
        stream.cancel()
    }

    /// Raw `INSERT OR REPLACE` that removes another record through a unique index: SQLite
    /// fires no delete trigger for REPLACE's deletions (recursive_triggers is off).
    // SQLite only: INSERT OR REPLACE is SQLite's SQL.
    @Test func replaceThatDeletesAnotherRecordReportsTheDeletion() async throws {
        let test = try TestStore(.file)
        let store = test.store
        _ = try await OAUnique.save([OAUnique(id: 1, code: "a"), OAUnique(id: 2, code: "b")], in: store)
        let changes = Collected<ModelChanges<OAUnique>>()
        let stream = try store.changes(of: OAUnique.self) { changes.add($0) }
        try store.rawExecute("INSERT OR REPLACE INTO OAUnique (id, code) VALUES (3, 'a')")  // removes record 1
        #expect(await eventually { changes.current.count == 1 })
        let change = try #require(changes.current.first)
        #expect(ints(change.inserted) == [3])
        #expect(ints(change.deleted) == [1], "record 1 was deleted but the stream says deleted \(change.deleted)")
        try store.rawExecute("INSERT OR REPLACE INTO OAUnique (id, code) VALUES (2, 'c')")  // same key: an update
        #expect(await eventually { changes.current.count == 2 })
        let replaced = try #require(changes.current.last)
        #expect(ints(replaced.updated) == [2], "replaced record reported as inserted \(replaced.inserted) / updated \(replaced.updated)")
        stream.cancel()
    }

    // MARK: Phantom changes and leaks

    /// A rolled-back transaction makes the writer forget the triggers of earlier commits; once
    /// observers are gone nothing drops them, they go on recording every write into the temp
    /// table (which grows without bound), and a later observer is handed that backlog.
    @Test(arguments: Backend.available)
    func aRollbackThenCancelLeavesNoTriggersAndNoBacklog(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try await OANote(id: 0, text: "seed").save(in: store)  // the table exists
        var token: ObservationToken? = try store.changes(of: OANote.self) { _ in }
        try await OANote(id: 1, text: "a").save(in: store)  // triggers made and committed
        _ = try? await store.transaction {
            try OANote(id: 2, text: "b").save(in: store)
            throw Abort()
        }
        token?.cancel()
        token = nil
        #expect(store.changeTracker.observerCount == 0)
        for id in Int64(10)..<110 { try await OANote(id: id, text: "unobserved").save(in: store) }
        try expectNothingLeftBehind(store, backend)

        let changes = Collected<ModelChanges<OANote>>()
        let stream = try store.changes(of: OANote.self) { changes.add($0) }
        try await OANote(id: 500, text: "new").save(in: store)
        #expect(await eventually { changes.current.count == 1 })
        let first = try #require(changes.current.first)
        #expect(
            ints(first.inserted) == [500], "phantom keys: inserted \(ints(first.inserted).count) keys \(ints(first.inserted).prefix(5))…")
        stream.cancel()
    }

    /// A failed write (a constraint) is a rollback too: the same leak from an everyday error.
    @Test(arguments: Backend.available)
    func aFailedSaveWhileObservedLeavesNoTriggersBehind(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        _ = try await OAUnique.save([OAUnique(id: 1, code: "a")], in: store)
        let token = try store.changes(of: OAUnique.self) { _ in }
        try await OAUnique(id: 2, code: "b").save(in: store)
        // A key conflict: rolled back.
        #expect(throws: ModelStoreError.self) { try store.rawExecute("INSERT INTO \"OAUnique\" (id, code) VALUES (1, 'dup')") }
        token.cancel()
        for id in Int64(10)..<60 { try await OAUnique(id: id, code: "c\(id)").save(in: store) }
        try expectNothingLeftBehind(store, backend)
    }

    /// A table renamed from its former name by the observed transaction: its records were not
    /// inserted, they were there all along.
    @Test func aTableRenamedByAFormerNameDoesNotReportItsRecordsAsInserted() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("oa-rename-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("s.sqlite").path
        do {
            let old = try ModelStore(path: path)
            _ = try await OABox.save((1...3).map { OABox(id: $0, label: "old") }, in: old)
            try old.close()
        }
        let store = try ModelStore(path: path)
        defer { try? store.close() }
        let changes = Collected<ModelChanges<OACrate>>()
        let stream = try store.changes(of: OACrate.self) { changes.add($0) }
        try await OACrate(id: 10, label: "new").save(in: store)  // renames OABox to OACrate, then inserts
        #expect(await eventually { !changes.current.isEmpty })
        #expect(try await OACrate.count(in: store) == 4)
        let first = try #require(changes.current.first)
        // Renamed into place in the observed transaction: which records changed is unknown,
        // and the store says so rather than call the old records inserted.
        #expect(!first.keysAreKnown || ints(first.inserted) == [10], "inserted reported as \(ints(first.inserted))")
        #expect(!ints(first.inserted).contains(1), "old records reported as inserted: \(ints(first.inserted))")
        stream.cancel()
    }

    /// Reads of a model never written make temp stand-in tables on readers: no commit of the
    /// file, so observers must hear nothing.
    @Test(arguments: Backend.available)
    func standInReadsAreNotReportedAsChanges(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try await OANote(id: 1, text: "a").save(in: store)
        let changes = Collected<ModelChanges<OANote>>()
        let stream = try store.changes(of: OANote.self) { changes.add($0) }
        let fetches = Locked(0)
        let token = store.observe({ () throws -> Int in
            fetches.withLock { $0 += 1 }
            return try OANote.count(in: store)
        }) { _ in }
        #expect(await eventually { fetches.current == 1 })
        for _ in 0..<30 {
            _ = try await OANever.count(in: store)
            _ = try await OANever.find(key: 1, in: store)
        }
        try await Task.sleep(nanoseconds: 400_000_000)
        #expect(changes.current.isEmpty, "phantom changes: \(changes.current.count)")
        #expect(fetches.current == 1, "re-fetched \(fetches.current - 1) times for no commit")
        token.cancel()
        stream.cancel()
    }

    // MARK: Wrong keys

    /// More key columns than a trigger records: the keys must be reported unknown, not as
    /// one key of NULLs.
    @Test(arguments: Backend.available)
    func aKeyOfNineColumnsIsNotReportedAsKnownNulls(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        _ = try await OANine.save([OANine(a: 0, b: 0, c: 0, d: 0, e: 0, f: 0, g: 0, h: 0, i: 0)], in: store)
        let changes = Collected<ModelChanges<OANine>>()
        let stream = try store.changes(of: OANine.self) { changes.add($0) }
        _ = try await OANine.save(
            [OANine(a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9), OANine(a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 10)],
            in: store)
        #expect(await eventually { changes.current.count == 1 })
        let change = try #require(changes.current.first)
        let plausible =
            !change.keysAreKnown || (change.inserted.count == 2 && change.inserted.allSatisfy { $0.count == 9 && !$0.contains(.null) })
        #expect(plausible, "keysAreKnown \(change.keysAreKnown), inserted \(change.inserted)")
        // An insert of one record and a delete of another in one transaction: not "nothing".
        try await store.transaction {
            try OANine(a: 5, b: 5, c: 5, d: 5, e: 5, f: 5, g: 5, h: 5, i: 5).save(in: store)
            _ = try OANine.deleteAll(where: \.i == 0, in: store)
        }
        #expect(await eventually { changes.current.count == 2 })
        let second = try #require(changes.current.last)
        #expect(
            !second.keysAreKnown || (second.inserted.count == 1 && second.deleted.count == 1),
            "keysAreKnown \(second.keysAreKnown), inserted \(second.inserted), deleted \(second.deleted)")
        stream.cancel()
    }

    @Test(arguments: Backend.available)
    func uuidBlobKeysAreReportedAsUUIDs(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        let first = UUID()
        let second = UUID()
        try await OAUser(id: first, name: "a").save(in: store)
        let changes = Collected<ModelChanges<OAUser>>()
        let stream = try store.changes(of: OAUser.self) { changes.add($0) }
        try await OAUser(id: second, name: "b").save(in: store)
        try await OAUser(id: first, name: "a2").save(in: store)
        _ = try await OAUser.delete(key: second, in: store)
        #expect(await eventually { changes.current.count == 3 })
        let all = changes.current
        #expect(try all[0].keys(\.inserted, as: UUID.self) == [second])
        #expect(try all[1].keys(\.updated, as: UUID.self) == [first])
        #expect(try all[2].keys(\.deleted, as: UUID.self) == [second])
        stream.cancel()
    }

    /// A WITHOUT ROWID table with a composite text key, made by another tool.
    @Test(arguments: Backend.available)
    func aWithoutRowidTableMadeByAnotherToolReportsItsKeys(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        // (The server has no WITHOUT ROWID: its tables are all like that.)
        try store.rawExecute(
            "CREATE TABLE \"OAPair\" (\"left\" TEXT NOT NULL, \"right\" BIGINT NOT NULL, note TEXT, PRIMARY KEY (\"left\", \"right\"))"
                + (backend == .sqlite ? " WITHOUT ROWID" : "")
        )
        try store.rawExecute("INSERT INTO \"OAPair\" VALUES ('x', 1, NULL)")
        let changes = Collected<ModelChanges<OAPair>>()
        let stream = try store.changes(of: OAPair.self) { changes.add($0) }
        try await OAPair(left: "y", right: 2).save(in: store)
        try await OAPair(left: "x", right: 1, note: "n").save(in: store)
        _ = try await OAPair.delete(key: ["left": "y", "right": 2], in: store)
        #expect(await eventually { changes.current.count == 3 })
        let all = changes.current
        guard all.count == 3 else { return }
        #expect(all[0].inserted == [[.text("y"), .integer(2)]])
        #expect(all[1].updated == [[.text("x"), .integer(1)]])
        #expect(all[2].deleted == [[.text("y"), .integer(2)]])
        stream.cancel()
    }

    /// Savepoints: the rolled-back inner block's writes vanish, the rest is reported net.
    @Test(arguments: Backend.available)
    func nestedBlocksWithAPartialRollbackReportOnlyWhatCommitted(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        _ = try await OANote.save([OANote(id: 1, text: "a"), OANote(id: 2, text: "b")], in: store)
        let changes = Collected<ModelChanges<OANote>>()
        let stream = try store.changes(of: OANote.self) { changes.add($0) }
        try await store.transaction {
            try OANote(id: 3, text: "kept").save(in: store)
            _ = try? store.transaction {
                try OANote(id: 4, text: "gone").save(in: store)
                _ = try OANote.delete(key: 1, in: store)
                _ = try store.transaction { try OANote(id: 2, text: "changed, rolled back").save(in: store) }
                throw Abort()
            }
            _ = try store.transaction { try OANote(id: 5, text: "inner kept").save(in: store) }
            _ = try OANote.delete(key: 2, in: store)
        }
        #expect(await eventually { changes.current.count == 1 })
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(changes.current.count == 1)
        let change = try #require(changes.current.first)
        #expect(ints(change.inserted) == [3, 5])
        #expect(ints(change.updated) == [])
        #expect(ints(change.deleted) == [2])
        stream.cancel()
    }

    /// Observers coming and going (each moves the tracker's generation) while another stream
    /// watches a steady table: its transactions must keep their keys.
    @Test(arguments: Backend.available)
    func observersComingAndGoingDoNotCostASteadyStreamItsKeys(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try await OAThing(id: 1, name: "t").save(in: store)
        try await OANote(id: 0, text: "seed").save(in: store)
        let changes = Collected<ModelChanges<OANote>>()
        let stream = try store.changes(of: OANote.self) { changes.add($0) }
        let churn = Task.detached {
            for round in 0..<300 {
                if round % 2 == 0 {
                    let token = store.observe({ try OAThing.count(in: store) }) { _ in }
                    try? await Task.sleep(nanoseconds: 1_000_000)
                    token.cancel()
                } else {
                    let token = try? store.changes(of: OAThing.self) { _ in }
                    try? await Task.sleep(nanoseconds: 1_000_000)
                    token?.cancel()
                }
            }
        }
        for id in Int64(1)...200 { try await OANote(id: id, text: "n").save(in: store) }
        await churn.value
        #expect(await eventually(10) { changes.current.count == 200 })
        let unknown = changes.current.filter { !$0.keysAreKnown }.count
        #expect(unknown == 0, "\(unknown) of \(changes.current.count) transactions lost their keys to unrelated observers")
        let known = changes.current.filter(\.keysAreKnown).flatMap { ints($0.inserted) }
        #expect(known == known.sorted(), "known keys out of order")
        stream.cancel()
        #expect(await eventually { store.changeTracker.observerCount == 0 })
    }

    // MARK: Ordering, volume, slow consumers

    /// A slow consumer of a change stream still gets every transaction, in order.
    @Test(arguments: StoreKind.allCases)
    func aSlowStreamConsumerGetsEveryTransactionInOrder(_ kind: StoreKind) async throws {
        let test = try TestStore(kind)
        let store = test.store
        try await OANote(id: 0, text: "seed").save(in: store)
        let received = Collected<[Int64]>()
        let stream = store.changes(of: OANote.self)
        let consumer = Task(priority: .high) {
            for await change in stream {
                received.add(ints(change.inserted) + ints(change.updated))
                try? await Task.sleep(nanoseconds: 2_000_000)
            }
        }
        try await Task.sleep(nanoseconds: 50_000_000)
        for id in Int64(1)...300 { try await OANote(id: id, text: "n").save(in: store) }
        #expect(await eventually(20) { received.current.count == 300 })
        #expect(received.current == (Int64(1)...300).map { [$0] })
        consumer.cancel()
    }

    /// 100,000 changes in one transaction are one change with every key, in order.
    @Test(arguments: Backend.available)
    func aHundredThousandChangesInOneTransaction(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try await OANote(id: 0, text: "seed").save(in: store)
        let changes = Collected<ModelChanges<OANote>>()
        let stream = try store.changes(of: OANote.self) { changes.add($0) }
        // On a server each row's change is a trigger call and a log row, which beside the rest
        // of the suite (and under coverage) took 40 s for 100,000: 20,000 there keep the
        // promise (one change, every key, in order) without loading the shared server.
        let count: Int64 = backend == .sqlite ? 100_000 : 20_000
        let started = Date()
        _ = try await OANote.save((1...count).map { OANote(id: $0, text: "n") }, in: store)
        #expect(await eventually(90) { changes.current.count == 1 })
        let elapsed = Date().timeIntervalSince(started)
        let change = try #require(changes.current.first)
        #expect(change.inserted.count == Int(count))
        #expect(ints(change.inserted) == Array(Int64(1)...count))
        // A bound for a cost that grows with the square of the changes (which would take many
        // minutes), not a speed goal: beside the whole suite on a machine whose host takes a
        // fifth of its CPU, the linear cost took 33 s (SQLite) and 46 s (PostgreSQL).
        #expect(elapsed < 75, "took \(elapsed)s")
        if backend == .sqlite {
            let leftovers = try writerLeftovers(store)
            #expect(leftovers.rows == .integer(0))
        }
        stream.cancel()
    }

    /// Thousands of observers: all hear one commit, all go away when cancelled.
    @Test(arguments: Backend.available)
    func twoThousandObservers(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try await OANote(id: 1, text: "a").save(in: store)
        let latest = Locked<[Int: Int]>([:])
        var tokens: [ObservationToken] = []
        for index in 0..<1500 {
            tokens.append(
                store.observe({ try OANote.count(in: store) }) { result in
                    if case .success(let count) = result { latest.withLock { $0[index] = count } }
                })
        }
        let streamed = Locked(0)
        for _ in 0..<500 { tokens.append(try store.changes(of: OANote.self) { _ in streamed.withLock { $0 += 1 } }) }
        #expect(await eventually(60) { latest.current.count == 1500 })
        let started = Date()
        try await OANote(id: 2, text: "b").save(in: store)
        #expect(await eventually(60) { latest.current.values.allSatisfy { $0 == 2 } && streamed.current == 500 })
        // A guard against a pathological slowdown, not a benchmark: under coverage, on 2 cores,
        // beside the PostgreSQL half of the suite, the 2,000 deliveries took 24 s.
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed < 50, "took \(elapsed)s")
        tokens.removeAll()
        #expect(await eventually { store.changeTracker.observerCount == 0 })
    }

    // MARK: Re-entrancy and hangs

    /// Handlers that write and read synchronously, and a fetch that writes another table.
    @Test(arguments: Backend.available)
    func handlersAndFetchesThatWriteNeitherHangNorLoop(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try await OANote(id: 0, text: "seed").save(in: store)
        let logged = Locked(0)
        let stream = try store.changes(of: OANote.self) { change in
            for key in ints(change.inserted) {
                _ = try? OALog(id: key, line: "saw \(key)").save(in: store)
            }
            if let count = try? OALog.count(in: store) { logged.withLock { $0 = count } }
        }
        let fetches = Locked(0)
        let seen = Collected<Int>()
        let live = store.observe({ () throws -> Int in
            let run = fetches.withLock {
                $0 += 1; return $0
            }
            try OAThing(id: Int64(run), name: "fetch \(run)").save(in: store)  // writes a table it does not read
            return try OANote.count(in: store)
        }) { result in if case .success(let count) = result { seen.add(count) } }
        for id in Int64(1)...20 { try await OANote(id: id, text: "n").save(in: store) }
        #expect(await eventually(10) { logged.current == 20 }, "logged \(logged.current)")
        #expect(await eventually(10) { seen.current.last == 21 }, "\(seen.current)")
        try await Task.sleep(nanoseconds: 300_000_000)
        let settled = fetches.current
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(fetches.current == settled, "fetches keep running: \(settled) → \(fetches.current)")
        live.cancel()
        stream.cancel()
    }

    /// A live query whose fetch runs async forms of calls through a nested Task: must not hang.
    @Test func closingWhileAFetchRunsNeitherHangsNorLeaks() async throws {
        weak var released: ModelStore?
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("oa-close-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let ended = Locked(false)
        do {
            let store = try ModelStore(path: directory.appendingPathComponent("s.sqlite").path)
            released = store
            try await OANote(id: 1, text: "a").save(in: store)
            let inFetch = Locked(0)
            let task = Task(priority: .high) {
                do {
                    for try await _ in store.observe({ () throws -> Int in
                        inFetch.withLock { $0 += 1 }
                        Thread.sleep(forTimeInterval: 0.3)
                        return try OANote.count(in: store)
                    }) {}
                } catch {}
                ended.withLock { $0 = true }
            }
            let token = store.observe({ () throws -> Int in
                Thread.sleep(forTimeInterval: 0.3)
                return try OANote.count(in: store)
            }) { _ in }
            #expect(await eventually { inFetch.current == 1 })
            let closed = await finishes(within: 10) { try? store.close() }
            #expect(closed, "close() hung while a fetch ran")
            #expect(await eventually(5) { ended.current })
            token.cancel()
            task.cancel()
        }
        #expect(await eventually(5) { released == nil }, "the closed store was never freed")
    }

    /// Observing a model whose table does not exist yet; the first save creates it.
    @Test(arguments: StoreKind.allCases)
    func aLiveQueryOfAModelNeverWrittenSeesTheFirstSave(_ kind: StoreKind) async throws {
        let test = try TestStore(kind)
        let store = test.store
        let counts = Collected<Int>()
        let token = store.observe({ try OANote.count(in: store) }) { result in if case .success(let count) = result { counts.add(count) } }
        #expect(await eventually { counts.current == [0] })
        try await OANote(id: 1, text: "a").save(in: store)
        #expect(await eventually(3) { counts.current.last == 1 }, "\(counts.current)")
        token.cancel()
    }

    /// Another store on the file drops and recreates an observed table (the writer's temp
    /// triggers go with it); later writes through this store must still be reported with keys.
    @Test(arguments: Backend.available)
    func aTableRecreatedBehindTheStoresBackIsStillObserved(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try await OANote(id: 1, text: "a").save(in: store)
        let changes = Collected<ModelChanges<OANote>>()
        let stream = try store.changes(of: OANote.self) { changes.add($0) }
        try await OANote(id: 2, text: "b").save(in: store)
        #expect(await eventually { changes.current.count == 1 })
        let other = try test.another()
        try other.rawExecute("DROP TABLE \"OANote\"")
        try other.rawExecute("CREATE TABLE \"OANote\" (id BIGINT PRIMARY KEY NOT NULL, text TEXT NOT NULL)")
        try other.rawExecute("INSERT INTO \"OANote\" VALUES (5, 'x')")
        try other.close()
        #expect(await eventually(3) { changes.current.contains { !$0.keysAreKnown } })
        if backend == .postgres {
            // The feed may have looked between the DROP and the CREATE, when there was no table
            // to make triggers on: it makes them at its next look (half a second at most), and
            // a write before then is an unknown change, as PostgresChangeFeed documents for a
            // table made behind its back. Writes are keyed once its triggers are back.
            struct Triggers: Decodable, Sendable { var count: Int64 }
            let triggers: SQLStatement = """
                SELECT count(*) AS count FROM pg_catalog.pg_trigger
                WHERE tgrelid = to_regclass('"OANote"') AND tgname = 'modelstore_record_insert'
                """
            #expect(await eventually { (try? store.findFirst(Triggers.self, sql: triggers))?.count == 1 }, "the feed made no triggers")
        }
        let before = changes.current.count
        try await OANote(id: 6, text: "mine").save(in: store)
        // The other store's three commits may reach the poll in two rounds, so an unknown
        // change can still arrive after this store's own write: look for the write's own.
        #expect(
            await eventually { changes.current.dropFirst(before).contains { $0.keysAreKnown && ints($0.inserted) == [6] } },
            "\(changes.current.dropFirst(before))")
        try await OANote(id: 7, text: "mine too").save(in: store)
        #expect(await eventually { changes.current.contains { $0.keysAreKnown && ints($0.inserted) == [7] } })
        stream.cancel()
    }
}
