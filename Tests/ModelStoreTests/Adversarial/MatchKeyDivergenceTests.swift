import Foundation
import Testing

@testable import ModelStore

/// A reading whose Double lives in a column another tool declared INTEGER (which ModelStore
/// accepts: a REAL without fraction is kept as the INTEGER of the same value).
private struct AdvReading: StoredModel, Equatable {
    var localId: String
    var account: Int
    var score: Double
    static let primaryKey = ["localId"]
}

private struct AdvTagged: StoredModel, Equatable {
    var localId: String
    var account: Int
    var friend: Int
    var tag: String
    static let primaryKey = ["localId"]
}

private struct AdvTaggedIndexed: StoredModel, Equatable {
    var localId: String
    var account: Int
    var friend: Int
    var tag: String
    static let primaryKey = ["localId"]
    static let indexes: [TableIndex<AdvTaggedIndexed>] = [.on(\.friend, \.tag)]
}

@Suite("Adversarial: the scan decides as SQL does")
struct MatchKeyDivergenceTests {
    // SQLite-only: reads or sets up the stored rows with raw SQLite SQL (unquoted names, pragma_table_info, typeof, triggers, SQLite column types).
    @Test(arguments: [400, 700])
    func aDoubleStoredAsAnIntegerIsFoundByTheScanAsByTheList(_ size: Int) throws {
        let test = try TestStore()
        try test.rawExecute(
            #"CREATE TABLE "AdvReading" ("localId" TEXT PRIMARY KEY NOT NULL, "account" INTEGER NOT NULL, "score" INTEGER NOT NULL)"#)
        _ = try AdvReading.save((0..<size).map { AdvReading(localId: "s\($0)", account: 1, score: Double($0)) }, in: test.store)
        #expect(try test.rawRows(#"SELECT typeof("score") FROM "AdvReading" LIMIT 1"#) == [[.text("integer")]])
        let batch = (0..<size).map { AdvReading(localId: "n\($0)", account: 1, score: Double($0)) }
        let result = try AdvReading.save(batch, matching: MatchKeys(shared: [\.account], varying: [\.score]), in: test.store)
        #expect(result == BatchSaveOutcome(inserted: 0, updated: 0, unchanged: size))
        #expect(try AdvReading.count(in: test.store) == size)
    }

    /// "é" precomposed and decomposed are different bytes: SQL (and the chunked lists) tell
    /// them apart; Swift's String equality does not.
    @Test(arguments: Backend.available) func textsThatSwiftCallsEqualButDifferInBytesAreTwoValuesInTheScan(_ backend: Backend) throws {
        func outcome<M: StoredModel>(_ type: M.Type, make: (String, Int, String) -> M) throws -> (BatchSaveOutcome, Int) {
            let test = try TestStore(backend)
            _ = try M.save((0..<700).map { make("s\($0)", $0, "caf\u{E9}") }, in: test.store)
            let result = try M.save(
                (0..<700).map { make("n\($0)", $0, "cafe\u{301}") },
                matching: MatchKeys(sharedColumns: ["account"], varyingColumns: ["friend", "tag"]), in: test.store)
            return (result, try M.count(in: test.store))
        }
        let chunked = try outcome(AdvTaggedIndexed.self) { AdvTaggedIndexed(localId: $0, account: 1, friend: $1, tag: $2) }
        let scanned = try outcome(AdvTagged.self) { AdvTagged(localId: $0, account: 1, friend: $1, tag: $2) }
        #expect(chunked.0 == BatchSaveOutcome(inserted: 700, updated: 0))
        #expect(scanned.0 == chunked.0)
        #expect(scanned.1 == chunked.1)
    }
}
