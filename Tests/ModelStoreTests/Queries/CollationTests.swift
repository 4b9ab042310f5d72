import Foundation
import Testing
@testable import ModelStore

private struct Maintainer: StoredModel, Equatable {
    var email: String
    var name: String?
    var packages: [Upload]?
    static let primaryKey = ["email"]
    static let columnStorage: [ColumnStorage<Maintainer>] = [.text(\.email, collation: .caseInsensitive)]
    static let relationships: [Relationship<Maintainer>] = [.toMany(\.packages, inverse: \Upload.maintainer)]
}

private struct Upload: StoredModel, Equatable {
    var id: Int64
    var title: String
    var maintainer: Maintainer?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Upload>] = [.toOne(\.maintainer, inverse: \Maintainer.packages)]
}

private struct Tag: StoredModel, Equatable {
    var id: Int64
    var label: String
    var note: String?
    static let primaryKey = ["id"]
    static let indexes: [TableIndex<Tag>] = [.unique(\.label)]
    static let columnStorage: [ColumnStorage<Tag>] = [
        .text(\.label, collation: .caseInsensitive), .text(\.note, collation: .ignoringTrailingSpaces),
    ]
}

/// Case-insensitive text keys and columns: keys, unique indexes, conditions, sorting, batch
/// dedupe and links all follow the declared collation.
@Suite struct CollationTests {
    // SQLite only until PostgreSQL answers the same: the NOCASE collation throws .unsupported on PostgreSQL.
    @Test(arguments: StoreKind.allCases)
    func aCaseInsensitiveKeyIsOneRecord(_ kind: StoreKind) throws {
        let test = try TestStore(kind)
        try Maintainer(email: "georgesk@debian.org", name: "Georges").save(in: test.store)
        #expect(try Maintainer(email: "georgesk@debian.Org", name: "Georges K.").save(in: test.store) == .updated)
        #expect(try Maintainer.all().count(in: test.store) == 1)
        #expect(try Maintainer.find(key: "GEORGESK@DEBIAN.ORG", in: test.store)?.name == "Georges K.")
        // The stored spelling is the first one.
        #expect(try Maintainer.findAll(in: test.store).map(\.email) == ["georgesk@debian.org"])
        let batch = try Maintainer.save(
            [Maintainer(email: "a@x.org", name: "A"), Maintainer(email: "A@X.ORG", name: "B")], in: test.store)
        #expect(batch.inserted == 1)
        #expect(batch.updated == 1)
        #expect(try Maintainer.find(key: "a@x.org", in: test.store)?.name == "B")
    }

    // SQLite only until PostgreSQL answers the same: the NOCASE collation throws .unsupported on PostgreSQL.
    @Test func conditionsAndSortingFollowTheCollation() throws {
        let test = try TestStore()
        try Tag.save([Tag(id: 1, label: "beta"), Tag(id: 2, label: "Alpha"), Tag(id: 3, label: "gamma", note: "x  ")], in: test.store)
        #expect(try Tag.findAll(where: \.label == "ALPHA", in: test.store).map(\.id) == [2])
        #expect(try Tag.findAll(where: .in(\.label, ["BETA", "GAMMA"]), in: test.store).map(\.id) == [1, 3])
        #expect(try Tag.findAll(where: \.label < "B", in: test.store).map(\.id) == [2])
        #expect(try Tag.order(.ascending(\.label)).findAll(in: test.store).map(\.id) == [2, 1, 3])
        #expect(try Tag.findAll(where: \.note == "x", in: test.store).map(\.id) == [3])
    }

