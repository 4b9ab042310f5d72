import Foundation
import Testing

@testable import ModelStore

/// No relationships, a composite key.
private struct AdvLedgerLine: StoredModel, Equatable {
    var book: String
    var line: Int
    var amount: Int?
    static let primaryKey = ["book", "line"]
}

/// A one-to-many whose children cascade.
private struct AdvFolder: StoredModel, Equatable {
    var id: Int64
    var name: String?
    var files: [AdvFile]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvFolder>] = [.toMany(\.files, inverse: \AdvFile.folder, deleteRule: .cascade)]
}

private struct AdvFile: StoredModel, Equatable {
    var id: Int64
    @Related var folder: AdvFolder?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvFile>] = [.toOne(\.folder, inverse: \AdvFolder.files)]
}

/// A many-to-many, eager on one side: deleting either side removes its join rows.
private struct AdvStudent: StoredModel, Equatable {
    var id: Int64
    var courses: [AdvCourse]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvStudent>] = [.toMany(\.courses, inverse: \AdvCourse.students).loading(.eager)]
}

private struct AdvCourse: StoredModel, Equatable {
    var id: Int64
    var students: [AdvStudent]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvCourse>] = [.toMany(\.students, inverse: \AdvStudent.courses)]
}

/// A one-to-many that refuses deletion while children exist.
private struct AdvVault: StoredModel, Equatable {
    var id: Int64
    var coins: [AdvCoin]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvVault>] = [.toMany(\.coins, inverse: \AdvCoin.vault, deleteRule: .deny)]
}

private struct AdvCoin: StoredModel, Equatable {
    var id: Int64
    @Related var vault: AdvVault?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvCoin>] = [.toOne(\.vault, inverse: \AdvVault.coins)]
}

/// Deletes by key, by composite key, by instance, of everything, by condition and by a
/// paged query, on models with and without relationships.
@Suite("Adversarial: deletes in every shape")
struct DeleteShapeAttackTests {
    @Test(arguments: Backend.available) func everyShapeDeletesExactlyItsRecordsOnAModelWithoutRelationships(_ backend: Backend) throws {
        let test = try TestStore(backend)
        func reset() throws {
            _ = try AdvLedgerLine.deleteAll(in: test.store)
            _ = try AdvLedgerLine.save(
                (1...6).map { AdvLedgerLine(book: $0 % 2 == 0 ? "even" : "odd", line: $0, amount: $0 * 10) }, in: test.store)
        }
        func remaining() throws -> [Int] { try AdvLedgerLine.findAll(in: test.store).map(\.line).sorted() }
        try reset()
        #expect(try AdvLedgerLine.delete(key: ["book": "odd", "line": 3], in: test.store) == 1)
        #expect(try AdvLedgerLine.delete(key: ["book": "even", "line": 3], in: test.store) == 0)
        #expect(try AdvLedgerLine(book: "even", line: 4).delete(in: test.store) == 1)
        #expect(try AdvLedgerLine(book: "odd", line: 4).delete(in: test.store) == 0)
        #expect(try remaining() == [1, 2, 5, 6])
        #expect(errorCode { _ = try AdvLedgerLine.delete(key: 1, in: test.store) } == .invalidKey)
        #expect(errorCode { _ = try AdvLedgerLine.delete(key: ["book": "odd"], in: test.store) } == .invalidKey)
        #expect(try remaining() == [1, 2, 5, 6])
        try reset()
        #expect(try AdvLedgerLine.deleteAll(where: \.book == "odd", in: test.store) == 3)
        #expect(try remaining() == [2, 4, 6])
        try reset()
        #expect(try AdvLedgerLine.filter(Column("amount") >= 40).deleteAll(in: test.store) == 3)
        #expect(try remaining() == [1, 2, 3])
        try reset()
        // A paged query deletes its page only.
        #expect(try AdvLedgerLine.all().order(.descending(\.line)).limit(2, offset: 1).deleteAll(in: test.store) == 2)
        #expect(try remaining() == [1, 2, 3, 6])
        #expect(try AdvLedgerLine.filter(\.book == "odd").order(.ascending(\.line)).page(1, rows: 1).deleteAll(in: test.store) == 1)
        #expect(try remaining() == [1, 2, 6])
        #expect(try AdvLedgerLine.all().limit(0).deleteAll(in: test.store) == 0)
        #expect(try AdvLedgerLine.deleteAll(in: test.store) == 3)
        #expect(try AdvLedgerLine.deleteAll(in: test.store) == 0)
    }

