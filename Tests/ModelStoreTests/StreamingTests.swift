import Foundation
import Testing
@testable import ModelStore

private struct StreamRow: StoredModel, Equatable {
    var id: Int64
    var text: String
    var value: Double
    static let primaryKey = ["id"]
}

private struct StreamShelf: StoredModel, Equatable {
    var id: Int64
    var books: [StreamVolume]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<StreamShelf>] = [.toMany(\.books, inverse: \StreamVolume.shelf)]
}

private struct StreamVolume: StoredModel, Equatable {
    var id: Int64
    @Related var shelf: StreamShelf?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<StreamVolume>] = [.toOne(\.shelf, inverse: \StreamShelf.books)]
}

private func seeded(_ count: Int, _ kind: StoreKind = .file, configuration: ModelStore.Configuration = .init()) throws -> TestStore {
    let test = try TestStore(kind, configuration: configuration)
    try StreamRow.save((1...count).map { StreamRow(id: Int64($0), text: "row \($0)", value: Double($0)) }, in: test.store)
    return test
}

/// Waits up to `seconds` for `operation`; nil when it did not finish (it is left running).
private func within<T: Sendable>(_ seconds: Double, _ operation: @escaping @Sendable () async throws -> T) async throws -> T? {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask(priority: .high) { try await operation() }
        group.addTask(priority: .high) {
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            return nil
        }
        let first = try await group.next()!
        group.cancelAll()
        return first
    }
}

@Suite("Streaming: forEach and RecordStream")
struct StreamingTests {
    @Test(arguments: StoreKind.everywhere)
    func forEachAndStreamVisitEveryRecordInQueryOrder(_ kind: StoreKind) async throws {
        let test = try seeded(1_000, kind)
        let query = StreamRow.filter(\.value > 10).order(.descending(\.value))
        var synchronous: [Int64] = []
        try { try query.forEach(in: test.store) { synchronous.append($0.id) } }()
        var streamed: [Int64] = []
        for try await row in query.stream(in: test.store) { streamed.append(row.id) }
        let expected = Array((11...1_000).reversed()).map(Int64.init)
        #expect(synchronous == expected)
        #expect(streamed == expected)
        // An empty result, and a model nothing has written yet.
        var none = 0
        for try await _ in StreamRow.filter(\.value < 0).stream(in: test.store) { none += 1 }
        for try await _ in StreamShelf.all().stream(in: test.store) { none += 1 }
        #expect(none == 0)
    }

