import Foundation
import Testing
@testable import ModelStore

/// The model as it was when its records were stored.
private struct Pet: StoredModel, Equatable {
    var id: Int
    var name: String
    var age: Int?
    static let primaryKey = ["id"]
}

/// The same table after the model changed `age` from a number to a flag. (A change to text
/// is refused before any read: ColumnTypeTests.)
private struct PetWithFlagAge: StoredModel {
    var id: Int
    var name: String
    var age: Bool?
    static let primaryKey = ["id"]
    static let tableName = "Pet"
}

/// A model that dropped `name`, which its table — made by an older version of the program,
/// whose model is gone — keeps as NOT NULL. (No other model of this program declares the
/// table: a column another model declares is never suggested for dropping.)
private struct PetWithoutName: StoredModel {
    var id: Int
    var age: Int?
    static let primaryKey = ["id"]
    static let tableName = "DroppedPet"
}

/// Promise 7: when the stored table disagrees with the model, the error names the model,
/// the column and the record and suggests the fix; nothing is rewritten silently.
@Suite("Reliability: schema drift")
struct SchemaDriftTests {
    @Test(arguments: Backend.available) func storedValuesThatNoLongerDecodeNameModelColumnRecordAndFix(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try Pet(id: 1, name: "Rex", age: 3).save(in: test.store)
        try Pet(id: 2, name: "Tom").save(in: test.store)
        // The program after the model changed: a store of its own on the file (one store
        // refuses two models of one table).
        let later = try test.later()
        let error = try #require(throws: ModelStoreError.self) { try PetWithFlagAge.findAll(in: later) }
        #expect(error.code == .decodingFailed)
        #expect(error.model == "PetWithFlagAge")
        #expect(error.column == "age")
        #expect(error.key == "id = 1")
        #expect(error.value == "3")
        #expect(error.suggestion?.contains("migrate the stored values or change the property's type") == true)
        #expect(String(describing: error).contains("PetWithFlagAge.age"))
        // The record whose age is NULL still reads; the failing one is left exactly as stored.
        #expect(try PetWithFlagAge.find(key: 2, in: later)?.name == "Tom")
        #expect(try test.rawRows(#"SELECT age FROM "Pet" WHERE id = 1"#) == [[.integer(3)]])
    }

    // SQLite-only: text stored in a REAL column, which a server's typed column refuses.
    @Test func aValueOfTheWrongTypeWrittenByAnotherToolIsReportedNotGuessed() throws {
        let test = try TestStore()
        try Snack(snackId: 7, name: "x").save(in: test.store)
        try test.rawExecute("UPDATE Snack SET size = 'huge' WHERE snackId = 7")
        let error = try #require(throws: ModelStoreError.self) { try Snack.find(key: 7, in: test.store) }
        #expect(error.code == .decodingFailed)
        #expect(error.model == "Snack")
        #expect(error.column == "size")
        #expect(error.key == "snackId = 7")
        #expect(error.value == "'huge'")
        #expect(error.suggestion != nil)
        #expect(String(describing: error).contains("Snack.size"))
        #expect(try test.rawRows("SELECT size FROM Snack") == [[.text("huge")]])
    }

    @Test(arguments: Backend.available)
    func aNotNullColumnTheModelDroppedRefusesSavesNamingItAndTheMigration(_ backend: Backend) throws {
        let test = try TestStore(.memory, or: backend)
        let integer = backend == .sqlite ? "INTEGER" : "BIGINT"
        try test.rawExecute(#"CREATE TABLE "DroppedPet" ("id" \#(integer) PRIMARY KEY, "name" TEXT NOT NULL, "age" \#(integer))"#)
        try test.rawExecute(#"INSERT INTO "DroppedPet" VALUES (1, 'Rex', 3)"#)
        // Inserting a new record and updating the stored one both fail: SQLite checks NOT NULL
        // before it looks for a conflicting key.
        let saves: [() throws -> Void] = [
            { try PetWithoutName(id: 2, age: 1).save(in: test.store) },
            { try PetWithoutName(id: 1, age: 4).save(in: test.store) },
        ]
        for save in saves {
            let error = try #require(throws: ModelStoreError.self) { try save() }
            #expect(error.code == .schemaMismatch)
            #expect(error.model == "PetWithoutName")
            #expect(error.column == "name")
            #expect(error.message.contains("NOT NULL column name"))
            #expect(error.suggestion?.contains(#"ALTER TABLE "DroppedPet" DROP COLUMN "name""#) == true)
            if backend == .sqlite { #expect(error.sqliteMessage == "NOT NULL constraint failed: DroppedPet.name") }
        }
        let batchError = try #require(throws: ModelStoreError.self) {
            try PetWithoutName.save([PetWithoutName(id: 3), PetWithoutName(id: 4)], in: test.store)
        }
        #expect(batchError.code == .schemaMismatch)
        #expect(batchError.column == "name")
        #expect(batchError.key == "id = 3")
        // Nothing was written or rewritten.
        #expect(try test.rawRows(#"SELECT "id", "name", "age" FROM "DroppedPet""#) == [[.integer(1), .text("Rex"), .integer(3)]])
        // Following the suggestion makes the model work.
        try test.rawExecute(#"ALTER TABLE "DroppedPet" DROP COLUMN "name""#)
        try PetWithoutName(id: 2, age: 1).save(in: test.store)
        #expect(try PetWithoutName.count(in: test.store) == 2)
    }
}
