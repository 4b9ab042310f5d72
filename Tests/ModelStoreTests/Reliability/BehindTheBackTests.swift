import Foundation
import Testing
@testable import ModelStore

/// Runs synchronous calls from an async test (where the async overloads would be chosen).
@discardableResult
func synchronously<T>(_ body: () throws -> T) rethrows -> T { try body() }

/// The code of the `ModelStoreError` that `body` threw, or nil.
func errorCode(_ body: () throws -> Void) -> ModelStoreError.Code? {
    do { try body() } catch { return (error as? ModelStoreError)?.code }
    return nil
}

/// The code of the `ModelStoreError` that the async `body` threw, or nil.
func asyncErrorCode(_ body: () async throws -> Void) async -> ModelStoreError.Code? {
    do { try await body() } catch { return (error as? ModelStoreError)?.code }
    return nil
}

/// Runs a `store.transaction` (or `store.read`) block on a thread of its own, which starts a
/// `Task` doing `work` and waits for it; returns whether the task finished while the block
/// waited. The block's thread is not one of the shared pool's, so the task can get one
/// even while other tests block theirs.
func runTaskInsideABlock(of store: ModelStore, readBlock: Bool, _ work: @escaping @Sendable () async -> Void) async throws -> Bool {
    let finished = Locked(false)
    @Sendable func body() {
        let done = DispatchSemaphore(value: 0)
        Task(priority: .high) {
            await work()
            done.signal()
        }
        finished.withLock { $0 = done.wait(timeout: .now() + 60) == .success }
    }
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        Thread.detachNewThread {
            continuation.resume(
                with: Result {
                    if readBlock { try store.read { body() } } else { try store.transaction { body() } }
                })
        }
    }
    return finished.current
}

struct Drifter: StoredModel, Equatable {
    var id: Int64
    var note: String
    var size: Int64?
    static let primaryKey = ["id"]
}

/// Tables altered by another program while the store is open: renamed, dropped, retyped
/// columns and dropped tables. No name the store uses may ever be read as a string literal,
/// and no call may delete or change records on the strength of a missing column.
@Suite("Reliability: tables altered behind the store's back")
struct BehindTheBackTests {
    private func storeWithDrifters(_ backend: Backend) throws -> (TestStore, ModelStore) {
        let test = try TestStore(.file, or: backend)
        _ = try Drifter.save((1...20).map { Drifter(id: $0, note: "keep", size: $0) }, in: test.store)
        // Another program: a second store on the same file (or schema) is a second connection.
        let other = try test.later()
        return (test, other)
    }

