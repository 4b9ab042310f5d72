import Foundation
import Testing
@testable import ModelStore

/// Two models of one program that name the same table.
private struct Doghouse: StoredModel, Equatable {
    var id: Int64
    var name: String
    static let primaryKey = ["id"]
    static let tableName = "SharedKennel"
}

private struct DoghouseSummary: StoredModel, Equatable {
    var id: Int64
    var size: Int?
    static let primaryKey = ["id"]
    static let tableName = "SharedKennel"
}

/// The same name in another letter case: SQLite's names ignore case.
private struct DoghouseLower: StoredModel, Equatable {
    var id: Int64
    static let primaryKey = ["id"]
    static let tableName = "sharedkennel"
}

/// Two types with one name, nested in different scopes: both take the table `Crate`.
private enum Shelter {
    struct Crate: StoredModel, Equatable {
        var id: Int64
        var label: String
        static let primaryKey = ["id"]
    }
}

private enum Warehouse {
    struct Crate: StoredModel, Equatable {
        var id: Int64
        var weight: Double?
        static let primaryKey = ["id"]
    }
}

/// The result a completion-form call delivers.
private func delivered<T: Sendable>(_ call: (@escaping @Sendable (Result<T, ModelStoreError>) -> Void) -> Void) async -> Result<
    T, ModelStoreError
> {
    await withCheckedContinuation { continuation in call { continuation.resume(returning: $0) } }
}

private func thrown(_ body: () throws -> Void) -> ModelStoreError? {
    do {
        try body()
        return nil
    } catch {
        return error as? ModelStoreError
    }
}

private func thrown(_ body: () async throws -> Void) async -> ModelStoreError? {
    do {
        try await body()
        return nil
    } catch {
        return error as? ModelStoreError
    }
}

/// Issue item 9: two models that declare one table are noticed. In one store the second is
/// refused, naming both, before anything is read or written; and a save that fails for a
/// column another model declares never suggests dropping it.
@Suite("Reliability: one table, one model")
struct SharedTableNameTests {
    @Test(arguments: StoreKind.everywhere)
    func aSecondModelDeclaringATableAnotherModelDeclaresIsRefusedNamingBothInEveryForm(kind: StoreKind) async throws {
        let test = try TestStore(kind)
        let store = test.store
        try await Doghouse(id: 1, name: "North").save(in: store)
        let columns = try test.tableColumns("SharedKennel").map(\.name)
        let errors: [ModelStoreError?] = [
            thrown { try DoghouseSummary(id: 2, size: 3).save(in: store) },
            await delivered { DoghouseSummary(id: 2, size: 3).save(in: store, completion: $0) }.failureError,
            await thrown { _ = try await DoghouseSummary(id: 2, size: 3).save(in: store) },
            thrown { _ = try DoghouseSummary.findAll(in: store) },
            await delivered { DoghouseSummary.count(in: store, completion: $0) }.failureError,
            await thrown { _ = try await DoghouseSummary.find(key: 1, in: store) },
            thrown { try DoghouseLower(id: 3).save(in: store) },
            thrown { _ = try store.transaction { try DoghouseSummary.count(in: store) } },
        ]
        for error in errors {
            #expect(error?.code == .invalidModel, "\(String(describing: error))")
            #expect(error?.message.contains("Doghouse") == true)
            #expect(error?.message.contains("DoghouseSummary") == true || error?.message.contains("DoghouseLower") == true)
            #expect(error?.suggestion?.contains("tableName") == true)
            #expect(error?.suggestion?.contains("DROP") == false)
        }
        // Nothing changed: the first model's table and record, and the first model goes on.
        #expect(try test.tableColumns("SharedKennel").map(\.name) == columns)
        #expect(try await Doghouse.findAll(in: store) == [Doghouse(id: 1, name: "North")])
        try await Doghouse(id: 2, name: "South").save(in: store)
        #expect(try await Doghouse.count(in: store) == 2)
    }

    @Test(arguments: Backend.available)
    func whicheverModelIsUsedFirstOwnsTheTableEvenByAReadAndTypesOfOneNameAreToldApart(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        // A read of the second model first (no table yet: a stand-in answers it).
        #expect(try DoghouseSummary.count(in: store) == 0)
        let error = try #require(throws: ModelStoreError.self) { try Doghouse(id: 1, name: "North").save(in: store) }
        #expect(error.code == .invalidModel)
        #expect(error.model == "Doghouse")
        #expect(try !test.tableNames().contains("SharedKennel"))
        // Two types both called Crate: the message names each with its scope.
        try Shelter.Crate(id: 1, label: "a").save(in: store)
        let crate = try #require(throws: ModelStoreError.self) { try Warehouse.Crate(id: 2, weight: 1).save(in: store) }
        #expect(crate.code == .invalidModel)
        #expect(crate.message.contains("Shelter.Crate") && crate.message.contains("Warehouse.Crate"), "\(crate.message)")
        // Each alone, in a store of its own, works.
        let other = try TestStore(backend)
        try Warehouse.Crate(id: 2, weight: 1).save(in: other.store)
        try Doghouse(id: 1, name: "North").save(in: other.store)
        #expect(try Warehouse.Crate.count(in: other.store) == 1)
    }

    @Test(arguments: Backend.available)
    func aSaveRefusedForAColumnAnotherModelDeclaresNeverSuggestsDroppingIt(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try Doghouse(id: 1, name: "North").save(in: test.store)
        // Another store on the file, using the other model: the table's NOT NULL `name` is
        // Doghouse's, so DoghouseSummary cannot insert, and dropping it would break Doghouse.
        let second = try test.later()
        let error = try #require(throws: ModelStoreError.self) { try DoghouseSummary(id: 2, size: 3).save(in: second) }
        #expect(error.code == .schemaMismatch)
        #expect(error.column == "name")
        #expect(error.message.contains("Doghouse"))
        #expect(error.suggestion?.contains("DROP") == false, "\(String(describing: error.suggestion))")
        #expect(error.suggestion?.contains("tableName") == true)
        #expect(try Doghouse.findAll(in: test.store) == [Doghouse(id: 1, name: "North")])
    }
}

extension Result {
    fileprivate var failureError: ModelStoreError? {
        if case .failure(let error) = self { return error as? ModelStoreError }
        return nil
    }
}
