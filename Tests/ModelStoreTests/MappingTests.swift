import Foundation
import Testing
@testable import ModelStore

@Suite("Codable mapping")
struct MappingTests {
    @Test(arguments: StoreKind.everywhere)
    func everySupportedTypeRoundTripsExactly(kind: StoreKind) throws {
        let test = try TestStore(kind)
        let original = Everything.sample(1)
        try original.save(in: test.store)
        let loaded = try #require(try Everything.find(key: 1, in: test.store))
        #expect(loaded == original)
        #expect(loaded.decimal.description == "12345678901234567890.123456789012345678")
        #expect(loaded.date.timeIntervalSinceReferenceDate.bitPattern == original.date.timeIntervalSinceReferenceDate.bitPattern)
    }

    @Test(arguments: Backend.available) func nilOptionalsOfEveryKindRoundTripAsNil(_ backend: Backend) throws {
        let test = try TestStore(backend)
        var model = Everything.sample(2)
        model.optionalInt = nil
        model.optionalString = nil
        model.optionalDate = nil
        model.optionalDecimal = nil
        model.optionalUUID = nil
        model.optionalTaste = nil
        model.optionalLevel = nil
        model.optionalAddress = nil
        model.optionalArray = nil
        try model.save(in: test.store)
        #expect(try Everything.find(key: 2, in: test.store) == model)
    }

    @Test(arguments: Backend.available) func columnsAreDeclaredWithTheTypeOfTheirStoredForm(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Everything.sample(1).save(in: test.store)
        let declared = try test.declaredColumns("Everything")
        let sqliteTypes: [String: String] = [
            "bool": "INTEGER", "int8": "INTEGER", "uint64": "INTEGER", "float": "REAL", "double": "REAL",
            "decimal": "TEXT", "string": "TEXT", "date": "REAL", "data": "BLOB", "uuid": "TEXT", "url": "TEXT",
            "taste": "TEXT", "level": "INTEGER", "size": "TEXT", "array": "TEXT", "set": "TEXT",
            "dictionary": "TEXT", "address": "TEXT", "optionalInt": "INTEGER", "optionalDate": "REAL",
            "optionalTaste": "TEXT", "optionalLevel": "INTEGER", "optionalAddress": "TEXT",
        ]
        // A server's types for SQLite's; a Decimal is NUMERIC there.
        let serverTypes = ["INTEGER": "bigint", "REAL": "double precision", "TEXT": "text", "BLOB": "bytea"]
        let expected = backend == .sqlite ? sqliteTypes : sqliteTypes.mapValues { serverTypes[$0]! }.merging(["decimal": "numeric"]) { $1 }
        for (name, type) in expected {
            #expect(declared[name]?.type == type, "\(name)")
        }
        #expect(declared["double"]?.notNull == true)
        #expect(declared["optionalInt"]?.notNull == false)
        #expect(declared["optionalAddress"]?.notNull == false)
    }

    @Test(arguments: Backend.available) func valuesAreStoredInTheirDocumentedForms(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let model = Everything.sample(1)
        try model.save(in: test.store)
        let row = try #require(
            try test.rawRows(
                #"SELECT "bool", "date", "decimal", "uuid", "url", "taste", "level", "array", "dictionary", "address", "set" FROM "Everything""#
            ).first)
        #expect(row[0] == .integer(1))
        #expect(row[1] == .real(model.date.timeIntervalSinceReferenceDate))
        #expect(row[2] == .text("12345678901234567890.123456789012345678"))
        #expect(row[3] == .text(model.uuid.uuidString))
        #expect(row[4] == .text("https://example.com/a?b=c#d"))
        #expect(row[5] == .text("salty"))
        #expect(row[6] == .integer(20))
        #expect(row[7] == .text("[3,1,2]"))
        #expect(row[8] == .text(#"{"a":1.5,"b":-2}"#))
        #expect(row[9] == .text(#"{"street":"Main St","tags":["home"],"zip":12345}"#))
        // JSON columns can be queried with the database's JSON functions.
        let zip = try test.rawRows(#"SELECT \#(test.jsonText("address", "$.zip")) FROM "Everything""#)
        #expect(zip.first?.first == .text("12345"))
    }

