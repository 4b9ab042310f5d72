import Foundation
import Testing
@testable import ModelStore

private struct Member: StoredModel, Equatable {
    var localId: String
    var accountId: Int
    var friendId: Int
    var nickname: String?
    var score: Double?
    static let primaryKey = ["localId"]
}

/// `Member` with an index that finds records by the varying match properties.
private struct IndexedMember: StoredModel, Equatable {
    var localId: String
    var accountId: Int
    var friendId: Int
    var nickname: String?
    var score: Double?
    static let primaryKey = ["localId"]
    static let indexes: [TableIndex<IndexedMember>] = [.on(\.accountId, \.friendId, \.nickname)]
}

/// What a batch save reports is what it did: inserted, updated and unchanged add up to the
/// elements, and a re-import of identical data writes nothing at all.
@Suite("Reliability: batch results are true")
struct BatchResultTests {
    private func members(_ count: Int, nickname: (Int) -> String? = { "n\($0)" }) -> [Member] {
        (0..<count).map { Member(localId: "m\($0)", accountId: 1, friendId: $0, nickname: nickname($0), score: Double($0) / 4) }
    }

    /// What a write that changes nothing leaves as it was: SQLite's WAL file (its size), or on a
    /// server every row version of `tables` (a row written again, even with the same values,
    /// gets a new `xmin`).
    static func writeMark(_ test: TestStore, _ tables: [String]) throws -> [String] {
        if test.backend == .sqlite {
            return ["\((try? FileManager.default.attributesOfItem(atPath: test.store.path! + "-wal")[.size] as? Int) ?? 0)"]
        }
        return try tables.flatMap { table in
            try test.rawRows(#"SELECT CAST(xmin AS text) FROM "\#(table)" ORDER BY 1"#).map { "\($0)" }
        }
    }

    @Test(arguments: Backend.available) func anUnchangedReimportReportsEveryRecordUnchangedAndWritesNothing(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        #expect(try Member.save(members(1_000), in: test.store) == BatchSaveOutcome(inserted: 1_000, updated: 0, unchanged: 0))
        let before = try Self.writeMark(test, ["Member"])
        #expect(try Member.save(members(1_000), in: test.store) == BatchSaveOutcome(inserted: 0, updated: 0, unchanged: 1_000))
        #expect(try Self.writeMark(test, ["Member"]) == before, "an unchanged re-import must write nothing")
        // Ten changed, ten new, the rest as stored; nil properties keep stored values.
        var next = members(1_010) { $0 % 100 == 0 ? "changed \($0)" : nil }
        next[5].score = nil
        #expect(try Member.save(next, in: test.store) == BatchSaveOutcome(inserted: 10, updated: 10, unchanged: 990))
        #expect(try Member.find(key: "m100", in: test.store)?.nickname == "changed 100")
        #expect(try Member.find(key: "m101", in: test.store)?.nickname == "n101")
    }

    @Test(arguments: Backend.available) func matchKeysReimportsReportUnchangedRecordsToo(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let keys = MatchKeys<Member>(shared: [\.accountId], varying: [\.friendId])
        #expect(try Member.save(members(300), matching: keys, in: test.store) == BatchSaveOutcome(inserted: 300, updated: 0, unchanged: 0))
        let before = try Self.writeMark(test, ["Member"])
        #expect(try Member.save(members(300), matching: keys, in: test.store) == BatchSaveOutcome(inserted: 0, updated: 0, unchanged: 300))
        #expect(try Self.writeMark(test, ["Member"]) == before)
        var changed = members(300)
        changed[7].score = 99
        #expect(try Member.save(changed, matching: keys, in: test.store) == BatchSaveOutcome(inserted: 0, updated: 1, unchanged: 299))
    }

    /// A table another tool made with NOCASE or RTRIM collation: the change detection compares
    /// bytes, so "bob" → "Bob" and "a" → "a   " are written, never skipped as unchanged.
    // SQLite-only: NOCASE and RTRIM are SQLite's collations (a server store refuses collations with .unsupported).
    @Test(arguments: ["NOCASE", "RTRIM"])
    func aChangeThatTheColumnsCollationCallsEqualIsStillWritten(_ collation: String) throws {
        let test = try TestStore(.file)
        try test.rawExecute(
            "CREATE TABLE Member (localId TEXT PRIMARY KEY, accountId INTEGER NOT NULL, friendId INTEGER NOT NULL, nickname TEXT COLLATE \(collation), score REAL)"
        )
        let changed = collation == "NOCASE" ? "BOB" : "bob   "
        try Member(localId: "m", accountId: 1, friendId: 1, nickname: "bob").save(in: test.store)
        #expect(try Member(localId: "m", accountId: 1, friendId: 1, nickname: changed).save(in: test.store) == .updated)
        #expect(try Member.find(key: "m", in: test.store)?.nickname == changed)
        #expect(try Member.save([Member(localId: "m", accountId: 1, friendId: 1, nickname: "bob")], in: test.store).updated == 1)
        #expect(try Member.find(key: "m", in: test.store)?.nickname == "bob")
        let keys = MatchKeys<Member>(shared: [\.accountId], varying: [\.friendId])
        #expect(
            try Member.save([Member(localId: "x", accountId: 1, friendId: 1, nickname: changed)], matching: keys, in: test.store).updated
                == 1)
        #expect(try Member.find(key: "m", in: test.store)?.nickname == changed)
    }

