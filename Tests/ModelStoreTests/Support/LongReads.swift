import Foundation
import Testing
@testable import ModelStore

// Reads that keep SQLite busy for a long time, for the tests that stop them.

/// A query that counts to 300 million: about a minute of SQLite's own work on this machine,
/// which only an interruption ends sooner. Its trace names `modelstore_spin`.
let spinSQL =
    "SELECT count(*) FROM (WITH RECURSIVE modelstore_spin(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM modelstore_spin WHERE x < 300000000) SELECT x FROM modelstore_spin) AS spun"

/// The same as a condition of any model: true, after about a minute.
func spinning<M: StoredModel>(_ model: M.Type = M.self) -> Condition<M> {
    .sql("(\(spinSQL)) > 0")
}

/// A condition true after about `seconds` of SQLite's work (about 5.5 million steps a second
/// here): long enough to outlast a short time limit, short enough to wait for.
func busyFor<M: StoredModel>(_ seconds: Double, _ model: M.Type = M.self) -> Condition<M> {
    let steps = Int(seconds * 5_500_000)
    return .sql(
        "(SELECT count(*) FROM (WITH RECURSIVE modelstore_busy(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM modelstore_busy WHERE x < \(steps)) SELECT x FROM modelstore_busy) AS spun) > 0"
    )
}

/// How a call ended: its error's code (nil when it returned), and how long it took.
struct Ending: Sendable {
    var code: ModelStoreError.Code?
    var error: ModelStoreError?
    var seconds: Double
}

/// Runs `body` and says how it ended.
func ending(_ body: () throws -> Void) -> Ending {
    let start = Date()
    do {
        try body()
        return Ending(code: nil, error: nil, seconds: Date().timeIntervalSince(start))
    } catch {
        let failure = error as? ModelStoreError
        return Ending(
            code: failure?.code ?? ModelStoreError.Code(rawValue: "\(type(of: error))"), error: failure,
            seconds: Date().timeIntervalSince(start))
    }
}

/// Runs `body` and says how it ended.
func ending(_ body: () async throws -> Void) async -> Ending {
    let start = Date()
    do {
        try await body()
        return Ending(code: nil, error: nil, seconds: Date().timeIntervalSince(start))
    } catch {
        let failure = error as? ModelStoreError
        return Ending(
            code: failure?.code ?? ModelStoreError.Code(rawValue: "\(type(of: error))"), error: failure,
            seconds: Date().timeIntervalSince(start))
    }
}

/// Waits (up to two minutes: the task may wait for a thread of the concurrency pool) until
/// the store has started a statement whose SQL contains `marker`.
func started(_ test: TestStore, _ marker: String = "modelstore_spin") async -> Bool {
    await eventually(120) { test.sql.contains { $0.contains(marker) } }
}

/// The delivered result of a completion-handler call.
func delivered<T: Sendable, E: Error>(_ call: (@escaping @Sendable (Result<T, E>) -> Void) -> Void) async -> Result<T, E> {
    await withCheckedContinuation { continuation in call { continuation.resume(returning: $0) } }
}

/// A store with one snack and `maximumReaders` readers (one by default: a read that does not
/// give its reader back holds up every other).
func storeWithOneSnack(_ configuration: ModelStore.Configuration = .init(maximumReaders: 1), on backend: Backend = .sqlite) throws
    -> TestStore
{
    let test = try TestStore(.file, or: backend, configuration: configuration)
    try Snack(snackId: 1, name: "Pocky", price: 2).save(in: test.store)
    test.resetSQL()
    return test
}

/// Expects a read on `store` to answer at once: its one reader is free.
func expectReaderFree(_ store: ModelStore, sourceLocation: SourceLocation = #_sourceLocation) {
    let start = Date()
    // Under a long limit of its own: the store's short one would also stop a one-row read
    // that a loaded machine delays (see everyKindOfReadStoppedByTheLimitLeavesTheReaderReady…).
    #expect(throws: Never.self, sourceLocation: sourceLocation) { try store.withReadTimeLimit(30) { try Snack.find(key: 1, in: store) } }
    #expect(Date().timeIntervalSince(start) < 30, sourceLocation: sourceLocation)
}