    private func expectMissingColumn(_ error: ModelStoreError, _ column: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error.code == .schemaMismatch, "\(error)", sourceLocation: sourceLocation)
        #expect(error.model == "Drifter", "\(error)", sourceLocation: sourceLocation)
        #expect(error.column == column, "\(error)", sourceLocation: sourceLocation)
        #expect(error.suggestion != nil, sourceLocation: sourceLocation)
    }

    @Test(
        arguments: Backend.available,
        [#"ALTER TABLE "Drifter" RENAME COLUMN "note" TO "remark""#, #"ALTER TABLE "Drifter" DROP COLUMN "note""#])
    func aColumnRenamedOrDroppedIsAnErrorNamingModelAndColumnNeverALiteral(_ backend: Backend, change: String) async throws {
        let (test, other) = try storeWithDrifters(backend)
        try other.rawExecute(change)
        let store = test.store

        expectMissingColumn(try #require(throws: ModelStoreError.self) { try Drifter.find(key: 1, in: store) }, "note")
        expectMissingColumn(try #require(throws: ModelStoreError.self) { try Drifter.findAll(in: store) }, "note")
        expectMissingColumn(try #require(throws: ModelStoreError.self) { try Drifter.count(where: \.note != "keep", in: store) }, "note")
        expectMissingColumn(
            try #require(throws: ModelStoreError.self) { try Drifter.deleteAll(where: \.note != "keep", in: store) }, "note")
        expectMissingColumn(
            try #require(throws: ModelStoreError.self) { try Drifter.all().order(.ascending(\.note)).findAll(in: store) }, "note")
        expectMissingColumn(
            try #require(throws: ModelStoreError.self) {
                try Drifter.updateAll(where: \.note == "keep", set: [.set(\.size, to: 0)], in: store)
            },
            "note")
        expectMissingColumn(try #require(throws: ModelStoreError.self) { try Drifter(id: 1, note: "new").save(in: store) }, "note")
        expectMissingColumn(
            try #require(throws: ModelStoreError.self) { try Drifter.save([Drifter(id: 30, note: "new")], in: store) }, "note")
        do {
            try await Drifter(id: 2, note: "async").save(in: store)
            Issue.record("an async save after the drift must fail")
        } catch let error as ModelStoreError {
            expectMissingColumn(error, "note")
        }
        // Nothing was deleted or changed.
        #expect(try other.rawRows(#"SELECT count(*) FROM "Drifter""#) == [[.integer(20)]])
        #expect(try other.rawRows(#"SELECT count(*) FROM "Drifter" WHERE "size" = "id""#) == [[.integer(20)]])
    }

    @Test(arguments: Backend.available) func aDroppedTableIsAnErrorNamingTheModel(_ backend: Backend) throws {
        let (test, other) = try storeWithDrifters(backend)
        try other.rawExecute(#"DROP TABLE "Drifter""#)
        let error = try #require(throws: ModelStoreError.self) { try Drifter.count(in: test.store) }
        #expect(error.code == .schemaMismatch)
        #expect(error.model == "Drifter")
        let save = try #require(throws: ModelStoreError.self) { try Drifter(id: 1, note: "x").save(in: test.store) }
        #expect(save.code == .schemaMismatch)
    }

    @Test(arguments: Backend.available) func aQuotedNameThatIsNotAColumnIsNeverAString(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try Drifter(id: 1, note: "note").save(in: test.store)
        // Raw SQL on the store's own connections: SQLite's double-quoted-string misfeature is off.
        #expect(throws: ModelStoreError.self) { try test.rawRows(#"SELECT "nonexistent" FROM "Drifter""#) }
        #expect(throws: ModelStoreError.self) { try test.rawExecute(#"DELETE FROM "Drifter" WHERE "nonexistent" = 'nonexistent'"#) }
        #expect(try test.rawRows(#"SELECT count(*) FROM "Drifter""#) == [[.integer(1)]])
    }
}

/// The first read of a model nothing has written: no records, in every form, never an error
/// and never a table created by a read.
@Suite("Reliability: the first read of a model")
struct FirstReadTests {
    @Test(arguments: StoreKind.everywhere)
    func aModelNeverWrittenReadsAsEmptyInEveryFormAndBlock(_ kind: StoreKind) async throws {
        let test = try TestStore(kind)
        let store = test.store
        let (count, all, one, teams, maximum) = try synchronously {
            try store.read {
                (
                    try Snack.count(in: store), try Snack.findAll(in: store), try Snack.find(key: 1, in: store),
                    try Team.findAll(loading: .all, in: store), try Snack.all().max(\.price, in: store)
                )
            }
        }
        #expect(count == 0 && all.isEmpty && one == nil && teams.isEmpty && maximum == nil)
        #expect(try synchronously { try Food.findAll(loading: .all, in: store).isEmpty })
        #expect(try await Worker.findAll(loading: .all, in: store).isEmpty)
        #expect(try await store.read { try Employee.count(in: store) } == 0)
        let completion = await withCheckedContinuation { continuation in
            Project.count(in: store) { continuation.resume(returning: $0) }
        }
        #expect(try completion.get() == 0)
        // No read created a table.
        #expect(try test.tableNames() == [])
        // A write then prepares the table, and reads see its records — in a read block too.
        try synchronously {
            try Snack(snackId: 1, name: "Pocky").save(in: store)
            #expect(try store.read { try Snack.findAll(in: store).map(\.snackId) } == [1])
            var team = Team(id: 1, name: "Owls")
            team.players = [Player(id: 5)]
            try team.save(in: store)
            #expect(try store.read { try Team.find(key: 1, loading: .all, in: store)?.players?.map(\.id) } == [5])
        }
    }

    // SQLite-only: another process holds the SQLite file's write lock.
    @Test func aFirstReadNeedsNoWriteLockWhileAnotherProcessHoldsIt() throws {
        let test = try TestStore(.file, configuration: .init(busyTimeout: 10))
        try Snack(snackId: 1).save(in: test.store)
        let helper = try HelperProcess("hold-write-lock", path: test.store.path!)
        defer { helper.send("go"); _ = helper.waitForExit() }
        try helper.waitFor("locked")
        let started = Date()
        #expect(try Employee.count(in: test.store) == 0)
        #expect(try test.store.read { try Food.findAll(in: test.store) }.isEmpty)
        #expect(Date().timeIntervalSince(started) < 5)
    }
}

/// Every call form inside every kind of block. The rule: inside a block of this store, the
/// synchronous and completion forms join the block (a completion handler is then called at
/// once, so waiting for it cannot deadlock); an `async` call from a task started inside the
/// block fails at once with `.reentrancy`, because it would queue behind the block.
@Suite("Reliability: call forms inside blocks")
struct CallFormsInBlocksTests {
    struct Abort: Error {}

    private func wait(_ semaphore: DispatchSemaphore) -> Bool {
        semaphore.wait(timeout: .now() + 10) == .success
    }

    @Test(arguments: StoreKind.everywhere)
    func aCompletionSaveInsideATransactionJoinsItAndRollsBackWithIt(_ kind: StoreKind) throws {
        let test = try TestStore(kind)
        let store = test.store
        let handled = DispatchSemaphore(value: 0)
        let outcome = Locked<Result<SaveOutcome, ModelStoreError>?>(nil)
        #expect(throws: Abort.self) {
            try store.transaction {
                try Snack(snackId: 1).save(in: store)
                Snack(snackId: 2).save(in: store) { result in
                    outcome.withLock { $0 = result }
                    handled.signal()
                }
                throw Abort()
            }
        }
        #expect(wait(handled))
        #expect(try Snack.count(in: store) == 0)
        // Waiting inside the block for the handler cannot deadlock; the save commits with it.
        try store.transaction {
            let inside = DispatchSemaphore(value: 0)
            Snack(snackId: 3).save(in: store) { _ in inside.signal() }
            #expect(wait(inside))
            Snack.find(key: 3, in: store) { result in
                #expect((try? result.get())??.snackId == 3)  // sees the block's own write
                inside.signal()
            }
            #expect(wait(inside))
        }
        #expect(try Snack.findAll(in: store).map(\.snackId) == [3])
    }

    @Test(arguments: Backend.available) func aCompletionTransactionInsideATransactionJoinsIt(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        let handled = DispatchSemaphore(value: 0)
        #expect(throws: Abort.self) {
            try store.transaction {
                store.transaction({ try Snack(snackId: 1).save(in: store) }) { _ in handled.signal() }
                #expect(wait(handled))
                throw Abort()
            }
        }
        #expect(try Snack.count(in: store) == 0)
    }

    @Test(arguments: Backend.available) func aCompletionWriteInsideAReadBlockFailsAsReentrancyAndWritesNothing(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        let failure = Locked<ModelStoreError?>(nil)
        let found = Locked<Int?>(nil)
        try store.read {
            let handled = DispatchSemaphore(value: 0)
            Snack(snackId: 1).save(in: store) { result in
                if case .failure(let error) = result { failure.withLock { $0 = error } }
                handled.signal()
            }
            #expect(wait(handled))
            Snack.count(in: store) { result in
                found.withLock { $0 = try? result.get() }
                handled.signal()
            }
            #expect(wait(handled))
        }
        #expect(failure.current?.code == .reentrancy)
        #expect(found.current == 0)
        #expect(try Snack.count(in: store) == 0)
    }

    // SQLite-only: relies on a Task started inside a block running promptly (timing-sensitive with a server).
    @Test(arguments: [false, true])
    func anAsyncCallFromATaskStartedInsideABlockFailsAtOnceInsteadOfDeadlocking(_ inReadBlock: Bool) async throws {
        let test = try TestStore(.file)
        let store = test.store
        let failure = Locked<(any Error)?>(nil)
        let finished = try await runTaskInsideABlock(of: store, readBlock: inReadBlock) {
            do {
                if inReadBlock { _ = try await Snack.findAll(in: store) } else { try await Snack(snackId: 1).save(in: store) }
            } catch {
                failure.withLock { $0 = error }
            }
        }
        #expect(finished, "the async call must not wait for the block")
        #expect((failure.current as? ModelStoreError)?.code == .reentrancy)
        #expect(try synchronously { try Snack.count(in: store) } == 0)
    }

    // SQLite-only: relies on a Task started inside a block (timing-sensitive with a server).
    @Test func aTaskStartedInsideABlockRunsNormallyOnceTheBlockHasEnded() async throws {
        let test = try TestStore(.file)
        let store = test.store
        let gate = DispatchSemaphore(value: 0)
        let task = try synchronously {
            try store.transaction {
                try Snack(snackId: 1).save(in: store)
                return Task(priority: .high) {
                    gate.wait()
                    try await Snack(snackId: 2).save(in: store)
                    return try await Snack.count(in: store)
                }
            }
        }
        gate.signal()
        #expect(try await task.value == 2)
    }

    @Test(arguments: Backend.available) func everySynchronousFormInsideEveryBlockJoinsIt(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try synchronously {
            try store.transaction {
                try Snack(snackId: 1).save(in: store)
                _ = try store.transaction { try Snack(snackId: 2).save(in: store) }
                #expect(try store.read { try Snack.count(in: store) } == 2)  // sees its own writes
            }
        }
        try await store.transaction {
            try Snack(snackId: 3).save(in: store)
            #expect(try Snack.count(in: store) == 3)
        }
        let counted = try await store.read { try Snack.count(in: store) }
        #expect(counted == 3)
        #expect(errorCode { _ = try store.read { try Snack(snackId: 4).save(in: store) } } == .reentrancy)
        #expect(errorCode { _ = try store.read { try store.transaction {} } } == .reentrancy)
    }
}

/// A store that can only be read: asked for, or on a location that cannot be written.
@Suite("Reliability: read-only stores")
struct ReadOnlyTests {
    private func expectWritesRefused(_ store: ModelStore) async throws {
        #expect(errorCode { _ = try Snack(snackId: 99).save(in: store) } == .readOnly)
        #expect(errorCode { _ = try Snack.save([Snack(snackId: 99)], in: store) } == .readOnly)
        #expect(errorCode { _ = try Snack.delete(key: 1, in: store) } == .readOnly)
        #expect(errorCode { _ = try store.transaction {} } == .readOnly)
        #expect(await asyncErrorCode { _ = try await Snack(snackId: 99).save(in: store) } == .readOnly)
        let completion = await withCheckedContinuation { continuation in
            Snack(snackId: 99).save(in: store) { continuation.resume(returning: $0) }
        }
        #expect(errorCode { _ = try completion.get() } == .readOnly)
    }

    // SQLite-only: compares the SQLite file's bytes before and after.
    @Test func aStoreOpenedReadOnlyReadsEverythingAndRefusesEveryWrite() async throws {
        let test = try TestStore(.file)
        let path = test.store.path!
        _ = try synchronously { try Snack.save((1...10).map { Snack(snackId: $0, name: "s\($0)") }, in: test.store) }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let store = try ModelStore(path: path, configuration: .init(readOnly: true))
        #expect(store.isReadOnly)
        #expect(try synchronously { try Snack.count(in: store) == 10 })
        #expect(try synchronously { try store.read { try Snack.find(key: 3, in: store)?.name } == "s3" })
        #expect(try synchronously { try Employee.count(in: store) == 0 })  // a model never written reads as empty
        try await expectWritesRefused(store)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(errorCode { _ = try ModelStore(path: path + ".missing", configuration: .init(readOnly: true)) } == .cannotOpen)
    }

    #if os(Linux)
        /// A read-only bind mount stands in for read-only media (needs the privilege to mount,
        /// which the test machines have; elsewhere the check falls back to file permissions).
        @Test func aStoreOnReadOnlyMediaOpensForReading() async throws {
            let base = FileManager.default.temporaryDirectory.appendingPathComponent("ModelStoreRO-\(UUID().uuidString)")
            let source = base.appendingPathComponent("source"), mounted = base.appendingPathComponent("mounted")
            try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: mounted, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: base) }
            do {
                let writer = try ModelStore(path: source.appendingPathComponent("store.sqlite").path)
                _ = try synchronously { try Snack.save((1...5).map { Snack(snackId: $0) }, in: writer) }
                try writer.close()
            }
            let mount = Process()
            mount.executableURL = URL(fileURLWithPath: "/bin/mount")
            mount.arguments = ["--bind", "-o", "ro", source.path, mounted.path]
            mount.standardError = FileHandle.nullDevice
            try mount.run()
            mount.waitUntilExit()
            var path = mounted.appendingPathComponent("store.sqlite").path
            if mount.terminationStatus == 0 {
                defer {
                    let unmount = Process()
                    unmount.executableURL = URL(fileURLWithPath: "/bin/umount")
                    unmount.arguments = [mounted.path]
                    try? unmount.run()
                    unmount.waitUntilExit()
                }
                try await check(path)
            } else if getuid() != 0 {
                path = source.appendingPathComponent("store.sqlite").path
                chmod(path, 0o444)
                chmod(source.path, 0o555)
                defer { chmod(source.path, 0o755) }
                try await check(path)
            } else {
                try await check(path, explicit: true, source: source)
            }
        }

        private func check(_ path: String, explicit: Bool = false, source: URL? = nil) async throws {
            let store =
                explicit
                ? try ModelStore(path: source!.appendingPathComponent("store.sqlite").path, configuration: .init(readOnly: true))
                : try ModelStore(path: path)
            #expect(store.isReadOnly)
            #expect(try synchronously { try Snack.count(in: store) == 5 })
            #expect(try await Snack.findAll(in: store).count == 5)
            #expect(try synchronously { try Employee.count(in: store) == 0 })
            try await expectWritesRefused(store)
        }
    #endif
}
