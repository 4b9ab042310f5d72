import Foundation
import Testing
@testable import ModelStore

private struct Memo: StoredModel, Equatable {
    var id: Int64?
    var text: String
    var tag: String?
    static let primaryKey = ["id"]
}

private struct Account: StoredModel, Equatable {
    var id: Int64?
    var email: String
    var name: String?
    static let primaryKey = ["id"]
    static let indexes: [TableIndex<Account>] = [.unique(\.email)]
}

private struct Folder: StoredModel, Equatable {
    var id: Int64?
    var name: String
    var files: [Document]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Folder>] = [.toMany(\.files, inverse: \Document.folder)]
}

private struct Document: StoredModel, Equatable {
    var id: Int64?
    var title: String
    var folder: Folder?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Document>] = [.toOne(\.folder, inverse: \Folder.files)]
}

private struct PairKey: StoredModel {
    var a: Int64?
    var b: Int64
    static let primaryKey = ["a", "b"]
}

private struct TextKey: StoredModel {
    var code: String?
    static let primaryKey = ["code"]
}

/// Keys SQLite assigns (`var id: Int64?` saved as nil) and saves that return the stored record.
@Suite struct AssignedKeyTests {
    @Test(arguments: StoreKind.everywhere)
    func aNilKeyIsAssignedAndHandedBack(_ kind: StoreKind) throws {
        let test = try TestStore(kind)
        let first = try Memo(id: nil, text: "one").saved(in: test.store)
        let second = try Memo(id: nil, text: "one").saved(in: test.store)
        #expect(first.id == 1)
        #expect(second.id == 2)
        #expect(try Memo.find(key: 2, in: test.store) == Memo(id: 2, text: "one"))
        #expect(try Memo(id: nil, text: "three").save(in: test.store) == .inserted)
        #expect(try Memo.all().count(in: test.store) == 3)
        // A key the caller chose still upserts.
        #expect(try Memo(id: 2, text: "two").save(in: test.store) == .updated)
        #expect(try Memo.find(key: 2, in: test.store)?.text == "two")
    }

    @Test(arguments: Backend.available) func batchesReturnTheAssignedKeysInOrderAndNeverMergeKeylessElements(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Memo(id: 10, text: "ten").save(in: test.store)
        let outcome = try Memo.save(
            [Memo(id: nil, text: "a"), Memo(id: 10, text: "ten again"), Memo(id: nil, text: "a"), Memo(id: nil, text: "c")], in: test.store)
        #expect(outcome.assignedKeys == [11, 12, 13])
        #expect(outcome.inserted == 3)
        #expect(outcome.updated == 1)
        #expect(try Memo.findAll(where: \.text == "a", in: test.store).map(\.id) == [11, 12])
    }

    @Test(arguments: Backend.available) func savedReturnsMergedValuesInOneStatement(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Snack(snackId: 1, name: "Pocky", taste: "sweet", price: 1).save(in: test.store)
        test.resetSQL()
        let merged = try Snack(snackId: 1, price: 2).saved(in: test.store)
        #expect(merged.name == "Pocky")
        #expect(merged.price == 2)
        #expect(test.sql.filter { $0.contains("RETURNING") }.count == 1)
        #expect(!test.sql.contains { $0.hasPrefix("SELECT") })
        // Nothing changes: SQLite returns no row, and the record is read by key.
        let same = try Snack(snackId: 1, price: 2).saved(in: test.store)
        #expect(same == merged)
        let cleared = try Snack(snackId: 1).saved(clearing: [\.taste], in: test.store)
        #expect(cleared.taste == nil)
        #expect(cleared.name == "Pocky")
    }

