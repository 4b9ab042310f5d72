import Foundation
import ReliabilityFixtures
import Testing
@testable import ModelStore

private struct Note: StoredModel, Equatable {
    var id: Int64
    var text: String
    static let primaryKey = ["id"]
}

private struct Rack: StoredModel, Equatable {
    var id: Int64
    var name: String
    var items: [Ware]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Rack>] = [.toMany(\.items, inverse: \Ware.rack, deleteRule: .cascade)]
}

private struct Ware: StoredModel, Equatable {
    var id: Int64
    var label: String
    @Related var rack: Rack?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Ware>] = [.toOne(\.rack, inverse: \Rack.items)]
}

/// A task that iterates `sequence`, collecting each element.
private func collect<S: AsyncSequence & Sendable>(_ sequence: S) -> (Collected<S.Element>, Task<Void, any Error>)
where S.Element: Sendable {
    let collected = Collected<S.Element>()
    let task = Task(priority: .high) {
        for try await value in sequence { collected.add(value) }
    }
    return (collected, task)
}

// Both backends: SQLite's temp triggers, and the server's change log (PostgresChangeFeed).
@Suite("Observation: live queries and change streams")
struct ObservationTests {
    // MARK: Live queries

    @Test(arguments: StoreKind.allCases)
    func aLiveQueryYieldsAtOnceThenAfterEachCommitThatChangesIt(_ kind: StoreKind) async throws {
        let test = try TestStore(kind)
        let store = test.store
        try await Note(id: 1, text: "a").save(in: store)
        let (seen, task) = collect(Note.all().observe(in: store))
        defer { task.cancel() }
        #expect(await eventually { seen.current.count == 1 })
        #expect(seen.current.last == [Note(id: 1, text: "a")])
        try await Note(id: 2, text: "b").save(in: store)
        #expect(await eventually { seen.current.last?.count == 2 })
        try await store.transaction {
            try Note(id: 3, text: "c").save(in: store)
            _ = try Note.delete(key: 1, in: store)
        }
        #expect(await eventually { seen.current.last?.map(\.id) == [2, 3] })
    }

    @Test(arguments: Backend.available)
    func equalResultsAreNotRepeatedAndUnrelatedCommitsDoNotRefetch(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        let fetches = Locked(0)
        let delivered = Collected<Int>()
        let token = store.observe({ () throws -> Int in
            fetches.withLock { $0 += 1 }
            return try Note.filter(\.text == "x").count(in: store)
        }) { result in if case .success(let count) = result { delivered.add(count) } }
        #expect(eventually { delivered.current == [0] })
        // Another table: no fetch at all.
        let before = fetches.current
        for id in Int64(1)...20 { try Snack(snackId: id, name: "s").save(in: store) }
        Thread.sleep(forTimeInterval: 0.2)
        #expect(fetches.current == before)
        // The table, but not the result: fetched again, not delivered again.
        try Note(id: 1, text: "y").save(in: store)
        #expect(eventually { fetches.current > before })
        try Note(id: 2, text: "x").save(in: store)
        #expect(eventually { delivered.current == [0, 1] })
        Thread.sleep(forTimeInterval: 0.1)
        #expect(delivered.current == [0, 1])
        token.cancel()
    }

    @Test(arguments: Backend.available)
    func aSlowConsumerGetsTheLatestResultNotABacklog(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        var iterator = store.observe { try Note.count(in: store) }.makeAsyncIterator()
        #expect(try await iterator.next() == 0)
        for id in 1...200 { try await Note(id: Int64(id), text: "n").save(in: store) }
        // The consumer was away for all 200 commits: it gets few values, ending with 200.
        var received: [Int] = []
        while received.last != 200 {
            guard let value = try await iterator.next() else { break }
            received.append(value)
        }
        #expect(received.last == 200)
        #expect(received.count <= 3, "\(received)")
    }

    @Test(arguments: Backend.available)
    func relationshipLoadingObservesTheRelatedTablesToo(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try await Rack(id: 1, name: "top", items: [Ware(id: 1, label: "cup")]).save(in: store)
        let (seen, task) = collect(Rack.observe(key: 1, loading: .direct, in: store))
        defer { task.cancel() }
        #expect(await eventually { seen.current.last??.items?.map(\.label) == ["cup"] })
        var item = try #require(try await Ware.find(key: 1, in: store))
        item.label = "mug"
        try await item.save(in: store)
        #expect(await eventually { seen.current.last??.items?.map(\.label) == ["mug"] })
    }

