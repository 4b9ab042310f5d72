import Foundation
import Testing

@testable import ModelStore

/// What a server stream's cursor does to the rest of its transaction. Only the stream's own
/// query reads through a cursor (`Statement.readInChunks()`), closed when its statement is
/// reset; every other statement — the consumer's lookups, relationship loads, deletes with
/// their scratch tables, DDL — runs as before. Each test runs on both backends (found by an
/// adversarial review of the first, connection-wide cursor design).
@Suite struct CursorStreamReviewTests {
    struct RVRow: StoredModel, Equatable {
        var id: Int64
        var label: String
        static let primaryKey = ["id"]
    }

    /// Which team a row points at, so a stream over these can delete teams.
    struct RVTicket: StoredModel, Equatable {
        var id: Int64
        var teamId: Int64
        static let primaryKey = ["id"]
    }

    struct Oops: Error {}

    static func rows(_ count: Int, in store: ModelStore) throws {
        _ = try RVRow.save((1...Int64(count)).map { RVRow(id: $0, label: "row \($0)") }, in: store)
    }

    /// Teams 1…count, each with two players (cascade) and a coach (nullify); a ticket per team.
    static func teams(_ count: Int64, in store: ModelStore) throws {
        for id in 1...count {
            var team = BKTeam(id: id, name: "team \(id)")
            team.players = [BKPlayer(id: id * 10, name: "a"), BKPlayer(id: id * 10 + 1, name: "b")]
            team.coach = BKCoach(id: id, name: "coach \(id)")
            try team.save(in: store)
            try RVTicket(id: id, teamId: id).save(in: store)
        }
    }

    // MARK: DDL after a cursor in the same transaction

    /// A delete whose rules use a scratch table (`DeleteRules.delete`: CREATE TEMP TABLE,
    /// `SELECT count(*) … IN (SELECT * FROM pg_temp.scratch)`, DROP TABLE) inside a stream's
    /// consumer: the count ran through a cursor that stays open, so the scratch table's DROP
    /// fails with "cannot DROP TABLE … because it is being used by active queries in this
    /// session", which aborts the whole transaction. Before the cursors it worked.
    @Test(arguments: Backend.available)
    func deletingWithDeleteRulesInsideForEachInsideATransaction(_ backend: Backend) throws {
        let owner = try BackendStore(backend)
        let store = owner.store
        try Self.teams(3, in: store)
        try store.transaction {
            try RVTicket.all().forEach(in: store) { ticket in
                _ = try BKTeam.delete(key: ticket.teamId, in: store)
            }
        }
        #expect(try BKTeam.count(in: store) == 0)
        #expect(try BKPlayer.count(in: store) == 0)
        #expect(try BKCoach.count(in: store) == 3)
    }

    /// The same with a query's deleteAll (a condition, not a key: always a scratch table).
    @Test(arguments: Backend.available)
    func deleteAllByConditionInsideForEachInsideATransaction(_ backend: Backend) throws {
        let owner = try BackendStore(backend)
        let store = owner.store
        try Self.teams(3, in: store)
        var deleted = 0
        try store.transaction {
            try RVTicket.all().forEach(in: store) { ticket in
                deleted += try BKTeam.filter(\.name == "team \(ticket.teamId)").deleteAll(in: store)
            }
        }
        #expect(deleted == 3)
        #expect(try BKPlayer.count(in: store) == 0)
    }

    /// Raw DDL on a table after a forEach over it, in the same transaction: the forEach's
    /// cursor is still open (it is closed only by the transaction's end), so PostgreSQL refuses
    /// "cannot ALTER TABLE … because it is being used by active queries in this session".
    @Test(arguments: Backend.available)
    func alterTableAfterForEachInTheSameTransaction(_ backend: Backend) throws {
        let owner = try BackendStore(backend)
        let store = owner.store
        try Self.rows(20, in: store)
        let seen = try store.transaction {
            var seen = 0
            try RVRow.all().forEach(in: store) { _ in seen += 1 }
            try store.execute("ALTER TABLE \"RVRow\" ADD COLUMN \"note\" TEXT")
            return seen
        }
        #expect(seen == 20)
        #expect(try RVRow.count(in: store) == 20)
    }

