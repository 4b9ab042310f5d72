import Foundation
import Testing

@testable import ModelStore

// SQLite-only: a backup copies the store's file; PostgreSQL stores refuse backups (.unsupported).
/// `store.backup(to:)`: a consistent online copy that never overwrites silently and never
/// leaves a partial file.
@Suite("Backups")
struct BackupTests {
    private func snacks(_ range: ClosedRange<Int64>) -> [Snack] {
        range.map { Snack(snackId: $0, name: "snack \($0)", taste: $0 % 2 == 0 ? "sweet" : "salty", price: Double($0) / 4) }
    }

    @Test func aBackupHoldsEveryRecordAndOpensAsAStore() throws {
        let test = try TestStore(.file)
        _ = try Snack.save(snacks(1...1_000), in: test.store)
        let copy = test.directory.appendingPathComponent("copy.sqlite").path
        try test.store.backup(to: copy)
        let restored = try ModelStore(path: copy)
        #expect(try Snack.findAll(in: restored) == Snack.findAll(in: test.store))
        // The copy is a store of its own: writing it leaves the original alone.
        try Snack(snackId: 5_000, name: "only in the copy").save(in: restored)
        #expect(try Snack.count(in: restored) == 1_001)
        #expect(try Snack.count(in: test.store) == 1_000)
        #expect(try FileManager.default.contentsOfDirectory(atPath: test.directory.path).allSatisfy { !$0.contains(".backup-") })
    }

    @Test func anInMemoryStoreCanBeBackedUpToAFile() throws {
        let test = try TestStore(.memory)
        _ = try Snack.save(snacks(1...50), in: test.store)
        let copy = test.directory.appendingPathComponent("memory-copy.sqlite").path
        try test.store.backup(to: copy)
        #expect(try Snack.count(in: ModelStore(path: copy)) == 50)
    }

    @Test func aBackupTakenWhileAnotherThreadWritesIsOneSnapshot() throws {
        let test = try TestStore(.file)
        _ = try Snack.save(snacks(1...100), in: test.store)
        let store = test.store
        let writer = Thread {
            // Batches of 100 in one transaction each: a consistent copy holds whole batches.
            for batch in 1...200 {
                let first = Int64(batch * 100 + 1)
                _ = try? Snack.save((first...first + 99).map { Snack(snackId: $0, name: "w") }, in: store)
            }
        }
        writer.start()
        while try Snack.count(in: store) <= 100 { Thread.sleep(forTimeInterval: 0.001) }
        for index in 0..<5 {
            let copy = test.directory.appendingPathComponent("during-\(index).sqlite").path
            try store.backup(to: copy)
            let count = try Snack.count(in: ModelStore(path: copy))
            #expect(count % 100 == 0, "a copy holding \(count) records has half a batch")
            #expect(count > 100)
        }
        while writer.isExecuting { Thread.sleep(forTimeInterval: 0.01) }
    }

    @Test func anExistingFileIsReplacedOnlyWhenTheCallSaysSo() throws {
        let test = try TestStore(.file)
        _ = try Snack.save(snacks(1...10), in: test.store)
        let copy = test.directory.appendingPathComponent("existing.sqlite").path
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: copy))
        let error = try #require(throws: ModelStoreError.self) { try test.store.backup(to: copy) }
        #expect(error.code == .alreadyExists)
        #expect(error.message.contains(copy))
        #expect(try String(contentsOfFile: copy, encoding: .utf8) == "keep me")
        try test.store.backup(to: copy, replacingExisting: true)
        #expect(try Snack.count(in: ModelStore(path: copy)) == 10)
    }

    @Test func theFileOfAnOpenStoreIsNeverABackupTarget() throws {
        let test = try TestStore(.file)
        _ = try Snack.save(snacks(1...10), in: test.store)
        let other = try TestStore(.file)
        try Snack(snackId: 1, name: "other").save(in: other.store)
        let own = try #require(test.store.path)
        let otherPath = try #require(other.store.path)
        for target in [own, otherPath, own + "-wal", own + "-shm", otherPath + "-journal"] {
            let error = try #require(throws: ModelStoreError.self) { try test.store.backup(to: target, replacingExisting: true) }
            #expect(error.code == .invalidQuery)
        }
        #expect(try Snack.count(in: test.store) == 10)
        #expect(try Snack.find(key: 1, in: other.store)?.name == "other")
    }

    @Test func aBackupInsideATransactionIsRefusedAndInsideAReadBlockWorks() throws {
        let test = try TestStore(.file)
        _ = try Snack.save(snacks(1...10), in: test.store)
        let copy = test.directory.appendingPathComponent("in-block.sqlite").path
        let error = try #require(throws: ModelStoreError.self) {
            try test.store.transaction {
                try Snack(snackId: 99, name: "uncommitted").save(in: test.store)
                try test.store.backup(to: copy)
            }
        }
        #expect(error.code == .invalidQuery)
        #expect(!FileManager.default.fileExists(atPath: copy))
        try test.store.read { try test.store.backup(to: copy) }
        #expect(try Snack.count(in: ModelStore(path: copy)) == 10)
    }

    @Test func aBackupIntoAMissingDirectoryFailsAndLeavesNothing() throws {
        let test = try TestStore(.file)
        let copy = test.directory.appendingPathComponent("no/such/dir/copy.sqlite").path
        let error = try #require(throws: ModelStoreError.self) { try test.store.backup(to: copy) }
        #expect(error.code == .cannotOpen)
        #expect(!FileManager.default.fileExists(atPath: copy))
    }

    @Test func theThreeFormsAgree() async throws {
        let test = try TestStore(.file)
        _ = try await Snack.save(snacks(1...20), in: test.store)
        let store = test.store
        let first = test.directory.appendingPathComponent("completion.sqlite").path
        let second = test.directory.appendingPathComponent("async.sqlite").path
        let delivered = await withCheckedContinuation { continuation in
            store.backup(to: first) { continuation.resume(returning: $0) }
        }
        try delivered.get()
        try await store.backup(to: second)
        #expect(try await Snack.count(in: ModelStore(path: first)) == 20)
        #expect(try await Snack.count(in: ModelStore(path: second)) == 20)
        let refused = await withCheckedContinuation { continuation in
            store.backup(to: first) { continuation.resume(returning: $0) }
        }
        #expect(throws: ModelStoreError.self) { try refused.get() }
    }
}
