import Foundation
import Testing

@testable import ModelStore

/// The contact shape, declared four times with different indexes so each test can run a
/// batch through the one-pass scan and through the chunked `IN` lists.
private protocol AdvContactModel: StoredModel, Equatable {
    init(localId: String, account: Int, friend: Int, tag: String?, score: Double?)
    var localId: String { get }
    var score: Double? { get }
    var tag: String? { get }
}

/// No index: a batch past one chunk reads the group once.
private struct AdvContactBare: AdvContactModel {
    var localId: String
    var account: Int
    var friend: Int
    var tag: String?
    var score: Double?
    static let primaryKey = ["localId"]
}

/// An index on (shared, varying): chunked lookups.
private struct AdvContactLeading: AdvContactModel {
    var localId: String
    var account: Int
    var friend: Int
    var tag: String?
    var score: Double?
    static let primaryKey = ["localId"]
    static let indexes: [TableIndex<AdvContactLeading>] = [.on(\.account, \.friend)]
}

/// An index on the varying property alone: chunked lookups.
private struct AdvContactVarying: AdvContactModel {
    var localId: String
    var account: Int
    var friend: Int
    var tag: String?
    var score: Double?
    static let primaryKey = ["localId"]
    static let indexes: [TableIndex<AdvContactVarying>] = [.on(\.friend)]
}

/// An index on the shared property alone, which cannot find records by the varying ones: a scan.
private struct AdvContactShared: AdvContactModel {
    var localId: String
    var account: Int
    var friend: Int
    var tag: String?
    var score: Double?
    static let primaryKey = ["localId"]
    static let indexes: [TableIndex<AdvContactShared>] = [.on(\.account)]
}

/// What one batch did, and how it looked stored records up.
private struct Run {
    var outcome: BatchSaveOutcome
    var lookups: [String]
    var count: Int
    /// Whether the lookups were one pass over the group (no key list).
    var scanned: Bool { lookups.count == 1 && !lookups[0].contains(" IN ") }
}

/// Match-key batches past one chunk: the scan must decide exactly as the `IN` lists do.
@Suite("Adversarial: match-key batches, scan and chunks")
struct MatchKeyScanAttackTests {
    /// Elements past one chunk of (friend, tag) pairs: 900 parameters hold 449 pairs.
    private static let size = 700

    private static let pairKeys = (shared: ["account"], varying: ["friend", "tag"])

    private func run<M: AdvContactModel>(
        _ type: M.Type, stored: [M], batch: [M], shared: [String] = pairKeys.shared, varying: [String] = pairKeys.varying,
        test: TestStore
    ) throws -> Run {
        if !stored.isEmpty { _ = try M.save(stored, in: test.store) }
        test.resetSQL()
        let outcome = try M.save(batch, matching: MatchKeys(sharedColumns: shared, varyingColumns: varying), in: test.store)
        let lookups = test.dataSQL.filter { $0.hasPrefix("SELECT") }
        return Run(outcome: outcome, lookups: lookups, count: try M.count(in: test.store))
    }

    /// Runs `body` for each index layout, saying whether that layout should scan.
    private func forEachLayout(_ body: (any AdvContactModel.Type, Bool) throws -> Void) rethrows {
        try body(AdvContactBare.self, true)
        try body(AdvContactLeading.self, false)
        try body(AdvContactVarying.self, false)
        try body(AdvContactShared.self, true)
    }

