import Foundation

/// The order a store runs its work in: reads side by side, each write (a barrier) alone, and
/// everything in the order it was submitted — what a concurrent `DispatchQueue` with barriers
/// gives, with one difference that matters on Linux: work submitted without waiting (the
/// completion-handler and `async` forms) runs on threads of ModelStore's own
/// (`WorkerThreads`), never on the global dispatch queue's.
///
/// On Linux the global queue's threads are the Swift concurrency pool's. That pool adds a
/// thread past its width only while none of its threads is busy, so store work that waits —
/// for a lock, the busy timeout, a server's answer — on one of them held back every task of
/// the program; a full test suite on two cores stalled for minutes. Synchronous calls run on
/// the caller's thread, as `DispatchQueue.sync` runs them.
final class StoreQueue: @unchecked Sendable {
    // @unchecked: `readers`, `writing` and `waiting` are read and written only while `lock` is held.
    private let lock = NSLock()
    private var readers = 0
    private var writing = false
    /// Work submitted while earlier work kept it from starting, in submission order.
    private var waiting: [Waiting] = []
    private var head = 0

    private struct Waiting {
        let barrier: Bool
        let start: () -> Void
    }

    /// Asynchronous reads at once: no more than the store has readers, so ten thousand
    /// completion-form reads in a loop take a handful of threads, not ten thousand.
    private let asyncReads: Limiter

    init(asyncReaders: Int) {
        asyncReads = Limiter(limit: max(1, asyncReaders))
    }

    /// How many entries the waiting list holds, started ones not yet let go included (tests).
    var waitingCount: Int { lock.withLock { waiting.count } }

    /// Runs `body` on the calling thread once the work submitted before it allows: beside
    /// other reads, or — as a barrier — alone, after everything submitted earlier.
    func sync<T>(flags: DispatchWorkItemFlags = [], execute body: () throws -> T) rethrows -> T {
        let barrier = flags.contains(.barrier)
        lock.lock()
        if canStartNow(barrier: barrier) {
            admit(barrier: barrier)
            lock.unlock()
        } else {
            let started = DispatchSemaphore(value: 0)
            waiting.append(Waiting(barrier: barrier, start: { started.signal() }))
            lock.unlock()
            started.wait()
        }
        defer { finish(barrier: barrier) }
        return try body()
    }

    /// Runs `body` on a worker thread once the work submitted before it allows, without
    /// waiting for it. With `ordered: false` it starts at once, outside the order (a read
    /// that skips the queue: `readOrdering: .latestCommitted`).
    func async(flags: DispatchWorkItemFlags = [], ordered: Bool = true, execute body: @escaping @Sendable () -> Void) {
        guard ordered else { return asyncReads.run(body) }
        let barrier = flags.contains(.barrier)
        let job: @Sendable () -> Void = {
            body()
            self.finish(barrier: barrier)
        }
        // A read admitted in order may still wait for a thread of its own among the
        // asynchronous reads; a write (one at a time) never does.
        let reads = asyncReads
        let start: @Sendable () -> Void
        if barrier {
            start = { WorkerThreads.shared.run(job) }
        } else {
            start = { reads.run(job) }
        }
        lock.lock()
        if canStartNow(barrier: barrier) {
            admit(barrier: barrier)
            lock.unlock()
            start()
        } else {
            waiting.append(Waiting(barrier: barrier, start: start))
            lock.unlock()
        }
    }

    /// With `lock` held: nothing waits ahead, and the running work lets this start.
    private func canStartNow(barrier: Bool) -> Bool {
        head == waiting.count && !writing && (!barrier || readers == 0)
    }

    /// With `lock` held.
    private func admit(barrier: Bool) {
        if barrier { writing = true } else { readers += 1 }
    }

    /// Ends one piece of work and starts what waited for it: the reads up to the next barrier,
    /// or that barrier once nothing runs.
    private func finish(barrier: Bool) {
        var starts: [() -> Void] = []
        lock.lock()
        if barrier { writing = false } else { readers -= 1 }
        while head < waiting.count, !writing {
            let next = waiting[head]
            if next.barrier, readers > 0 { break }
            admit(barrier: next.barrier)
            starts.append(next.start)
            head += 1
            if next.barrier { break }
        }
        // Started entries go: all of them once the list is empty, and under steady load
        // (several threads queueing again as each finishes, so it never empties) once they
        // are most of it. Each holds its job, and what the job captured, until it goes.
        if head == waiting.count, head > 0 {
            waiting.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64, head * 2 > waiting.count {
            waiting.removeFirst(head)
            head = 0
        }
        lock.unlock()
        for start in starts { start() }
    }
}

/// Runs at most `limit` jobs at once on `WorkerThreads`, the rest in submission order as
/// the running ones end.
final class Limiter: @unchecked Sendable {
    // @unchecked: `running` and `queued` are read and written only while `lock` is held.
    private let lock = NSLock()
    private let limit: Int
    private var running = 0
    private var queued: [@Sendable () -> Void] = []
    private var head = 0

    init(limit: Int) { self.limit = limit }

    func run(_ job: @escaping @Sendable () -> Void) {
        lock.lock()
        guard running < limit else {
            queued.append(job)
            return lock.unlock()
        }
        running += 1
        lock.unlock()
        start(job)
    }

    private func start(_ job: @escaping @Sendable () -> Void) {
        WorkerThreads.shared.run {
            job()
            self.lock.lock()
            guard self.head < self.queued.count else {
                self.running -= 1
                self.queued.removeAll(keepingCapacity: true)
                self.head = 0
                return self.lock.unlock()
            }
            let next = self.queued[self.head]
            self.head += 1
            if self.head > 64, self.head * 2 > self.queued.count {
                self.queued.removeFirst(self.head)
                self.head = 0
            }
            self.lock.unlock()
            self.start(next)
        }
    }
}

/// Threads for store work submitted without waiting. Like GCD's overcommit queues, a job
/// never waits for a thread: an idle one takes it, or a new one starts. A thread idle for
/// ten seconds ends, so a program that stops using its stores keeps none.
final class WorkerThreads: @unchecked Sendable {
    // @unchecked: `jobs` and `idle` are read and written only while `condition` is locked.
    static let shared = WorkerThreads()
    /// What a debugger or `top -H` shows for these threads.
    static let name = "ModelStore work"
    /// Marks the threads of this pool (thread-local storage: Foundation's `Thread.current` can
    /// hand a new thread the cached object of an earlier thread with the same pthread identity).
    private static let marker: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Whether the calling thread is one of these.
    static var isCurrentThreadAWorker: Bool { pthread_getspecific(marker) != nil }
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var idle = 0

    func run(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        let spawn = jobs.count > idle
        if idle > 0 { condition.signal() }
        condition.unlock()
        if spawn {
            // Named from inside, in at most 15 bytes (Linux's limit; a longer name is refused,
            // and the thread keeps the name of the thread that created it).
            Thread {
                Thread.current.name = WorkerThreads.name
                pthread_setspecific(WorkerThreads.marker, UnsafeRawPointer(bitPattern: 1))
                self.work()
            }.start()
        }
    }

    private func work() {
        condition.lock()
        while true {
            if !jobs.isEmpty {
                let job = jobs.removeFirst()
                condition.unlock()
                job()
                condition.lock()
                continue
            }
            idle += 1
            let woken = condition.wait(until: Date(timeIntervalSinceNow: 10))
            idle -= 1
            if !woken, jobs.isEmpty {
                condition.unlock()
                return
            }
        }
    }
}