    @Test(arguments: Backend.available) func aBatchThatRepeatsAKeyCountsEachElementOnce(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let batch = [
            Member(localId: "a", accountId: 1, friendId: 1), Member(localId: "a", accountId: 1, friendId: 1),
            Member(localId: "a", accountId: 1, friendId: 2),
        ]
        let result = try Member.save(batch, in: test.store)
        #expect(result == BatchSaveOutcome(inserted: 1, updated: 1, unchanged: 1))
        #expect(result.inserted + result.updated + result.unchanged == batch.count)
    }
}

/// Batches of models with relationships count the related records they write.
@Suite("Reliability: graph batch results count related records")
struct GraphBatchResultTests {
    @Test(arguments: Backend.available) func aGraphBatchCountsEveryRecordItCreatesAndAnIdenticalReimportWritesNothing(_ backend: Backend)
        throws
    {
        let test = try TestStore(.file, or: backend)
        let teams = (1...10).map { team in
            Team(id: Int64(team), name: "t\(team)", players: (1...5).map { Player(id: Int64(team * 100 + $0), name: "p\($0)") })
        }
        let first = try Team.save(teams, in: test.store)
        #expect(first == BatchSaveOutcome(inserted: 60, updated: 0, unchanged: 0))
        #expect(try Team.count(in: test.store) + Player.count(in: test.store) == first.inserted)
        let before = try BatchResultTests.writeMark(test, ["Team", "Player"])
        #expect(try Team.save(teams, in: test.store) == BatchSaveOutcome(inserted: 0, updated: 0, unchanged: 60))
        #expect(try BatchResultTests.writeMark(test, ["Team", "Player"]) == before)
        var changed = teams
        changed[0].players![0].name = "renamed"
        changed[1].players!.append(Player(id: 9_999, name: "new"))
        let third = try Team.save(changed, in: test.store)
        // One new player; updated: the renamed player, and teams 1 and 2, whose graphs wrote
        // (a root that wrote related records or links counts as updated); the rest unchanged.
        #expect(third == BatchSaveOutcome(inserted: 1, updated: 3, unchanged: 57))
    }
}

/// Key lists longer than one chunk: composite match keys in several `(a, b) IN (VALUES …)`
/// chunks, or in one pass over the table, find exactly the stored records, with texts that a
/// JSON list would cut.
@Suite("Reliability: long composite key lists")
struct LongKeyListTests {
    /// A character a JSON list would cut or escape: NUL, which a server's text cannot hold
    /// (saving one throws .encodingFailed there), so U+0001 on a server.
    private func cut(_ backend: Backend) -> String { backend == .sqlite ? "\u{0}" : "\u{1}" }