    /// A server's sequence spends a value on every insert it tries, merged or not, so its next
    /// assigned key may skip some (documented in *Running on PostgreSQL*); SQLite takes the
    /// largest key plus one.
    @Test(arguments: Backend.available) func aUniqueIndexStillFindsTheRecordOfAKeylessModel(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let ann = try Account(id: nil, email: "ann@example.org", name: "Ann").saved(in: test.store)
        let again = try Account(id: nil, email: "ann@example.org", name: "Annie").saved(in: test.store)
        #expect(again.id == ann.id)
        #expect(again.name == "Annie")
        let unchanged = try Account(id: nil, email: "ann@example.org").saved(in: test.store)
        #expect(unchanged.id == ann.id)
        #expect(try Account.all().count(in: test.store) == 1)
        let batch = try Account.save(
            [Account(id: nil, email: "ann@example.org"), Account(id: nil, email: "bob@example.org")], in: test.store)
        #expect(batch.assignedKeys.first == ann.id)
        #expect(batch.assignedKeys.count == 2 && batch.assignedKeys[1] > ann.id!)
        if backend == .sqlite { #expect(batch.assignedKeys == [ann.id!, ann.id! + 1]) }
        #expect(try Account.find(key: batch.assignedKeys[1], in: test.store)?.email == "bob@example.org")
        let duplicate = #expect(throws: ModelStoreError.self) { try Account(id: nil, email: "bob@example.org").insert(in: test.store) }
        #expect(duplicate?.code == .alreadyExists)
    }

    @Test(arguments: Backend.available) func insertAssignsAndUpdateAndDeleteRefuseAKeylessModel(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Memo(id: nil, text: "x").insert(in: test.store)
        #expect(try Memo.find(key: 1, in: test.store)?.text == "x")
        let update = #expect(throws: ModelStoreError.self) { try Memo(id: nil, text: "y").update(in: test.store) }
        #expect(update?.code == .invalidKey)
        #expect(throws: ModelStoreError.self) { _ = try Memo(id: nil, text: "x").delete(in: test.store) }
        #expect(try Memo.all().count(in: test.store) == 1)
    }

    @Test(arguments: Backend.available) func aGraphOfKeylessModelsIsLinkedByTheAssignedKeys(_ backend: Backend) throws {
        let test = try TestStore(backend)
        var folder = Folder(id: nil, name: "Inbox")
        folder.files = [Document(id: nil, title: "a"), Document(id: nil, title: "b")]
        let stored = try folder.saved(in: test.store)
        let id = try #require(stored.id)
        let loaded = try Folder.find(key: id, loading: .direct, in: test.store)
        #expect(loaded?.files?.map(\.title).sorted() == ["a", "b"])
        #expect(loaded?.files?.allSatisfy { $0.id != nil } == true)
        var document = Document(id: nil, title: "c")
        document.folder = Folder(id: nil, name: "Outbox")
        let batch = try Document.save([document, Document(id: nil, title: "d")], in: test.store)
        #expect(batch.assignedKeys == [3, 4])
        #expect(try Document.find(key: 3, loading: .direct, in: test.store)?.folder?.name == "Outbox")
        // A keyless reference names no stored record.
        var orphan = Document(id: nil, title: "e")
        orphan.folder = Folder(id: nil, name: "nowhere")
        let missing = #expect(throws: ModelStoreError.self) { try orphan.save(related: .mustExist, in: test.store) }
        #expect(missing?.code == .notFound)
    }

    @Test(arguments: Backend.available) func onlyOneIntegerKeyMayBeOptional(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let composite = #expect(throws: ModelStoreError.self) { try PairKey(a: nil, b: 1).save(in: test.store) }
        #expect(composite?.code == .invalidModel)
        let text = #expect(throws: ModelStoreError.self) { try TextKey(code: nil).save(in: test.store) }
        #expect(text?.code == .invalidModel)
        #expect(text?.column == "code")
    }

    @Test(arguments: Backend.available) func twoStoresOnOneFileAssignDistinctKeysToEveryKeylessSave(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let other = try test.later()
        defer { try? other.close() }
        let keys = Locked<[Int64]>([])
        onThreads(2) { side in
            let store = side == 0 ? test.store : other
            for number in 0..<200 {
                if let id = try? Memo(id: nil, text: "\(side)-\(number)").saved(in: store).id { keys.withLock { $0.append(id) } }
            }
        }
        #expect(keys.current.count == 400)
        #expect(Set(keys.current).count == 400)
        #expect(try Memo.all().count(in: test.store) == 400)
        for id in keys.current.prefix(20) { #expect(try Memo.find(key: id, in: other) != nil) }
    }

    @Test(arguments: Backend.available) func everyCallForm(_ backend: Backend) async throws {
        let test = try TestStore(backend)
        let viaAsync = try await Memo(id: nil, text: "async").saved(in: test.store)
        #expect(viaAsync.id == 1)
        let viaCompletion: Memo = try await withCheckedThrowingContinuation { continuation in
            Memo(id: nil, text: "completion").saved(in: test.store) { continuation.resume(with: $0.mapError { $0 as any Error }) }
        }
        #expect(viaCompletion.id == 2)
        let batch = try await Memo.save([Memo(id: nil, text: "b")], in: test.store)
        #expect(batch.assignedKeys == [3])
    }
}
