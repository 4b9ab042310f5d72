import Foundation
import ReliabilityFixtures
import Testing
@testable import ModelStore

// SQLite-only: kills a writer mid-write and checks the file.
/// Promise 2: a writer killed at any moment leaves an intact store holding whole batches only.
@Suite("Reliability: a writer killed mid-write")
struct CrashTests {
    /// What a store holds after a kill.
    private struct Inspection {
        var integrity: String
        var counts: [Int64: Int]
        var ledger: Int64?

        init(path: String) throws {
            let store = try ModelStore(path: path)
            integrity = try store.integrityCheck()
            counts = try Parcel.all().countsGrouped(by: \.batch, in: store)
            ledger = try Ledger.find(key: 1, in: store)?.lastBatch
        }

        var lastBatch: Int64 { counts.keys.max() ?? 0 }
    }

    @Test func aWriterKilledAtRandomMomentsLeavesAnIntactStoreWithWholeBatchesOnly() throws {
        let kills = ProcessInfo.processInfo.environment["MODELSTORE_CRASH_KILLS"].flatMap(Int.init) ?? 24
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path

        var killsWhileWriting = 0
        var previous: Int64 = 0
        for kill in 1...kills {
            let writer = try HelperProcess("write-batches", path: path)
            try writer.waitFor("started")
            Thread.sleep(forTimeInterval: .random(in: 0.002...0.06))
            writer.stop()

            let found = try Inspection(path: path)
            #expect(found.integrity == "ok", "after kill \(kill)")
            // Batches are written in order, so the ones present are exactly 1...last, each whole.
            #expect(Set(found.counts.keys) == Set((0..<found.lastBatch).map { $0 + 1 }), "after kill \(kill)")
            for (batch, count) in found.counts where count != Parcel.count(inBatch: batch) {
                Issue.record("after kill \(kill): batch \(batch) holds \(count) of \(Parcel.count(inBatch: batch)) parcels")
            }
            // The ledger commits with its (even) batch: never ahead of it, never behind it.
            let lastEven = found.lastBatch - found.lastBatch % 2
            #expect(found.ledger == (lastEven == 0 ? nil : lastEven), "after kill \(kill)")
            #expect(found.lastBatch >= previous, "after kill \(kill): committed batches were lost")
            if found.lastBatch > previous { killsWhileWriting += 1 }
            previous = found.lastBatch
        }
        // The writer was really writing between kills, not stuck before its first batch.
        #expect(killsWhileWriting >= kills / 2, "only \(killsWhileWriting) of \(kills) runs committed anything")

        // Every surviving record is exactly what the writer wrote.
        let store = try ModelStore(path: path)
        let expected = (0..<previous).flatMap { Parcel.batch($0 + 1) }
        #expect(try Parcel.findAll(in: store) == expected)
    }
}
