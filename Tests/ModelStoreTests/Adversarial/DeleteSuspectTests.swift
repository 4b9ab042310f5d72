import Foundation
import Testing

@testable import ModelStore

/// A self-referential tree with the default rule (nullify).
private struct AdvBranch: StoredModel, Equatable {
    var id: Int64
    @Related var parent: AdvBranch?
    var children: [AdvBranch]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvBranch>] = [
        .toOne(\.parent, inverse: \AdvBranch.children),
        .toMany(\.children, inverse: \AdvBranch.parent),
    ]
}

/// A self-referential tree whose children cascade.
private struct AdvTwig: StoredModel, Equatable {
    var id: Int64
    @Related var parent: AdvTwig?
    var children: [AdvTwig]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvTwig>] = [
        .toOne(\.parent, inverse: \AdvTwig.children),
        .toMany(\.children, inverse: \AdvTwig.parent, deleteRule: .cascade),
    ]
}

@Suite("Adversarial: deletes whose rules change the rows their condition selects")
struct DeleteSuspectTests {
    /// 1 ← 2 ← 3: "every branch with a parent" is 2 and 3. Nullifying 2's children first must
    /// not let 3 escape the delete.
    @Test(arguments: Backend.available) func aConditionOnTheLinkDeletesEveryRecordItSelectedBeforeTheRulesRan(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try AdvBranch(id: 1, children: [AdvBranch(id: 2, children: [AdvBranch(id: 3)])]).save(in: test.store)
        #expect(try test.rawRows(#"SELECT "id" FROM "AdvBranch" WHERE "parent_id" > 0 ORDER BY "id""#) == [[.integer(2)], [.integer(3)]])
        let deleted = try AdvBranch.deleteAll(where: Column("parent_id") > 0, in: test.store)
        let left = try AdvBranch.findAll(in: test.store).map(\.id)
        #expect(deleted == 2)
        #expect(left == [1])
    }

    /// 1 ← 2, and 5 alone. The first two by id are 1 and 2; cascading from 1 deletes 2, and the
    /// page must not then slide on to 5, which it never selected.
    @Test(arguments: Backend.available) func aPagedDeleteDoesNotSlideOntoARecordItNeverSelected(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try AdvTwig(id: 1, children: [AdvTwig(id: 2)]).save(in: test.store)
        try AdvTwig(id: 5).save(in: test.store)
        let deleted = try AdvTwig.all().order(.ascending(\.id)).limit(2).deleteAll(in: test.store)
        let left = try AdvTwig.findAll(in: test.store).map(\.id)
        #expect(left == [5])
        #expect(deleted == 2)
    }
}
