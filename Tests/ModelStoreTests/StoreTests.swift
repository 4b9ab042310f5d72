import Foundation
import Testing
@testable import ModelStore

@Suite("Store: queue, barriers, reentrancy")
struct StoreTests {
    @Test(arguments: StoreKind.everywhere)
    func aReadSubmittedAfterAFireAndForgetWriteSeesIt(kind: StoreKind) throws {
        let test = try TestStore(kind)
        for id in 0..<200 {
            Snack(snackId: Int64(id), name: "n\(id)").save(in: test.store) { _ in }
            #expect(try Snack.find(key: id, in: test.store)?.name == "n\(id)")
        }
    }

    @Test(arguments: Backend.available) func anAsyncReadAfterAnAsyncWriteSeesIt(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let seen = Locked<[Bool]>([])
        let group = DispatchGroup()
        for id in 0..<50 {
            group.enter()
            Snack(snackId: Int64(id)).save(in: test.store) { _ in }
            Snack.exists(key: id, in: test.store) { result in
                seen.withLock { $0.append((try? result.get()) == true) }
                group.leave()
            }
        }
        #expect(group.wait(timeout: .now() + 10) == .success)
        #expect(seen.current == Array(repeating: true, count: 50))
    }

    @Test(arguments: Backend.available) func readsRunSideBySide(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try Snack(snackId: 1).save(in: test.store)
        // Each read block waits until the other has started: serialized reads would time out.
        let first = DispatchSemaphore(value: 0)
        let second = DispatchSemaphore(value: 0)
        let outcomes = Locked<[DispatchTimeoutResult]>([])
        let group = DispatchGroup()
        for (mine, theirs) in [(first, second), (second, first)] {
            onAThread(group: group) {
                try? test.store.read {
                    _ = try Snack.count(in: test.store)
                    mine.signal()
                    outcomes.withLock { $0.append(theirs.wait(timeout: .now() + 5)) }
                }
            }
        }
        #expect(group.wait(timeout: .now() + 10) == .success)
        #expect(outcomes.current == [.success, .success])
    }

    @Test(arguments: Backend.available) func aWriteWaitsForReadsInFlightAndReadsAfterItWaitForTheWrite(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try Snack(snackId: 1, name: "before").save(in: test.store)
        let readStarted = DispatchSemaphore(value: 0)
        let releaseRead = DispatchSemaphore(value: 0)
        let events = Locked<[String]>([])
        let group = DispatchGroup()
        onAThread(group: group) {
            try? test.store.read {
                readStarted.signal()
                releaseRead.wait()
                events.withLock { $0.append("read saw \(try! Snack.find(key: 1, in: test.store)!.name!)") }
            }
        }
        readStarted.wait()
        Snack(snackId: 1, name: "after").save(in: test.store) { _ in events.withLock { $0.append("write done") } }
        Thread.sleep(forTimeInterval: 0.05)
        #expect(events.current.isEmpty)
        releaseRead.signal()
        #expect(group.wait(timeout: .now() + 10) == .success)
        #expect(try Snack.find(key: 1, in: test.store)?.name == "after")
        #expect(events.current.first == "read saw before")
    }

