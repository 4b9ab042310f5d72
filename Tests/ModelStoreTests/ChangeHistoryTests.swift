import Foundation
import ModelStore
import ReliabilityFixtures
import Testing

private struct Voucher: StoredModel, Equatable {
    var id: Int64
    var total: Double
    static let primaryKey = ["id"]
    static let keepsHistory = true
}

/// `Voucher`'s table, as a release whose model does not keep history declares it.
private struct PlainVoucher: StoredModel, Equatable {
    var id: Int64
    var total: Double
    static let primaryKey = ["id"]
    static let tableName = "Voucher"
}

/// `Coupon`'s next release: the table and its key column renamed, the table rebuilt.
private struct Promo: StoredModel, Equatable {
    var token: String
    var percent: Int
    static let primaryKey = ["token"]
    static let keepsHistory = true
    static let formerNames: [FormerName<Promo>] = [.table(from: "Coupon"), .property(\.token, from: "code")]
}

private struct Coupon: StoredModel, Equatable {
    var code: String
    var percent: Int
    static let primaryKey = ["code"]
    static let keepsHistory = true
}

/// A key of two columns, the second text with what quoting and JSON must carry.
private struct VoucherLine: StoredModel, Equatable {
    var voucher: Int64
    var label: String
    var count: Int
    static let primaryKey = ["voucher", "label"]
    static let keepsHistory = true
}

/// A key kept as 16 bytes.
private struct Pass: StoredModel, Equatable {
    var id: UUID
    var holder: String
    static let primaryKey = ["id"]
    static let keepsHistory = true
    static let columnStorage: [ColumnStorage<Pass>] = [.uuid(\.id, as: .blob)]
}

/// A model without history: its changes are never in it.
private struct Memo: StoredModel, Equatable {
    var id: Int64
    var text: String
    static let primaryKey = ["id"]
}

/// What a test expects of a change: its table, operation and key.
private struct Seen: Hashable, CustomStringConvertible {
    let table: String
    let operation: HistoryChange.Operation
    let key: [SQLValue]

    init(_ table: String, _ operation: HistoryChange.Operation, _ key: [SQLValue]) {
        self.table = table
        self.operation = operation
        self.key = key
    }

    init(_ change: HistoryChange) {
        self.init(change.table, change.operation, change.key)
    }

    var description: String { "\(table) \(operation) \(key)" }
}

/// Purges until `expected` changes went, for at most `limit` seconds: on a server a purge
/// keeps the changes of transactions newer than the oldest one still running (another test's,
/// on a loaded machine), as documented.
private func purge(_ store: ModelStore, olderThan age: TimeInterval, expecting expected: Int, within limit: TimeInterval = 1.5)
    throws -> Int
{
    var removed = 0
    let deadline = Date().addingTimeInterval(limit)
    repeat {
        removed += try store.purgeHistory(olderThan: age)
        if removed >= expected { break }
        Thread.sleep(forTimeInterval: 0.05)
    } while Date() < deadline
    return removed
}

/// Every page from `token` until one is complete, each token passed through JSON (as a
/// consumer that saves it and starts again would).
private func readAll(_ store: ModelStore, from token: HistoryToken, limit: Int = 1000) throws -> (
    changes: [HistoryChange], token: HistoryToken
) {
    var token = token
    var changes: [HistoryChange] = []
    for _ in 0..<10_000 {
        let page = try store.history(since: token, limit: limit)
        #expect(page.changes.count <= limit)
        changes += page.changes
        token = try JSONDecoder().decode(HistoryToken.self, from: JSONEncoder().encode(page.token))
        if page.isComplete { return (changes, token) }
    }
    Issue.record("the history never completed")
    return (changes, token)
}

