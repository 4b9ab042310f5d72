import Foundation
import Testing
@testable import ModelStore

@Suite("The store's queue and threads")
struct StoreQueueTests {
    /// Reads never overlap a barrier, barriers never overlap each other, and work from one
    /// thread runs in the order it was submitted — under eight threads mixing every kind.
    @Test func readsOverlapOnlyReadsAndEachThreadsWorkRunsInItsOrder() {
        let queue = StoreQueue(asyncReaders: 4)
        let state = Locked((readers: 0, writers: 0, overlaps: 0, maxReaders: 0))
        let order = Locked([Int: [Int]]())
        let group = DispatchGroup()
        @Sendable func enter(_ barrier: Bool) {
            state.withLock {
                if barrier {
                    if $0.readers > 0 || $0.writers > 0 { $0.overlaps += 1 }
                    $0.writers += 1
                } else {
                    if $0.writers > 0 { $0.overlaps += 1 }
                    $0.readers += 1
                    $0.maxReaders = max($0.maxReaders, $0.readers)
                }
            }
        }
        @Sendable func leave(_ barrier: Bool) {
            state.withLock { if barrier { $0.writers -= 1 } else { $0.readers -= 1 } }
        }
        onThreads(8) { thread in
            for step in 0..<200 {
                let barrier = step % 5 == 0
                let flags: DispatchWorkItemFlags = barrier ? .barrier : []
                let work: @Sendable () -> Void = {
                    enter(barrier)
                    if barrier { order.withLock { $0[thread, default: []].append(step) } }
                    Thread.sleep(forTimeInterval: 0.0001)
                    leave(barrier)
                }
                if step % 2 == 0 {
                    queue.sync(flags: flags, execute: work)
                } else {
                    group.enter()
                    queue.async(flags: flags) {
                        work()
                        group.leave()
                    }
                }
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(state.current.overlaps == 0)
        #expect(state.current.maxReaders > 1, "reads ran side by side")
        for (thread, steps) in order.current {
            #expect(steps == steps.sorted(), "thread \(thread)'s barriers ran in the order it submitted them")
            #expect(steps.count == 40)
        }
    }

    /// At most `limit` jobs run at once, and every job runs: ten
    /// thousand completion-form reads in a loop must not become ten thousand threads.
    @Test func aLimiterRunsAtMostItsLimitAtOnceAndEveryJob() {
        let limiter = Limiter(limit: 3)
        let state = Locked((running: 0, peak: 0, started: [Int]()))
        let group = DispatchGroup()
        for index in 0..<300 {
            group.enter()
            limiter.run {
                state.withLock {
                    $0.running += 1
                    $0.peak = max($0.peak, $0.running)
                    $0.started.append(index)
                }
                Thread.sleep(forTimeInterval: 0.0005)
                state.withLock { $0.running -= 1 }
                group.leave()
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(state.current.peak <= 3)
        #expect(state.current.started.count == 300)
        #expect(Set(state.current.started) == Set(0..<300))
    }

    /// Under steady load the list of waiting work never empties; what has started must still
    /// be let go, or it keeps every job (and what it captured) alive.
    @Test func startedWorkIsLetGoUnderSteadyLoad() {
        let queue = StoreQueue(asyncReaders: 4)
        let peak = Locked(0)
        onThreads(4) { _ in
            for _ in 0..<2_000 {
                queue.sync(flags: .barrier) {
                    let kept = queue.waitingCount
                    peak.withLock { $0 = max($0, kept) }
                }
            }
        }
        #expect(peak.current < 200, "\(peak.current) entries kept")
    }

    /// A synchronous call submitted after asynchronous work from the same thread waits for
    /// it: a read after a fire-and-forget write sees the write.
    @Test func aSyncReadWaitsForTheBarrierSubmittedBeforeIt() {
        let queue = StoreQueue(asyncReaders: 4)
        let written = Locked(false)
        queue.async(flags: .barrier) {
            Thread.sleep(forTimeInterval: 0.2)
            written.withLock { $0 = true }
        }
        #expect(queue.sync { written.current })
    }

    /// Completion-handler and `async` calls run on ModelStore's own threads: never on the
    /// global dispatch queue, whose threads on Linux are the concurrency pool's.
    @Test(arguments: Backend.available)
    func callsThatDoNotWaitRunOnTheStoresOwnThreadsInEveryForm(_ backend: Backend) async throws {
        for readOrdering in [ModelStore.ReadOrdering.afterEarlierWrites, .latestCommitted] {
            let test = try TestStore(.file, or: backend, configuration: .init(readOrdering: readOrdering))
            let store = test.store
            let names = Collected<String>()
            @Sendable func note() { names.add(WorkerThreads.isCurrentThreadAWorker ? "worker" : Thread.current.name ?? "?") }
            try await store.transaction { note() }
            try await store.read { note() }
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                store.transaction({ note() }) { _ in done.resume() }
            }
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                store.read({ note() }) { _ in done.resume() }
            }
            #expect(names.current == Array(repeating: "worker", count: 4), "\(readOrdering)")
        }
    }
}