    /// A forEach stopped early inside a transaction: its cursor is left open too (reset
    /// forgets the FETCH, closes nothing), so a later DROP of the table in the block fails.
    @Test(arguments: Backend.available)
    func dropTableAfterAForEachStoppedEarlyInTheSameTransaction(_ backend: Backend) throws {
        let owner = try BackendStore(backend)
        let store = owner.store
        try Self.rows(600, in: store)
        try store.transaction {
            var taken = 0
            do {
                try RVRow.all().forEach(in: store) { _ in
                    taken += 1
                    if taken == 5 { throw Oops() }
                }
            } catch is Oops {}
            try store.execute("DROP TABLE \"RVRow\"")
        }
        #expect(try RVRow.count(in: store) == 0)
    }

    /// `SELECT … INTO` through `store.execute` inside a stream's consumer: the statement
    /// starts with SELECT, so it is sent as `DECLARE … CURSOR FOR SELECT … INTO`, which the
    /// server refuses ("SELECT ... INTO is not allowed here"). Outside a stream it runs.
    @Test(arguments: Backend.available)
    func selectIntoThroughExecuteInsideForEachInsideATransaction(_ backend: Backend) throws {
        guard backend == .postgres else { return }  // SELECT … INTO is PostgreSQL's
        let owner = try BackendStore(backend)
        let store = owner.store
        try Self.rows(3, in: store)
        // Outside a stream: fine.
        try store.execute("SELECT id INTO \"RVCopyOutside\" FROM \"RVRow\"")
        try store.transaction {
            var first = true
            try RVRow.all().forEach(in: store) { _ in
                guard first else { return }
                first = false
                try store.execute("SELECT id INTO \"RVCopyInside\" FROM \"RVRow\"")
            }
        }
        struct Count: Decodable, Sendable { var n: Int64 }
        #expect(try store.findFirst(Count.self, sql: "SELECT count(*) AS n FROM \"RVCopyInside\"")?.n == 3)
    }

    // MARK: Cursors piling up

    /// Every query a stream's consumer makes on the stream's connection opens a cursor that
    /// lives until the stream's transaction ends: a forEach of N rows that looks each one up
    /// leaves N open cursors (portals, each with its executor state) on the server, so what a
    /// stream holds is no longer bounded. `pg_cursors` lists the session's open cursors.
    @Test(arguments: Backend.available)
    func lookupsInsideAForEachDoNotPileUpOpenCursors(_ backend: Backend) throws {
        let owner = try BackendStore(backend)
        let store = owner.store
        let count = 600
        try Self.rows(count, in: store)
        var open = 0
        var seen = 0
        try RVRow.all().order(.ascending(\.id)).forEach(in: store) { row in
            seen += 1
            #expect(try RVRow.find(key: row.id, in: store)?.label == row.label)
            if seen == count, backend == .postgres {
                open = try store.findFirst(Int.self, sql: "SELECT count(*) FROM pg_cursors WHERE name LIKE 'modelstore_cursor_%'") ?? -1
            }
        }
        #expect(seen == count)
        // The stream's own cursor (the DECLAREd ones, by name), a few at most.
        #expect(open <= 2, "\(open) cursors were open on the stream's connection after \(count) lookups")
    }

    /// A stream whose records load relationships (a query per relationship per chunk): every
    /// chunk's loads leave their cursors open until the stream ends, so the count of open
    /// cursors grows with the number of chunks read.
    @Test(arguments: Backend.available)
    func relationshipLoadsOfAStreamDoNotPileUpOpenCursors(_ backend: Backend) throws {
        let owner = try BackendStore(backend)
        let store = owner.store
        let count = 1_300
        _ = try BKTeam.save((1...Int64(count)).map { BKTeam(id: $0, name: "team \($0)") }, in: store)
        var openAtFirst = 0
        var openAtLast = 0
        var seen = 0
        try BKTeam.all().loading(.direct).forEach(in: store) { team in
            seen += 1
            guard backend == .postgres, seen == 1 || seen == count else { return }
            let open = try store.findFirst(Int.self, sql: "SELECT count(*) FROM pg_cursors WHERE name LIKE 'modelstore_cursor_%'") ?? -1
            if seen == 1 { openAtFirst = open } else { openAtLast = open }
        }
        #expect(seen == count)
        #expect(openAtLast <= openAtFirst + 1, "open cursors: \(openAtFirst) after the first chunk, \(openAtLast) after the last")
    }