    @Test(arguments: Backend.available) func datesSortAndCompareInSQLAsTheyDoInSwift(_ backend: Backend) throws {
        struct Event: StoredModel { var id: Int; var at: Date; static let primaryKey = ["id"] }
        let test = try TestStore(backend)
        let dates = [
            Date(timeIntervalSince1970: -2_000_000_000), Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 0.000_001),
            Date(timeIntervalSinceReferenceDate: 0), Date.distantPast, Date.distantFuture, Date(timeIntervalSince1970: 1e9 + 0.5),
        ]
        for (offset, date) in dates.enumerated() { try Event(id: offset, at: date).save(in: test.store) }
        let ordered = try test.rawRows(#"SELECT "id" FROM "Event" ORDER BY "at""#).map { $0[0] }
        let expected = dates.enumerated().sorted { $0.element < $1.element }.map { SQLValue.integer(Int64($0.offset)) }
        #expect(ordered == expected)
        let pivot = Date(timeIntervalSinceReferenceDate: 0)
        let later = try test.store.read { session in
            try session.connection.scalar(#"SELECT count(*) FROM "Event" WHERE "at" > ?"#, [pivot.sqlValue])
        }
        #expect(later == .integer(Int64(dates.filter { $0 > pivot }.count)))
        for (offset, date) in dates.enumerated() {
            #expect(try Event.find(key: offset, in: test.store)?.at == date)
        }
    }

    @Test(arguments: Backend.available) func aUInt64AboveInt64MaxIsRefusedNotWrapped(_ backend: Backend) throws {
        let test = try TestStore(backend)
        var model = Everything.sample(1)
        model.uint64 = UInt64(Int64.max) + 1
        let error = try #require(throws: ModelStoreError.self) { try model.save(in: test.store) }
        #expect(error.code == .encodingFailed)
        #expect(error.model == "Everything")
        #expect(error.column == "uint64")
        #expect(error.value == "9223372036854775808")
        #expect(try Everything.count(in: test.store) == 0)
    }

    @Test(arguments: Backend.available) func aStoredRawValueThatNamesNoCaseFailsClearly(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Everything.sample(1).save(in: test.store)
        try test.rawExecute(#"UPDATE "Everything" SET "taste" = 'bitter', "size" = 'XL'"#)
        let error = try #require(throws: ModelStoreError.self) { try Everything.find(key: 1, in: test.store) }
        #expect(error.code == .decodingFailed)
        #expect(error.column == "taste")
        #expect(error.value == "'bitter'")
        #expect(error.key == "id = 1")
    }

    @Test(arguments: Backend.available) func aStoredIntegerTooLargeForThePropertyFailsInsteadOfTruncating(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Everything.sample(1).save(in: test.store)
        try test.rawExecute(#"UPDATE "Everything" SET "int8" = 300"#)
        let error = try #require(throws: ModelStoreError.self) { try Everything.find(key: 1, in: test.store) }
        #expect(error.code == .decodingFailed)
        #expect(error.column == "int8")
        #expect(error.value == "300")
    }

    @Test(arguments: Backend.available) func enumsWithPayloadsAreStoredAsJSON(_ backend: Backend) throws {
        enum Shape: Codable, Sendable, Equatable { case circle(radius: Double), label(String) }
        struct Drawing: StoredModel, Equatable {
            var id: Int
            var shape: Shape?
            static let primaryKey = ["id"]
        }
        let test = try TestStore(backend)
        try Drawing(id: 1, shape: .label("hi")).save(in: test.store)
        try Drawing(id: 2, shape: .circle(radius: 2)).save(in: test.store)
        #expect(try Drawing.findAll(in: test.store).map(\.shape) == [.label("hi"), .circle(radius: 2)])
    }

    /// What Models, keys and storage says of non-optional enums with payloads: ModelStore
    /// needs one value of the enum, which it makes of plain payloads itself and takes from
    /// `allCases` otherwise (the next test: neither is a clear model error).
    @Test(arguments: Backend.available) func aNonOptionalEnumWithPayloadsWorksWhenItsPayloadsArePlainOrItIsCaseIterable(_ backend: Backend)
        throws
    {
        enum Shape: Codable, Sendable, Equatable { case circle(radius: Double), square(side: Int, filled: Bool) }
        enum Label: Codable, Sendable, Equatable, CaseIterable {
            case text(String), empty
            static var allCases: [Label] { [.empty, .text("")] }
        }
        struct Sketch: StoredModel, Equatable {
            var id: Int
            var shape: Shape
            var label: Label
            static let primaryKey = ["id"]
        }
        let test = try TestStore(backend)
        let sketches = [
            Sketch(id: 1, shape: .circle(radius: 2), label: .text("sun")),
            Sketch(id: 2, shape: .square(side: 3, filled: true), label: .empty),
        ]
        try Sketch.save(sketches, in: test.store)
        #expect(try Sketch.findAll(in: test.store) == sketches)
    }

    @Test(arguments: Backend.available) func aNonOptionalPropertyWithoutAnyPlaceholderIsAClearModelError(_ backend: Backend) throws {
        enum Note: Codable, Sendable { case text(String), empty }
        struct Memo: StoredModel { var id: Int; var note: Note; static let primaryKey = ["id"] }
        let test = try TestStore(backend)
        let error = try #require(throws: ModelStoreError.self) { try Memo(id: 1, note: .empty).save(in: test.store) }
        #expect(error.code == .invalidModel)
        #expect(error.model == "Memo")
        #expect(error.column == "note")
        #expect(error.suggestion?.contains("CaseIterable") == true)
    }
}
