import Foundation
import Testing
@testable import ModelStore

/// The model another tool's table was meant for.
private struct Gadget: StoredModel, Equatable {
    var id: Int64
    var n: Int64
    var code: String
    var price: Decimal
    static let primaryKey = ["id"]
}

// One model per kind of storage, all on the table "Matrix".
private struct IntegerValue: StoredModel, Equatable {
    var id: Int64
    var v: Int64?
    static let primaryKey = ["id"]
    static let tableName = "Matrix"
}

private struct RealValue: StoredModel, Equatable {
    var id: Int64
    var v: Double?
    static let primaryKey = ["id"]
    static let tableName = "Matrix"
}

private struct DateValue: StoredModel, Equatable {
    var id: Int64
    var v: Date?
    static let primaryKey = ["id"]
    static let tableName = "Matrix"
}

private struct TextValue: StoredModel, Equatable {
    var id: Int64
    var v: String?
    static let primaryKey = ["id"]
    static let tableName = "Matrix"
}

private struct DecimalValue: StoredModel, Equatable {
    var id: Int64
    var v: Decimal?
    static let primaryKey = ["id"]
    static let tableName = "Matrix"
}

private struct BlobValue: StoredModel, Equatable {
    var id: Int64
    var v: Data?
    static let primaryKey = ["id"]
    static let tableName = "Matrix"
}

private struct Pet: StoredModel, Equatable {
    var id: Int
    var name: String
    var age: Int?
    static let primaryKey = ["id"]
}

/// `Pet` after `age` became text.
private struct PetWithTextAge: StoredModel {
    var id: Int
    var name: String
    var age: String?
    static let primaryKey = ["id"]
    static let tableName = "Pet"
}

/// Promise: on first use in a store, every existing column's declared type is checked against
/// the property's storage. A column whose SQLite type affinity would change the values
/// (text "0123" → 123, integer 2^53 + 1 → 2^53 as REAL) is `.schemaMismatch`, naming table,
/// column, declared type and the model's type, before anything is written.
@Suite("Reliability: column types of existing tables")
struct ColumnTypeTests {
    // SQLite-only: reads or sets up the stored rows with raw SQLite SQL (unquoted names, pragma_table_info, typeof, triggers, SQLite column types).
    @Test func anotherToolsTableWhoseTypesWouldChangeValuesIsRefusedBeforeAnythingIsWritten() throws {
        let gadget = Gadget(id: 1, n: 9_007_199_254_740_993, code: "0123", price: Decimal(string: "1234567890.123456789")!)
        // Each wrong column is reported on its own, with what SQLite would do to the values.
        let cases: [(columns: String, column: String, declared: String, swiftType: String, damage: String)] = [
            ("n REAL, code TEXT, price TEXT", "n", "REAL", "Int64", "9007199254740993 becomes 9007199254740992.0"),
            ("n INTEGER, code INTEGER, price TEXT", "code", "INTEGER", "String", "'0123' becomes 123"),
            ("n INTEGER, code TEXT, price NUMERIC", "price", "NUMERIC", "Decimal", "'0123' becomes 123"),
        ]
        for (columns, column, declared, swiftType, damage) in cases {
            let test = try TestStore()
            try test.rawExecute("CREATE TABLE Gadget (id INTEGER PRIMARY KEY, \(columns))")
            let error = try #require(throws: ModelStoreError.self) { try gadget.save(in: test.store) }
            #expect(error.code == .schemaMismatch, "\(columns)")
            #expect(error.model == "Gadget")
            #expect(error.column == column)
            #expect(error.message.contains(#"table "Gadget""#))
            #expect(error.message.contains(#"column "\#(column)" as \#(declared)"#))
            #expect(error.message.contains("Gadget.\(column) is \(swiftType)"))
            #expect(error.message.contains(damage))
            #expect(error.suggestion?.contains("Declare the column as") == true)
            #expect(try test.rawRows("SELECT count(*) FROM Gadget") == [[.integer(0)]])
            // A batch and a read are refused the same way.
            #expect(throws: ModelStoreError.self) { try Gadget.save([gadget], in: test.store) }
            let readError = try #require(throws: ModelStoreError.self) { try Gadget.findAll(in: test.store) }
            #expect(readError.code == .schemaMismatch)
            #expect(readError.column == column)
        }

        // All three at once: the first in property order is named. Following the suggestion
        // (a new table with fitting types, rows copied) makes every value exact.
        let test = try TestStore()
        try test.rawExecute("CREATE TABLE Gadget (id INTEGER PRIMARY KEY, n REAL, code INTEGER, price NUMERIC, extra TEXT)")
        try test.rawExecute("INSERT INTO Gadget VALUES (2, 5, 7, 1.5, 'kept')")
        let first = try #require(throws: ModelStoreError.self) { try gadget.save(in: test.store) }
        #expect(first.column == "n")
        #expect(try test.rawRows("SELECT id FROM Gadget") == [[.integer(2)]])
        try test.rawExecute("ALTER TABLE Gadget RENAME TO OldGadget")
        try test.rawExecute("CREATE TABLE Gadget (id INTEGER PRIMARY KEY, n INTEGER, code TEXT, price TEXT, extra TEXT)")
        try test.rawExecute("INSERT INTO Gadget SELECT * FROM OldGadget")
        try gadget.save(in: test.store)
        #expect(try Gadget.find(key: 1, in: test.store) == gadget)
        #expect(try Gadget.find(key: 2, in: test.store) == Gadget(id: 2, n: 5, code: "7", price: Decimal(string: "1.5")!))
    }