    @Test(arguments: Backend.available) func rawSQLStreamsDecodeModelsProjectionsAndValues(_ backend: Backend) async throws {
        let test = try seeded(600, StoreKind.file.or(backend))
        var ids: [Int64] = []
        for try await id in test.store.stream(Int64.self, sql: #"SELECT "id" FROM "StreamRow" WHERE "value" > \#(100.0) ORDER BY "id""#) {
            ids.append(id)
        }
        #expect(ids == Array(101...600))
        var rows: [StreamRow] = []
        for try await row in test.store.stream(StreamRow.self, sql: #"SELECT "value", "text", "id" FROM "StreamRow" WHERE "id" <= \#(3)"#) {
            rows.append(row)
        }
        #expect(rows == (1...3).map { StreamRow(id: Int64($0), text: "row \($0)", value: Double($0)) })
        var texts: [String] = []
        try { try test.store.forEach(String.self, sql: #"SELECT "text" FROM "StreamRow" WHERE "id" < \#(3)"#) { texts.append($0) } }()
        #expect(texts == ["row 1", "row 2"])
        // A stream reads: SQL that writes is refused, and nothing is written.
        await #expect {
            for try await _ in test.store.stream(Int64.self, sql: #"DELETE FROM "StreamRow" RETURNING "id""#) {}
        } throws: { ($0 as? ModelStoreError)?.code == .invalidQuery }
        #expect(try await StreamRow.count(in: test.store) == 600)
    }

    @Test(arguments: Backend.available) func relationshipsTheQueryLoadsAreFilledPerChunk(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        var shelves: [StreamShelf] = []
        for id in 1...600 {
            var shelf = StreamShelf(id: Int64(id))
            shelf.books = [StreamVolume(id: Int64(id * 2)), StreamVolume(id: Int64(id * 2 + 1))]
            shelves.append(shelf)
        }
        try await StreamShelf.save(shelves, in: test.store)
        var counts: [Int] = []
        for try await shelf in StreamShelf.all().loading(.direct).stream(in: test.store) { counts.append(shelf.books?.count ?? -1) }
        #expect(counts == Array(repeating: 2, count: 600))
        var bare = 0
        try { try StreamShelf.all().forEach(in: test.store) { if $0.books == nil { bare += 1 } } }()
        #expect(bare == 600)
        await #expect {
            for try await _ in StreamShelf.all().loading(.only("nothing")).stream(in: test.store) {}
        } throws: { ($0 as? ModelStoreError)?.code == .invalidQuery }
    }

    @Test(arguments: Backend.available) func breakingEarlyReturnsTheReaderAtOnce(_ backend: Backend) async throws {
        // One reader: a stream that kept it would make every later read wait.
        let test = try seeded(5_000, StoreKind.file.or(backend), configuration: .init(maximumReaders: 1))
        var seen = 0
        for try await _ in StreamRow.all().stream(in: test.store) {
            seen += 1
            if seen == 10 { break }
        }
        #expect(seen == 10)
        let store = test.store
        let count = try await within(10) { try await StreamRow.count(in: store) }
        #expect(count == 5_000)
    }

    @Test(arguments: Backend.available) func cancellingTheTaskEndsTheStreamWithCancelledAndReturnsTheReader(_ backend: Backend) async throws
    {
        let test = try seeded(5_000, StoreKind.file.or(backend), configuration: .init(maximumReaders: 1))
        let store = test.store
        let started = Collected<Int>()
        let task = Task(priority: .high) { () -> (seen: Int, code: ModelStoreError.Code?) in
            var seen = 0
            do {
                for try await _ in StreamRow.all().stream(in: store) {
                    seen += 1
                    if seen == 1 {
                        started.add(1)
                        // The stream stays half read until the test cancels the task: however
                        // long the test's own task waits for a thread, it cannot come too late.
                        while !Task.isCancelled { try? await Task.sleep(nanoseconds: 1_000_000) }
                    }
                }
            } catch {
                // A loop cut short never looks like one that read every row.
                return (seen, (error as? ModelStoreError)?.code)
            }
            return (seen, nil)
        }
        // Patient: the task needs a thread of the concurrency pool (as many as cores), which
        // long synchronous tests running beside it — the PostgreSQL suites, the soaks — may
        // hold for tens of seconds on a small machine. What is checked is cancellation.
        #expect(await eventually(120) { !started.current.isEmpty })
        task.cancel()
        let (seen, code) = await task.value
        #expect(seen < 5_000)
        #expect(code == .cancelled)
        let count = try await within(10) { try await StreamRow.count(in: store) }
        #expect(count == 5_000)
    }

    @Test(arguments: Backend.available) func aSaveCompletesWhileAStreamIsHalfConsumed(_ backend: Backend) async throws {
        let test = try seeded(5_000, StoreKind.file.or(backend))
        let store = test.store
        var iterator = StreamRow.all().stream(in: store).makeAsyncIterator()
        for _ in 0..<1_000 { _ = try await iterator.next() }
        // The stream holds its reader and snapshot; the writer must not wait for it.
        let saved = try await within(10) { try await StreamRow(id: 9_999, text: "late", value: 0).save(in: store) }
        #expect(saved == .inserted)
        // The stream goes on in its own snapshot: it never sees the late record.
        var rest: [Int64] = []
        while let row = try await iterator.next() { rest.append(row.id) }
        #expect(rest == Array(1_001...5_000))
        #expect(try await StreamRow.count(in: store) == 5_001)
        // The synchronous form does not hold back writers on other threads either.
        let done = Collected<Bool>()
        try {
            try StreamRow.all().forEach(in: store) { row in
                guard row.id == 1 else { return }
                // From another thread: on this one, inside the read, the call would join it.
                onAThread {
                    store.execute("UPDATE \"StreamRow\" SET text = \("written") WHERE id = \(2)") { done.add((try? $0.get()) == 1) }
                }
                #expect(eventually(10) { done.current == [true] })
            }
        }()
    }

    @Test(arguments: Backend.available) func aStreamSeesWritesSubmittedBeforeIt(_ backend: Backend) async throws {
        let test = try seeded(10, StoreKind.file.or(backend))
        let store = test.store
        let deleted = Locked<Int?>(nil)
        store.execute("DELETE FROM \"StreamRow\" WHERE id > \(5)") { result in deleted.withLock { $0 = try? result.get() } }
        var ids: [Int64] = []
        for try await row in StreamRow.all().stream(in: store) { ids.append(row.id) }
        #expect(ids == [1, 2, 3, 4, 5])
        #expect(await eventually { deleted.current == 5 })
    }

    @Test(arguments: Backend.available) func errorsMidStreamReachTheLoop(_ backend: Backend) async throws {
        let test = try seeded(1_000, StoreKind.file.or(backend))
        // Another tool stores a value Double cannot decode in row 700: text in SQLite's REAL
        // column, NULL in a server's typed one.
        if backend == .sqlite {
            try await test.store.execute("UPDATE StreamRow SET value = 'not a number' WHERE id = \(700)")
        } else {
            try await test.store.execute(#"ALTER TABLE "StreamRow" ALTER COLUMN "value" DROP NOT NULL"#)
            try await test.store.execute(#"UPDATE "StreamRow" SET "value" = NULL WHERE "id" = \#(700)"#)
        }
        var seen = 0
        await #expect {
            for try await _ in StreamRow.all().stream(in: test.store) { seen += 1 }
        } throws: { error in
            guard let error = error as? ModelStoreError else { return false }
            return error.code == .decodingFailed && error.column == "value" && error.key == "id = 700"
        }
        // Every chunk before the failing row was delivered.
        #expect(seen >= 512 && seen < 700)
        #expect {
            try StreamRow.all().forEach(in: test.store) { _ in }
        } throws: { ($0 as? ModelStoreError)?.code == .decodingFailed }
        // What the body throws ends forEach and comes back as it was.
        struct Stop: Error {}
        var visited = 0
        #expect(throws: Stop.self) {
            try StreamRow.all().forEach(in: test.store) { _ in
                visited += 1
                if visited == 3 { throw Stop() }
            }
        }
        #expect(visited == 3)
    }