    /// The documentation says a raw-SQL stream (forEach and stream with `sql:`) reads through a
    /// cursor 256 rows at a time; one that starts with WITH (or a comment, a tab, VALUES,
    /// TABLE) is read whole. (On a reader a WITH stream is refused outright as "writes":
    /// `forEachServerStatement` counts only SELECT/VALUES/SHOW/EXPLAIN/TABLE as reads; inside a
    /// transaction it runs on the writer.)
    @Test(arguments: Backend.available)
    func aRawSQLForEachHoldsAChunkAtATimeAndAWITHQueryReadsEveryRow(_ backend: Backend) throws {
        let owner = try BackendStore(backend)
        let store = owner.store
        try Self.rows(3_000, in: store)
        struct Label: Decodable, Sendable { var label: String }
        var seen = 0
        try store.transaction {
            try store.forEach(Label.self, sql: "SELECT label FROM \"RVRow\" WHERE id > \(Int64(0))") { _ in seen += 1 }
            // A WITH may hold a statement that writes, which no cursor takes: read whole.
            try store.forEach(Label.self, sql: "WITH r AS (SELECT label FROM \"RVRow\") SELECT label FROM r") { _ in seen += 1 }
        }
        #expect(seen == 6_000)
        guard backend == .postgres else { return }  // largestHeld counts a server's results
        let held = RemoteStatement.largestHeld.withLock { held in
            held.filter { $0.key.hasPrefix("SELECT label FROM \"RVRow\" WHERE id > ") }.values.max() ?? 0
        }
        #expect(held > 0 && held <= RemoteStatement.chunk, "the raw stream held \(held) rows of its result at once")
    }

    // MARK: Checked and sound (kept as regression tests)

    /// Savepoints rolled back between the stream's FETCHes (a nested transaction that fails,
    /// caught) close only cursors opened inside them: the stream reads on.
    @Test(arguments: Backend.available)
    func savepointsRolledBackWhileAStreamReadsDoNotEndIt(_ backend: Backend) throws {
        let owner = try BackendStore(backend)
        let store = owner.store
        try Self.rows(600, in: store)
        let seen = try store.transaction {
            var seen = 0
            try RVRow.all().forEach(in: store) { row in
                seen += 1
                do {
                    try store.transaction {
                        try RVRow(id: row.id, label: "changed").save(in: store)
                        _ = try RVRow.find(key: row.id, in: store)
                        throw Oops()
                    }
                } catch is Oops {}
                // A read that fails (caught) rolls back its own savepoint.
                _ = try? store.findAll(Int.self, sql: "SELECT no_such_column FROM \"RVRow\"")
            }
            return seen
        }
        #expect(seen == 600)
        #expect(try RVRow.count(where: \.label == "changed", in: store) == 0)
    }

    /// A stream's consumer that makes the first use of models with relationships (tables,
    /// join tables and foreign keys created while the stream's cursor is open).
    @Test(arguments: Backend.available)
    func firstUseOfRelatedTablesInsideForEachInsideATransaction(_ backend: Backend) throws {
        let owner = try BackendStore(backend)
        let store = owner.store
        try Self.rows(300, in: store)
        try store.transaction {
            try RVRow.all().forEach(in: store) { row in
                var team = BKTeam(id: row.id, name: row.label)
                team.players = [BKPlayer(id: row.id, name: "p", skills: [BKSkill(id: row.id % 3, title: "s")])]
                try team.save(in: store)
            }
        }
        #expect(try BKTeam.count(in: store) == 300)
        #expect(try BKPlayer.count(in: store) == 300)
    }

    /// A forEach inside a read block, with a lookup per row and a second forEach after it.
    @Test(arguments: Backend.available)
    func forEachInsideAReadBlockWithLookupsReadsEveryRow(_ backend: Backend) throws {
        let owner = try BackendStore(backend)
        let store = owner.store
        try Self.rows(700, in: store)
        let (first, second) = try store.read {
            var first = 0
            var second = 0
            try RVRow.all().forEach(in: store) { row in
                first += 1
                let found = try RVRow.find(key: row.id, in: store)
                #expect(found == row)
            }
            try RVRow.filter(\.id > 350).forEach(in: store) { _ in second += 1 }
            return (first, second)
        }
        #expect(first == 700)
        #expect(second == 350)
    }

