import Foundation
import ModelStore
import ReliabilityFixtures

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `ended-transaction <path> <ioerr|nomem>`: a transaction block whose middle call fails with
/// an error that makes SQLite roll back the whole transaction by itself — an I/O error (a
/// file-size limit, `RLIMIT_FSIZE`, hit while the page cache spills to the log) or running
/// out of memory (SQLite's `hard_heap_limit`) — which the block catches before going on.
/// Prints what each step threw and what the file holds afterwards, one `name value` a line.
/// Both conditions are process-wide, so they run here, never in the test process.
func endedTransaction(path: String, cause: String) throws {
    let store = try ModelStore(path: path)
    try Parcel(id: 1, batch: 0, payload: "committed before").save(in: store)
    // A small page cache makes a large batch spill to the log before it commits: the
    // condition then meets SQLite in the middle of the transaction.
    try store.execute("PRAGMA cache_size = 10")
    if cause == "nomem" { try store.execute("PRAGMA cache_size = -200000") }
    let big = (2..<3000).map { Parcel(id: Int64($0), batch: 1, payload: String(repeating: "p", count: 2000)) }
    func code(_ error: (any Error)?) -> String {
        guard let error else { return "none" }
        return (error as? ModelStoreError)?.code.rawValue ?? "\(type(of: error))"
    }
    var caught: (any Error)?
    var later: (any Error)?
    var block: (any Error)?
    do {
        try store.transaction {
            try Parcel(id: 701, batch: 7, payload: "before the failure").save(in: store)
            switch cause {
            case "ioerr":
                signal(SIGXFSZ, SIG_IGN)
                var limit = rlimit(rlim_cur: 300_000, rlim_max: rlim_t.max)
                setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
            default:
                try store.execute("PRAGMA hard_heap_limit = 500000")
            }
            do { _ = try Parcel.save(big, in: store) } catch { caught = error }
            // The condition passes; the block goes on as if the failure were the batch's alone.
            var unlimited = rlimit(rlim_cur: rlim_t.max, rlim_max: rlim_t.max)
            setrlimit(Int32(RLIMIT_FSIZE.rawValue), &unlimited)
            do { try Parcel(id: 702, batch: 7, payload: "after the failure").save(in: store) } catch { later = error }
        }
    } catch {
        block = error
    }
    if cause == "nomem" { try store.execute("PRAGMA hard_heap_limit = 0") }
    say("caught \(code(caught))")
    say("later \(code(later))")
    say("block \(code(block))")
    say("count \(try Parcel.count(in: store))")
    // The store goes on: the next call commits.
    try Parcel(id: 703, batch: 7, payload: "the next call").save(in: store)
    say("after \(try Parcel.find(key: 703, in: store) != nil)")
    try store.close()
}
