import Foundation
import Testing
@testable import ModelStore

/// The `async` reads the cancellation tests stop mid-statement, one per public form.
enum CancellableRead: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case findAllWhere, findFirstWhere, queryFindAll, queryFetch, countWhere, existsWhere, aggregate, groupedCounts
    case search, rawFindAll, rawFindFirst, readBlock, loadingRelationships

    var testDescription: String { rawValue }

    func run(_ store: ModelStore) async throws {
        let spin: Condition<Snack> = spinning()
        switch self {
        case .findAllWhere: _ = try await Snack.findAll(where: spin, in: store)
        case .findFirstWhere: _ = try await Snack.findFirst(where: spin, in: store)
        case .queryFindAll: _ = try await Snack.filter(spin).order(.ascending(\.name)).findAll(in: store)
        case .queryFetch:
            struct Name: Decodable, Sendable { var name: String? }
            _ = try await Snack.filter(spin).findAll(as: Name.self, in: store)
        case .countWhere: _ = try await Snack.count(where: spin, in: store)
        case .existsWhere: _ = try await Snack.exists(where: spin, in: store)
        case .aggregate: _ = try await Snack.filter(spin).sum(\.price, in: store)
        case .groupedCounts: _ = try await Snack.filter(spin).countsGrouped(by: \.name, in: store)
        case .search: _ = try await Article.search("chocolate", where: spinning(), in: store)
        case .rawFindAll: _ = try await store.findAll(Int.self, sql: SQLStatement(stringLiteral: spinSQL))
        case .rawFindFirst: _ = try await store.findFirst(Int.self, sql: SQLStatement(stringLiteral: spinSQL))
        case .readBlock: _ = try await store.read { try Snack.count(where: spin, in: store) }
        case .loadingRelationships: _ = try await Team.findAll(where: spinning(), loading: .all, in: store)
        }
    }
}

// Serialized: each test keeps SQLite busy on a thread of the global dispatch pool until it is
// cancelled, and on Linux the concurrency pool's tasks (the test's own, which cancels) share
// that pool: a dozen minute-long statements at once would starve the tasks that stop them.
// SQLite-only: interrupts long SQLite statements (the PostgreSQL side is in PostgresReliabilityTests).
@Suite("Cancelling a task stops its call", .serialized)
struct CancellationTests {
    /// Cancels `call` once its statement runs; says how the call ended, and how long after
    /// the cancel.
    private func cancelWhileRunning(
        _ test: TestStore, marker: String = "modelstore_spin", _ call: @escaping @Sendable () async throws -> Void
    ) async -> Ending {
        // The end is taken inside the task: this test's own wait for it resumes on the default
        // pool, which a loaded run keeps busy for tens of seconds (37 s once, past the bound).
        let task = Task(priority: .high) { (await ending(call), Date()) }
        // The cancel comes from a thread of its own, not a task: on a loaded machine the
        // concurrency pool's threads may all be busy for longer than the statement takes, and
        // the point is what the statement does once its task is cancelled.
        let started = Collected<Bool>()
        let cancelled = Collected<Date>()
        let canceller = Thread {
            started.add(eventually(120) { test.sql.contains { $0.contains(marker) } })
            // Well inside the statement.
            Thread.sleep(forTimeInterval: 0.1)
            cancelled.add(Date())
            task.cancel()
        }
        canceller.start()
        let (outcome, end) = await task.value
        var ended = outcome
        #expect(started.current == [true], "the statement started")
        ended.seconds = end.timeIntervalSince(cancelled.current.first ?? end)
        return ended
    }

    @Test(arguments: CancellableRead.allCases)
    func cancellingTheTaskStopsTheReadAtOnceAndFreesItsReader(_ read: CancellableRead) async throws {
        let test = try storeWithOneSnack()
        let store = test.store
        try await Article(id: 1, title: "Dark chocolate").save(in: store)
        try await Team(id: 1, name: "Reds").save(in: store)
        test.resetSQL()
        let ended = await cancelWhileRunning(test) { try await read.run(store) }
        #expect(ended.code == .cancelled)
        // The statement takes a minute; it stopped within milliseconds (the rest is the
        // task's wait for a thread of the concurrency pool).
        #expect(ended.seconds < 30)
        #expect(ended.error?.sql?.contains("modelstore_spin") == true)
        #expect(ended.error?.message.contains("cancelled") == true)
        expectReaderFree(store)
    }

