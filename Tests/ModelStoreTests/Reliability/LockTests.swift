import Foundation
import ReliabilityFixtures
import Testing
@testable import ModelStore

// SQLite-only: a SQLite file locked by another process.
/// Promise 4: while another process holds the write lock, writes wait for the busy timeout and
/// then fail clearly, reads keep working, and nothing is corrupted.
@Suite("Reliability: a store locked by another process")
struct LockTests {
    @Test func writesFailAsBusyAfterTheTimeoutWhileReadsKeepWorking() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lock-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        let timeout = 0.3
        let store = try ModelStore(path: path, configuration: .init(busyTimeout: timeout))
        let stored = Parcel.batch(1)
        _ = try Parcel.save(stored, in: store)

        let holder = try HelperProcess("hold-write-lock", path: path)
        try holder.waitFor("locked")

        let started = Date()
        let error = try #require(throws: ModelStoreError.self) {
            try Parcel(id: 5, batch: 9, payload: "late").save(in: store)
        }
        let waited = Date().timeIntervalSince(started)
        #expect(error.code == .busy)
        #expect(error.message.contains("locked by another connection or process"))
        #expect(waited >= timeout * 0.9, "gave up after \(waited) s, before the busy timeout")
        #expect(waited < timeout + 5, "waited \(waited) s, far beyond the busy timeout")

        // A batch fails the same way and writes nothing.
        let batchError = try #require(throws: ModelStoreError.self) { try Parcel.save(Parcel.batch(2), in: store) }
        #expect(batchError.code == .busy)

        // Reads see what was committed; the holder's uncommitted record stays invisible.
        #expect(try Parcel.findAll(in: store) == stored)
        #expect(try Parcel.find(key: -1, in: store) == nil)
        let otherStore = try ModelStore(path: path, configuration: .init(busyTimeout: timeout))
        #expect(try Parcel.count(in: otherStore) == stored.count)

        holder.send("commit")
        try holder.waitFor("released")
        #expect(holder.waitForExit() == 0)

        // Once the lock is gone the same store writes again, and sees the holder's commit.
        try Parcel(id: 5, batch: 9, payload: "late").save(in: store)
        #expect(try Parcel.count(in: store) == stored.count + 2)
        #expect(try Parcel.find(key: -1, in: store)?.payload == "written while holding the lock")
        #expect(try store.integrityCheck() == "ok")
    }
}