    @Test(arguments: Backend.available) func everyShapeAppliesCascadeAndCountsOnlyTheModelsOwnRecords(_ backend: Backend) throws {
        let test = try TestStore(backend)
        func reset() throws {
            _ = try AdvFile.deleteAll(in: test.store)
            _ = try AdvFolder.deleteAll(in: test.store)
            for folder in 1...4 {
                try AdvFolder(
                    id: Int64(folder), name: folder % 2 == 0 ? "even" : "odd",
                    files: (1...2).map { AdvFile(id: Int64(folder * 10 + $0)) }
                ).save(in: test.store)
            }
            try AdvFile(id: 99).save(in: test.store)  // in no folder
        }
        func state() throws -> (folders: [Int64], files: [Int64]) {
            (try AdvFolder.findAll(in: test.store).map(\.id), try AdvFile.findAll(in: test.store).map(\.id))
        }
        let deletes: [(name: String, run: () throws -> Int, count: Int, folders: [Int64])] = [
            ("key", { try AdvFolder.delete(key: 2, in: test.store) }, 1, [1, 3, 4]),
            ("missing key", { try AdvFolder.delete(key: 9, in: test.store) }, 0, [1, 2, 3, 4]),
            ("instance", { try AdvFolder(id: 3).delete(in: test.store) }, 1, [1, 2, 4]),
            ("all", { try AdvFolder.deleteAll(in: test.store) }, 4, []),
            ("where", { try AdvFolder.deleteAll(where: \.name == "even", in: test.store) }, 2, [1, 3]),
            ("query", { try AdvFolder.filter(Column("id") > 2).deleteAll(in: test.store) }, 2, [1, 2]),
            ("page", { try AdvFolder.all().order(.descending(\.id)).limit(2, offset: 1).deleteAll(in: test.store) }, 2, [1, 4]),
            ("empty page", { try AdvFolder.all().limit(0).deleteAll(in: test.store) }, 0, [1, 2, 3, 4]),
        ]
        for delete in deletes {
            try reset()
            #expect(try delete.run() == delete.count, "\(delete.name)")
            let after = try state()
            #expect(after.folders == delete.folders, "\(delete.name)")
            let files: [Int64] = delete.folders.flatMap { folder -> [Int64] in [folder * 10 + 1, folder * 10 + 2] } + [99]
            #expect(after.files == files, "\(delete.name)")
        }
    }

    @Test(arguments: Backend.available) func everyShapeRemovesJoinRowsFromEitherSideOfAManyToMany(_ backend: Backend) throws {
        let test = try TestStore(backend)
        func reset() throws {
            _ = try AdvStudent.deleteAll(in: test.store)
            _ = try AdvCourse.deleteAll(in: test.store)
            try AdvStudent(id: 1, courses: [AdvCourse(id: 1), AdvCourse(id: 2)]).save(in: test.store)
            try AdvStudent(id: 2, courses: [AdvCourse(id: 2)]).save(in: test.store)
        }
        func courses() throws -> [[Int64]] {
            try AdvStudent.findAll(in: test.store).map { $0.courses?.map(\.id) ?? [-1] }
        }
        try reset()
        #expect(try courses() == [[1, 2], [2]])
        for delete in [
            { try AdvCourse.delete(key: 2, in: test.store) },
            { try AdvCourse(id: 2).delete(in: test.store) },
            { try AdvCourse.deleteAll(where: Column("id") == 2, in: test.store) },
            { try AdvCourse.all().order(.descending(\.id)).limit(1).deleteAll(in: test.store) },
        ] as [() throws -> Int] {
            try reset()
            #expect(try delete() == 1)
            #expect(try courses() == [[1], []])
            #expect(try AdvStudent.count(in: test.store) == 2)
        }
        for delete in [
            { try AdvStudent.delete(key: 1, in: test.store) },
            { try AdvStudent(id: 1).delete(in: test.store) },
            { try AdvStudent.filter(Column("id") == 1).deleteAll(in: test.store) },
        ] as [() throws -> Int] {
            try reset()
            #expect(try delete() == 1)
            #expect(try AdvCourse.findAll(loading: .direct, in: test.store).map { $0.students?.map(\.id) ?? [-1] } == [[], [2]])
        }
        try reset()
        #expect(try AdvStudent.deleteAll(in: test.store) == 2)
        #expect(try AdvCourse.findAll(loading: .direct, in: test.store).map { $0.students?.count } == [0, 0])
    }

    @Test(arguments: Backend.available) func denyRefusesEveryShapeAndLeavesEverythingInPlace(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try AdvVault(id: 1, coins: [AdvCoin(id: 1)]).save(in: test.store)
        try AdvVault(id: 2, coins: []).save(in: test.store)
        for delete in [
            { try AdvVault.delete(key: 1, in: test.store) },
            { try AdvVault(id: 1).delete(in: test.store) },
            { try AdvVault.deleteAll(in: test.store) },
            { try AdvVault.deleteAll(where: Column("id") >= 1, in: test.store) },
            { try AdvVault.all().order(.ascending(\.id)).limit(1).deleteAll(in: test.store) },
        ] as [() throws -> Int] {
            #expect(errorCode { _ = try delete() } == .constraintViolation)
            #expect(try AdvVault.count(in: test.store) == 2)
            #expect(try AdvCoin.count(in: test.store) == 1)
        }
        // A vault without coins goes, by any shape.
        #expect(try AdvVault.all().order(.descending(\.id)).limit(1).deleteAll(in: test.store) == 1)
        #expect(try AdvVault.findAll(in: test.store).map(\.id) == [1])
    }
}