    /// A live query's fetch runs on ModelStore's own threads, never on the global queue: on Linux
    /// the global queue's threads are the concurrency pool's, which stops growing while one of
    /// its threads is busy, and a fetch that kept one busy (a count over a table another
    /// process kept growing) held back every task waiting for a thread until it ended.
    @Test(arguments: Backend.available)
    func aLiveQuerysFetchRunsOnTheStoresOwnThreadsNotTheSharedPool(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        let labels = Collected<String>()
        let token = store.observe({ () -> Int in
            labels.add(WorkerThreads.isCurrentThreadAWorker ? "worker" : Thread.current.name ?? "?")
            return try Note.count(in: store)
        }) { _ in }
        #expect(await eventually { !labels.current.isEmpty })
        try await Note(id: 1, text: "a").save(in: store)
        // (A server's feed fetches once more when it first records a table: what changed
        // between the first fetch and the trigger is unknown.)
        #expect(await eventually { labels.current.count >= 2 })
        token.cancel()
        #expect(labels.current.allSatisfy { $0 == "worker" }, "\(labels.current)")
    }

    @Test(arguments: Backend.available)
    func aRolledBackTransactionYieldsNothing(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        let changes = Collected<ModelChanges<Note>>()
        let token = try store.changes(of: Note.self) { changes.add($0) }
        struct Abort: Error {}
        _ = try? store.transaction {
            try Note(id: 1, text: "gone").save(in: store)
            throw Abort()
        }
        // A savepoint rolled back inside a committed transaction takes its rows along too.
        try store.transaction {
            _ = try? store.transaction {
                try Note(id: 2, text: "gone too").save(in: store)
                throw Abort()
            }
            try Note(id: 3, text: "kept").save(in: store)
        }
        #expect(eventually { changes.current.count == 1 })
        Thread.sleep(forTimeInterval: 0.1)
        #expect(changes.current.count == 1)
        #expect(try changes.current.first?.keys(\.inserted, as: Int64.self) == [3])
        token.cancel()
    }

    // MARK: Change streams

    @Test(arguments: Backend.available)
    func tenThousandSavesInOneTransactionAreOneChange(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        var iterator = store.changes(of: Note.self).makeAsyncIterator()
        try await store.transaction {
            for id in 1...10_000 { try Note(id: Int64(id), text: "n").save(in: store) }
        }
        try await Note(id: 1, text: "changed").save(in: store)
        let first = try #require(await iterator.next())
        #expect(try first.keys(\.inserted, as: Int64.self) == Array(1...10_000))
        #expect(first.updated.isEmpty && first.deleted.isEmpty && first.keysAreKnown)
        let second = try #require(await iterator.next())
        #expect(try second.keys(\.updated, as: Int64.self) == [1])
    }

    @Test(arguments: Backend.available)
    func everyWritePathReportsItsKeys(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        var notes = store.changes(of: Note.self).makeAsyncIterator()
        var items = store.changes(of: Ware.self).makeAsyncIterator()
        func next() async throws -> (inserted: [Int64], updated: [Int64], deleted: [Int64]) {
            let change = try #require(await notes.next())
            return (
                try change.keys(\.inserted, as: Int64.self), try change.keys(\.updated, as: Int64.self),
                try change.keys(\.deleted, as: Int64.self)
            )
        }
        _ = try await Note.save([Note(id: 1, text: "a"), Note(id: 2, text: "b")], in: store)  // batch save
        #expect(try await next() == ([1, 2], [], []))
        _ = try await Note.save([Note(id: 1, text: "a"), Note(id: 2, text: "B"), Note(id: 3, text: "c")], in: store)  // unchanged 1
        #expect(try await next() == ([3], [2], []))
        _ = try await Note.filter(\.id >= 2).updateAll(.set(\.text, to: "z"), in: store)  // updateAll
        #expect(try await next() == ([], [2, 3], []))
        _ = try await Note.deleteAll(where: \.id == 3, in: store)  // deleteAll by condition
        #expect(try await next() == ([], [], [3]))
        try await Note(id: 4, text: "async").save(in: store)  // async form
        #expect(try await next() == ([4], [], []))
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in  // completion form
            Note(id: 5, text: "completion").save(in: store) { _ in done.resume() }
        }
        #expect(try await next() == ([5], [], []))
        try store.rawExecute("DELETE FROM \"Note\" WHERE id = 5")  // raw SQL
        #expect(try await next() == ([], [], [5]))