    @Test(arguments: Backend.available) func insideBlocksForEachJoinsAndAStreamIsRefused(_ backend: Backend) async throws {
        let test = try seeded(300, StoreKind.file.or(backend))
        let store = test.store
        try await store.transaction {
            try StreamRow(id: 301, text: "uncommitted", value: 0).save(in: store)
            var count = 0
            try StreamRow.all().forEach(in: store) { _ in count += 1 }
            #expect(count == 301)
        }
        try await store.read {
            var count = 0
            try StreamRow.all().forEach(in: store) { row in
                count += 1
                if row.id == 1 {
                    #expect {
                        try StreamRow(id: 1, text: "x", value: 0).save(in: store)
                    } throws: { ($0 as? ModelStoreError)?.code == .reentrancy }
                }
            }
            #expect(count == 301)
        }
        // A stream iterated in a task started inside a block would wait for the block.
        let refused = Collected<ModelStoreError.Code>()
        try await store.transaction {
            let done = DispatchSemaphore(value: 0)
            Task(priority: .high) {
                do {
                    for try await _ in StreamRow.all().stream(in: store) {}
                } catch let error as ModelStoreError {
                    refused.add(error.code)
                }
                done.signal()
            }
            done.wait()
        }
        #expect(refused.current == [.reentrancy])
    }

    @Test(arguments: Backend.available) func closingTheStoreEndsAStalledStream(_ backend: Backend) async throws {
        let test = try seeded(5_000, StoreKind.file.or(backend))
        let store = test.store
        var iterator = StreamRow.all().stream(in: store).makeAsyncIterator()
        _ = try await iterator.next()
        // The producer is blocked waiting for this consumer; close() must not wait for it.
        let closed = try await within(10) {
            try store.close()
            return true
        }
        #expect(closed == true)
        // The stream ends rather than hanging.
        var rest = 0
        while (try? await iterator.next()) ?? nil != nil { rest += 1 }
        #expect(rest < 5_000)
    }

    // SQLite-only: too many records for the PostgreSQL half of the suite (slow over a server).
    @Test func theProducerStaysAFewChunksAheadOver200kRecords() async throws {
        let test = try TestStore(.file)
        let store = test.store
        // The model's first write makes its table; then SQL fills it.
        try await StreamRow(id: 0, text: "", value: 0).save(in: store)
        try await store.execute("DELETE FROM StreamRow")
        try await store.execute(
            """
            WITH RECURSIVE n(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM n WHERE v < 200000)
            INSERT INTO StreamRow (id, text, value) SELECT v, printf('%0100d', v), v FROM n
            """)
        // Rows decoded but not yet consumed are what the stream holds: bounded memory means a
        // bounded lead, however slow the consumer and however many rows there are.
        var consumed = 0
        var largestLead = 0
        for try await row in store.stream(CountedRow.self, sql: "SELECT id, text FROM StreamRow ORDER BY id") {
            consumed += 1
            #expect(row.id == Int64(consumed))
            if consumed % 10_000 == 0 { try? await Task.sleep(nanoseconds: 2_000_000) }  // let the producer run ahead if it would
            largestLead = max(largestLead, CountedRow.decoded.current - consumed)
        }
        #expect(consumed == 200_000)
        // Two chunks waiting, one being filled, one being consumed.
        #expect(largestLead <= 4 * 256)
    }
}

/// Counts its decodings, to see how far a stream's producer runs ahead of its consumer.
private struct CountedRow: Decodable, Sendable {
    static let decoded = Locked(0)
    var id: Int64
    var text: String

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        text = try container.decode(String.self, forKey: .text)
        Self.decoded.withLock { $0 += 1 }
    }

    private enum CodingKeys: String, CodingKey { case id, text }
}