    @Test(arguments: Backend.available) func completionHandlersRunOnTheStoresQueueByDefaultWithoutAMainLoop(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let done = DispatchSemaphore(value: 0)
        let onMain = Locked<Bool?>(nil)
        Snack.count(in: test.store) { _ in
            onMain.withLock { $0 = Thread.isMainThread }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(onMain.current == false)
    }

    @Test(arguments: Backend.available) func completionHandlersRunOnTheQueueTheUserSets(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let key = DispatchSpecificKey<String>()
        let queue = DispatchQueue(label: "custom")
        queue.setSpecific(key: key, value: "custom")
        test.store.completionQueue = queue
        let done = DispatchSemaphore(value: 0)
        let label = Locked<String?>(nil)
        Snack(snackId: 1).save(in: test.store) { _ in
            label.withLock { $0 = DispatchQueue.getSpecific(key: key) }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(label.current == "custom")
    }

    @Test(arguments: Backend.available) func aSynchronousCallInsideACompletionHandlerDoesNotDeadlock(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let done = DispatchSemaphore(value: 0)
        let found = Locked<String?>(nil)
        Snack(snackId: 1, name: "x").save(in: test.store) { _ in
            _ = try? Snack(snackId: 1, name: "y").save(in: test.store)
            found.withLock { $0 = try? Snack.find(key: 1, in: test.store)?.name }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(found.current == "y")
    }

    @Test(arguments: Backend.available) func callsInsideATransactionRunInlineAndSeeItsUncommittedWrites(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let seen = try test.store.transaction {
            try Snack(snackId: 1, name: "inside").save(in: test.store)
            return try Snack.find(key: 1, in: test.store)?.name
        }
        #expect(seen == "inside")
        #expect(try Snack.count(in: test.store) == 1)
    }

    @Test(arguments: Backend.available) func aThrowingTransactionRollsBackEveryCallInIt(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try Snack(snackId: 1, name: "kept").save(in: test.store)
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try test.store.transaction {
                try Snack(snackId: 1, name: "changed").save(in: test.store)
                try Snack(snackId: 2).save(in: test.store)
                _ = try Friendship(userId: 1, friendId: "x").save(in: test.store)
                throw Abort()
            }
        }
        #expect(try Snack.findAll(in: test.store) == [Snack(snackId: 1, name: "kept")])
        // The table created inside the rolled-back transaction is created again when needed.
        #expect(try Friendship.count(in: test.store) == 0)
    }

    @Test(arguments: Backend.available) func aFailedCallInsideATransactionRollsBackOnlyItself(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try test.store.transaction {
            try Snack(snackId: 1).save(in: test.store)
            #expect(throws: ModelStoreError.self) { try Snack(snackId: 1).insert(in: test.store) }
            try Snack(snackId: 2).save(in: test.store)
        }
        #expect(try Snack.count(in: test.store) == 2)
    }

    @Test(arguments: Backend.available) func aWriteInsideAReadBlockFailsClearlyInsteadOfDeadlocking(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Snack(snackId: 1).save(in: test.store)
        let error = try #require(throws: ModelStoreError.self) {
            try test.store.read { try Snack(snackId: 2).save(in: test.store) }
        }
        #expect(error.code == .reentrancy)
        #expect(try test.store.read { try Snack.count(in: test.store) } == 1)
    }

    @Test(arguments: Backend.available) func aReadBlockSeesOneSnapshotWhileWritesCommit(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try Snack(snackId: 1).save(in: test.store)
        let counts = try test.store.read { () -> [Int] in
            let before = try Snack.count(in: test.store)
            // A write on another thread commits meanwhile (WAL, or a server, lets it run beside the
            // reader connection; the barrier only orders work submitted through this store's queue).
            let writer = try test.later()
            try Snack(snackId: 2).save(in: writer)
            return [before, try Snack.count(in: test.store)]
        }
        #expect(counts == [1, 1])
        #expect(try Snack.count(in: test.store) == 2)
    }

    @Test(arguments: Backend.available) func transactionsHaveCompletionAndAsyncForms(_ backend: Backend) async throws {
        let test = try TestStore(backend)
        let result: Result<Int, any Error> = await withCheckedContinuation { continuation in
            test.store.transaction(
                { () -> Int in
                    try Snack(snackId: 1).save(in: test.store)
                    return try Snack.count(in: test.store)
                }, completion: { continuation.resume(returning: $0) })
        }
        #expect(try result.get() == 1)
        let count = try await test.store.transaction { () -> Int in
            try Snack(snackId: 2).save(in: test.store)
            return try Snack.count(in: test.store)
        }
        #expect(count == 2)
        #expect(try await test.store.read { try Snack.count(in: test.store) } == 2)
    }

    @Test(arguments: Backend.available) func aStoreIsSharedAcrossTasks(_ backend: Backend) async throws {
        let test = try TestStore(backend)
        let store = test.store
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in 0..<20 {
                group.addTask(priority: .high) { try await Snack(snackId: Int64(id)).save(in: store) }
            }
            try await group.waitForAll()
        }
        #expect(try await Snack.count(in: store) == 20)
    }
}