        // A graph save reports the related models; a cascade reports what it removed.
        try await Rack(id: 1, name: "s", items: [Ware(id: 7, label: "a"), Ware(id: 8, label: "b")]).save(in: store)
        let saved = try #require(await items.next())
        #expect(try saved.keys(\.inserted, as: Int64.self) == [7, 8])
        _ = try await Rack.delete(key: 1, in: store)
        let cascaded = try #require(await items.next())
        #expect(try Set(cascaded.keys(\.deleted, as: Int64.self)) == [7, 8])
    }

    @Test(arguments: Backend.available)
    func aTableCreatedByTheObservedTransactionReportsEveryRecord(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        var iterator = store.changes(of: Note.self).makeAsyncIterator()
        _ = try await Note.save([Note(id: 1, text: "a"), Note(id: 2, text: "b")], in: store)  // creates the table
        let change = try #require(await iterator.next())
        #expect(try change.keys(\.inserted, as: Int64.self) == [1, 2])
    }

    @Test(arguments: Backend.available)
    func anotherProcessesCommitIsNoticed(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        _ = try await Parcel.save(Parcel.batch(1), in: store)
        let counts = Collected<Int>()
        let token = store.observe({ try Parcel.count(in: store) }) { result in if case .success(let count) = result { counts.add(count) } }
        var changes = store.changes(of: Parcel.self).makeAsyncIterator()
        #expect(await eventually { counts.current == [Parcel.count(inBatch: 1)] })
        let writer = try HelperProcess("write-batches", path: try test.processArgument())
        try writer.waitFor("started")
        #expect(await eventually { (counts.current.last ?? 0) > Parcel.count(inBatch: 1) })
        writer.stop()
        let external = try #require(await changes.next())
        switch backend {
        case .sqlite:
            // SQLite learns of another process's commit from the file's version: no keys.
            #expect(!external.keysAreKnown)
        case .postgres:
            // The server's change log has every writer's keys: the helper's second batch.
            #expect(external.keysAreKnown)
            #expect(try external.keys(\.inserted, as: Int64.self) == Parcel.batch(2).map(\.id))
        }
        token.cancel()
    }

    // MARK: Ending

    @Test(arguments: Backend.available)
    func cancellingAnObservationRemovesItsObserver(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        let (_, task) = collect(store.observe { try Note.count(in: store) })
        let token = store.observe({ try Note.count(in: store) }) { _ in }
        var stream: AsyncStream<ModelChanges<Note>>.Iterator? = store.changes(of: Note.self).makeAsyncIterator()
        #expect(await eventually { store.changeTracker.observerCount == 3 })
        task.cancel()
        token.cancel()
        stream = nil
        _ = stream
        #expect(await eventually { store.changeTracker.observerCount == 0 })
        // A write afterwards clears the triggers.
        try await Note(id: 1, text: "a").save(in: store)
        switch backend {
        case .sqlite:
            // The writer's temp schema (readers have their own).
            let writerTriggers = try await store.write { session in
                try session.connection.scalar("SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger'")
            }
            #expect(writerTriggers == .integer(0))
        case .postgres:
            // The feed's listening connection closes with the last observer.
            #expect(store.changeTracker.activeFeed == nil)
        }
    }

    @Test func closingAStoreEndsItsObservationsWithClosedAndFreesIt() async throws {
        weak var released: ModelStore?
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("observe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let finished = Locked(false)
        do {
            let store = try ModelStore(path: directory.appendingPathComponent("s.sqlite").path)
            released = store
            let task = Task(priority: .high) {
                // A live query whose store closes throws `.closed`: its loop can tell that from
                // a normal end.
                do {
                    for try await _ in store.observe({ try Note.count(in: store) }) {}
                } catch ModelStoreError.Code.closed {
                    finished.withLock { $0 = true }
                }
            }
            #expect(await eventually { store.changeTracker.observerCount == 1 })
            try store.close()
            _ = try await task.value
        }
        #expect(finished.current)
        #expect(await eventually { released == nil })
    }
}

private struct Pairing: StoredModel, Equatable {
    var left: String
    var right: Int64
    var note: String?
    static let primaryKey = ["left", "right"]
}

