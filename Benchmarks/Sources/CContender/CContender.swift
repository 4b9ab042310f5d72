import BenchCore
import CBaseline
import Foundation

/// Hand-written SQLite C: the floor.
public struct CContender: Contender {
    public let name = "C"

    public init() {}

    public func prepare(_ workload: Workload, data: Dataset, path: String) throws -> PreparedRun {
        let db = try Database(path)
        switch workload {
        // A Date is the REAL it holds: C stores and reads the same double for W1d and W3d.
        case .w1, .w1r, .w1d:
            try db.exec(Schema.item)
            let items = CItems(data.items)
            return PreparedRun(
                timed: { try db.check(cb_insert_items(db.handle, items.pointer, items.count)) },
                verify: { withExtendedLifetime(items) { Checksum.ofFile(path, Checksum.itemTableSQL) } })
        case .w2:
            try db.exec(Schema.item)
            let stored = CItems(Array(data.items.prefix(data.rows / 2)))
            try db.check(cb_insert_items(db.handle, stored.pointer, stored.count))
            let upserts = CItems(data.upserts)
            return PreparedRun(
                timed: { try db.check(cb_upsert_items(db.handle, upserts.pointer, upserts.count)) },
                verify: { withExtendedLifetime(upserts) { Checksum.ofFile(path, Checksum.itemTableSQL) } })
        case .w11:
            try db.exec(Schema.item)
            let items = CItems(data.items)
            try db.check(cb_insert_items(db.handle, items.pointer, items.count))
            return PreparedRun(
                timed: { try db.check(cb_reimport_items(db.handle, items.pointer, items.count)) },
                verify: { withExtendedLifetime(items) { Checksum.ofFile(path, Checksum.itemTableSQL) } })
        case .w12:
            try db.exec(Schema.itemByName)
            let stored = CItems(Array(data.items.prefix(data.rows / 2)))
            try db.check(cb_insert_items(db.handle, stored.pointer, stored.count))
            let upserts = CItems(data.upserts)
            return PreparedRun(
                timed: { try db.check(cb_upsert_items_by_name(db.handle, upserts.pointer, upserts.count)) },
                verify: { withExtendedLifetime(upserts) { Checksum.ofFile(path, Checksum.itemTableSQL) } })
        case .w3, .w3r, .w3d, .w4, .w4b, .w5, .w8, .w8r, .w10:
            try db.exec(Schema.item)
            let items = CItems(data.items)
            try db.check(cb_insert_items(db.handle, items.pointer, items.count))
            return try readRun(workload, db: db, data: data, path: path)
        case .w6:
            try db.exec(Schema.teams)
            try Self.insertGraphs(db, data)
            var sum = cb_sum()
            return PreparedRun(
                timed: {
                    sum = cb_sum(); try db.check(cb_load_teams(db.handle, &sum))
                },
                verify: { Checksum(sum) })
        case .w7:
            try db.exec(Schema.workers)
            for statement in Schema.workerRows(data) { try db.exec(statement) }
            var sum = cb_sum()
            return PreparedRun(
                timed: {
                    sum = cb_sum(); try db.check(cb_load_workers(db.handle, Schema.workerSnacksSQL, &sum))
                },
                verify: { Checksum(sum) })
        case .w9:
            try db.exec(Schema.teams)
            return PreparedRun(
                timed: { try Self.insertGraphs(db, data) },
                verify: { Checksum.ofFile(path, Checksum.graphTableSQL) })
        }
    }

    private func readRun(_ workload: Workload, db: Database, data: Dataset, path: String) throws -> PreparedRun {
        var sum = cb_sum()
        switch workload {
        case .w3, .w3r, .w3d:
            return PreparedRun(
                timed: {
                    sum = cb_sum(); try db.check(cb_fetch_all(db.handle, &sum))
                }, verify: { Checksum(sum) })
        case .w4, .w4b:
            let keys = data.lookupKeys
            let inOneTransaction: Int32 = workload == .w4b ? 1 : 0
            return PreparedRun(
                timed: {
                    sum = cb_sum(); try db.check(cb_fetch_by_keys(db.handle, keys, Int32(keys.count), inOneTransaction, &sum))
                },
                verify: { Checksum(sum) })
        case .w5:
            let thresholds = data.thresholds
            return PreparedRun(
                timed: {
                    sum = cb_sum()
                    try db.check(cb_pages(db.handle, thresholds, Int32(thresholds.count), 50, 100, &sum))
                }, verify: { Checksum(sum) })
        case .w8, .w8r:
            let median = data.medianPrice
            return PreparedRun(
                timed: { try db.check(cb_delete_cheaper(db.handle, median)) },
                verify: { Checksum.ofFile(path, Checksum.itemTableSQL) })
        default:
            return try concurrentRun(db: db, data: data, path: path)
        }
    }