    // SQLite only until PostgreSQL answers the same: the NOCASE collation throws .unsupported on PostgreSQL.
    @Test func aUniqueIndexAndMatchKeysFollowTheCollation() throws {
        let test = try TestStore()
        try Tag(id: 1, label: "swift").save(in: test.store)
        // The unique index finds the record: the upsert updates it instead of failing.
        #expect(try Tag(id: 1, label: "SWIFT", note: "n").save(in: test.store) == .updated)
        let duplicate = #expect(throws: ModelStoreError.self) { try Tag(id: 2, label: "Swift").insert(in: test.store) }
        #expect(duplicate?.code == .alreadyExists)
        let outcome = try Tag.save(
            [Tag(id: 7, label: "SWIFT", note: "matched"), Tag(id: 8, label: "rust"), Tag(id: 9, label: "RUST", note: "same")],
            matching: MatchKeys(varying: [\.label]), in: test.store)
        #expect(outcome.inserted == 1)
        #expect(try Tag.all().count(in: test.store) == 2)
        #expect(try Tag.findFirst(where: \.label == "swift", in: test.store)?.note == "matched")
        #expect(try Tag.findFirst(where: \.label == "rust", in: test.store)?.note == "same")
    }

    // SQLite only until PostgreSQL answers the same: the NOCASE collation throws .unsupported on PostgreSQL.
    @Test func linksHoldTheStoredSpellingSoLoadingFindsThem() throws {
        let test = try TestStore()
        try Maintainer(email: "georgesk@debian.org", name: "Georges").save(in: test.store)
        var upload = Upload(id: 1, title: "curl")
        upload.maintainer = Maintainer(email: "GeorgesK@Debian.org")
        try upload.save(in: test.store)
        var second = Upload(id: 2, title: "wget")
        second.maintainer = Maintainer(email: "GEORGESK@debian.org")
        try second.save(related: .mustExist, in: test.store)
        #expect(try Maintainer.all().count(in: test.store) == 1)
        let loaded = try Upload.find(key: 1, loading: .direct, in: test.store)
        #expect(loaded?.maintainer?.name == "Georges")
        let maintainer = try Maintainer.find(key: "georgesk@DEBIAN.org", loading: .direct, in: test.store)
        #expect(maintainer?.packages?.map(\.id).sorted() == [1, 2])
        #expect(try Upload.findAll(where: .related(\.maintainer, \.email == "GEORGESK@DEBIAN.ORG"), in: test.store).count == 2)
    }

    // SQLite-only: opens the store's file again or looks at it on disk.
    @Test func aStoredColumnThatComparesDifferentlyIsRefusedUntilARebuild() throws {
        let test = try TestStore(.file)
        let path = try #require(test.store.path)
        try test.store.close()
        do {
            let raw = try ModelStore(path: path)
            struct Plain: StoredModel {
                var id: Int64; var label: String; var note: String?; static let tableName = "Tag"; static let primaryKey = ["id"]
            }
            try Plain.save([Plain(id: 1, label: "a"), Plain(id: 2, label: "b")], in: raw)
            try raw.close()
        }
        let refused = try ModelStore(path: path)
        let error = #expect(throws: ModelStoreError.self) { _ = try Tag.findAll(in: refused) }
        #expect(error?.code == .schemaMismatch)
        #expect(error?.column == "label")
        #expect(error?.suggestion?.contains("rebuild") == true)
        try refused.close()
        let step = MigrationStep("collate label") { try $0.rebuild(Tag.self) }
        let migrated = try ModelStore(path: path, configuration: .init(migrations: [step]))
        #expect(try Tag.findAll(where: \.label == "A", in: migrated).map(\.id) == [1])
        try migrated.close()
    }

    @Test(arguments: Backend.available) func onlyTextPropertiesTakeACollation(_ backend: Backend) throws {
        struct Wrong: StoredModel {
            var id: Int64
            var count: Int
            static let primaryKey = ["id"]
            static let columnStorage: [ColumnStorage<Wrong>] = [.text(\.count.description, collation: .caseInsensitive)]
        }
        let test = try TestStore(backend)
        let error = #expect(throws: ModelStoreError.self) { try Wrong(id: 1, count: 2).save(in: test.store) }
        #expect(error?.code == .invalidModel)
    }
}