    /// Declared types and the affinity SQLite gives them (sqlite.org/datatype3.html, 3.1).
    static let declaredTypes: [(declared: String, affinity: String)] = [
        ("INTEGER", "INTEGER"), ("INT", "INTEGER"), ("BIGINT", "INTEGER"), ("unsigned big int", "INTEGER"),
        ("FLOATING POINT", "INTEGER"),  // "INT" comes first
        ("TEXT", "TEXT"), ("VARCHAR(255)", "TEXT"), ("nchar(55)", "TEXT"), ("CLOB", "TEXT"),
        ("BLOB", "BLOB"), ("", "BLOB"),
        ("REAL", "REAL"), ("DOUBLE", "REAL"), ("DOUBLE PRECISION", "REAL"), ("FLOAT", "REAL"),
        ("NUMERIC", "NUMERIC"), ("DECIMAL(10,5)", "NUMERIC"), ("BOOLEAN", "NUMERIC"), ("DATE", "NUMERIC"),
        ("DATETIME", "NUMERIC"), ("STRING", "NUMERIC"), ("ANY", "NUMERIC"),
    ]

    /// For each storage, the affinities that keep its values exactly.
    static let safe: [String: Set<String>] = [
        "integer": ["INTEGER", "NUMERIC", "BLOB"],
        // A REAL with no fraction is stored as INTEGER there, and reads back as the same number.
        "real": ["REAL", "INTEGER", "NUMERIC", "BLOB"],
        "text": ["TEXT", "BLOB"],
        // Affinity never converts a BLOB.
        "blob": ["INTEGER", "TEXT", "BLOB", "REAL", "NUMERIC"],
    ]

    // SQLite-only: reads or sets up the stored rows with raw SQLite SQL (unquoted names, pragma_table_info, typeof, triggers, SQLite column types).
    @Test func theAffinityTableMatchesWhatSQLiteDoes() throws {
        let test = try TestStore()
        for (offset, (declared, affinity)) in Self.declaredTypes.enumerated() {
            #expect(ColumnAffinity(declaredType: declared).rawValue == affinity, "\(declared)")
            // What SQLite makes of the text '0123' and the integer 2^53 + 1 tells the affinities apart
            // (INTEGER and NUMERIC behave the same when storing).
            try test.rawExecute("CREATE TABLE Probe\(offset) (v \(declared))")
            try test.rawExecute("INSERT INTO Probe\(offset) VALUES ('0123'), (9007199254740993)")
            let stored = try test.rawRows("SELECT typeof(v), v FROM Probe\(offset)")
            let expected: [[SQLValue]]
            switch affinity {
            case "INTEGER", "NUMERIC":
                expected = [[.text("integer"), .integer(123)], [.text("integer"), .integer(9_007_199_254_740_993)]]
            case "REAL": expected = [[.text("real"), .real(123)], [.text("real"), .real(9_007_199_254_740_992)]]
            case "TEXT": expected = [[.text("text"), .text("0123")], [.text("text"), .text("9007199254740993")]]
            default: expected = [[.text("text"), .text("0123")], [.text("integer"), .integer(9_007_199_254_740_993)]]
            }
            #expect(stored == expected, "\(declared)")
        }
    }

