// A second process for the reliability tests: one that writes until it is killed, or one that
// holds the store's write lock until told to let go.
//
//   ReliabilityHelper write-batches <path>    saves Parcel batches forever (even batches in a
//                                              transaction with the Ledger); prints "started"
//   ReliabilityHelper hold-write-lock <path>   opens a write transaction, prints "locked",
//                                              commits when a line arrives on standard input
//   ReliabilityHelper migrate <path>           prints "opening", opens the store with the
//                                              MigratingParcels steps, prints "migrated <steps>"
//   ReliabilityHelper count-and-exit <path>    counts the parcels, prints the count and exits;
//                                              as the file's last connection in its process it
//                                              checkpoints and deletes -wal and -shm if it can
//   ReliabilityHelper ended-transaction <path> <ioerr|nomem>
//                                              a block whose middle call fails with an error
//                                              that ends SQLite's transaction (see
//                                              EndedTransactions.swift); prints what happened
//   ReliabilityHelper no-descriptors <path>     opens stores with every descriptor taken; prints
//                                              the codes they failed with, then "after <count>"
//   ReliabilityHelper transfers <url|schema|worker|form|seconds>
//                                              on a PostgreSQL server: transfers between
//                                              accounts in read-modify-write blocks (see
//                                              Transfers.swift)
//   ReliabilityHelper write-past-file-size-limit <path>
//                                              saves Parcel batch 1, lowers its own file-size
//                                              limit (RLIMIT_FSIZE, SIGXFSZ ignored) to just above
//                                              the store's files, then saves a batch too large for
//                                              it in each call form; prints "codes <c> <c> <c>"
//                                              and "message <the first error>"
//   ReliabilityHelper terminations <url|schema|phase|seconds>
//                                              on a PostgreSQL server the test terminates and
//                                              restarts: one phase of calls in a loop, then a
//                                              check of what the store holds (Terminations.swift)
//   ReliabilityHelper write-history <path>     saves HistoryParcel rounds forever, each in one
//                                              transaction; prints "started" after the first
//   ReliabilityHelper tally <url|schema|worker> on a PostgreSQL server: prints "ready", waits for
//                                              a line, then writes the Tally rounds of `worker`
//                                              (batches and single saves, overlapping the other
//                                              workers' keys) and prints "done"
import Foundation
import ModelStore
#if PostgreSQL
    import ModelStorePostgres
#endif
import ReliabilityFixtures

/// Writes a line straight to the pipe, unbuffered, so the test sees it at once.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func writeBatches(_ store: ModelStore) throws -> Never {
    var next = (try Parcel.all().max(\.batch, in: store) ?? 0) + 1
    say("started")
    // Until killed, for at most 2,000 batches: a test that stalls before stopping it must
    // not find the file grown without bound.
    let last = next + 2_000
    while next < last {
        let parcels = Parcel.batch(next)
        if next % 2 == 0 {
            let batch = next
            try store.transaction {
                _ = try Parcel.save(parcels, in: store)
                try Ledger(lastBatch: batch).save(in: store)
            }
        } else {
            _ = try Parcel.save(parcels, in: store)
        }
        next += 1
    }
    exit(0)
}

/// A result handed from a handler or task to the main thread, which waits for it.
final class Outcome: @unchecked Sendable {
    // @unchecked: `value` is read and written only while `lock` is held.
    private let lock = NSLock()
    private var value: Result<Int, any Error> = .success(0)
    func set(_ result: Result<Int, any Error>) { lock.withLock { value = result } }
    var result: Result<Int, any Error> { lock.withLock { value } }
}

func outcome(of body: () async throws -> Int) async -> Result<Int, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}

/// Writes past a file-size limit it sets itself, in every call form (see the usage above).
func writePastFileSizeLimit(_ store: ModelStore, path: String) throws {
    _ = try Parcel.save(Parcel.batch(1), in: store)
    let largest =
        ["", "-wal", "-shm"].compactMap { try? FileManager.default.attributesOfItem(atPath: path + $0)[.size] as? Int }.max() ?? 0
    // Past the limit, the kernel sends SIGXFSZ, which ends the process unless ignored (as
    // programs that set such a limit do); the write then fails with EFBIG.
    signal(SIGXFSZ, SIG_IGN)
    #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
    #else
        let resource = RLIMIT_FSIZE
    #endif
    var limit = rlimit()
    getrlimit(resource, &limit)
    limit.rlim_cur = rlim_t(largest + 128 * 1024)
    guard setrlimit(resource, &limit) == 0 else { throw ModelStoreError(.sqlite, "setrlimit failed: \(errno)") }
    let tooLarge = (0..<400).map { Parcel(id: 100_000 + Int64($0), batch: 99, payload: String(repeating: "p", count: 2_000)) }
    func code(_ result: Result<Int, any Error>) -> String {
        guard case .failure(let error) = result else { return "none" }
        return (error as? ModelStoreError)?.code.rawValue ?? "other"
    }
    let sync = Result<Int, any Error> { try Parcel.save(tooLarge, in: store).inserted }
    let delivered = DispatchSemaphore(value: 0)
    let completion = Outcome()
    Parcel.save(tooLarge, in: store) { result in
        completion.set(result.map(\.inserted).mapError { $0 as any Error })
        delivered.signal()
    }
    delivered.wait()
    let asynchronous = Outcome()
    Task {
        asynchronous.set(await outcome { try await Parcel.save(tooLarge, in: store).inserted })
        delivered.signal()
    }
    delivered.wait()
    say("codes \(code(sync)) \(code(completion.result)) \(code(asynchronous.result))")
    if case .failure(let error) = sync { say("message \(error)") }
}

