import Foundation
import Testing
@testable import ModelStore

// A many-to-many with the default rule (nullify) on both sides.
private struct Poster: StoredModel {
    var id: Int; var price: Double; var labels: [Label]?; static let primaryKey = ["id"]
    static let indexes: [TableIndex<Poster>] = [.on(\.price)]
    static let relationships: [Relationship<Poster>] = [.toMany(\.labels, inverse: \Label.posters)]
}
private struct Label: StoredModel {
    var id: Int; var posters: [Poster]?; static let primaryKey = ["id"]
    static let relationships: [Relationship<Label>] = [.toMany(\.posters, inverse: \Poster.labels)]
}

// One parent–child pair per delete rule on the parent's to-many side.
private struct CascadeParent: StoredModel {
    var id: Int; var kids: [CascadeKid]?; static let primaryKey = ["id"]
    static let relationships: [Relationship<CascadeParent>] = [.toMany(\.kids, inverse: \CascadeKid.parent, deleteRule: .cascade)]
}
private struct CascadeKid: StoredModel {
    var id: Int; @Related var parent: CascadeParent?; var toys: [Toy]?; static let primaryKey = ["id"]
    static let relationships: [Relationship<CascadeKid>] = [
        .toOne(\.parent, inverse: \CascadeParent.kids), .toMany(\.toys, inverse: \Toy.owner, deleteRule: .cascade),
    ]
}
private struct Toy: StoredModel {
    var id: Int; @Related var owner: CascadeKid?; static let primaryKey = ["id"]
    static let relationships: [Relationship<Toy>] = [.toOne(\.owner, inverse: \CascadeKid.toys)]
}

private struct DenyParent: StoredModel {
    var id: Int; var kids: [DenyKid]?; static let primaryKey = ["id"]
    static let relationships: [Relationship<DenyParent>] = [.toMany(\.kids, inverse: \DenyKid.parent, deleteRule: .deny)]
}
private struct DenyKid: StoredModel {
    var id: Int; @Related var parent: DenyParent?; static let primaryKey = ["id"]
    static let relationships: [Relationship<DenyKid>] = [.toOne(\.parent, inverse: \DenyParent.kids)]
}

private struct NullifyParent: StoredModel {
    var id: Int; var kids: [NullifyKid]?; static let primaryKey = ["id"]
    static let relationships: [Relationship<NullifyParent>] = [.toMany(\.kids, inverse: \NullifyKid.parent)]
}
private struct NullifyKid: StoredModel {
    var id: Int; @Related var parent: NullifyParent?; static let primaryKey = ["id"]
    static let relationships: [Relationship<NullifyKid>] = [.toOne(\.parent, inverse: \NullifyParent.kids)]
}

private struct QuietParent: StoredModel {
    var id: Int; var kids: [QuietKid]?; static let primaryKey = ["id"]
    static let relationships: [Relationship<QuietParent>] = [.toMany(\.kids, inverse: \QuietKid.parent, deleteRule: .noAction)]
}
private struct QuietKid: StoredModel {
    var id: Int; @Related var parent: QuietParent?; static let primaryKey = ["id"]
    static let relationships: [Relationship<QuietKid>] = [.toOne(\.parent, inverse: \QuietParent.kids)]
}

// Rules on the to-one side and on many-to-many.
private struct Badge: StoredModel {
    var id: Int; var holder: Holder?; static let primaryKey = ["id"]
    static let relationships: [Relationship<Badge>] = [.toOne(\.holder, deleteRule: .cascade)]
}
private struct Holder: StoredModel { var id: Int; static let primaryKey = ["id"] }

private struct Reader: StoredModel {
    var id: Int; var books: [Book]?; static let primaryKey = ["id"]
    static let relationships: [Relationship<Reader>] = [.toMany(\.books, inverse: \Book.readers, deleteRule: .cascade)]
}
private struct Book: StoredModel {
    var id: Int; var readers: [Reader]?; static let primaryKey = ["id"]
    static let relationships: [Relationship<Book>] = [.toMany(\.readers, inverse: \Reader.books, deleteRule: .deny)]
}

@Suite("Delete rules")
struct DeleteRuleTests {
    @Test(arguments: Backend.available) func cascadeDeletesRelatedRecordsAndTheirOwnCascades(_ backend: Backend) throws {
        let test = try TestStore(backend)
        var kid = CascadeKid(id: 10)
        kid.toys = [Toy(id: 100), Toy(id: 101)]
        var parent = CascadeParent(id: 1)
        parent.kids = [kid, CascadeKid(id: 11)]
        try parent.save(in: test.store)
        try CascadeParent(id: 2, kids: [CascadeKid(id: 12)]).save(in: test.store)
        #expect(try CascadeParent.delete(key: 1, in: test.store) == 1)
        #expect(try CascadeKid.findAll(loading: .none, in: test.store).map(\.id) == [12])
        #expect(try Toy.count(in: test.store) == 0)
    }