/// Promise: a model that declares `keepsHistory` has every committed change of its table —
/// by this store, another store or process, or raw SQL — in a durable history, read from a
/// saved token in commit order, each change exactly once, with its key; what rolled back, and
/// models without history, are not in it; a purged or foreign token is refused by name.
@Suite struct ChangeHistoryTests {
    @Test(arguments: Backend.available)
    func everyCommittedChangeIsInTheHistoryInCommitOrderWithItsKey(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        // Before any model kept history: the beginning.
        let start = try store.historyToken()
        #expect(try store.history(since: start).changes.isEmpty)
        let pass = UUID(uuidString: "00FF10EE-20DD-30CC-40BB-50AA60997088")!
        let label = "a\"b'c ü 😀 \\ \u{1}"
        _ = try Voucher.save([Voucher(id: 1, total: 10), Voucher(id: 2, total: 20), Voucher(id: 3, total: 30)], in: store)
        try Voucher(id: 2, total: 25).save(in: store)
        try Voucher(id: 2, total: 25).save(in: store)  // changes nothing: no update
        _ = try Voucher.delete(key: 3, in: store)
        try VoucherLine(voucher: 1, label: label, count: 2).save(in: store)
        try Pass(id: pass, holder: "ada").save(in: store)
        try Memo(id: 1, text: "not kept").save(in: store)
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try store.transaction {
                try Voucher(id: 9, total: 90).save(in: store)
                throw Refused()
            }
        }
        try store.execute("UPDATE \(table: Voucher.self) SET \(identifier: "total") = 11 WHERE \(identifier: "id") = 1")
        // A key that changes: the old key's delete, then the new key's insert.
        try store.execute("UPDATE \(table: Voucher.self) SET \(identifier: "id") = 4 WHERE \(identifier: "id") = 2")
        try store.transaction {
            try Voucher(id: 5, total: 50).save(in: store)
            _ = try Voucher.delete(key: 1, in: store)
        }
        let read = try readAll(store, from: start)
        #expect(
            read.changes.map(Seen.init) == [
                Seen("Voucher", .insert, [.integer(1)]), Seen("Voucher", .insert, [.integer(2)]),
                Seen("Voucher", .insert, [.integer(3)]), Seen("Voucher", .update, [.integer(2)]),
                Seen("Voucher", .delete, [.integer(3)]), Seen("VoucherLine", .insert, [.integer(1), .text(label)]),
                Seen("Pass", .insert, [.blob(try #require(try pass.declaredBlob()))]),
                Seen("Voucher", .update, [.integer(1)]),
                Seen("Voucher", .delete, [.integer(2)]), Seen("Voucher", .insert, [.integer(4)]),
                Seen("Voucher", .insert, [.integer(5)]), Seen("Voucher", .delete, [.integer(1)]),
            ])
        #expect(read.changes.filter { $0.isChange(of: Voucher.self) }.count == 10)
        #expect(try read.changes[0].key(as: Int64.self) == 1)
        #expect(try read.changes.first { $0.isChange(of: Pass.self) }?.key(as: Data.self).count == 16)
        #expect(throws: ModelStoreError.self) { try read.changes[5].key(as: Int64.self) }
        // Read on from the last token: nothing, until something changes.
        #expect(try store.history(since: read.token).changes.isEmpty)
        try Voucher(id: 6, total: 60).save(in: store)
        let next = try store.history(since: read.token)
        #expect(next.changes.map(Seen.init) == [Seen("Voucher", .insert, [.integer(6)])])
        #expect(next.isComplete)
        // A token taken now reads only what comes after it.
        let now = try store.historyToken()
        _ = try Voucher.delete(key: 6, in: store)
        #expect(try store.history(since: now).changes.map(Seen.init) == [Seen("Voucher", .delete, [.integer(6)])])
    }

    @Test(arguments: Backend.available)
    func pagesResumeFromASavedTokenInAnotherStoreExactlyOnce(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        let start = try store.historyToken()
        var expected: [Seen] = []
        for round in 0..<6 {
            let tickets = (0..<7).map { Voucher(id: Int64(round * 7 + $0), total: Double(round)) }
            _ = try Voucher.save(tickets, in: store)
            expected += tickets.map { Seen("Voucher", .insert, [.integer($0.id)]) }
        }
        // Pages of 4 changes, every other one read by a second store from the saved token.
        let other = try test.another()
        var token = start
        var seen: [Seen] = []
        var reader = store
        while true {
            let page = try reader.history(since: token, limit: 4)
            seen += page.changes.map(Seen.init)
            token = try JSONDecoder().decode(HistoryToken.self, from: JSONEncoder().encode(page.token))
            reader = reader === store ? other : store
            if page.isComplete { break }
            // A change made between pages comes after the ones before it, once.
            if seen.count == 8 {
                _ = try Voucher.delete(key: 0, in: other)
                expected.append(Seen("Voucher", .delete, [.integer(0)]))
            }
        }
        #expect(seen == expected)
        #expect(try other.history(since: token).changes.isEmpty)
        try other.close()
    }

    @Test(arguments: Backend.available)
    func aPurgedOrForeignTokenIsRefusedByName(_ backend: Backend) async throws {
        let test = try TestStore(backend)
        let store = test.store
        func first() throws -> HistoryToken {
            _ = try Voucher.save([Voucher(id: 1, total: 1), Voucher(id: 2, total: 2)], in: store)
            return try store.historyToken()
        }
        let old = try first()
        // (Awaited, not slept: a blocked thread of the test pool holds up the other tests.)
        try await Task.sleep(nanoseconds: 2_500_000_000)
        try then(old, backend: backend, test: test)
    }

    private func then(_ old: HistoryToken, backend: Backend, test: TestStore) throws {
        let store = test.store
        try Voucher(id: 3, total: 3).save(in: store)
        let recent = try store.historyToken()
        // Nothing is older than an hour: nothing goes.
        #expect(try store.purgeHistory(olderThan: 3600) == 0)
        #expect(try store.history(since: old).changes.count == 1)
        // The first two changes go; the third stays, and a token past the ones that went reads on.
        let removed = try purge(store, olderThan: 2, expecting: 2)
        if backend == .postgres, removed == 0 {
            // Documented: a server's purge keeps the changes of transactions newer than the
            // oldest one still running — on the shared test server, another test's, which may
            // run for minutes. Nothing went, and the history reads whole.
            #expect(try store.history(since: old).changes.count == 1)
            #expect(try store.history(since: .beginning).changes.count == 3)
            return
        }
        #expect(removed == 2)
        do {
            #expect(try store.history(since: recent).changes.isEmpty)
        } catch let error as ModelStoreError where backend == .postgres && error.code == .historyPurged {
            // Documented: on a server, a token read while another transaction was writing
            // (another test's, on a loaded machine) that the purge reached past is refused.
        }
        let removedAgain = try purge(store, olderThan: 0, expecting: 1)
        #expect(removedAgain == 1 || (backend == .postgres && removedAgain == 0))
        let fresh = try store.historyToken()
        // (`old` had read the first two: it misses something only once the third went.)
        for token in removedAgain == 1 ? [old, HistoryToken.beginning] : [HistoryToken.beginning] {
            let error = try #require(throws: ModelStoreError.self) { try store.history(since: token) }
            #expect(error.code == .historyPurged)
            #expect(error.message.contains("purged"))
        }
        // A token taken after the purge reads on.
        try Voucher(id: 4, total: 4).save(in: store)
        #expect(try store.history(since: fresh).changes.map(Seen.init) == [Seen("Voucher", .insert, [.integer(4)])])
        // Another store's token.
        let elsewhere = try TestStore(backend)
        try Voucher(id: 1, total: 1).save(in: elsewhere.store)
        let foreign = try elsewhere.store.historyToken()
        let error = try #require(throws: ModelStoreError.self) { try store.history(since: foreign) }
        #expect(error.code == .historyPurged)
        #expect(error.message.contains("not of this store's history"))
        // A token whose snapshot was forged (a client sent it back edited): refused by name on a
        // server, not taken for a table changed behind the store's back (SQLite keeps none).
        if backend == .postgres {
            for field in ["snapshot", "pendingSnapshot"] {
                var json = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(fresh)) as? [String: Any])
                json[field] = "abc"
                if field == "pendingSnapshot" { json["pendingPosition"] = 1 }
                let forged = try JSONDecoder().decode(HistoryToken.self, from: JSONSerialization.data(withJSONObject: json))
                let refusal = try #require(throws: ModelStoreError.self) { try store.history(since: forged) }
                #expect(refusal.code == .historyPurged, "\(field): \(refusal)")
            }
        }
        // Bad arguments, and a call inside a block that would see its own uncommitted changes.
        #expect(throws: ModelStoreError.self) { try store.history(since: recent, limit: 0) }
        #expect(throws: ModelStoreError.self) { try store.purgeHistory(olderThan: -1) }
        #expect(throws: ModelStoreError.self) { try store.purgeHistory(olderThan: .nan) }
        try store.transaction {
            let inside = try #require(throws: ModelStoreError.self) { try store.history(since: recent) }
            #expect(inside.code == .invalidQuery)
            #expect(throws: ModelStoreError.self) { try store.historyToken() }
        }
        // Nor inside a read block, whose snapshot may be older than the token.
        try store.read {
            let inside = try #require(throws: ModelStoreError.self) { try store.history(since: fresh) }
            #expect(inside.code == .invalidQuery)
            #expect(try store.historyToken().position >= 0)
        }
        #expect(try store.history(since: fresh).changes.count == 1)
    }

    @Test(arguments: Backend.available)
    func stoppingHistoryDropsItsTriggersAndAStoreDeclaringItMakesThemAgain(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try Voucher(id: 1, total: 1).save(in: store)
        let token = try store.historyToken()
        // A release whose model no longer declares history (the same table).
        let plain = try test.later()
        try plain.stopHistory(of: PlainVoucher.self)
        try PlainVoucher(id: 2, total: 2).save(in: plain)
        try plain.execute("DELETE FROM \(table: PlainVoucher.self) WHERE \(identifier: "id") = 1")
        #expect(try plain.history(since: token).changes.isEmpty)
        try plain.close()
        // A store that declares it makes the triggers again when it first uses the model; what
        // changed meanwhile went unrecorded, which a change of unknown rows says.
        let later = try test.later()
        try Voucher(id: 3, total: 3).save(in: later)
        #expect(
            try later.history(since: token).changes.map(Seen.init) == [
                Seen("Voucher", .unknownRows, []), Seen("Voucher", .insert, [.integer(3)]),
            ])
        try later.close()
    }

    @Test(arguments: Backend.available)
    func asyncAndCompletionFormsReadTheSameHistory(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        let start = try await store.historyToken()
        _ = try await Voucher.save([Voucher(id: 1, total: 1), Voucher(id: 2, total: 2)], in: store)
        let page = try await store.history(since: start)
        #expect(page.changes.map(Seen.init) == [Seen("Voucher", .insert, [.integer(1)]), Seen("Voucher", .insert, [.integer(2)])])
        let delivered: HistoryPage = try await withCheckedThrowingContinuation { continuation in
            store.history(since: start, limit: 1) { continuation.resume(with: $0) }
        }
        #expect(delivered.changes.map(Seen.init) == [Seen("Voucher", .insert, [.integer(1)])])
        #expect(!delivered.isComplete)
        var removed = 0
        for _ in 0..<100 where removed < 2 {
            removed += try await store.purgeHistory(olderThan: 0)
            if removed < 2 { try await Task.sleep(nanoseconds: 20_000_000) }
        }
        // (A server keeps changes of transactions newer than the oldest still running.)
        #expect(removed == 2 || (backend == .postgres && removed == 0))
        // Every call has its completion form: a token, a purge, a refused age, a stop.
        let token: HistoryToken = try await withCheckedThrowingContinuation { continuation in
            store.historyToken { continuation.resume(with: $0) }
        }
        let purged: Int = try await withCheckedThrowingContinuation { continuation in
            store.purgeHistory(olderThan: 3600) { continuation.resume(with: $0) }
        }
        #expect(purged == 0)
        let refused: Result<Int, ModelStoreError> = await withCheckedContinuation { continuation in
            store.purgeHistory(olderThan: -1) { continuation.resume(returning: $0) }
        }
        guard case .failure(let ageError) = refused else {
            Issue.record("a negative age was purged with")
            return
        }
        #expect(ageError.code == .invalidQuery)
        let _: Void = try await withCheckedThrowingContinuation { continuation in
            store.stopHistory(of: Voucher.self) { continuation.resume(with: $0) }
        }
        _ = try await store.execute(#"UPDATE "Voucher" SET "total" = 9"#)
        #expect(try await store.history(since: token).changes.isEmpty, "stopped: raw SQL is not recorded")
        // The async stop too, after a store prepares the model again (a new store does).
        let again = try test.another()
        try await Voucher(id: 3, total: 3).save(in: again)
        #expect(try await again.history(since: token).changes.map(Seen.init).contains(Seen("Voucher", .insert, [.integer(3)])))
        try await again.stopHistory(of: Voucher.self)
        let afterStop = try await again.historyToken()
        _ = try await again.execute(#"DELETE FROM "Voucher""#)
        #expect(try await again.history(since: afterStop).changes.isEmpty)
        try again.close()
    }

    /// Another process writes transactions of five records until it is killed: the history
    /// holds every committed transaction whole, in order, exactly the records stored — and
    /// nothing of the transaction the kill cut.
    @Test(arguments: Backend.available)
    func anotherProcessesCommitsAreInTheHistoryAndAKilledTransactionIsNot(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        let start = try store.historyToken()
        let writer = try HelperProcess("write-history", path: try test.processArgument())
        try writer.waitFor("started")
        // Read while it writes, then kill it mid-way.
        var read = try readAll(store, from: start, limit: 37)
        Thread.sleep(forTimeInterval: 0.3)
        writer.stop()
        let rest = try readAll(store, from: read.token, limit: 37)
        read.changes += rest.changes
        let keys = try read.changes.map { try $0.key(as: Int64.self) }
        #expect(read.changes.allSatisfy { $0.operation == .insert && $0.isChange(of: HistoryParcel.self) })
        #expect(keys.count % Int(HistoryParcel.perTransaction) == 0)
        #expect(keys == Array(1...Int64(keys.count)))
        let stored = try HistoryParcel.findAll(in: store).map(\.id).sorted()
        #expect(stored == keys)
        #expect(keys.count >= Int(HistoryParcel.perTransaction))
    }
    /// A store configured with a retention purges older changes after its writes, on its
    /// own: a consumer further behind is refused, the newer changes stay.
    @Test(arguments: Backend.available)
    func aStoreWithARetentionPurgesOlderChangesAfterItsWrites(_ backend: Backend) async throws {
        let test = try TestStore(backend, configuration: .init(historyRetention: 1))
        let store = test.store
        func save(_ id: Int64) throws { try Voucher(id: id, total: 2).save(in: store) }
        func readFromTheBeginning() throws -> ModelStoreError? {
            do {
                _ = try store.history(since: .beginning)
                return nil
            } catch let error as ModelStoreError {
                return error
            }
        }
        try save(1)
        try await Task.sleep(nanoseconds: 1_500_000_000)
        // Each write after a tenth of the retention purges (a read waits for the purge its
        // write scheduled, as for any earlier write); on a server, until no other transaction
        // older than the first change still runs.
        var refused: ModelStoreError?
        for id in Int64(2)...60 where refused == nil {
            try save(id)
            refused = try readFromTheBeginning()
            if refused == nil { try await Task.sleep(nanoseconds: 150_000_000) }
        }
        try check(refused, backend: backend, store: store)
    }

    private func check(_ refused: ModelStoreError?, backend: Backend, store: ModelStore) throws {
        let stored = Int64(try Voucher.count(in: store))
        if backend == .postgres, refused == nil {
            // A server's purge keeps changes of transactions newer than the oldest one still
            // running (another test's, on the shared test server): none went.
            #expect(try store.findAll(Int64.self, sql: "SELECT count(*) FROM modelstore_history") == [stored])
            return
        }
        #expect(refused?.code == .historyPurged)
        // The first change went, the newest (younger than the retention) stayed.
        let kept = try #require(try store.findAll(Int64.self, sql: "SELECT count(*) FROM modelstore_history").first)
        #expect((1...(stored - 1)).contains(kept), "\(kept) of \(stored)")
    }

    /// A release that renames the table and its key column, then a migration step that
    /// rebuilds it: the history goes on under the new names, with nothing recorded by the
    /// rename or the rebuild's copy of the rows.
    @Test(arguments: Backend.available)
    func aRenamedAndRebuiltTableKeepsItsHistoryUnderItsNewNames(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try Coupon(code: "A", percent: 5).save(in: test.store)
        let token = try test.store.historyToken()
        let renamed = try test.later()
        try Promo(token: "B", percent: 10).save(in: renamed)
        try renamed.close()
        let rebuild = MigrationStep("rebuild promos") { try $0.rebuild(Promo.self) }
        let rebuilt = try test.later(configuration: .init(migrations: [rebuild]))
        try Promo(token: "C", percent: 15).save(in: rebuilt)
        try Promo(token: "A", percent: 6).save(in: rebuilt)
        // The rebuild copied the records without their triggers: a change of unknown rows
        // (a step may have changed values on the way), then the history goes on.
        #expect(
            try rebuilt.history(since: token).changes.map(Seen.init) == [
                Seen("Promo", .insert, [.text("B")]), Seen("Promo", .unknownRows, []), Seen("Promo", .insert, [.text("C")]),
                Seen("Promo", .update, [.text("A")]),
            ])
        // A change recorded under the table's former name reads back with its key as stored.
        let first = try #require(try rebuilt.history(since: .beginning, limit: 1).changes.first)
        #expect(Seen(first) == Seen("Coupon", .insert, [.text("A")]))
        try rebuilt.close()
    }

    /// A table dropped behind the store's back and made again by a store: changes between
    /// went unrecorded, which the history says with a change of unknown rows.
    @Test(arguments: Backend.available)
    func aTableMadeAgainWithoutItsTriggersIsAChangeOfUnknownRows(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try Voucher(id: 1, total: 1).save(in: test.store)
        let token = try test.store.historyToken()
        try test.store.execute("DROP TABLE \(table: Voucher.self)")
        let later = try test.later()
        try Voucher(id: 2, total: 2).save(in: later)
        let read = try later.history(since: token)
        #expect(read.changes.map(Seen.init) == [Seen("Voucher", .unknownRows, []), Seen("Voucher", .insert, [.integer(2)])])
        try later.close()
        // Again, after the consumer read the first one, and after a purge took the table's
        // changes: the history still knows the table was recorded.
        _ = try purge(test.store, olderThan: 0, expecting: 3)
        let beforeDrop = try test.store.historyToken()
        try test.store.execute("DROP TABLE \(table: Voucher.self)")
        let again = try test.later()
        try Voucher(id: 3, total: 3).save(in: again)
        #expect(
            try again.history(since: beforeDrop).changes.map(Seen.init) == [
                Seen("Voucher", .unknownRows, []), Seen("Voucher", .insert, [.integer(3)]),
            ])
        try again.close()
    }

    /// Another program deleting the log's rows: the consumers behind them are refused, and
    /// positions are never given twice.
    @Test(arguments: Backend.available)
    func deletingTheLogsRowsBehindTheStoresBackRefusesTheConsumersBehindThem(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        _ = try Voucher.save((1...3).map { Voucher(id: $0, total: 1) }, in: store)
        let behind = try store.historyToken()
        _ = try Voucher.save((4...5).map { Voucher(id: $0, total: 1) }, in: store)
        try store.execute("DELETE FROM modelstore_history")
        _ = try Voucher.save((6...8).map { Voucher(id: $0, total: 1) }, in: store)
        let error = try #require(throws: ModelStoreError.self) { try store.history(since: behind) }
        #expect(error.code == .historyPurged)
        let now = try store.historyToken()
        try Voucher(id: 9, total: 1).save(in: store)
        do {
            #expect(try store.history(since: now).changes.map(Seen.init) == [Seen("Voucher", .insert, [.integer(9)])])
        } catch let error as ModelStoreError where backend == .postgres && error.code == .historyPurged {
            // Documented: on a server, a token read while a transaction older than the deleted
            // changes still ran (another test's, on the shared server) is refused too.
        }
    }

    /// Purges running while a consumer reads page after page: every page is whole — the
    /// keys it reads follow on from the last, with no hole — or the token is refused.
    @Test(arguments: Backend.available)
    func aPurgeRacingTheReadsNeverLeavesASilentHole(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        let writer = try test.another()
        defer { try? writer.close() }
        try Voucher(id: 0, total: 0).save(in: store)
        let start = try store.historyToken()
        let stop = Flag()
        let purges = DispatchSemaphore(value: 0)
        Thread {
            // (Every few milliseconds: a tight loop of server transactions starves the other
            // tests running beside this one on two cores.)
            while !stop.isSet {
                _ = try? writer.purgeHistory(olderThan: 0)
                Thread.sleep(forTimeInterval: 0.005)
            }
            purges.signal()
        }.start()
        var token = start
        var next: Int64 = 1
        var refusals = 0
        for id in Int64(1)...150 {
            try Voucher(id: id, total: 1).save(in: store)
            do {
                let page = try store.history(since: token, limit: 3)
                for change in page.changes {
                    #expect(try change.key(as: Int64.self) == next, "a hole before \(next)")
                    next = try change.key(as: Int64.self) + 1
                }
                token = page.token
            } catch let error as ModelStoreError where error.code == .historyPurged {
                refusals += 1
                token = try store.historyToken()
                next = id + 1
            }
        }
        stop.set()
        purges.wait()
        #expect(refusals > 0 || next > 1)
    }

    /// A file replaced by a copy made before the consumer's token (a backup restored): the
    /// token is ahead of the history, and refused rather than skipping the new changes.
    @Test func aTokenAheadOfARestoredCopyIsRefused() throws {
        let test = try TestStore(.file)
        let store = test.store
        _ = try Voucher.save([Voucher(id: 1, total: 1), Voucher(id: 2, total: 2)], in: store)
        let copy = test.directory.appendingPathComponent("copy.sqlite").path
        try store.backup(to: copy)
        _ = try Voucher.save([Voucher(id: 3, total: 3), Voucher(id: 4, total: 4)], in: store)
        let token = try store.historyToken()
        let restored = try ModelStore(path: copy)
        defer { try? restored.close() }
        try Voucher(id: 5, total: 5).save(in: restored)
        let error = try #require(throws: ModelStoreError.self) { try restored.history(since: token) }
        #expect(error.code == .historyPurged)
        #expect(error.message.contains("ahead"))
    }

    /// On a server, a table moved to another schema keeps its triggers, which record nothing
    /// there — and never fail its writes.
    @Test(.enabled(if: Backend.available.contains(.postgres)))
    func aHistoryTableMovedToAnotherSchemaIsWrittenAsBefore() throws {
        let test = try TestStore(StoreKind.postgres)
        try Voucher(id: 1, total: 1).save(in: test.store)
        let token = try test.store.historyToken()
        let elsewhere = "history_moved_\(UInt32.random(in: 0...UInt32.max))"
        try test.rawExecute("CREATE SCHEMA \(elsewhere)")
        defer { try? test.rawExecute("DROP SCHEMA \(elsewhere) CASCADE") }
        try test.rawExecute("ALTER TABLE \"Voucher\" SET SCHEMA \(elsewhere)")
        try test.rawExecute("INSERT INTO \(elsewhere).\"Voucher\" (id, total) VALUES (2, 2)")
        try test.rawExecute("UPDATE \(elsewhere).\"Voucher\" SET total = 3")
        #expect(try test.store.history(since: token).changes.isEmpty)
    }

    /// On a server, a key column of a domain type records the domain's base type: its keys
    /// read back as that type's values.
    @Test(.enabled(if: Backend.available.contains(.postgres)))
    func aServerKeyOfADomainTypeReadsBackAsItsBaseType() throws {
        let test = try TestStore(StoreKind.postgres)
        try test.rawExecute("CREATE DOMAIN history_key AS bigint CHECK (VALUE > 0)")
        try test.rawExecute("CREATE TABLE \"Voucher\" (id history_key PRIMARY KEY, total double precision NOT NULL)")
        let token = try test.store.historyToken()
        try Voucher(id: 7, total: 1).save(in: test.store)
        let change = try #require(try test.store.history(since: token).changes.first)
        #expect(try change.key(as: Int64.self) == 7)
    }

    /// On a server, a transaction that wrote first but commits last holds smaller positions
    /// than changes a consumer has read already: it is read after them, once.
    @Test(.enabled(if: Backend.available.contains(.postgres)))
    func aTransactionThatWroteFirstButCommitsLastIsReadOnceAfterTheOthers() throws {
        let test = try TestStore(StoreKind.postgres)
        let slow = try test.another()
        let fast = try test.another()
        defer {
            try? slow.close()
            try? fast.close()
        }
        // Each store has made its statements ready (a first write checks the table, which
        // would wait for the held transaction).
        try Voucher(id: 1, total: 1).save(in: slow)
        try Voucher(id: 2, total: 2).save(in: fast)
        var token = try test.store.historyToken()
        let wrote = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let failure = FailureBox()
        Thread {
            do {
                try slow.transaction {
                    try Voucher(id: 10, total: 10).save(in: slow)
                    wrote.signal()
                    release.wait()
                }
            } catch {
                failure.error = error
            }
            done.signal()
        }.start()
        wrote.wait()
        try Voucher(id: 11, total: 11).save(in: fast)
        // The held transaction is not visible: only the later one is read, and pages of one
        // change at a time agree.
        let first = try readAll(test.store, from: token, limit: 1)
        #expect(first.changes.map(Seen.init) == [Seen("Voucher", .insert, [.integer(11)])])
        token = first.token
        release.signal()
        done.wait()
        #expect(failure.error == nil)
        let second = try readAll(test.store, from: token, limit: 1)
        #expect(second.changes.map(Seen.init) == [Seen("Voucher", .insert, [.integer(10)])])
        #expect(try test.store.history(since: second.token).changes.isEmpty)
    }
}

/// A flag one thread sets and another reads.
private final class Flag: @unchecked Sendable {
    // @unchecked: `value` is read and written only while `lock` is held.
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

/// An error handed from the writing thread to the test, read after the semaphore says it ran.
private final class FailureBox: @unchecked Sendable {
    var error: (any Error)?
}

extension UUID {
    /// The 16 bytes a UUID declared `.blob` is stored as.
    fileprivate func declaredBlob() throws -> Data? {
        withUnsafeBytes(of: uuid) { Data($0) }
    }
}