    @Test(arguments: Backend.available) func theIndexDecidesTheLookupAndBothFindTheSameRecords(_ backend: Backend) throws {
        func check<M: AdvContactModel>(_ type: M.Type, scans: Bool) throws {
            let test = try TestStore(backend)
            let stored = (0..<Self.size).filter { $0 % 2 == 0 }.map {
                M(localId: "s\($0)", account: 1, friend: $0, tag: "t", score: 1)
            }
            // The same pairs in another account must not be found.
            let elsewhere = (0..<Self.size).map { M(localId: "o\($0)", account: 2, friend: $0, tag: "t", score: 1) }
            var batch = (0..<Self.size).map { M(localId: "n\($0)", account: 1, friend: $0, tag: "t", score: 1) }
            batch[0] = M(localId: "n0", account: 1, friend: 0, tag: "t", score: 2)
            let result = try run(type, stored: stored + elsewhere, batch: batch, test: test)
            #expect(result.scanned == scans, "\(M.self): \(result.lookups)")
            #expect(result.outcome == BatchSaveOutcome(inserted: Self.size / 2, updated: 1, unchanged: Self.size / 2 - 1), "\(M.self)")
            #expect(result.count == Self.size / 2 + Self.size + Self.size / 2, "\(M.self)")
            #expect(try M.find(key: "s0", in: test.store)?.score == 2, "\(M.self)")
            #expect(try M.find(key: "o0", in: test.store)?.score == 1, "\(M.self)")
            #expect(try M.find(key: "n0", in: test.store) == nil, "\(M.self)")
            #expect(try M.find(key: "n1", in: test.store) != nil, "\(M.self)")
        }
        forEachLayout { type, scans in
            #expect(throws: Never.self) { try check(type, scans: scans) }
        }
    }