    @Test(arguments: Backend.available) func denyRefusesWhileRelatedRecordsExistAndChangesNothing(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try DenyParent(id: 1, kids: [DenyKid(id: 10)]).save(in: test.store)
        try DenyParent(id: 2).save(in: test.store)
        let error = try #require(throws: ModelStoreError.self) { try DenyParent.delete(key: 1, in: test.store) }
        #expect(error.code == .constraintViolation)
        #expect(error.message.contains("DenyParent (id = 1) cannot be deleted"))
        #expect(error.column == "kids")
        #expect(try DenyParent.count(in: test.store) == 2)
        #expect(try DenyParent.delete(key: 2, in: test.store) == 1)
        try DenyKid(id: 10).save(clearing: [\.parent], in: test.store)
        #expect(try DenyParent.delete(key: 1, in: test.store) == 1)
    }

    @Test(arguments: Backend.available) func nullifyKeepsRelatedRecordsWithoutTheLink(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try NullifyParent(id: 1, kids: [NullifyKid(id: 10), NullifyKid(id: 11)]).save(in: test.store)
        #expect(try NullifyParent.deleteAll(where: \.id == 1, in: test.store) == 1)
        let kids = try NullifyKid.findAll(in: test.store)
        #expect(kids.map(\.id) == [10, 11])
        #expect(kids.allSatisfy { $0.parent == nil })
        #expect(try test.rawRows(#"SELECT count(*) FROM "NullifyKid" WHERE "parent_id" IS NULL"#) == [[.integer(2)]])
    }

    /// (SQLite counts the referring records; a server names the first it met, so the count is
    /// SQLite's alone.)
    @Test(arguments: Backend.available) func noActionLeavesItToTheForeignKeyWhichRefusesToCommit(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try QuietParent(id: 1, kids: [QuietKid(id: 10)]).save(in: test.store)
        let error = try #require(throws: ModelStoreError.self) { try QuietParent.delete(key: 1, in: test.store) }
        #expect(error.code == .constraintViolation)
        #expect(error.model == "QuietKid")
        #expect(error.message.contains("QuietKid record"))
        #expect(error.message.contains("would refer to missing QuietParent records"), "\(error.message)")
        #expect(error.suggestion?.contains("nullify or cascade") == true)
        if backend == .sqlite {
            #expect(error.sqliteMessage?.contains("FOREIGN KEY") == true)
            #expect(error.message.contains("1 QuietKid record(s) would refer to missing QuietParent records"))
        }
        #expect(try QuietParent.count(in: test.store) == 1)
        // Inside one transaction the references can be fixed before it commits.
        try test.store.transaction {
            try QuietParent.delete(key: 1, in: test.store)
            try QuietKid.delete(key: 10, in: test.store)
        }
        #expect(try QuietParent.count(in: test.store) == 0)
    }

    @Test(arguments: Backend.available) func aCascadeOnTheToOneSideDeletesTheTarget(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Badge(id: 1, holder: Holder(id: 5)).save(in: test.store)
        try Holder(id: 6).save(in: test.store)
        #expect(try Badge.delete(key: 1, in: test.store) == 1)
        #expect(try Holder.findAll(in: test.store).map(\.id) == [6])
    }

    @Test(arguments: Backend.available) func manyToManyRulesAndJoinRowsGoWithTheRecord(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Reader(id: 1, books: [Book(id: 10), Book(id: 11)]).save(in: test.store)
        try Reader(id: 2, books: [Book(id: 12)]).save(in: test.store)
        // Book.readers denies: a book with readers cannot go.
        let error = try #require(throws: ModelStoreError.self) { try Book.delete(key: 10, in: test.store) }
        #expect(error.code == .constraintViolation)
        // Reader.books cascades; the deny on Book.readers ignores the reader being deleted,
        // but not another reader of the same book.
        try Reader(id: 3, books: [Book(id: 11)]).save(in: test.store)
        let shared = try #require(throws: ModelStoreError.self) { try Reader.delete(key: 1, in: test.store) }
        #expect(shared.code == .constraintViolation)
        #expect(try Book.count(in: test.store) == 3)
        try Reader(id: 3, books: []).save(in: test.store)
        // Now the reader's books go with it, and every join row with them.
        #expect(try Reader.delete(key: 1, in: test.store) == 1)
        #expect(try Book.findAll(loading: .none, in: test.store).map(\.id) == [12])
        #expect(try Reader.findAll(loading: .none, in: test.store).map(\.id) == [2, 3])
        #expect(try test.rawRows(#"SELECT count(*) FROM "Book_readers__Reader_books""#) == [[.integer(1)]])
    }

    @Test(arguments: Backend.available) func deletingEverythingAppliesTheRulesToo(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try CascadeParent(id: 1, kids: [CascadeKid(id: 10, toys: [Toy(id: 100)])]).save(in: test.store)
        #expect(try CascadeParent.deleteAll(in: test.store) == 1)
        #expect(try CascadeKid.count(in: test.store) == 0)
        #expect(try Toy.count(in: test.store) == 0)
    }

