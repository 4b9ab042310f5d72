import Foundation
import Testing
@testable import ModelStore

private struct Reading: StoredModel, Equatable {
    var id: Int64
    var value: Double
    var single: Float?
    var at: Date?
    var optional: Double?
    static let primaryKey = ["id"]
}

/// A floating-point key.
private struct Weighing: StoredModel, Equatable {
    var weight: Double
    var label: String?
    static let primaryKey = ["weight"]
}

/// -0.0 comes out of ordinary arithmetic, so it saves — as the zero SQLite keeps (the sign is
/// dropped, always, in every column); queries and keys with -0.0 match that zero. NaN stays
/// refused.
@Suite("Reliability: negative zero")
struct NegativeZeroTests {
    @Test(arguments: Backend.available) func negativeZeroFromArithmeticSavesAndReadsBackAsAPositiveZero(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let rounded = (-0.3).rounded()
        #expect(rounded == 0 && rounded.sign == .minus, "the arithmetic really produces -0.0")
        let records = [
            Reading(id: 1, value: rounded, single: Float(-0.0), at: Date(timeIntervalSinceReferenceDate: -0.0), optional: -1 * 0.0),
            Reading(id: 2, value: -0.0 * 5),
        ]
        try records[0].save(in: test.store)
        _ = try Reading.save([records[1], Reading(id: 3, value: -0.0)], in: test.store)
        try Reading(id: 4, value: -0.0).insert(in: test.store)
        try Reading(id: 4, value: -0.0, optional: -0.0).update(in: test.store)

        let loaded = try Reading.findAll(in: test.store)
        #expect(loaded.map(\.id) == [1, 2, 3, 4])
        for reading in loaded {
            #expect(reading.value == 0 && reading.value.sign == .plus, "record \(reading.id)")
        }
        let first = try #require(loaded.first)
        #expect(first.single == 0 && first.single?.sign == .plus)
        #expect(first.at == Date(timeIntervalSinceReferenceDate: 0))
        #expect(first.at?.timeIntervalSinceReferenceDate.sign == .plus)
        #expect(first.optional == 0 && first.optional?.sign == .plus)
        // What the store holds: the positive zero (SQLite would not keep the sign anyway; a
        // server's DOUBLE PRECISION would).
        let stored = try test.rawRows(#"SELECT "value", "optional" FROM "Reading" WHERE "id" = 1"#)
        #expect(stored == [[.real(0), .real(0)]])
        for case .real(let zero) in stored.joined() { #expect(zero.sign == .plus) }
        // Every record is equal to what was saved (-0.0 == 0.0).
        #expect(try Reading.find(key: 1, in: test.store) == records[0])
    }

    @Test(arguments: Backend.available) func queriesAndKeysWithNegativeZeroMatchTheStoredZero(_ backend: Backend) throws {
        let test = try TestStore(backend)
        _ = try Reading.save([Reading(id: 1, value: 0.0), Reading(id: 2, value: -0.0), Reading(id: 3, value: 1)], in: test.store)
        func found(_ condition: Condition<Reading>) throws -> [Int64] {
            try Reading.findAll(where: condition, in: test.store).map(\.id)
        }
        #expect(try found(\.value == -0.0) == [1, 2])
        #expect(try found(\.value == 0.0) == [1, 2])
        #expect(try found(\.value != -0.0) == [3])
        #expect(try found(\.value < 0.0) == [])
        #expect(try found(\.value < -0.0) == [])
        #expect(try found(.in(\.value, [-0.0])) == [1, 2])
        #expect(try found(.between(\.value, -0.0, -0.0)) == [1, 2])

        // A -0.0 key and a 0.0 key are the same record.
        #expect(try Weighing(weight: -0.0, label: "first").save(in: test.store) == .inserted)
        #expect(try Weighing(weight: 0.0, label: "second").save(in: test.store) == .updated)
        #expect(try Weighing.find(key: -0.0, in: test.store)?.label == "second")
        #expect(try Weighing.find(key: 0.0, in: test.store)?.label == "second")
        #expect(try Weighing.count(in: test.store) == 1)
        #expect(try Weighing.delete(key: -0.0, in: test.store) == 1)
        #expect(try Weighing.count(in: test.store) == 0)
    }

    @Test(arguments: Backend.available) func aNaNDateIsRefusedRatherThanStoredAsNull(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let error = try #require(throws: ModelStoreError.self) {
            try Reading(id: 1, value: 1, at: Date(timeIntervalSinceReferenceDate: .nan)).save(in: test.store)
        }
        #expect(error.code == .encodingFailed)
        #expect(error.model == "Reading")
        #expect(error.column == "at")
        #expect(error.suggestion != nil)
        #expect(try Reading.count(in: test.store) == 0)
    }
}
