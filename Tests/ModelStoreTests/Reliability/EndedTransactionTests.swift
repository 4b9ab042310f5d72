import Foundation
import Testing
@testable import ModelStore

/// A transaction block never commits half. Some statement errors make SQLite end the whole
/// transaction by itself (a trigger's `RAISE(ROLLBACK)`, an `ON CONFLICT ROLLBACK` constraint,
/// full-disk, I/O and out-of-memory errors while the page cache spills); a block that catches
/// such an error and goes on must not write anything after it, and must not succeed.
@Suite("Reliability: a transaction SQLite ended by itself")
struct EndedTransactionTests {
    /// What ends the transaction.
    enum Ending: String, CaseIterable, CustomTestStringConvertible {
        /// A trigger another tool made: `RAISE(ROLLBACK, …)`.
        case triggerRaisesRollback
        /// A `UNIQUE … ON CONFLICT ROLLBACK` constraint on a table another tool made.
        case conflictClauseRollback
        /// The database's size limit, met while the page cache spills to the log.
        case storeFull
        var testDescription: String { rawValue }
    }

    /// The call inside the block that meets the ending.
    enum FailingCall: CaseIterable {
        case save, batch, execute
    }

    /// How the block is run.
    enum Form: String, CaseIterable, CustomTestStringConvertible {
        case sync, completion, async
        var testDescription: String { rawValue }
    }

    struct Abort: Error {}

