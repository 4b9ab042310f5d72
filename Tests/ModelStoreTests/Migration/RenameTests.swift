import Foundation
import Testing
@testable import ModelStore

private enum Old {
    struct Snack: StoredModel, Equatable {
        var id: Int64
        var cost: Double?
        var code: String
        static let primaryKey = ["id"]
        static let indexes: [TableIndex<Snack>] = [.unique(\.code)]
    }
}

/// `cost` became `amount`, then `price`; the table was `Snack`, then `Treat`.
private struct Treat: StoredModel, Equatable {
    var id: Int64
    var price: Double?
    var code: String
    static let primaryKey = ["id"]
    static let indexes: [TableIndex<Treat>] = [.unique(\.code)]
    static let formerNames: [FormerName<Treat>] = [
        .table(from: "Snack"), .property(\.price, from: "amount"), .property(\.price, from: "cost"),
    ]
}

private struct ClaimsCurrentName: StoredModel {
    var id: Int64
    var price: Double?
    var cost: Double?
    static let primaryKey = ["id"]
    static let formerNames: [FormerName<ClaimsCurrentName>] = [.property(\.price, from: "cost")]
}

private struct ClaimsTwice: StoredModel {
    var id: Int64
    var price: Double?
    var fee: Double?
    static let primaryKey = ["id"]
    static let formerNames: [FormerName<ClaimsTwice>] = [.property(\.price, from: "cost"), .property(\.fee, from: "cost")]
}

private struct RenamesUnknown: StoredModel {
    var id: Int64
    static let primaryKey = ["id"]
    static let formerNames: [FormerName<RenamesUnknown>] = [.property(named: "nothing", from: "old")]
}

private struct FormerTableIsCurrent: StoredModel {
    var id: Int64
    static let primaryKey = ["id"]
    static let formerNames: [FormerName<FormerTableIsCurrent>] = [.table(from: "formertableiscurrent")]
}

private struct EmptyFormerName: StoredModel {
    var id: Int64
    static let primaryKey = ["id"]
    static let formerNames: [FormerName<EmptyFormerName>] = [.table(from: "")]
}

@Suite("Migrations: declared renames")
struct RenameTests {
    @Test(arguments: StoreKind.allCases)
    func aTableAndAColumnRenamedTwiceAreFoundUnderTheirOldestNames(_ kind: StoreKind) throws {
        let test = try TestStore(kind)
        _ = try Old.Snack.save([Old.Snack(id: 1, cost: 2.5, code: "a"), Old.Snack(id: 2, cost: nil, code: "b")], in: test.store)
        #expect(try Treat.findAll(in: test.store) == [Treat(id: 1, price: 2.5, code: "a"), Treat(id: 2, price: nil, code: "b")])
        // The unique index came along: it still dedupes saves by code.
        try Treat(id: 3, price: 9, code: "a").save(in: test.store)
        #expect(try Treat.count(in: test.store) == 2)
        let indexes = try test.rawRows("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
        #expect(indexes == [[.text("unique_Treat_code")]])
    }

    @Test func aColumnUnderAnIntermediateNameIsFoundToo() throws {
        let test = try TestStore()
        try test.rawExecute(
            "CREATE TABLE Treat (id INTEGER NOT NULL, amount REAL, code TEXT NOT NULL, PRIMARY KEY (id)); INSERT INTO Treat VALUES (1, 4.5, 'x')"
        )
        #expect(try Treat.find(key: 1, in: test.store)?.price == 4.5)
    }

    @Test func aCurrentNameThatExistsWinsAndTheOldColumnStaysUnusedButListed() throws {
        let test = try TestStore()
        try test.rawExecute(
            "CREATE TABLE Treat (id INTEGER NOT NULL, cost REAL, price REAL, code TEXT NOT NULL, PRIMARY KEY (id)); INSERT INTO Treat VALUES (1, 1.0, 2.0, 'x')"
        )
        #expect(try Treat.find(key: 1, in: test.store)?.price == 2.0)
        #expect(try test.rawRows("SELECT cost FROM Treat") == [[.real(1.0)]])
        #expect(try test.store.migrationPlan(for: [Treat.self]).unusedColumns.map(\.description) == ["Treat.cost"])
    }

    @Test func twoFormerNamesBothPresentAreRefusedAndNothingChanges() throws {
        let test = try TestStore()
        try test.rawExecute("CREATE TABLE Treat (id INTEGER NOT NULL, cost REAL, amount REAL, code TEXT NOT NULL, PRIMARY KEY (id))")
        let error = #expect(throws: ModelStoreError.self) { try Treat.count(in: test.store) }
        #expect(error?.code == .schemaMismatch)
        #expect(error?.column == "price")
        #expect(
            try test.rawRows("SELECT name FROM pragma_table_info('Treat') ORDER BY cid").map { $0[0] }
                == ["id", "cost", "amount", "code"].map(SQLValue.text))

        let tables = try TestStore()
        try tables.rawExecute("CREATE TABLE Snack (id INTEGER PRIMARY KEY, code TEXT NOT NULL); CREATE TABLE Treat_old (x)")
        try tables.rawExecute("CREATE TABLE Snack2 (id INTEGER PRIMARY KEY)")
        #expect(try Treat.count(in: tables.store) == 0)
    }

    @Test func declarationsThatCannotWorkAreRefusedNamingWhatIsWrong() throws {
        let test = try TestStore()
        let current = #expect(throws: ModelStoreError.self) { try ClaimsCurrentName.count(in: test.store) }
        #expect(current?.code == .invalidModel)
        #expect(current?.message.contains("also a current property") == true)
        let twice = #expect(throws: ModelStoreError.self) { try ClaimsTwice.count(in: test.store) }
        #expect(twice?.code == .invalidModel)
        #expect(twice?.message.contains("both price and fee") == true)
        let unknown = #expect(throws: ModelStoreError.self) { try RenamesUnknown.count(in: test.store) }
        #expect(unknown?.column == "nothing")
        let table = #expect(throws: ModelStoreError.self) { try FormerTableIsCurrent.count(in: test.store) }
        #expect(table?.message.contains("current name") == true)
        let empty = #expect(throws: ModelStoreError.self) { try EmptyFormerName.count(in: test.store) }
        #expect(empty?.code == .invalidModel)
    }

    @Test func aReadBlockCannotRenameAndSaysHowToGoOn() throws {
        let test = try TestStore(.file)
        _ = try Old.Snack.save([Old.Snack(id: 1, cost: 2.5, code: "a")], in: test.store)
        let error = #expect(throws: ModelStoreError.self) { try test.store.read { _ = try Treat.count(in: test.store) } }
        #expect(error?.code == .reentrancy)
        // Outside a block, a read hands the rename to the writer and sees the records.
        #expect(try Treat.count(in: test.store) == 1)
    }

    @Test func anotherStoreStillUsingTheOldNamesIsToldTheTableWasRenamed() throws {
        let test = try TestStore(.file)
        _ = try Old.Snack.save([Old.Snack(id: 1, cost: 2.5, code: "a")], in: test.store)
        let path = try #require(test.store.path)
        let renaming = try ModelStore(path: path)
        #expect(try Treat.count(in: renaming) == 1)
        let error = #expect(throws: ModelStoreError.self) { try Old.Snack(id: 2, cost: 1, code: "b").save(in: test.store) }
        #expect(error?.code == .schemaMismatch)
        try renaming.close()
    }
}