func holdWriteLock(_ store: ModelStore) throws {
    try store.transaction {
        try Parcel(id: -1, batch: -1, payload: "written while holding the lock").save(in: store)
        say("locked")
        _ = readLine()
    }
    say("released")
}

let arguments = CommandLine.arguments

// No helper outlives its test: one whose test process is gone (killed, crashed) or that has
// run for five minutes exits. A helper left writing forever once fed a live query in a
// stalled test run more and more rows to count, so the stall never ended.
let parent = getppid()
Thread.detachNewThread {
    let started = Date()
    while getppid() == parent, Date().timeIntervalSince(started) < 300 { Thread.sleep(forTimeInterval: 0.5) }
    exit(3)
}
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: ReliabilityHelper write-batches|hold-write-lock|migrate|count-and-exit <path>\n".utf8))
    exit(2)
}
#if PostgreSQL
    func tally(_ argument: String) throws {
        let parts = argument.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        var server = try PostgresConfiguration(url: parts[0])
        server.schema = parts[1]
        let worker = Int(parts[2])!
        let store = try ModelStore(postgres: server)
        say("ready")
        _ = readLine()
        for round in 1...Tally.rounds {
            // Batches through the set-based path, and in odd rounds single saves inside a
            // transaction as well, so both merge paths race the other processes.
            _ = try Tally.save(Tally.shared(worker: worker, round: round), in: store)
            if round % 2 == 1 {
                // A block is serializable: one the server kept refusing for the whole busy
                // timeout (three processes on one CPU-starved machine) fails as `.busy`, as
                // documented, and wrote nothing — so a caller runs it again, as this one does.
                for attempt in 1... {
                    do {
                        try store.transaction {
                            for tally in Tally.shared(worker: worker, round: round).prefix(40) { try tally.save(in: store) }
                        }
                        break
                    } catch let error as ModelStoreError where error.code == .busy && attempt < 5 {}
                }
            }
            _ = try Tally.save(Tally.own(worker: worker, round: round), in: store)
        }
        try store.close()
        say("done")
    }

#endif

do {
    #if PostgreSQL
        if arguments[1] == "terminations" {
            let argument = arguments[2]
            let finished = DispatchSemaphore(value: 0)
            let failure = FailureBox()
            // Detached: top-level code runs on the main actor, whose thread waits below.
            Task.detached {
                do { try await terminations(argument) } catch { failure.error = error }
                finished.signal()
            }
            finished.wait()
            if let error = failure.error { throw error }
            exit(0)
        }
        if arguments[1] == "transfers" {
            try transfers(arguments[2])
            exit(0)
        }
    #endif
    if arguments[1] == "no-descriptors" {
        try openWithoutDescriptors(path: arguments[2])
        exit(0)
    }
    if arguments[1] == "ended-transaction" {
        try endedTransaction(path: arguments[2], cause: arguments[3])
        exit(0)
    }
    #if PostgreSQL
        if arguments[1] == "tally" {
            try tally(arguments[2])
            exit(0)
        }
    #endif
    if arguments[1] == "migrate" {
        say("opening")
        let store = try ModelStore(path: arguments[2], configuration: .init(migrations: MigratingParcels.steps))
        say("migrated " + (try store.appliedMigrations()).joined(separator: ","))
        // Closing may report `.busy` while the other process still reads (the log is then
        // folded in by the last connection to close): not a failure of the migration.
        try? store.close()
        exit(0)
    }
    let store: ModelStore
    if arguments[2].hasPrefix("postgres|") {
        // Another process on a server store's schema: `postgres|URL|schema`.
        #if PostgreSQL
            let parts = arguments[2].split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            var server = try PostgresConfiguration(url: parts[1])
            server.schema = parts[2]
            store = try ModelStore(postgres: server)
        #else
            FileHandle.standardError.write(Data("built without the PostgreSQL trait\n".utf8))
            exit(2)
        #endif
    } else {
        store = try ModelStore(path: arguments[2])
    }
    switch arguments[1] {
    case "write-batches": try writeBatches(store)
    case "write-history":
        var round: Int64 = 0
        while round < 5_000 {
            let parcels = HistoryParcel.round(round)
            try store.transaction { for parcel in parcels { try parcel.save(in: store) } }
            if round == 0 { say("started") }
            round += 1
        }
        exit(0)
    case "hold-write-lock": try holdWriteLock(store)
    case "write-past-file-size-limit": try writePastFileSizeLimit(store, path: arguments[2])
    case "count-and-exit":
        say("\(try Parcel.count(in: store))")
        try store.close()
    default:
        FileHandle.standardError.write(Data("unknown mode \(arguments[1])\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}

/// An error handed from the task to the main thread, read after the semaphore says it ran.
final class FailureBox: @unchecked Sendable {
    var error: (any Error)?
}
