import Foundation
import Testing

@testable import ModelStore

/// Streams hold a bounded number of rows on both backends: on a server a stream's query is read
/// through a cursor, `RemoteStatement.chunk` rows at a time, never as its whole result.
@Suite struct StreamedServerRowsTests {
    struct StreamedReading: StoredModel, Equatable {
        var id: Int64
        var sensor: String
        var value: Double
        static let primaryKey = ["id"]
    }

    static let count = 3_000

    /// The most rows one result of a query on `StreamedReading`'s table handed over at once.
    static func largestHeld() -> Int {
        RemoteStatement.largestHeld.withLock { held in
            held.filter { $0.key.hasPrefix("SELECT") && $0.key.contains("StreamedReading") }.values.max() ?? 0
        }
    }

    static func filled(_ backend: Backend) throws -> BackendStore {
        let owner = try BackendStore(backend)
        let readings = (1...Int64(count)).map { StreamedReading(id: $0, sensor: $0 % 3 == 0 ? "north" : "south", value: Double($0) / 4) }
        _ = try StreamedReading.save(readings, in: owner.store)
        return owner
    }

    @Test(arguments: Backend.available)
    func aStreamOfThousandsOfRowsHoldsAChunkAtATimeAndReadsEveryRowInOrder(_ backend: Backend) async throws {
        let owner = try Self.filled(backend)
        var seen: [Int64] = []
        for try await reading in StreamedReading.filter(\.value > 0).order(.ascending(\.id)).stream(in: owner.store) {
            seen.append(reading.id)
        }
        #expect(seen == Array(1...Int64(Self.count)))
        if backend == .postgres {
            #expect(Self.largestHeld() <= RemoteStatement.chunk, "a stream held \(Self.largestHeld()) rows of one result at once")
            #expect(Self.largestHeld() > 0)
        }
    }

    @Test(arguments: Backend.available)
    func forEachWithAConditionReadsThroughTheCursorAndTheStoreServesTheNextCall(_ backend: Backend) throws {
        let owner = try Self.filled(backend)
        var north = 0
        var total = 0.0
        try StreamedReading.filter(\.sensor == "north").forEach(in: owner.store) { reading in
            north += 1
            total += reading.value
        }
        #expect(north == Self.count / 3)
        var expected = 0.0
        for id in stride(from: 3, through: Self.count, by: 3) { expected += Double(id) / 4 }
        #expect(total == expected)
        // Stopping half way ends the read; the next calls run as usual.
        struct Enough: Error {}
        var taken = 0
        #expect(throws: Enough.self) {
            try StreamedReading.all().forEach(in: owner.store) { _ in
                taken += 1
                if taken == RemoteStatement.chunk + 10 { throw Enough() }
            }
        }
        try StreamedReading(id: 1, sensor: "east", value: 0).save(in: owner.store)
        #expect(try StreamedReading.find(key: 1, in: owner.store)?.sensor == "east")
        #expect(try StreamedReading.all().count(in: owner.store) == Self.count)
    }

    @Test(arguments: Backend.available)
    func aRawSQLStreamWithAParameterReadsEveryRow(_ backend: Backend) async throws {
        let owner = try Self.filled(backend)
        struct Value: Decodable, Sendable { var value: Double }
        var sum = 0.0
        for try await row in owner.store.stream(Value.self, sql: "SELECT value FROM \"StreamedReading\" WHERE id > \(Int64(10))") {
            sum += row.value
        }
        var expected = 0.0
        for id in 11...Self.count { expected += Double(id) / 4 }
        #expect(sum == expected)
    }

    @Test(arguments: Backend.available)
    func forEachInsideATransactionJoinsTheBlockAndReadsEveryRow(_ backend: Backend) throws {
        let owner = try Self.filled(backend)
        // Inside a transaction the read joins the block (and its cursor ends with it).
        let counted = try owner.store.transaction {
            var counted = 0
            try StreamedReading.all().forEach(in: owner.store) { _ in counted += 1 }
            try StreamedReading(id: Int64(Self.count) + 1, sensor: "west", value: 1).save(in: owner.store)
            try StreamedReading.all().forEach(in: owner.store) { _ in counted += 1 }
            return counted
        }
        #expect(counted == 2 * Self.count + 1)
        #expect(try StreamedReading.all().count(in: owner.store) == Self.count + 1)
    }
}