    @Test(arguments: Backend.available) func matchKeysOverTwoVaryingPropertiesFindEveryStoredRecordBeyondOneChunk(_ backend: Backend) throws
    {
        let test = try TestStore(.file, or: backend)
        let cut = cut(backend)
        func member(_ index: Int, local: String) -> Member {
            Member(localId: local, accountId: 7, friendId: index / 3, nickname: "n\(cut)\(index % 3)", score: Double(index))
        }
        let keys = MatchKeys<Member>(shared: [\.accountId], varying: [\.friendId, \.nickname])
        let stored = (0..<1_200).filter { $0 % 2 == 0 }.map { member($0, local: "stored \($0)") }
        #expect(try Member.save(stored, matching: keys, in: test.store).inserted == 600)
        let all = (0..<1_200).map { member($0, local: "new \($0)") }
        let result = try Member.save(all, matching: keys, in: test.store)
        #expect(result == BatchSaveOutcome(inserted: 600, updated: 0, unchanged: 600))
        #expect(try Member.count(in: test.store) == 1_200)
        // Matched records kept their keys.
        #expect(try Member.find(key: "stored 0", in: test.store) != nil)
        #expect(try Member.find(key: "new 0", in: test.store) == nil)
    }

    /// 20,000 elements with two varying properties need 40,000 values: many chunks of a key
    /// list (900 parameters each).
    private static let large = 20_000

    @Test(arguments: Backend.available) func aMatchKeysBatchLargerThanOneChunkWithoutAnIndexReadsTheTableOnce(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let cut = cut(backend)
        func member(_ index: Int, local: String) -> Member {
            Member(localId: local, accountId: 7, friendId: index / 3, nickname: "n\(cut)\(index % 3)", score: Double(index))
        }
        let keys = MatchKeys<Member>(shared: [\.accountId], varying: [\.friendId, \.nickname])
        _ = try Member.save(
            (0..<Self.large).filter { $0 % 2 == 0 }.map { member($0, local: "stored \($0)") } + [
                Member(localId: "other account", accountId: 8, friendId: 0, nickname: "n\(cut)0")
            ], in: test.store)
        test.resetSQL()
        var all = (0..<Self.large).map { member($0, local: "new \($0)") }
        all[0].score = -1  // one stored record changes
        let result = try Member.save(all, matching: keys, in: test.store)
        #expect(result == BatchSaveOutcome(inserted: Self.large / 2, updated: 1, unchanged: Self.large / 2 - 1))
        let lookups = test.dataSQL.filter { $0.hasPrefix("SELECT") }
        // (A server's trace numbers its placeholders.)
        let placeholder = backend == .sqlite ? "?" : "$1"
        #expect(lookups == [#"SELECT "localId", "friendId", "nickname" FROM "Member" WHERE "accountId" = \#(placeholder)"#])
        #expect(try Member.count(in: test.store) == Self.large + 1)
        #expect(try Member.find(key: "stored 0", in: test.store)?.score == -1)
        #expect(try Member.find(key: "other account", in: test.store)?.score == nil)
        #expect(try Member.find(key: "new 0", in: test.store) == nil)
        #expect(try Member.find(key: "new 1", in: test.store) != nil)
    }

    @Test(arguments: Backend.available) func aMatchKeysBatchLargerThanOneChunkWithAnIndexAsksInChunks(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let cut = cut(backend)
        func member(_ index: Int, local: String) -> IndexedMember {
            IndexedMember(localId: local, accountId: 7, friendId: index / 3, nickname: "n\(cut)\(index % 3)", score: Double(index))
        }
        let keys = MatchKeys<IndexedMember>(shared: [\.accountId], varying: [\.friendId, \.nickname])
        _ = try IndexedMember.save((0..<Self.large).filter { $0 % 2 == 0 }.map { member($0, local: "stored \($0)") }, in: test.store)
        test.resetSQL()
        let result = try IndexedMember.save((0..<Self.large).map { member($0, local: "new \($0)") }, matching: keys, in: test.store)
        #expect(result == BatchSaveOutcome(inserted: Self.large / 2, updated: 0, unchanged: Self.large / 2))
        let lookups = test.dataSQL.filter { $0.hasPrefix("SELECT") }
        #expect(lookups.count == (Self.large * 2 + 899) / 900)
        #expect(lookups.allSatisfy { $0.contains(#"("friendId", "nickname") IN (VALUES"#) })
        #expect(try IndexedMember.count(in: test.store) == Self.large)
        #expect(try IndexedMember.find(key: "stored 2", in: test.store) != nil)
    }
}