    /// Async streams stopped early, again and again: each ends its read transaction (and its
    /// cursors), and the reader serves the next calls.
    @Test(arguments: Backend.available)
    func asyncStreamsStoppedEarlyLeaveTheReadersClean(_ backend: Backend) async throws {
        let owner = try BackendStore(backend)
        let store = owner.store
        try Self.rows(1_000, in: store)
        for round in 0..<6 {
            var taken = 0
            for try await _ in RVRow.all().stream(in: store) {
                taken += 1
                if taken == 300 + round { break }
            }
            #expect(taken == 300 + round)
            #expect(try await RVRow.all().count(in: store) == 1_000)
        }
        if backend == .postgres {
            // No reader is left inside a transaction.
            #expect(try await store.findFirst(Int.self, sql: "SELECT count(*) FROM pg_cursors WHERE name LIKE 'modelstore_cursor_%'") == 0)
        }
    }

    /// A save right after `break` out of an in-memory store's stream waits for the stream's
    /// producer to reset its statement (an in-memory database has table locks, not WAL); it
    /// failed at once with `.busy` before.
    @Test(arguments: Backend.available)
    func aSaveRightAfterBreakingOutOfAStreamWaitsForItsRead(_ backend: Backend) async throws {
        let owner = try BackendStore(backend)
        let store = owner.store
        try Self.rows(1_000, in: store)
        for round in 0..<6 {
            var taken = 0
            for try await _ in RVRow.all().stream(in: store) {
                taken += 1
                if taken == 300 + round { break }
            }
            try await RVRow(id: 1, label: "round \(round)").save(in: store)
        }
        #expect(try await RVRow.find(key: 1, in: store)?.label == "round 5")
    }

    /// A raw stream that runs past its time limit on the server (statement timeout during a
    /// FETCH), then the store's next calls.
    @Test(arguments: Backend.available)
    func aStreamStoppedByItsTimeLimitMidFetchLeavesTheStoreUsable(_ backend: Backend) throws {
        guard backend == .postgres else { return }  // pg_sleep
        let owner = try BackendStore(backend)
        let store = owner.store
        try Self.rows(10, in: store)
        struct N: Decodable, Sendable { var n: Int64 }
        var seen = 0
        do {
            try store.withReadTimeLimit(1) {
                try store.forEach(
                    N.self, sql: "SELECT n FROM generate_series(1, 2000) AS n WHERE n < 300 OR pg_sleep(0.01) IS NOT NULL"
                ) { _ in seen += 1 }
            }
            Issue.record("the stream ran past its limit")
        } catch let error as ModelStoreError {
            #expect(error.code == .timedOut, "\(error)")
        }
        #expect(try RVRow.count(in: store) == 10)
        #expect(try store.findFirst(Int.self, sql: "SELECT count(*) FROM pg_cursors WHERE name LIKE 'modelstore_cursor_%'") == 0)
    }

    /// The stream's connection terminated by the server between two FETCHes: the stream fails
    /// with `.connectionLost`, and the store's next calls run.
    @Test(arguments: Backend.available)
    func aStreamWhoseConnectionIsKilledBetweenFetchesFailsCleanly(_ backend: Backend) throws {
        guard backend == .postgres else { return }
        let owner = try BackendStore(backend)
        let store = owner.store
        let other = try owner.another()
        defer { try? other.close() }
        try Self.rows(1_000, in: store)
        var seen = 0
        do {
            try RVRow.all().forEach(in: store) { _ in
                seen += 1
                if seen == 10 {
                    let pid = try #require(try store.findFirst(Int.self, sql: "SELECT pg_backend_pid()"))
                    _ = try other.findFirst(Int.self, sql: "SELECT pg_terminate_backend(CAST(\(pid) AS integer))::int")
                }
            }
            Issue.record("the stream read \(seen) rows from a terminated connection")
        } catch let error as ModelStoreError {
            #expect(error.code == .connectionLost, "\(error)")
        }
        #expect(seen >= 10 && seen <= RemoteStatement.chunk)
        #expect(try RVRow.count(in: store) == 1_000)
    }
}