    // SQLite-only: reads or sets up the stored rows with raw SQLite SQL (unquoted names, pragma_table_info, typeof, triggers, SQLite column types).
    @Test func everyDeclaredTypeAndStorageIsAcceptedExactlyWhenItKeepsTheValues() throws {
        func check<M: StoredModel & Equatable>(
            _ storage: String, _ records: [M], declared: String, affinity: String, typeName: String
        ) throws {
            let test = try TestStore()
            try test.rawExecute("CREATE TABLE Matrix (id INTEGER PRIMARY KEY, v \(declared))")
            let label = "\(M.self) in a \(declared.isEmpty ? "untyped" : declared) column"
            if Self.safe[storage]!.contains(affinity) {
                _ = try M.save(records, in: test.store)
                #expect(try M.findAll(in: test.store) == records, "\(label)")
            } else {
                let error = try #require(throws: ModelStoreError.self, "\(label)") { try M.save(records, in: test.store) }
                #expect(error.code == .schemaMismatch, "\(label)")
                #expect(error.model == String(describing: M.self))
                #expect(error.column == "v")
                #expect(error.message.contains(#"table "Matrix""#))
                #expect(error.message.contains("\(affinity) affinity"), "\(label)")
                #expect(error.message.contains("\(M.self).v is \(typeName)"), "\(label)")
                #expect(error.suggestion != nil)
                #expect(try test.rawRows("SELECT count(*) FROM Matrix") == [[.integer(0)]], "\(label)")
            }
        }
        for (declared, affinity) in Self.declaredTypes {
            try check(
                "integer", [IntegerValue(id: 1, v: 9_007_199_254_740_993), IntegerValue(id: 2, v: .min)],
                declared: declared, affinity: affinity, typeName: "Int64")
            try check(
                "real",
                [
                    RealValue(id: 1, v: 0.1), RealValue(id: 2, v: 3), RealValue(id: 3, v: 1e300),
                    RealValue(id: 4, v: -.infinity), RealValue(id: 5, v: 0x1p62),
                ],
                declared: declared, affinity: affinity, typeName: "Double")
            try check(
                "real",
                [
                    DateValue(id: 1, v: Date(timeIntervalSinceReferenceDate: 123.456)),
                    DateValue(id: 2, v: Date(timeIntervalSinceReferenceDate: 3)),
                ],
                declared: declared, affinity: affinity, typeName: "Date")
            try check(
                "text",
                [
                    TextValue(id: 1, v: "0123"), TextValue(id: 2, v: "1.50"), TextValue(id: 3, v: " 7"),
                    TextValue(id: 4, v: "9007199254740993"),
                ],
                declared: declared, affinity: affinity, typeName: "String")
            try check(
                "text", [DecimalValue(id: 1, v: Decimal(string: "1234567890.123456789")!), DecimalValue(id: 2, v: 100)],
                declared: declared, affinity: affinity, typeName: "Decimal")
            try check(
                "blob", [BlobValue(id: 1, v: Data("0123".utf8)), BlobValue(id: 2, v: Data([0xFF, 0]))],
                declared: declared, affinity: affinity, typeName: "Data")
        }
    }

    // SQLite-only: reads or sets up the stored rows with raw SQLite SQL (unquoted names, pragma_table_info, typeof, triggers, SQLite column types).
    @Test func anAnyColumnOfAStrictTableKeepsValuesAndIsAccepted() throws {
        let test = try TestStore()
        try test.rawExecute("CREATE TABLE Matrix (id INTEGER PRIMARY KEY, v ANY) STRICT")
        let texts = [TextValue(id: 1, v: "0123"), TextValue(id: 2, v: "1.50")]
        _ = try TextValue.save(texts, in: test.store)
        #expect(try TextValue.findAll(in: test.store) == texts)

        // In a STRICT table the other types convert as their affinity says.
        let strict = try TestStore()
        try strict.rawExecute("CREATE TABLE Matrix (id INTEGER PRIMARY KEY, v INTEGER) STRICT")
        let error = try #require(throws: ModelStoreError.self) { try TextValue(id: 1, v: "0123").save(in: strict.store) }
        #expect(error.code == .schemaMismatch)
        #expect(error.column == "v")
    }