    /// A many-to-many's nullify changes no row before the record's DELETE (the join rows go
    /// with it), so a delete by condition is that one DELETE, on the condition's own index —
    /// no list of keys, no count, no look-up of each row by its key.
    @Test(arguments: Backend.available) func aDeleteWhoseRulesOnlyDropLinksIsOneStatement(_ backend: Backend) throws {
        let test = try TestStore(backend)
        _ = try Poster.save(
            (1...10).map { Poster(id: $0, price: Double($0), labels: $0 % 3 == 0 ? [Label(id: 100)] : nil) }, in: test.store)
        test.resetSQL()
        #expect(try Poster.deleteAll(where: \.price < 5, in: test.store) == 4)
        let placeholder = backend == .sqlite ? "?" : "$1"
        // (SQLite's trace names the statement again for each row whose join rows its foreign
        // key action deletes.)
        #expect(Set(test.dataSQL) == [#"DELETE FROM "Poster" WHERE "price" < \#(placeholder)"#], "\(test.dataSQL)")
        #expect(try Poster.findAll(loading: .none, in: test.store).map(\.id) == Array(5...10))
        // Poster 3's join row went with it; 6's and 9's stay, and so does the label.
        #expect(try Label.find(key: 100, loading: .direct, in: test.store)?.posters?.map(\.id).sorted() == [6, 9])
        // By key, and every record, the same.
        test.resetSQL()
        #expect(try Poster.delete(key: 6, in: test.store) == 1)
        #expect(try Poster.deleteAll(in: test.store) == 5)
        #expect(Set(test.dataSQL).count == 2 && test.dataSQL.allSatisfy { $0.hasPrefix(#"DELETE FROM "Poster""#) }, "\(test.dataSQL)")
        #expect(try test.rawRows(#"SELECT count(*) FROM "Label_posters__Poster_labels""#) == [[.integer(0)]])
    }
}

// MARK: - Declarations that cannot work

private struct Lonely: StoredModel {
    var id: Int; var friends: [Stranger]?; static let primaryKey = ["id"]
    static let relationships: [Relationship<Lonely>] = [.toMany(\.friends, inverse: \Stranger.lonely)]
}
private struct Stranger: StoredModel { var id: Int; var lonely: Lonely?; static let primaryKey = ["id"] }

private struct Left: StoredModel {
    var id: Int; var rights: [Right]?; static let primaryKey = ["id"]
    static let relationships: [Relationship<Left>] = [.toMany(\.rights, inverse: \Right.left)]
}
private struct Right: StoredModel {
    var id: Int; var left: Left?; var other: Left?; static let primaryKey = ["id"]
    static let relationships: [Relationship<Right>] = [.toOne(\.left), .toOne(\.other, inverse: \Left.rights)]
}

private struct Clashing: StoredModel {
    var id: Int; var owner: Holder?; var owner_id: Int?; static let primaryKey = ["id"]
    static let relationships: [Relationship<Clashing>] = [.toOne(\.owner)]
}

private struct Twice: StoredModel {
    var id: Int; var holder: Holder?; static let primaryKey = ["id"]
    static let relationships: [Relationship<Twice>] = [.toOne(\.holder), .toOne(\.holder)]
}

@Suite("Relationship declarations")
struct RelationshipDeclarationTests {
    @Test(arguments: Backend.available) func anInverseTheTargetDoesNotDeclareIsAnErrorNamingBoth(_ backend: Backend) throws {
        let inline1 = try TestStore(backend)
        let error = try #require(throws: ModelStoreError.self) { try Lonely(id: 1).save(in: inline1.store) }
        #expect(error.code == .invalidModel)
        #expect(error.message.contains("Lonely.friends"))
        #expect(error.message.contains("Stranger.lonely"))
    }

    @Test(arguments: Backend.available) func anInverseThatDoesNotPointBackIsAnErrorNamingBoth(_ backend: Backend) throws {
        let inline1 = try TestStore(backend)
        let error = try #require(throws: ModelStoreError.self) { try Left(id: 1).save(in: inline1.store) }
        #expect(error.code == .invalidModel)
        #expect(error.message.contains("Left.rights and Right.left"))
        #expect(error.message.contains("do not point back"))
    }

    @Test(arguments: Backend.available) func aLinkColumnThatCollidesWithAPropertyIsAnError(_ backend: Backend) throws {
        let inline1 = try TestStore(backend)
        let error = try #require(throws: ModelStoreError.self) { try Clashing(id: 1).save(in: inline1.store) }
        #expect(error.code == .invalidModel)
        #expect(error.column == "owner_id")
    }

    @Test(arguments: Backend.available) func aRelationshipDeclaredTwiceIsAnError(_ backend: Backend) throws {
        let inline1 = try TestStore(backend)
        let error = try #require(throws: ModelStoreError.self) { try Twice(id: 1).save(in: inline1.store) }
        #expect(error.code == .invalidModel)
        #expect(error.message.contains("twice"))
    }
}
