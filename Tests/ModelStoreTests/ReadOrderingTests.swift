import Foundation
import Testing
@testable import ModelStore

@Suite("Read ordering")
struct ReadOrderingTests {
    /// Starts a write that holds its transaction open until `release` is signalled.
    private func holdWrite(_ store: ModelStore, started: DispatchSemaphore, release: DispatchSemaphore) -> DispatchGroup {
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
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
        DispatchQueue.global().async(group: reading) {
            seen.withLock { $0 = try? Snack.find(key: 1, in: test.store)?.name }
        }
        #expect(reading.wait(timeout: .now() + 0.3) == .timedOut)
        release.signal()
        #expect(writing.wait(timeout: .now() + 10) == .success)
        #expect(reading.wait(timeout: .now() + 10) == .success)
        #expect(seen.current == "new")
    }

    // SQLite only until PostgreSQL answers the same: with readOrdering .latestCommitted a read waits for an open write
    // transaction (the PostgreSQL case hung until the run was stopped).
    @Test func latestCommittedReadsNeverWaitForWritesAndSeeTheCommittedState() throws {
        let test = try TestStore(.file, configuration: .init(readOrdering: .latestCommitted))
        try Snack(snackId: 1, name: "old").save(in: test.store)
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let writing = holdWrite(test.store, started: started, release: release)
        started.wait()
        // Sync, completion and async reads all answer while the write is still open.
        #expect(try Snack.find(key: 1, in: test.store)?.name == "old")
        #expect(try test.store.read { try Snack.count(in: test.store) } == 1)
        let viaCompletion = DispatchSemaphore(value: 0)
        let completed = Locked<String?>(nil)
        Snack.find(key: 1, in: test.store) { result in
            completed.withLock { $0 = (try? result.get())??.name }
            viaCompletion.signal()
        }
        #expect(viaCompletion.wait(timeout: .now() + 5) == .success)
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

    @Test(arguments: Backend.available) func anInMemoryStoreKeepsReadsOrderedAfterWrites(_ backend: Backend) throws {
        let storeOwner = try BackendStore(backend, configuration: .init(readOrdering: .latestCommitted))
        let store = storeOwner.store
        try Snack(snackId: 1, name: "old").save(in: store)
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let writing = holdWrite(store, started: started, release: release)
        started.wait()
        let reading = DispatchGroup()
        let seen = Locked<String?>(nil)
        DispatchQueue.global().async(group: reading) {
            seen.withLock { $0 = try? Snack.find(key: 1, in: store)?.name }
        }
        #expect(reading.wait(timeout: .now() + 0.3) == .timedOut)
        release.signal()
        #expect(writing.wait(timeout: .now() + 10) == .success)
        #expect(reading.wait(timeout: .now() + 10) == .success)
        #expect(seen.current == "new")
    }
}