/// Invalid: an optional key that is not a single integer (SQLite assigns only those).
private struct Broken: StoredModel {
    var id: String?
    static let primaryKey = ["id"]
}

extension ObservationTests {
    @Test(arguments: Backend.available)
    func compositeKeysAndKeyChangesAreReportedAsTheyHappen(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        var changes = store.changes(of: Pairing.self).makeAsyncIterator()
        _ = try await Pairing.save([Pairing(left: "a", right: 1), Pairing(left: "b", right: 2)], in: store)
        let inserted = try #require(await changes.next())
        #expect(inserted.inserted == [[.text("a"), .integer(1)], [.text("b"), .integer(2)]])
        // Raw SQL that changes a key: the old record is gone, a new one is there.
        try store.rawExecute("UPDATE \"Pairing\" SET \"right\" = 3 WHERE \"left\" = 'a'")
        let moved = try #require(await changes.next())
        #expect(moved.deleted == [[.text("a"), .integer(1)]])
        #expect(moved.inserted == [[.text("a"), .integer(3)]])
        #expect(moved.updated.isEmpty)
        // Inserted and deleted in one transaction: never visible outside it.
        try await store.transaction {
            try Pairing(left: "t", right: 9).save(in: store)
            _ = try Pairing.delete(key: ["left": "t", "right": 9], in: store)
            try Pairing(left: "b", right: 2, note: "n").save(in: store)
        }
        let net = try #require(await changes.next())
        #expect(net.inserted.isEmpty && net.deleted.isEmpty)
        #expect(net.updated == [[.text("b"), .integer(2)]])
    }

    @Test(arguments: Backend.available)
    func linkingRecordsReRunsALiveQueryThatLoadsTheRelationship(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try await Worker(id: 1, name: "Wu").save(in: store)
        try await Food(id: 1, name: "Pocky").save(in: store)
        let (seen, task) = collect(Worker.observe(key: 1, loading: .direct, in: store))
        defer { task.cancel() }
        #expect(await eventually { seen.current.last??.snacks == [] || seen.current.last??.snacks == nil })
        // Only the join table changes.
        try store.rawExecute("INSERT INTO \"Food_workers__Worker_snacks\" VALUES (1, 1)")
        #expect(await eventually { seen.current.last??.snacks?.map(\.id) == [1] }, "\(seen.current)")
    }

    @Test(arguments: Backend.available)
    func anotherStoresMigrationOnTheFileReachesTheObservers(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try await Note(id: 1, text: "a").save(in: store)
        let counts = Collected<Int>()
        let token = store.observe({ try Note.count(in: store) }) { result in if case .success(let count) = result { counts.add(count) } }
        #expect(await eventually { counts.current == [1] })
        let migrating = try test.another(
            configuration: .init(migrations: [.sql("more notes", "INSERT INTO \"Note\" (id, text) VALUES (2, 'b'), (3, 'c')")]))
        #expect(await eventually { counts.current.last == 3 })
        try migrating.close()
        token.cancel()
    }

    @Test func aFetchThatFailsEndsTheSequenceWithItsError() async throws {
        let test = try TestStore()
        let store = test.store
        do {
            for try await _ in store.observe({ try Broken.count(in: store) }) {}
            Issue.record("the sequence ended without the error")
        } catch let error as ModelStoreError {
            #expect(error.code == .invalidModel)
        }
        // The handler form reports it and goes on observing.
        let results = Collected<Bool>()
        let token = store.observe({ try Broken.count(in: store) }) { result in
            if case .failure = result { results.add(true) }
        }
        #expect(await eventually { results.current == [true] })
        token.cancel()
        #expect(await eventually { store.changeTracker.observerCount == 0 })
    }

    @Test(arguments: Backend.available)
    func observingFromInsideATransactionBlockNeitherDeadlocksNorMissesItsCommit(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        let counts = Collected<Int>()
        let token = try store.transaction { () throws -> ObservationToken in
            try Note(id: 1, text: "uncommitted while the block runs").save(in: store)
            return store.observe({ try Note.count(in: store) }) { result in if case .success(let count) = result { counts.add(count) } }
        }
        // The first fetch may come before the commit (it reads what is committed) or after:
        // either way the commit reaches the observer.
        #expect(eventually { counts.current.last == 1 }, "\(counts.current)")
        token.cancel()
    }
}
