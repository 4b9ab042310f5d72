import Foundation
import Testing
@testable import ModelStore

private struct Veto: Error, Equatable {
    let reason: String
}

/// What the callbacks did, written by the callbacks into the same store (and so into the
/// same transaction as the call that ran them).
private struct Event: StoredModel, Equatable {
    var id: Int64?
    var what: String
    static let primaryKey = ["id"]
}

private struct Fort: StoredModel, Equatable {
    var id: Int64
    var name: String
    var guards: [Sentry]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Fort>] = [.toMany(\.guards, inverse: \Sentry.fort, deleteRule: .cascade)]
}

private struct Sentry: StoredModel, Equatable {
    var id: Int64
    var name: String
    var fort: Fort?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Sentry>] = [.toOne(\.fort, inverse: \Fort.guards)]
}

extension Sentry: SaveCallbacks, DeleteCallbacks {
    func willSave(in store: ModelStore) throws {
        if name == "veto" { throw Veto(reason: "no vetoes") }
        try Event(id: nil, what: "willSave \(id)").save(in: store)
    }

    func didSave(in store: ModelStore, outcome: SaveOutcome) throws {
        // Calls back into the store: a read and a write, inside the same transaction.
        let count = try Sentry.count(in: store)
        try Event(id: nil, what: "didSave \(id) \(outcome) \(count > 0)").save(in: store)
        if name == "late veto" { throw Veto(reason: "too late") }
    }

    func willDelete(in store: ModelStore) throws {
        if name == "keep" { throw Veto(reason: "kept") }
        try Event(id: nil, what: "willDelete \(id)").save(in: store)
    }

    func didDelete(in store: ModelStore) throws {
        #expect(try Sentry.find(key: id, in: store) == nil)
        try Event(id: nil, what: "didDelete \(id)").save(in: store)
    }
}

/// A plain model (no relationships) with callbacks: the plain write and delete paths.
private struct Lamp: StoredModel, Equatable {
    var id: Int64
    var lit: Bool
    static let primaryKey = ["id"]
}

extension Lamp: SaveCallbacks, DeleteCallbacks {
    func willSave(in store: ModelStore) throws { try Event(id: nil, what: "willSave lamp \(id)").save(in: store) }
    func didSave(in store: ModelStore, outcome: SaveOutcome) throws {
        try Event(id: nil, what: "didSave lamp \(id) \(outcome)").save(in: store)
    }
    func willDelete(in store: ModelStore) throws { try Event(id: nil, what: "willDelete lamp \(id)").save(in: store) }
    func didDelete(in store: ModelStore) throws { try Event(id: nil, what: "didDelete lamp \(id)").save(in: store) }
}

@Suite struct CallbackTests {
    private func events(_ store: ModelStore) throws -> [String] {
        try Event.all().order(.ascending(\.id)).findAll(in: store).map(\.what)
    }