    @Test(arguments: Backend.available) func storedNullVaryingValuesMatchNothing(_ backend: Backend) throws {
        func check<M: AdvContactModel>(_ type: M.Type, scans: Bool) throws {
            let test = try TestStore(backend)
            // Stored records without a tag: NULL equals nothing, in SQL and in the scan.
            let stored = (0..<Self.size).map { M(localId: "s\($0)", account: 1, friend: $0, tag: nil, score: 1) }
            let batch = (0..<Self.size).map { M(localId: "n\($0)", account: 1, friend: $0, tag: "t", score: 1) }
            let result = try run(type, stored: stored, batch: batch, test: test)
            #expect(result.scanned == scans, "\(M.self)")
            #expect(result.outcome == BatchSaveOutcome(inserted: Self.size, updated: 0), "\(M.self)")
            #expect(result.count == 2 * Self.size, "\(M.self)")
            #expect(try M.find(key: "s3", in: test.store)?.tag == nil, "\(M.self)")
            // An element that leaves a varying value out is refused, as one that is NULL.
            let missing = [M(localId: "x", account: 1, friend: 1, tag: nil, score: 1)] + batch
            #expect(
                errorCode {
                    _ = try M.save(
                        missing, matching: MatchKeys(sharedColumns: ["account"], varyingColumns: ["friend", "tag"]), in: test.store)
                } == .invalidQuery, "\(M.self)")
            #expect(try M.count(in: test.store) == 2 * Self.size, "\(M.self)")
        }
        forEachLayout { type, scans in
            #expect(throws: Never.self) { try check(type, scans: scans) }
        }
    }

    @Test(arguments: Backend.available) func duplicatesInsideTheBatchMergeInArrayOrder(_ backend: Backend) throws {
        func check<M: AdvContactModel>(_ type: M.Type, scans: Bool) throws {
            let test = try TestStore(backend)
            let stored = [M(localId: "s5", account: 1, friend: 5, tag: "t", score: 0)]
            var batch = (0..<Self.size).map { M(localId: "n\($0)", account: 1, friend: $0, tag: "t", score: Double($0)) }
            // A new pair twice, and a stored pair twice: the later element wins each time.
            batch.append(M(localId: "again 1", account: 1, friend: 1, tag: "t", score: -1))
            batch.append(M(localId: "again 5", account: 1, friend: 5, tag: "t", score: -5))
            let result = try run(type, stored: stored, batch: batch, test: test)
            #expect(result.scanned == scans, "\(M.self)")
            #expect(result.outcome == BatchSaveOutcome(inserted: Self.size - 1, updated: 3), "\(M.self)")
            #expect(result.count == Self.size, "\(M.self)")
            #expect(try M.find(key: "n1", in: test.store)?.score == -1, "\(M.self)")
            #expect(try M.find(key: "again 1", in: test.store) == nil, "\(M.self)")
            #expect(try M.find(key: "s5", in: test.store)?.score == -5, "\(M.self)")
            #expect(try M.find(key: "n5", in: test.store) == nil, "\(M.self)")
        }
        forEachLayout { type, scans in
            #expect(throws: Never.self) { try check(type, scans: scans) }
        }
    }

    @Test(arguments: Backend.available) func twoStoredRecordsMatchingOneElementAreAnAmbiguousMatchOnEveryPath(_ backend: Backend) throws {
        func check<M: AdvContactModel>(_ type: M.Type, scans: Bool) throws {
            let test = try TestStore(backend)
            let batch = (0..<Self.size).map { M(localId: "n\($0)", account: 1, friend: $0, tag: "t", score: 1) }
            // Two stored records with one pair that no element names, and one in another
            // account: neither concerns the batch.
            _ = try M.save(
                [
                    M(localId: "d1", account: 1, friend: 9_999, tag: "t", score: 1),
                    M(localId: "d2", account: 1, friend: 9_999, tag: "t", score: 1),
                    M(localId: "e1", account: 3, friend: 7, tag: "t", score: 1),
                    M(localId: "e2", account: 3, friend: 7, tag: "t", score: 1),
                ], in: test.store)
            let fine = try run(type, stored: [], batch: batch, test: test)
            #expect(fine.scanned == scans, "\(M.self)")
            #expect(fine.outcome == BatchSaveOutcome(inserted: Self.size, updated: 0), "\(M.self)")
            // Now two stored records with a pair the batch names.
            _ = try M.save([M(localId: "twin", account: 1, friend: 7, tag: "t", score: 1)], in: test.store)
            let keys = MatchKeys<M>(sharedColumns: ["account"], varyingColumns: ["friend", "tag"])
            var changed = batch
            changed[3] = M(localId: "n3", account: 1, friend: 3, tag: "t", score: 42)
            let error = try #require(throws: ModelStoreError.self, "\(M.self)") { try M.save(changed, matching: keys, in: test.store) }
            #expect(error.code == .ambiguousMatch, "\(M.self)")
            #expect(error.message.contains("n7") && error.message.contains("twin"), "\(M.self): \(error.message)")
            // Nothing of the failed batch was written.
            #expect(try M.find(key: "n3", in: test.store)?.score == 1, "\(M.self)")
            #expect(try M.count(in: test.store) == Self.size + 5, "\(M.self)")
        }
        forEachLayout { type, scans in
            #expect(throws: Never.self) { try check(type, scans: scans) }
        }
    }

    // SQLite-only: asserts the statements SQLite is sent (their text, BEGIN IMMEDIATE, json_each, how a batch looks records up).
    @Test func sharedValuesWithNoStoredRecordsInsertEverything() throws {
        func check<M: AdvContactModel>(_ type: M.Type, scans: Bool) throws {
            let test = try TestStore()
            let empty = try run(
                type, stored: [], batch: (0..<Self.size).map { M(localId: "a\($0)", account: 1, friend: $0, tag: "t", score: 1) },
                test: test)
            #expect(empty.scanned == scans, "\(M.self)")
            #expect(empty.outcome == BatchSaveOutcome(inserted: Self.size, updated: 0), "\(M.self)")
            // The same pairs in an account with no stored records.
            let other = try run(
                type, stored: [], batch: (0..<Self.size).map { M(localId: "b\($0)", account: 9, friend: $0, tag: "t", score: 1) },
                test: test)
            #expect(other.outcome == BatchSaveOutcome(inserted: Self.size, updated: 0), "\(M.self)")
            #expect(other.count == 2 * Self.size, "\(M.self)")
            // No shared properties at all: the whole table is the group.
            let whole = try run(
                type, stored: [], batch: (0..<Self.size).map { M(localId: "c\($0)", account: 1, friend: $0, tag: "u", score: 1) },
                shared: [], test: test)
            #expect(whole.outcome == BatchSaveOutcome(inserted: Self.size, updated: 0), "\(M.self)")
            let again = try run(
                type, stored: [], batch: (0..<Self.size).map { M(localId: "d\($0)", account: 1, friend: $0, tag: "u", score: 1) },
                shared: [], test: test)
            #expect(again.outcome == BatchSaveOutcome(inserted: 0, updated: 0, unchanged: Self.size), "\(M.self)")
            #expect(again.count == 3 * Self.size, "\(M.self)")
        }
        forEachLayout { type, scans in
            #expect(throws: Never.self) { try check(type, scans: scans) }
        }
    }
}