    /// W10: two reader connections fetch by key until the writer's batch commits.
    private func concurrentRun(db: Database, data: Dataset, path: String) throws -> PreparedRun {
        let readers = [try Database(path), try Database(path)]
        let batch = CItems(data.concurrentBatch)
        let keys = data.lookupKeys
        let fetches = Counter()
        return PreparedRun(
            timed: {
                let stop = StopFlag()
                fetches.value = 0
                let group = DispatchGroup()
                for reader in readers {
                    DispatchQueue.global().async(group: group) {
                        let done = cb_read_until(reader.handle, keys, Int32(keys.count), stop.pointer)
                        fetches.add(Int(done))
                    }
                }
                let rc = cb_insert_items(db.handle, batch.pointer, batch.count)
                cb_store_release(stop.pointer, 1)
                group.wait()
                try db.check(rc)
            }, verify: { withExtendedLifetime(readers) { Checksum.ofFile(path, Checksum.itemTableSQL) } },
            operations: { fetches.value })
    }

    private static func insertGraphs(_ db: Database, _ data: Dataset) throws {
        let teamNames = CStrings(data.teams.map(\.name))
        let playerNames = CStrings(data.players.flatMap { $0.map(\.name) })
        let teamIDs = data.teams.map(\.id)
        let playerIDs = data.players.flatMap { $0.map(\.id) }
        try db.check(
            cb_insert_graphs(
                db.handle, teamIDs, teamNames.pointers, Int32(teamIDs.count), playerIDs, playerNames.pointers,
                Int32(Dataset.playersPerTeam)))
    }
}

/// The flag C readers poll with acquire loads; set with a release store.
final class StopFlag: @unchecked Sendable {
    // @unchecked: the C side reads and writes it atomically only.
    let pointer = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
    init() { pointer.pointee = 0 }
    deinit { pointer.deallocate() }
}

final class Database: @unchecked Sendable {
    // @unchecked: each connection is used by one thread at a time in these workloads.
    let handle: OpaquePointer

    init(_ path: String) throws {
        handle = cb_open(path)
    }

    deinit { cb_close(handle) }

    func exec(_ sql: String) throws { try check(cb_exec(handle, sql)) }

    func check(_ rc: Int32) throws {
        guard rc == 0 else { throw BenchError(message: String(cString: cb_error(handle))) }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// A thread-safe count for the readers of W10.
final class Counter: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var count = 0
    var value: Int {
        get { lock.withLock { count } }
        set { lock.withLock { count = newValue } }
    }
    func add(_ amount: Int) { lock.withLock { count += amount } }
}

/// C strings copied once (not timed) and freed with the run.
final class CStrings {
    let pointers: [UnsafePointer<CChar>?]

    init(_ strings: [String]) {
        pointers = strings.map { UnsafePointer(strdup($0)) }
    }

    deinit {
        for pointer in pointers { free(UnsafeMutablePointer(mutating: pointer)) }
    }
}

/// Items as C structs, with their strings, in memory of their own (freed with the run).
final class CItems {
    private let strings: [CStrings]
    let pointer: UnsafeMutablePointer<cb_item>
    let count: Int32

    init(_ data: [ItemData]) {
        let names = CStrings(data.map(\.name))
        let notes = CStrings(data.map { $0.note ?? "" })
        strings = [names, notes]
        count = Int32(data.count)
        pointer = .allocate(capacity: max(1, data.count))
        for (offset, item) in data.enumerated() {
            pointer[offset] = cb_item(
                id: item.id, name: names.pointers[offset], price: item.price, quantity: item.quantity,
                created_at: item.createdAt, note: item.note == nil ? nil : notes.pointers[offset])
        }
    }

    deinit { pointer.deallocate() }
}

extension Checksum {
    init(_ sum: cb_sum) {
        self.init()
        count = Int(sum.count)
        keys = sum.keys
        text = sum.text
        cents = sum.cents
    }
}
