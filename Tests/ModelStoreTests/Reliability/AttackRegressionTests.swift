import Foundation
import Testing
@testable import ModelStore

struct AtkGadget: StoredModel, Equatable {
    var id: Int64
    var n: Int64
    static let primaryKey = ["id"]
}

struct AtkPerson: StoredModel, Equatable {
    var id: Int64
    var name: String
    static let primaryKey = ["id"]
}

struct AtkIndexed: StoredModel, Equatable {
    var id: Int64
    var price: Double?
    static let primaryKey = ["id"]
    static let indexes: [TableIndex<AtkIndexed>] = [.on(\.price)]
}

struct AtkGrow: StoredModel, Equatable {
    var id: Int64
    var a: String?
    var b: String?
    static let primaryKey = ["id"]
}

struct AtkDrop: StoredModel, Equatable {
    var id: Int64
    var note: String?
    static let primaryKey = ["id"]
}

/// Regressions for an adversarial review of this round's changes: each test failed before
/// its fix.
@Suite("Reliability: attacks on this round's promises")
struct AttackRegressionTests {
    @Test(arguments: Backend.available) func aColumnRetypedBeforeAStoresFirstWriteIsNoticedByThatWrite(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try AtkGadget(id: 1, n: 5).save(in: test.store)
        let other = try test.later()
        #expect(try AtkGadget.find(key: 1, in: other) == AtkGadget(id: 1, n: 5))  // its reader checks the table
        let (integer, real) = backend == .sqlite ? ("INTEGER", "REAL") : ("BIGINT", "DOUBLE PRECISION")
        try test.rawExecute(#"CREATE TABLE "Rebuilt" (id \#(integer) PRIMARY KEY, n \#(real))"#)
        try test.rawExecute(#"INSERT INTO "Rebuilt" SELECT id, n FROM "AtkGadget""#)
        try test.rawExecute(#"DROP TABLE "AtkGadget""#)
        try test.rawExecute(#"ALTER TABLE "Rebuilt" RENAME TO "AtkGadget""#)
        #expect(errorCode { _ = try AtkGadget(id: 2, n: 9_007_199_254_740_993).save(in: other) } == .schemaMismatch)
        #expect(try test.rawRows(#"SELECT count(*) FROM "AtkGadget""#) == [[.integer(1)]])
    }

    @Test(arguments: Backend.available) func aReadOnlyStoreReadsAModelWhoseIndexOrJoinTableTheFileLacks(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let (integer, real) = backend == .sqlite ? ("INTEGER", "REAL") : ("BIGINT", "DOUBLE PRECISION")
        try test.rawExecute(#"CREATE TABLE "AtkIndexed" ("id" \#(integer) PRIMARY KEY, "price" \#(real))"#)
        try test.rawExecute(#"INSERT INTO "AtkIndexed" VALUES (1, 2.5)"#)
        try test.rawExecute(#"CREATE TABLE "Food" ("id" \#(integer) PRIMARY KEY, "name" TEXT)"#)
        try test.rawExecute(#"INSERT INTO "Food" VALUES (1, 'rice')"#)
        let store = try test.later(configuration: .init(readOnly: true))
        #expect(try AtkIndexed.count(in: store) == 1)
        #expect(try store.read { try AtkIndexed.findAll(in: store) } == [AtkIndexed(id: 1, price: 2.5)])
        // Food's many-to-many join table and Worker's table do not exist: no links, no workers.
        #expect(try Food.find(key: 1, loading: .all, in: store)?.workers == [])
    }

    @Test(arguments: Backend.available, [ModelStore.ReadOrdering.latestCommitted, .afterEarlierWrites])
    func closeFinishesEveryReadSubmittedBeforeIt(_ backend: Backend, _ ordering: ModelStore.ReadOrdering) throws {
        let test = try TestStore(.file, or: backend, configuration: .init(readOrdering: ordering))
        try Snack(snackId: 1).save(in: test.store)
        let group = DispatchGroup()
        let failures = Locked(0)
        for _ in 0..<200 {
            group.enter()
            Snack.count(in: test.store) { result in
                if case .failure = result { failures.withLock { $0 += 1 } }
                group.leave()
            }
        }
        try test.store.close()
        group.wait()
        #expect(failures.current == 0)
    }

    @Test(arguments: Backend.available) func closeFinishesASubmittedReadThatNeedsTheWriter(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try test.rawExecute("CREATE TABLE \"AtkGrow\" (\"id\" BIGINT PRIMARY KEY, \"a\" TEXT)")
        try test.rawExecute("INSERT INTO \"AtkGrow\" VALUES (1, 'x')")
        let store = test.store
        let gate = DispatchSemaphore(value: 0), began = DispatchSemaphore(value: 0)
        store.transaction(
            {
                began.signal(); gate.wait()
            }, completion: { _ in })
        began.wait()
        let result = Locked<Result<AtkGrow?, ModelStoreError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        AtkGrow.find(key: 1, in: store) { found in
            result.withLock { $0 = found }; done.signal()
        }
        let closed = DispatchSemaphore(value: 0)
        onAThread {
            try? store.close(); closed.signal()
        }
        Thread.sleep(forTimeInterval: 0.2)
        gate.signal()
        closed.wait()
        done.wait()
        #expect((try? result.current?.get())??.a == "x")
    }

    // SQLite-only: opens the store's file again or looks at it on disk.
    @Test func closeSaysWhenAnotherConnectionKeptPartOfTheLogOutOfTheFile() throws {
        let test = try TestStore(.file, configuration: .init(busyTimeout: 0.5))
        let path = test.store.path!
        try Snack(snackId: 1).save(in: test.store)
        let other = try ModelStore(path: path)
        let opened = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), finished = DispatchSemaphore(value: 0)
        onAThread {
            _ = try? other.read { () -> Int in
                let count = try Snack.count(in: other)
                opened.signal()
                release.wait()
                return count
            }
            finished.signal()
        }
        opened.wait()
        try Snack(snackId: 2).save(in: test.store)
        let error = try #require(throws: ModelStoreError.self) { try test.store.close() }
        #expect(error.code == .busy)
        #expect(errorCode { _ = try Snack.count(in: test.store) } == .closed)  // closed all the same
        release.signal()
        finished.wait()
        try other.close()  // the last connection folds everything in
        let copy = test.directory.appendingPathComponent("copy.sqlite").path
        try Data(contentsOf: URL(fileURLWithPath: path)).write(to: URL(fileURLWithPath: copy))
        #expect(try Snack.count(in: try ModelStore(path: copy)) == 2)
    }

    @Test(arguments: Backend.available) func aTableDroppedBehindTheStoresBackStaysAnErrorAfterAnUnrelatedWrite(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        _ = try AtkDrop.save((1...5).map { AtkDrop(id: $0, note: "keep") }, in: test.store)
        let other = try test.later()
        try other.rawExecute(#"DROP TABLE "AtkDrop""#)
        try Snack(snackId: 1).save(in: test.store)  // notices the schema change
        #expect(errorCode { _ = try AtkDrop.count(in: test.store) } == .schemaMismatch)
        #expect(errorCode { _ = try test.store.read { try AtkDrop.findAll(in: test.store) } } == .schemaMismatch)
        #expect(errorCode { _ = try AtkDrop(id: 9).save(in: test.store) } == .schemaMismatch)
    }

    @Test(arguments: Backend.available) func aGraphSaveThatWritesRelatedRecordsIsNotUnchanged(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try Team(id: 1, name: "T", players: [Player(id: 1, name: "P1")]).save(in: test.store)
        #expect(
            try Team(id: 1, name: "T", players: [Player(id: 1, name: "P1"), Player(id: 2, name: "P2")]).save(in: test.store) == .updated)
        #expect(
            try Team(id: 1, name: "T", players: [Player(id: 1, name: "P1"), Player(id: 2, name: "P2")]).save(in: test.store) == .unchanged)
        try Worker(id: 1, name: "W", snacks: [Food(id: 1)]).save(in: test.store)
        #expect(try Worker(id: 1, name: "W", snacks: [Food(id: 1), Food(id: 2)]).save(in: test.store) == .updated)
        let batch = try Worker.save([Worker(id: 1, name: "W", snacks: [Food(id: 3)]), Worker(id: 2, name: "V")], in: test.store)
        #expect(batch.inserted >= 1 && batch.updated >= 1)
    }

    // SQLite-only: opens the store's file again or looks at it on disk.
    @Test func aReplacedFileIsRecognisedThroughAnotherSpellingOfItsPath() throws {
        let test = try TestStore(.file)
        let path = test.store.path!
        _ = try Snack.save((1...3).map { Snack(snackId: $0, name: "old") }, in: test.store)
        let otherDirectory = test.directory.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: otherDirectory, withIntermediateDirectories: true)
        let fresh = try ModelStore(path: otherDirectory.appendingPathComponent("new.sqlite").path)
        try AtkDrop(id: 1, note: "new").save(in: fresh)
        try fresh.close()
        #expect(rename(otherDirectory.appendingPathComponent("new.sqlite").path, path) == 0)
        let link = test.directory.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: test.directory.path)
        #expect(errorCode { _ = try ModelStore(path: path) } == .fileReplaced)
        #expect(errorCode { _ = try ModelStore(path: link.appendingPathComponent("store.sqlite").path) } == .fileReplaced)
        #expect(
            errorCode { _ = try ModelStore(path: test.directory.appendingPathComponent("other/../store.sqlite").path) } == .fileReplaced)
    }

    /// A block started on the completion queue (from a completion handler, or on the main
    /// thread with `completionQueue = .main`) holds it: an inline completion call's handler
    /// then runs at once instead of queueing behind the block.
    @Test(arguments: Backend.available) func waitingInsideABlockStartedOnTheCompletionQueueForAnInlineCompletionCallDoesNotDeadlock(
        _ backend: Backend
    ) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        let outcome = Locked("not run")
        let finished = DispatchSemaphore(value: 0)
        store.completionQueue.async {
            do {
                try store.transaction {
                    let handled = DispatchSemaphore(value: 0)
                    Snack(snackId: 1).save(in: store) { _ in handled.signal() }
                    outcome.withLock { $0 = handled.wait(timeout: .now() + 10) == .timedOut ? "deadlock" : "ok" }
                }
                try store.read {
                    let handled = DispatchSemaphore(value: 0)
                    Snack.count(in: store) { _ in handled.signal() }
                    if handled.wait(timeout: .now() + 10) == .timedOut { outcome.withLock { $0 = "deadlock in read" } }
                }
            } catch {
                outcome.withLock { $0 = "threw \\(error)" }
            }
            finished.signal()
        }
        finished.wait()
        #expect(outcome.current == "ok")
        #expect(try Snack.count(in: store) == 1)
    }

    @Test(arguments: Backend.available, [false, true])
    func aSynchronousCallFromATaskStartedInsideABlockFailsAtOnce(_ backend: Backend, _ inReadBlock: Bool) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        let code = Locked<ModelStoreError.Code?>(nil)
        let finished = try await runTaskInsideABlock(of: store, readBlock: inReadBlock) {
            let found = errorCode { _ = inReadBlock ? try Snack.count(in: store) : try Snack(snackId: 1).save(in: store).hashValue }
            code.withLock { $0 = found }
        }
        #expect(finished)
        #expect(code.current == .reentrancy)
    }
}
