import Foundation
import Testing
@testable import ModelStore

// Both backends but for the descriptors test (a file's descriptors) and streams (their suite).
/// Closing a store never looks like the end of the rows: a stream being read, a live query
/// and a change stream each end in a way their consumer can tell from "no more", and a store
/// that only an observation still uses is released when that observation ends.
@Suite("Reliability: closing a store under its streams and observers")
struct CloseUnderObserversTests {
    private func fileStore(records: Int, _ backend: Backend = .sqlite) throws -> (TestStore, ModelStore) {
        let test = try TestStore(.file, or: backend)
        let snacks = (1...records).map { Snack(snackId: Int64($0), name: "snack \($0)", price: Double($0)) }
        _ = try Snack.save(snacks, in: test.store)
        return (test, test.store)
    }

    /// Closes `store` on a dispatch thread (close waits for the stream's producer to stop,
    /// which waits for the loop): the test's task, and the concurrency pool, never block.
    private func closeSoon(_ store: ModelStore) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        onAThread {
            try? store.close()
            done.signal()
        }
        return done
    }

    private func closed(_ done: DispatchSemaphore?) async throws {
        guard let done else { return }
        _ = try await offThePool { done.wait(timeout: .now() + 60) }
    }

    @Test(arguments: ["query", "sql"])
    func aStreamBeingReadWhenTheStoreClosesThrowsClosedInsteadOfEnding(form: String) async throws {
        let (test, store) = try fileStore(records: 20_000)
        _ = test
        var read = 0
        var thrown: ModelStoreError?
        var closing: DispatchSemaphore?
        do {
            if form == "query" {
                for try await _ in Snack.all().order(.ascending(\.snackId)).stream(in: store) {
                    read += 1
                    if read == 10 { closing = closeSoon(store) }
                }
            } else {
                for try await _ in store.stream(Snack.self, sql: #"SELECT * FROM "Snack" ORDER BY "snackId""#) {
                    read += 1
                    if read == 10 { closing = closeSoon(store) }
                }
            }
        } catch let error as ModelStoreError {
            thrown = error
        }
        try await closed(closing)
        #expect(thrown?.code == .closed, "a loop cut short by close() must throw, not end (read \(read) of 20,000)")
        #expect(read < 20_000)
    }

    @Test(arguments: Backend.available)
    func aLiveQueryWhoseStoreClosesThrowsClosed(_ backend: Backend) async throws {
        let (test, store) = try fileStore(records: 3, backend)
        _ = test
        var values: [Int] = []
        var thrown: ModelStoreError?
        var closing: DispatchSemaphore?
        do {
            for try await count in store.observe({ try Snack.count(in: store) }) {
                values.append(count)
                if values.count == 1 { closing = closeSoon(store) }
            }
        } catch let error as ModelStoreError {
            thrown = error
        }
        try await closed(closing)
        #expect(values == [3])
        #expect(thrown?.code == .closed)
    }

    @Test(arguments: Backend.available)
    func aLiveQueryHandlerHearsThatTheStoreClosed(_ backend: Backend) throws {
        let (test, store) = try fileStore(records: 3, backend)
        _ = test
        let results = Locked<[Result<Int, ModelStoreError>]>([])
        let first = DispatchSemaphore(value: 0)
        let last = DispatchSemaphore(value: 0)
        let token = store.observe({ try Snack.count(in: store) }) { result in
            results.withLock { $0.append(result) }
            if case .success = result { first.signal() } else { last.signal() }
        }
        #expect(first.wait(timeout: .now() + 30) == .success)
        try store.close()
        #expect(last.wait(timeout: .now() + 30) == .success)
        let seen = results.current
        #expect(seen.count == 2)
        if case .failure(let error) = seen.last { #expect(error.code == .closed) } else { Issue.record("no failure: \(seen)") }
        token.cancel()
    }

    @Test(arguments: Backend.available)
    func aChangeStreamEndsWhenTheStoreClosesAndTheStoreSaysSo(_ backend: Backend) async throws {
        let (test, store) = try fileStore(records: 1, backend)
        _ = test
        #expect(!store.isClosed)
        var changes = 0
        let started = Locked(false)
        let loop = Task(priority: .high) {
            var seen = 0
            for await _ in store.changes(of: Snack.self) {
                seen += 1
                started.withLock { $0 = true }
            }
            return seen
        }
        // A write the stream hears, then close: the loop ends, and `isClosed` tells why.
        var version = 0
        while !started.current {
            // A new value each time: a save that changes nothing is no change to hear.
            version += 1
            try await Snack(snackId: 2, name: "version \(version)").save(in: store)
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        try await closed(closeSoon(store))
        changes = await loop.value
        #expect(changes >= 1)
        #expect(store.isClosed)
    }

    /// The store's open descriptors on this process (Linux: `/proc/self/fd`), by path prefix.
    private func openDescriptors(under directory: String) -> Int {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return -1 }
        return entries.filter { entry in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + entry))?.hasPrefix(directory) == true
        }.count
    }

    @Test(arguments: ["live query", "change stream", "handler token"])
    func aStoreOnlyAnObservationUsesIsReleasedWithItsDescriptorsWhenTheObservationEnds(kind: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("released-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        weak var weakStore: ModelStore?
        let running = Locked(false)
        var loop: Task<Void, Never>?
        var token: ObservationToken?
        do {
            let store = try ModelStore(path: directory + "/store.sqlite")
            weakStore = store
            try await Snack(snackId: 1, name: "one").save(in: store)
            switch kind {
            case "live query":
                let query = Snack.all().observe(in: store)
                loop = Task(priority: .high) {
                    do {
                        for try await _ in query { running.withLock { $0 = true } }
                    } catch {}
                }
            case "change stream":
                let stream = store.changes(of: Snack.self)
                loop = Task(priority: .high) {
                    for await _ in stream {}
                }
                running.withLock { $0 = true }
            default:
                token = store.observe({ try Snack.count(in: store) }) { _ in running.withLock { $0 = true } }
            }
        }
        let started = Date()
        while !running.current, Date().timeIntervalSince(started) < 30 { try await Task.sleep(nanoseconds: 10_000_000) }
        try await Task.sleep(nanoseconds: 50_000_000)
        // Only the observation holds the store now: it stays open while the observation runs.
        #expect(weakStore != nil, "an observation that runs keeps its store")
        #expect(openDescriptors(under: directory) > 0)
        // Ending the observation releases the store and closes its files.
        loop?.cancel()
        await loop?.value
        token = nil
        _ = token
        let deadline = Date().addingTimeInterval(30)
        while (weakStore != nil || openDescriptors(under: directory) > 0), Date() < deadline {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        #expect(weakStore == nil, "the store must be released once its last observation ends")
        #expect(openDescriptors(under: directory) == 0, "and every file of it closed")
    }
}
