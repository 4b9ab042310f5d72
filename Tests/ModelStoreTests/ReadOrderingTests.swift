import Foundation
import Testing
@testable import ModelStore

@Suite("Read ordering")
struct ReadOrderingTests {
    /// Starts a write that holds its transaction open until `release` is signalled.
    private func holdWrite(_ store: ModelStore, started: DispatchSemaphore, release: DispatchSemaphore) -> DispatchGroup {
        let group = DispatchGroup()
        onAThread(group: group) {
            try? store.transaction {
                try Snack(snackId: 1, name: "new").save(in: store)
                started.signal()
                release.wait()
            }
        }
        return group
    }

    @Test(arguments: Backend.available) func byDefaultAReadSubmittedDuringAWriteWaitsForItAndSeesIt(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try Snack(snackId: 1, name: "old").save(in: test.store)
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let writing = holdWrite(test.store, started: started, release: release)
        started.wait()
        let seen = Locked<String?>(nil)
        let reading = DispatchGroup()
        onAThread(group: reading) {
            seen.withLock { $0 = try? Snack.find(key: 1, in: test.store)?.name }
        }
        #expect(reading.wait(timeout: .now() + 0.3) == .timedOut)
        release.signal()
        #expect(writing.wait(timeout: .now() + 10) == .success)
        #expect(reading.wait(timeout: .now() + 10) == .success)
        #expect(seen.current == "new")
    }

    /// On PostgreSQL the setting was ignored before: the reads waited for the write, and this
    /// test (which then waited for them) hung until the run was stopped. Now every wait has a
    /// deadline, and the write is released whatever the reads did.
    @Test(arguments: Backend.available)
    func latestCommittedReadsNeverWaitForWritesAndSeeTheCommittedState(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend, configuration: .init(readOrdering: .latestCommitted))
        try Snack(snackId: 1, name: "old").save(in: test.store)
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let writing = holdWrite(test.store, started: started, release: release)
        defer { release.signal() }
        #expect(started.wait(timeout: .now() + 10) == .success)
        // Sync, completion and async reads all answer while the write is still open.
        let answers = Locked<[String?]>([])
        let reads = DispatchGroup()
        onAThread(group: reads) {
            let found = try? Snack.find(key: 1, in: test.store)?.name
            let counted = try? test.store.read { try Snack.count(in: test.store) }
            answers.withLock { $0 += [found, counted.map(String.init)] }
        }
        #expect(reads.wait(timeout: .now() + 10) == .success, "a read waited for the open write")
        #expect(answers.current == ["old", "1"])
        let viaCompletion = DispatchSemaphore(value: 0)
        let completed = Locked<String?>(nil)
        Snack.find(key: 1, in: test.store) { result in
            completed.withLock { $0 = (try? result.get())??.name }
            viaCompletion.signal()
        }
        #expect(viaCompletion.wait(timeout: .now() + 10) == .success)
        #expect(completed.current == "old")
        release.signal()
        #expect(writing.wait(timeout: .now() + 10) == .success)
        #expect(try Snack.find(key: 1, in: test.store)?.name == "new")
    }

    @Test(arguments: Backend.available) func latestCommittedReadsStillSeeTheirOwnTransactionsWrites(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend, configuration: .init(readOrdering: .latestCommitted))
        let seen = try test.store.transaction {
            try Snack(snackId: 1, name: "inside").save(in: test.store)
            return try Snack.find(key: 1, in: test.store)?.name
        }
        #expect(seen == "inside")
    }

    // SQLite-only: an in-memory store is SQLite's (a server store honours .latestCommitted, tested above).
    @Test func anInMemoryStoreKeepsReadsOrderedAfterWrites() throws {
        let storeOwner = try BackendStore(.sqlite, configuration: .init(readOrdering: .latestCommitted))
        let store = storeOwner.store
        try Snack(snackId: 1, name: "old").save(in: store)
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let writing = holdWrite(store, started: started, release: release)
        started.wait()
        let reading = DispatchGroup()
        let seen = Locked<String?>(nil)
        onAThread(group: reading) {
            seen.withLock { $0 = try? Snack.find(key: 1, in: store)?.name }
        }
        #expect(reading.wait(timeout: .now() + 0.3) == .timedOut)
        release.signal()
        #expect(writing.wait(timeout: .now() + 10) == .success)
        #expect(reading.wait(timeout: .now() + 10) == .success)
        #expect(seen.current == "new")
    }
}