    @Test(arguments: Backend.available) func saveCallbacksRunAroundEveryWritePathInTheWritesTransaction(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        try Lamp(id: 1, lit: true).save(in: store)
        #expect(try events(store) == ["willSave lamp 1", "didSave lamp 1 inserted"])
        try Lamp(id: 1, lit: true).save(in: store)
        try Lamp(id: 1, lit: false).update(in: store)
        _ = try Lamp.save([Lamp(id: 2, lit: true), Lamp(id: 3, lit: true)], in: store)
        _ = try Lamp.save([Lamp(id: 3, lit: false)], matching: MatchKeys(varying: [\Lamp.id]), in: store)
        try Lamp(id: 2, lit: false).save(matching: \.id == 2, in: store)
        _ = try Lamp(id: 4, lit: true).saved(in: store)
        #expect(
            try events(store).dropFirst(2) == [
                "willSave lamp 1", "didSave lamp 1 unchanged", "willSave lamp 1", "didSave lamp 1 updated",
                "willSave lamp 2", "didSave lamp 2 inserted", "willSave lamp 3", "didSave lamp 3 inserted",
                "willSave lamp 3", "didSave lamp 3 updated", "willSave lamp 2", "didSave lamp 2 updated",
                "willSave lamp 4", "didSave lamp 4 inserted",
            ])
    }

    @Test(arguments: Backend.available) func aGraphSaveCallsTheCallbacksOfEveryWrittenModelAndCanCallBackIntoTheStore(_ backend: Backend)
        throws
    {
        let test = try TestStore(backend)
        let store = test.store
        var fort = Fort(id: 1, name: "Keep")
        fort.guards = [Sentry(id: 1, name: "Ann"), Sentry(id: 2, name: "Bo")]
        try fort.save(in: store)
        #expect(
            try events(store) == [
                "willSave 1", "didSave 1 inserted true", "willSave 2", "didSave 2 inserted true",
            ])
    }

    @Test(arguments: Backend.available) func aThrowingWillSaveAbortsTheWholeCall(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        let batch = [Sentry(id: 1, name: "Ann"), Sentry(id: 2, name: "veto"), Sentry(id: 3, name: "Cy")]
        let error = #expect(throws: ModelStoreError.self) { _ = try Sentry.save(batch, in: store) }
        #expect(error?.code == .callbackFailed)
        #expect(error?.underlying as? Veto == Veto(reason: "no vetoes"))
        #expect(error?.key == "id = 2")
        #expect(try Sentry.count(in: store) == 0)
        #expect(try events(store).isEmpty, "the callbacks' own writes rolled back with the call")
        // A throwing didSave rolls back the record it followed, and everything before it.
        var fort = Fort(id: 1, name: "Keep")
        fort.guards = [Sentry(id: 4, name: "Di"), Sentry(id: 5, name: "late veto")]
        let late = #expect(throws: ModelStoreError.self) { try fort.save(in: store) }
        #expect(late?.code == .callbackFailed)
        #expect(try Fort.count(in: store) == 0)
        #expect(try Sentry.count(in: store) == 0)
        #expect(try events(store).isEmpty)
    }

    @Test(arguments: Backend.available) func deleteCallbacksRunForEveryDeletedRecordCascadesIncluded(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        var fort = Fort(id: 1, name: "Keep")
        fort.guards = [Sentry(id: 1, name: "Ann"), Sentry(id: 2, name: "Bo")]
        try fort.save(in: store)
        try Sentry(id: 3, name: "Cy").save(in: store)
        try Sentry(id: 4, name: "Di").save(in: store)
        try Sentry(id: 5, name: "Ed").save(in: store)
        try Event.deleteAll(in: store)

        try Sentry(id: 3, name: "Cy").delete(in: store)
        try Sentry.delete(key: 4, in: store)
        try Sentry.deleteAll(where: \.name == "Ed", in: store)
        #expect(try events(store) == ["willDelete 3", "didDelete 3", "willDelete 4", "didDelete 4", "willDelete 5", "didDelete 5"])
        try Event.deleteAll(in: store)
        // The cascade from the fort removes its guards, each with its callbacks.
        try Fort.delete(key: 1, in: store)
        #expect(try events(store) == ["willDelete 1", "willDelete 2", "didDelete 1", "didDelete 2"])
        #expect(try Sentry.count(in: store) == 0)

        // The plain path (no relationships): by key, by condition and all.
        _ = try Lamp.save([Lamp(id: 1, lit: true), Lamp(id: 2, lit: true), Lamp(id: 3, lit: false)], in: store)
        try Event.deleteAll(in: store)
        try Lamp.delete(key: 1, in: store)
        try Lamp.deleteAll(where: \.lit == false, in: store)
        try Lamp.deleteAll(in: store)
        #expect(
            try events(store) == [
                "willDelete lamp 1", "didDelete lamp 1", "willDelete lamp 3", "didDelete lamp 3", "willDelete lamp 2", "didDelete lamp 2",
            ])
    }

    @Test(arguments: Backend.available) func aThrowingWillDeleteKeepsEveryRecord(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        var fort = Fort(id: 1, name: "Keep")
        fort.guards = [Sentry(id: 1, name: "Ann"), Sentry(id: 2, name: "keep")]
        try fort.save(in: store)
        try Event.deleteAll(in: store)
        let error = #expect(throws: ModelStoreError.self) { try Fort.delete(key: 1, in: store) }
        #expect(error?.code == .callbackFailed)
        #expect(error?.underlying as? Veto == Veto(reason: "kept"))
        #expect(try Fort.count(in: store) == 1)
        #expect(try Sentry.count(in: store) == 2)
        #expect(try events(store).isEmpty)
    }

    @Test(arguments: Backend.available) func callbacksRunInTheAsyncAndCompletionFormsWithoutDeadlock(_ backend: Backend) async throws {
        let test = try TestStore(backend)
        let store = test.store
        try await Sentry(id: 1, name: "Ann").save(in: store)
        let done: Result<SaveOutcome, ModelStoreError> = await withCheckedContinuation { continuation in
            Sentry(id: 2, name: "Bo").save(in: store) { continuation.resume(returning: $0) }
        }
        #expect(try done.get() == .inserted)
        try await Sentry.delete(key: 1, in: store)
        #expect(
            try await Event.all().order(.ascending(\.id)).findAll(in: store).map(\.what) == [
                "willSave 1", "didSave 1 inserted true", "willSave 2", "didSave 2 inserted true", "willDelete 1", "didDelete 1",
            ])
    }
}