    @Test func cancellingAQuadraticSearchFreesTheOnlyReaderAtOnce() async throws {
        // FTS5 ranks each match against every term: a 12,000-term OR over 20,000 records runs
        // for tens of seconds.
        let test = try TestStore(.file, configuration: .init(maximumReaders: 1))
        let store = test.store
        var generator = SeededGenerator(seed: 11)
        let words = (0..<5_000).map { "w\($0)" }
        func text(_ count: Int) -> String { (0..<count).map { _ in words.randomElement(using: &generator)! }.joined(separator: " ") }
        _ = try await Article.save((1...20_000).map { Article(id: Int64($0), title: text(5), body: text(20)) }, in: store)
        try await Snack(snackId: 1, name: "Pocky").save(in: store)
        test.resetSQL()
        let terms = (0..<7_000).map { "w\($0 % 5_000)x\($0 / 5_000)" }.joined(separator: " OR ") + " OR " + words.joined(separator: " OR ")
        let ended = await cancelWhileRunning(test, marker: "MATCH") { _ = try await Article.search(.query(terms), in: store) }
        #expect(ended.code == .cancelled)
        #expect(ended.seconds < 30)
        expectReaderFree(store)
    }

    @Test func aCallWhoseTaskIsAlreadyCancelledRunsNothingInEveryAsyncForm() async throws {
        let test = try storeWithOneSnack()
        let store = test.store
        try await Article(id: 1, title: "Dark chocolate").save(in: store)
        test.resetSQL()
        let codes = await Task(priority: .high) { () -> [String: ModelStoreError.Code?] in
            withUnsafeCurrentTask { $0?.cancel() }
            var codes: [String: ModelStoreError.Code?] = [:]
            codes["find"] = await ending { _ = try await Snack.find(key: 1, in: store) }.code
            codes["findAll"] = await ending { _ = try await Snack.findAll(in: store) }.code
            codes["count"] = await ending { _ = try await Snack.count(in: store) }.code
            codes["search"] = await ending { _ = try await Article.search("chocolate", in: store) }.code
            codes["raw"] = await ending { _ = try await store.findAll(Int.self, sql: "SELECT 1") }.code
            codes["readBlock"] = await ending { _ = try await store.read { try Snack.count(in: store) } }.code
            codes["save"] = await ending { _ = try await Snack(snackId: 2, name: "Pretz").save(in: store) }.code
            codes["batch"] = await ending { _ = try await Snack.save([Snack(snackId: 3)], in: store) }.code
            codes["delete"] = await ending { _ = try await Snack.delete(key: 1, in: store) }.code
            codes["updateAll"] = await ending {
                _ = try await Snack.updateAll(where: \.snackId == 1, set: [.set(\.name, to: "x")], in: store)
            }
            .code
            codes["execute"] = await ending { _ = try await store.execute("DELETE FROM Snack") }.code
            codes["transaction"] = await ending { _ = try await store.transaction { try Snack(snackId: 4).save(in: store) } }.code
            return codes
        }.value
        for (call, code) in codes { #expect(code == .cancelled, "\(call)") }
        #expect(test.sql.isEmpty)
        #expect(try await Snack.findAll(in: store).map(\.snackId) == [1])
        #expect(try await Snack.find(key: 1, in: store)?.name == "Pocky")
    }

    @Test func aCallCancelledWhileItWaitsForAReaderThrowsAtOnceAndTakesNone() async throws {
        let test = try storeWithOneSnack()
        let store = test.store
        let holder = Task(priority: .high) { await ending { _ = try await Snack.count(where: spinning(), in: store) } }
        #expect(await started(test))
        let waiter = Task(priority: .high) { await ending { _ = try await Snack.findAll(in: store) } }
        try await Task.sleep(nanoseconds: 200_000_000)
        let cancelled = Date()
        waiter.cancel()
        let waited = await waiter.value
        #expect(waited.code == .cancelled)
        #expect(Date().timeIntervalSince(cancelled) < 30)
        #expect(waited.error?.message.contains("before it started") == true)
        holder.cancel()
        #expect(await holder.value.code == .cancelled)
        expectReaderFree(store)
    }

    @Test func aCallCancelledWhileItWaitsBehindAWriteIsAnsweredAtOnceAndNeverRuns() async throws {
        let test = try storeWithOneSnack(.init())
        let store = test.store
        // A transaction that runs a minute-long statement holds the store's queue.
        let writer = Task(priority: .high) {
            await ending { try await store.transaction { _ = try store.findAll(Int.self, sql: SQLStatement(stringLiteral: spinSQL)) } }
        }
        #expect(await started(test))
        let reader = Task(priority: .high) { await ending { _ = try await Snack.findAll(in: store) } }
        let later = Task(priority: .high) { await ending { _ = try await Snack(snackId: 7, name: "late").save(in: store) } }
        try await Task.sleep(nanoseconds: 200_000_000)
        let cancelled = Date()
        reader.cancel()
        later.cancel()
        #expect(await reader.value.code == .cancelled)
        #expect(await later.value.code == .cancelled)
        #expect(Date().timeIntervalSince(cancelled) < 30)
        writer.cancel()
        #expect(await writer.value.code == .cancelled)
        // The cancelled save never ran, even after the queue moved on.
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect(try await Snack.findAll(in: store).map(\.snackId) == [1])
    }

    @Test func aCancelledTransactionRollsBackEverythingItWroteEvenWhenItCaughtTheInterruption() async throws {
        let test = try storeWithOneSnack(.init())
        let store = test.store
        for catches in [false, true] {
            test.resetSQL()
            let ended = await cancelWhileRunning(test) {
                _ = try await store.transaction {
                    _ = try Snack.save((10...20).map { Snack(snackId: $0, name: "new") }, in: store)
                    try Snack(snackId: 1, name: "renamed").save(in: store)
                    if catches {
                        // The block swallows the error and goes on writing.
                        _ = try? store.findAll(Int.self, sql: SQLStatement(stringLiteral: spinSQL))
                        try Snack(snackId: 30, name: "after").save(in: store)
                    } else {
                        _ = try store.findAll(Int.self, sql: SQLStatement(stringLiteral: spinSQL))
                    }
                }
            }
            #expect(ended.code == .cancelled, "catches: \(catches)")
            #expect(ended.seconds < 30)
            #expect(ended.error?.message.contains("rolled back") == true)
            #expect(try await Snack.findAll(in: store) == [Snack(snackId: 1, name: "Pocky", price: 2)])
        }
        // The store goes on as before.
        try await Snack(snackId: 2, name: "Pretz").save(in: store)
        #expect(try await Snack.count(in: store) == 2)
        #expect(try store.integrityCheck() == "ok")
    }

    @Test func aCancelledUpdateOrDeleteByConditionChangesNothing() async throws {
        let test = try storeWithOneSnack(.init())
        let store = test.store
        _ = try await Snack.save((2...50).map { Snack(snackId: $0, name: "s\($0)") }, in: store)
        let before = try await Snack.findAll(in: store)
        test.resetSQL()
        var ended = await cancelWhileRunning(test) {
            _ = try await Snack.updateAll(where: spinning(), set: [.set(\.name, to: "changed")], in: store)
        }
        #expect(ended.code == .cancelled)
        #expect(ended.seconds < 30)
        test.resetSQL()
        ended = await cancelWhileRunning(test) { _ = try await Snack.deleteAll(where: spinning(), in: store) }
        #expect(ended.code == .cancelled)
        test.resetSQL()
        ended = await cancelWhileRunning(test) {
            _ = try await store.execute(SQLStatement(stringLiteral: "UPDATE Snack SET name = 'x' WHERE (\(spinSQL)) > 0"))
        }
        #expect(ended.code == .cancelled)
        #expect(try await Snack.findAll(in: store) == before)
        #expect(try store.integrityCheck() == "ok")
    }

    @Test func aCancelledStreamThrowsCancelledAndFreesItsReaderAtOnce() async throws {
        let test = try storeWithOneSnack()
        let store = test.store
        let ended = await cancelWhileRunning(test) {
            for try await _ in Snack.filter(spinning()).stream(in: store) {}
        }
        #expect(ended.code == .cancelled)
        #expect(ended.seconds < 30)
        expectReaderFree(store)
        // A raw SQL stream too.
        test.resetSQL()
        let raw = await cancelWhileRunning(test) {
            for try await _ in store.stream(Int.self, sql: SQLStatement(stringLiteral: spinSQL)) {}
        }
        #expect(raw.code == .cancelled)
        expectReaderFree(store)
    }

    @Test func closingTheStoreStopsAStreamInTheMiddleOfAStatement() async throws {
        let test = try storeWithOneSnack()
        let store = test.store
        let loop = Task(priority: .high) { await ending { for try await _ in Snack.filter(spinning()).stream(in: store) {} } }
        #expect(await started(test))
        let start = Date()
        try store.close()
        #expect(Date().timeIntervalSince(start) < 30)
        #expect(await loop.value.code == .closed)
    }
}