    /// Sets up `ending` on a fresh file store and returns the call that meets it.
    private func prepare(_ ending: Ending, _ call: FailingCall, on test: TestStore) throws -> @Sendable () throws -> Void {
        let store = test.store
        try Snack(snackId: 1, name: "committed before").save(in: store)
        switch ending {
        case .triggerRaisesRollback:
            try test.rawExecute(
                #"CREATE TRIGGER "no666" BEFORE INSERT ON "Snack" WHEN NEW."snackId" = 666 BEGIN SELECT RAISE(ROLLBACK, 'no snack 666'); END"#
            )
            switch call {
            case .save: return { try Snack(snackId: 666, name: "refused").save(in: store) }
            case .batch: return { _ = try Snack.save([Snack(snackId: 665), Snack(snackId: 666)], in: store) }
            case .execute: return { try store.execute(#"INSERT INTO "Snack" ("snackId", "tags") VALUES (666, '[]')"#) }
            }
        case .conflictClauseRollback:
            try test.rawExecute(
                #"CREATE TABLE "Medal" ("id" INTEGER PRIMARY KEY NOT NULL, "code" TEXT NOT NULL UNIQUE ON CONFLICT ROLLBACK)"#)
            try Medal(id: 1, code: "gold").save(in: store)
            switch call {
            case .save: return { try Medal(id: 2, code: "gold").save(in: store) }
            case .batch: return { _ = try Medal.save([Medal(id: 3, code: "silver"), Medal(id: 2, code: "gold")], in: store) }
            case .execute: return { try store.execute(#"INSERT INTO "Medal" ("id", "code") VALUES (2, 'gold')"#) }
            }
        case .storeFull:
            try Medal(id: 1, code: "gold").save(in: store)
            let pages = try #require(test.rawRows("PRAGMA page_count").first?.first)
            guard case .integer(let count) = pages else { throw Abort() }
            // A page cache of 10 pages spills to the log long before a large change commits.
            try test.rawExecute("PRAGMA cache_size = 10; PRAGMA max_page_count = \(count + 40)")
            let big = (100..<400).map { Medal(id: Int64($0), code: String(repeating: "b", count: 4_000) + "\($0)") }
            switch call {
            case .save: return { try Medal(id: 9, code: String(repeating: "x", count: 2_000_000)).save(in: store) }
            case .batch: return { _ = try Medal.save(big, in: store) }
            case .execute:
                return {
                    try store.execute(
                        #"INSERT INTO "Medal" ("id", "code") SELECT value + 1000, hex(randomblob(3000)) FROM json_each('[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80]')"#
                    )
                }
            }
        }
    }

    /// What one block saw: the failing call's error, the next call's error, the block's.
    struct Outcome: Sendable {
        var caught: ModelStoreError?
        var later: ModelStoreError?
        var laterRead: ModelStoreError?
        var block: (any Error)?
    }

    private func runBlock(
        _ form: Form, on store: ModelStore, failing: @escaping @Sendable () throws -> Void, aborts: Bool
    ) async -> Outcome {
        let seen = Locked(Outcome())
        let body: @Sendable () throws -> Void = {
            try Snack(snackId: 701, name: "before the failure").save(in: store)
            do { try failing() } catch { seen.withLock { $0.caught = error as? ModelStoreError } }
            do { try Snack(snackId: 702, name: "after the failure").save(in: store) } catch {
                seen.withLock { $0.later = error as? ModelStoreError }
            }
            do { _ = try Snack.count(in: store) } catch { seen.withLock { $0.laterRead = error as? ModelStoreError } }
            if aborts { throw Abort() }
        }
        var blockError: (any Error)?
        switch form {
        case .sync:
            blockError = Self.runSynchronously(body, on: store)
        case .completion:
            let result = await withCheckedContinuation { continuation in
                store.transaction(body) { continuation.resume(returning: $0) }
            }
            if case .failure(let error) = result { blockError = error }
        case .async:
            do { try await store.transaction(body) } catch { blockError = error }
        }
        var outcome = seen.current
        outcome.block = blockError
        return outcome
    }

    /// The synchronous form, called from synchronous code (in an `async` function Swift would
    /// pick the `async` overload).
    private static func runSynchronously(_ body: () throws -> Void, on store: ModelStore) -> (any Error)? {
        do {
            try store.transaction(body)
            return nil
        } catch {
            return error
        }
    }

    // SQLite-only: SQLite ending its own transaction has no server counterpart (there each call in a block runs in a savepoint).
    @Test(arguments: Ending.allCases, Form.allCases)
    func aBlockThatGoesOnAfterSQLiteEndedItsTransactionWritesNothingAndFails(ending: Ending, form: Form) async throws {
        for call in FailingCall.allCases {
            for aborts in [true, false] {
                let test = try TestStore(.file)
                let failing = try prepare(ending, call, on: test)
                let before = try test.rawRows(#"SELECT count(*) FROM "Snack""#)
                let outcome = await runBlock(form, on: test.store, failing: failing, aborts: aborts)
                let context = "\(ending) \(call) \(form) aborts: \(aborts)"
                let caught = try #require(outcome.caught, "the failing call must fail (\(context))")
                #expect([.constraintViolation, .storeFull].contains(caught.code), "\(context): \(caught)")
                if ending == .storeFull, outcome.later == nil {
                    // SQLite undid only the statement: the transaction goes on whole, which is
                    // not half. (Ending it is SQLite's choice; the C test shows it does here.)
                    #expect(!aborts || outcome.block is Abort, "\(context)")
                    continue
                }
                // Every later call of the block fails without running, and says why.
                #expect(outcome.later?.code == .rolledBack, "\(context): \(String(describing: outcome.later))")
                #expect(outcome.later?.underlying != nil, "\(context): the error that ended it is kept")
                #expect(outcome.laterRead?.code == .rolledBack, "\(context): a read after it fails too")
                if aborts {
                    #expect(outcome.block is Abort, "\(context): the block's own error is what it throws")
                } else {
                    #expect((outcome.block as? ModelStoreError)?.code == .rolledBack, "\(context): \(String(describing: outcome.block))")
                }
                // Nothing of the block was written: neither 701 (before) nor 702 (after).
                #expect(try test.rawRows(#"SELECT count(*) FROM "Snack""#) == before, "\(context)")
                #expect(try await Snack.find(key: 701, in: test.store) == nil, "\(context)")
                #expect(try await Snack.find(key: 702, in: test.store) == nil, "\(context)")
                // The store serves the next call.
                try test.rawExecute("PRAGMA max_page_count = 1073741823")
                try await Snack(snackId: 703, name: "next").save(in: test.store)
                #expect(try await Snack.find(key: 703, in: test.store)?.name == "next", "\(context)")
                #expect(try test.store.integrityCheck() == "ok")
            }
        }
    }

    // SQLite-only: SQLite ending its own transaction has no server counterpart (there each call in a block runs in a savepoint).
    @Test func aNestedTransactionThatCatchesTheEndingFailsTheOuterBlockToo() throws {
        let test = try TestStore(.file)
        let failing = try prepare(.triggerRaisesRollback, .save, on: test)
        let store = test.store
        let error = Self.runSynchronously(
            {
                try Snack(snackId: 701).save(in: store)
                try store.transaction {
                    do { try failing() } catch {}
                    try Snack(snackId: 702).save(in: store)
                }
            }, on: store)
        #expect((error as? ModelStoreError)?.code == .rolledBack, "\(String(describing: error))")
        #expect(try Snack.count(in: store) == 1)
    }

    // SQLite-only: opens the store's file again or looks at it on disk.
    @Test func aMigrationStepThatCatchesTheEndingFailsAndLeavesTheFileAsItWas() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ended-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        do {
            let first = try ModelStore(path: path)
            try Snack(snackId: 1, name: "before").save(in: first)
            try first.execute(
                #"CREATE TRIGGER "no666" BEFORE INSERT ON "Snack" WHEN NEW."snackId" = 666 BEGIN SELECT RAISE(ROLLBACK, 'no snack 666'); END"#
            )
            try first.close()
        }
        let step = MigrationStep("insert past a rollback") { step in
            try step.execute(#"INSERT INTO "Snack" ("snackId", "tags") VALUES (701, '[]')"#)
            do { try step.execute(#"INSERT INTO "Snack" ("snackId", "tags") VALUES (666, '[]')"#) } catch {}
            try? step.execute(#"INSERT INTO "Snack" ("snackId", "tags") VALUES (702, '[]')"#)
        }
        #expect {
            _ = try ModelStore(path: path, configuration: .init(migrations: [step]))
        } throws: { ($0 as? ModelStoreError)?.code == .migrationFailed }
        let check = try ModelStore(path: path)
        #expect(try Snack.findAll(in: check).map(\.snackId) == [1])
        #expect(try check.appliedMigrations().isEmpty)
    }

    /// I/O errors and running out of memory are process-wide conditions: a helper process
    /// meets them (see `EndedTransactions.swift` in `ReliabilityHelper`).
    // SQLite-only: opens the store's file again or looks at it on disk.
    @Test(arguments: ["ioerr", "nomem"])
    func anIOErrorOrOutOfMemoryThatEndsTheTransactionLeavesNothingOfTheBlock(cause: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ended-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let helper = try HelperProcess("ended-transaction", arguments: [directory.appendingPathComponent("store.sqlite").path, cause])
        let values = HelperProcess.values(in: try helper.finish(within: 120))
        let expected = cause == "ioerr" ? "ioError" : "sqlite"
        #expect(values["caught"].map { [expected, "sqlite", "storeFull"].contains($0) } == true, "\(values)")
        #expect(values["later"] == "rolledBack", "\(values)")
        #expect(values["block"] == "rolledBack", "\(values)")
        #expect(values["count"] == "1", "only the record committed before the block: \(values)")
        #expect(values["after"] == "true", "\(values)")
    }
}

/// A model whose table another tool made with an `ON CONFLICT ROLLBACK` constraint.
struct Medal: StoredModel, Equatable {
    var id: Int64
    var code: String
    static let primaryKey = ["id"]
}
