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

// SQLite-only: written on SQLite files (raw checks through SQLite's catalog, backups, process
// kills); what they promise for a server runs in MigrationsOnBothBackendsTests.
@Suite("Migrations: declared renames")
struct RenameTests {
    @Test func aTableAndAColumnRenamedTwiceAreFoundUnderTheirOldestNames() throws {
        let test = try TestStore(.file)
        _ = try Old.Snack.save([Old.Snack(id: 1, cost: 2.5, code: "a"), Old.Snack(id: 2, cost: nil, code: "b")], in: test.store)
        // The next version of the program: another store, which knows only the new model.
        let next = try test.reopened()
        #expect(try Treat.findAll(in: next) == [Treat(id: 1, price: 2.5, code: "a"), Treat(id: 2, price: nil, code: "b")])
        // The unique index came along: it still dedupes saves by code.
        try Treat(id: 3, price: 9, code: "a").save(in: next)
        #expect(try Treat.count(in: next) == 2)
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
        let next = try test.reopened()
        let error = #expect(throws: ModelStoreError.self) { try next.read { _ = try Treat.count(in: next) } }
        #expect(error?.code == .reentrancy)
        // Outside a block, a read hands the rename to the writer and sees the records.
        #expect(try Treat.count(in: next) == 1)
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

// One-way links whose targets are renamed: the link column follows the target's key, the
// join table's column follows the target's table and key.
private enum Before {
    struct Kid: StoredModel, Equatable {
        var kidId: Int64
        var pet: Pet?
        var toys: [Toy]?
        static let primaryKey = ["kidId"]
        static let relationships: [Relationship<Kid>] = [.toOne(\.pet), .toMany(\.toys)]
    }

    struct Pet: StoredModel, Equatable {
        var petId: Int64
        var name: String
        static let primaryKey = ["petId"]
    }

    struct Toy: StoredModel, Equatable {
        var toyId: Int64
        var name: String
        static let primaryKey = ["toyId"]
    }
}

private enum After {
    struct Kid: StoredModel, Equatable {
        var kidId: Int64
        var pet: Animal?
        var playthings: [Plaything]?
        static let primaryKey = ["kidId"]
        static let relationships: [Relationship<Kid>] = [.toOne(\.pet), .toMany(\.playthings)]
        static let formerNames: [FormerName<Kid>] = [.property(\.playthings, from: "toys")]
    }

    struct Animal: StoredModel, Equatable {
        var animalId: Int64
        var name: String
        static let primaryKey = ["animalId"]
        static let formerNames: [FormerName<Animal>] = [.table(from: "Pet"), .property(\.animalId, from: "petId")]
    }

    struct Plaything: StoredModel, Equatable {
        var code: Int64
        var name: String
        static let primaryKey = ["code"]
        static let formerNames: [FormerName<Plaything>] = [.table(from: "Toy"), .property(\.code, from: "toyId")]
    }
}

extension TestStore {
    /// Another store on the same file: the next version of the program.
    func reopened() throws -> ModelStore {
        try ModelStore(path: try #require(store.path))
    }
}

extension RenameTests {
    @Test func aModelWhoseFormerTableNameIsAnotherModelsTableIsRefusedInOneStore() throws {
        let test = try TestStore()
        _ = try Old.Snack.count(in: test.store)
        let error = #expect(throws: ModelStoreError.self) { try Treat.count(in: test.store) }
        #expect(error?.code == .invalidModel)
        #expect(error?.message.contains("a former name of Treat's table and the table of Snack") == true, "\(error?.message ?? "")")
    }

    @Test func renamedTargetsCarryTheirLinkColumnsAndOneWayJoinTablesAlong() throws {
        let test = try TestStore(.file)
        try Before.Kid(
            kidId: 1, pet: Before.Pet(petId: 5, name: "Rex"),
            toys: [Before.Toy(toyId: 7, name: "ball"), Before.Toy(toyId: 8, name: "kite")]
        ).save(in: test.store)
        try Before.Kid(kidId: 2, pet: nil, toys: [Before.Toy(toyId: 8, name: "kite")]).save(in: test.store)

        let next = try test.reopened()
        let kids = try After.Kid.findAll(loading: .direct, in: next).sorted { $0.kidId < $1.kidId }
        #expect(kids.map(\.pet) == [After.Animal(animalId: 5, name: "Rex"), nil])
        #expect(kids.map { ($0.playthings ?? []).map(\.code).sorted() } == [[7, 8], [8]])
        let kidColumns = try test.rawRows("SELECT name FROM pragma_table_info('Kid') ORDER BY cid").map { $0[0] }
        #expect(kidColumns == [.text("kidId"), .text("pet_animalId")])
        let join = try test.rawRows("SELECT name FROM pragma_table_info('Kid_playthings') ORDER BY cid").map { $0[0] }
        #expect(join == [.text("Kid_playthings_kidId"), .text("Plaything_code")])
        let leftovers = try test.rawRows(
            "SELECT name FROM sqlite_master WHERE name GLOB '*Toy*' OR name GLOB '*Pet*' OR name GLOB '*petId*' OR name GLOB '*toyId*'")
        #expect(leftovers.isEmpty, "\(leftovers)")
        #expect(try test.rawRows("PRAGMA foreign_key_check").isEmpty)
        // The links still work both ways: a deleted animal clears the link (one-way to-one).
        _ = try After.Animal.delete(key: 5, in: next)
        #expect(try After.Kid.find(key: 1, loading: .direct, in: next)?.pet == nil)
    }
}

// A one-to-one keeps its link on the side whose `Table.property` sorts first: renaming Alpha
// to Zeta moves that side from Alpha to Beta.
private enum OneToOneBefore {
    struct Alpha: StoredModel, Equatable {
        var id: Int64
        @Related var beta: Beta?
        static let primaryKey = ["id"]
        static let relationships: [Relationship<Alpha>] = [.toOne(\.beta, inverse: \Beta.alpha)]
    }

    struct Beta: StoredModel, Equatable {
        var id: Int64
        @Related var alpha: Alpha?
        static let primaryKey = ["id"]
        static let relationships: [Relationship<Beta>] = [.toOne(\.alpha, inverse: \Alpha.beta)]
    }
}

private enum OneToOneAfter {
    struct Zeta: StoredModel, Equatable {
        var id: Int64
        @Related var beta: Beta?
        static let primaryKey = ["id"]
        static let relationships: [Relationship<Zeta>] = [.toOne(\.beta, inverse: \Beta.alpha)]
        static let formerNames: [FormerName<Zeta>] = [.table(from: "Alpha")]
    }

    struct Beta: StoredModel, Equatable {
        var id: Int64
        @Related var alpha: Zeta?
        static let primaryKey = ["id"]
        static let relationships: [Relationship<Beta>] = [.toOne(\.alpha, inverse: \Zeta.beta)]
    }
}

extension RenameTests {
    @Test func aRenameThatMovesAOneToOnesLinkToTheOtherSideCarriesTheLinksAcross() throws {
        let test = try TestStore(.file)
        for id in Int64(1)...3 {
            var alpha = OneToOneBefore.Alpha(id: id)
            alpha.beta = id == 3 ? nil : OneToOneBefore.Beta(id: id * 10)
            try alpha.save(in: test.store)
        }
        #expect(try test.rawRows("SELECT beta_id FROM Alpha ORDER BY id") == [[.integer(10)], [.integer(20)], [.null]])
        // Under the new names Beta holds the link: the links move there, whichever side is used first.
        let next = try test.reopened()
        let betas = try OneToOneAfter.Beta.findAll(loading: .direct, in: next).sorted { $0.id < $1.id }
        #expect(betas.map { $0.alpha?.id } == [1, 2])
        #expect(
            try test.rawRows("SELECT id, alpha_id FROM Beta ORDER BY id") == [[.integer(10), .integer(1)], [.integer(20), .integer(2)]])
        let zetas = try OneToOneAfter.Zeta.findAll(loading: .direct, in: next).sorted { $0.id < $1.id }
        #expect(zetas.map { $0.beta?.id } == [10, 20, nil])
        // The old column stays, unused, and the plan says so.
        #expect(try next.migrationPlan(for: [OneToOneAfter.Zeta.self]).unusedColumns.map(\.description) == ["Zeta.beta_id"])
    }
}
