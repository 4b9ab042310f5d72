import Foundation
import Testing
@testable import ModelStore

// `A.b_c ↔ Z.q_r` and `A_b.c ↔ Z_q.r`: both derive the join table A_b_c__Z_q_r.
struct CollideA: StoredModel, Equatable {
    var id: Int64
    var b_c: [CollideZ]?
    static let primaryKey = ["id"]
    static let tableName = "A"
    static let relationships: [Relationship<CollideA>] = [.toMany(\.b_c, inverse: \CollideZ.q_r)]
}

struct CollideZ: StoredModel, Equatable {
    var id: Int64
    var q_r: [CollideA]?
    static let primaryKey = ["id"]
    static let tableName = "Z"
    static let relationships: [Relationship<CollideZ>] = [.toMany(\.q_r, inverse: \CollideA.b_c)]
}

struct CollideAB: StoredModel, Equatable {
    var id: Int64
    var c: [CollideZQ]?
    static let primaryKey = ["id"]
    static let tableName = "A_b"
    static let relationships: [Relationship<CollideAB>] = [.toMany(\.c, inverse: \CollideZQ.r)]
}

struct CollideZQ: StoredModel, Equatable {
    var id: Int64
    var r: [CollideAB]?
    static let primaryKey = ["id"]
    static let tableName = "Z_q"
    static let relationships: [Relationship<CollideZQ>] = [.toMany(\.r, inverse: \CollideAB.c)]
}

/// The same collision spelled with other letter cases: SQLite's names ignore case.
struct CollideUpper: StoredModel, Equatable {
    var id: Int64
    var C: [CollideZQUpper]?
    static let primaryKey = ["id"]
    static let tableName = "a_B"
    static let relationships: [Relationship<CollideUpper>] = [.toMany(\.C, inverse: \CollideZQUpper.R)]
}

struct CollideZQUpper: StoredModel, Equatable {
    var id: Int64
    var R: [CollideUpper]?
    static let primaryKey = ["id"]
    static let tableName = "z_Q"
    static let relationships: [Relationship<CollideZQUpper>] = [.toMany(\.R, inverse: \CollideUpper.C)]
}

/// Derived names (join tables, their indexes) that two declarations share are refused before
/// anything is created, so their records can never mix.
@Suite("Reliability: derived names never collide")
struct DerivedNameTests {
    @Test(arguments: Backend.available, [false, true])
    func twoManyToManyRelationshipsThatDeriveOneJoinTableAreRefused(_ backend: Backend, _ otherCase: Bool) throws {
        let test = try TestStore(.file, or: backend)
        var a = CollideA(id: 1)
        a.b_c = [CollideZ(id: 1)]
        try a.save(in: test.store)
        let error = try #require(throws: ModelStoreError.self) {
            if otherCase {
                var other = CollideUpper(id: 1)
                other.C = [CollideZQUpper(id: 2)]
                try other.save(in: test.store)
            } else {
                var other = CollideAB(id: 1)
                other.c = [CollideZQ(id: 2)]
                try other.save(in: test.store)
            }
        }
        #expect(error.code == .invalidModel)
        #expect(error.message.lowercased().contains("a_b_c__z_q_r"))
        // The first relationship's links are intact, and nothing of the second was written.
        #expect(try CollideA.find(key: 1, loading: .all, in: test.store)?.b_c?.map(\.id) == [1])
        #expect(try test.rawRows(#"SELECT count(*) FROM "A_b_c__Z_q_r""#) == [[.integer(1)]])
        #expect(try test.tableNames().filter { ["a_b", "z_q"].contains($0.lowercased()) } == [])
        // Reading the refused model is refused the same way, never an answer from mixed links.
        #expect(throws: ModelStoreError.self) { try CollideAB.findAll(loading: .all, in: test.store) }
    }

    @Test(arguments: Backend.available) func eachSideAloneWorksInItsOwnStore(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        var other = CollideAB(id: 1)
        other.c = [CollideZQ(id: 2)]
        try other.save(in: test.store)
        #expect(try CollideZQ.find(key: 2, loading: .all, in: test.store)?.r?.map(\.id) == [1])
    }
}