    @Test(arguments: Backend.available) func tablesModelStoreCreatedPassTheCheckWhenTheStoreIsOpenedAgain(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let everything = Everything.sample(1)
        try everything.save(in: test.store)
        var team = Team(id: 1, name: "T", players: [Player(id: 2, name: "P")])
        team.coach = Coach(id: 3, name: "C")
        try team.save(in: test.store)
        try Worker(id: 1, name: "W", snacks: [Food(id: 2, name: "F")], ticket: Ticket(id: 3, seat: "A1")).save(in: test.store)
        try Project(tenant: "t", code: 1, title: "P", tasks: [Chore(tenant: "t", number: 2, summary: "c")]).save(in: test.store)

        // A second store on the file checks every table on first use: reads first, then writes.
        let reopened = try test.later()
        #expect(try Everything.find(key: 1, in: reopened) == everything)
        #expect(try Team.find(key: 1, in: reopened)?.players?.map(\.id) == [2])
        #expect(try Worker.find(key: 1, in: reopened)?.snacks?.map(\.id) == [2])
        #expect(try Chore.findAll(in: reopened).map(\.number) == [2])
        let writer = try test.later()
        try Everything.sample(2).save(in: writer)
        try Worker(id: 4, snacks: [Food(id: 5)]).save(in: writer)
        try Coach(id: 6).save(in: writer)
        #expect(try Everything.count(in: writer) == 2)
    }

    @Test(arguments: Backend.available) func aJoinTableWithKeyColumnsOfTheWrongTypeIsRefused(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let relationship = try #require(try TableDescription.of(Worker.self).relationships.first { $0.property == "snacks" })
        guard case .joinTable(let join) = relationship.storage else {
            Issue.record("Worker.snacks is expected to use a join table")
            return
        }
        let columns = (join.ownerColumns + join.targetColumns).map { "\(quoted($0)) TEXT" }.joined(separator: ", ")
        try test.rawExecute("CREATE TABLE \(quoted(join.name)) (\(columns))")
        let error = try #require(throws: ModelStoreError.self) {
            try Worker(id: 1, snacks: [Food(id: 2)]).save(in: test.store)
        }
        #expect(error.code == .schemaMismatch)
        #expect(error.model == "Worker")
        #expect(error.column == join.ownerColumns[0])
        #expect(error.message.contains(quoted(join.name)))
        #expect(try !test.tableNames().contains("Worker"))
    }

    // PostgreSQL differs: a store that already wrote the table does not notice the retyping; the save answers .inserted.
    @Test func aColumnRetypedBehindTheStoresBackIsRefusedBeforeTheNextWrite() throws {
        let backend = Backend.sqlite
        let test = try TestStore(.file, or: backend)
        let gadget = Gadget(id: 1, n: 5, code: "0123", price: Decimal(string: "1234567890.123456789")!)
        try gadget.save(in: test.store)
        // Another program rebuilds the table, with n as a floating-point column, while the store
        // is open; the other columns keep the types the store declared.
        let other = try test.later()
        let types = try test.declaredTypes("Gadget")
        let real = backend == .sqlite ? "REAL" : "DOUBLE PRECISION"
        try other.rawExecute(
            #"CREATE TABLE "Rebuilt" (id \#(types["id"]!) PRIMARY KEY, n \#(real), code \#(types["code"]!), price \#(types["price"]!))"#)
        try other.rawExecute(#"INSERT INTO "Rebuilt" SELECT id, n, code, price FROM "Gadget""#)
        try other.rawExecute(#"DROP TABLE "Gadget""#)
        try other.rawExecute(#"ALTER TABLE "Rebuilt" RENAME TO "Gadget""#)

        let error = try #require(throws: ModelStoreError.self) {
            try Gadget(id: 2, n: 9_007_199_254_740_993, code: "0456", price: 1).save(in: test.store)
        }
        #expect(error.code == .schemaMismatch)
        #expect(error.model == "Gadget")
        #expect(error.column == "n")
        #expect(try test.rawRows(#"SELECT id FROM "Gadget""#) == [[.integer(1)]])
    }

    // SQLite-only: opens the store's file again or looks at it on disk.
    @Test func aPropertyWhoseTypeChangedSinceTheTableWasMadeIsRefusedOnFirstUse() throws {
        let test = try TestStore(.file)
        try Pet(id: 1, name: "Rex", age: 3).save(in: test.store)
        // The program after the property changed type: a store of its own on the file.
        let later = try test.later()
        for use in [
            { _ = try PetWithTextAge.findAll(in: later) },
            { try PetWithTextAge(id: 2, name: "Tom", age: "0123").save(in: later) },
        ] {
            let error = try #require(throws: ModelStoreError.self) { try use() }
            #expect(error.code == .schemaMismatch)
            #expect(error.model == "PetWithTextAge")
            #expect(error.column == "age")
            #expect(error.message.contains("'0123' becomes 123"))
        }
        #expect(try Pet.findAll(in: test.store) == [Pet(id: 1, name: "Rex", age: 3)])
    }
}
