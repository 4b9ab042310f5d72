import Foundation
import Testing
@testable import ModelStore

private struct Parcel: StoredModel, Equatable {
    var id: Int64
    var label: String
    var weight: Double?
    var stops: [String]
    static let primaryKey = ["id"]
}

/// `#Predicate` and `SortDescriptor` at every call site that takes a condition or an
/// ordering, in the synchronous, completion-handler and async forms; and the explicit
/// in-memory evaluation of what does not translate.
@Suite struct PredicateCallSiteTests {
    private static let parcels = (1...12).map { number in
        Parcel(
            id: Int64(number), label: ["box", "Box", "crate", "bag"][number % 4], weight: number % 3 == 0 ? nil : Double(number),
            stops: Array(["a", "b", "c"].prefix(number % 4)))
    }

    private func store(_ backend: Backend) throws -> TestStore {
        let test = try TestStore(backend)
        _ = try Parcel.save(Self.parcels, in: test.store)
        return test
    }

    private static let heavy = #Predicate<Parcel> { ($0.weight ?? 0) > 6 }
    private static var heavyIDs: [Int64] { parcels.filter { ($0.weight ?? 0) > 6 }.map(\.id) }

    @Test(arguments: Backend.available) func findersCountsAndExistsTakeAPredicate(_ backend: Backend) throws {
        let test = try store(backend)
        let store = test.store
        let byWeight = [SortDescriptor(\Parcel.weight, order: .reverse)]
        let expectedByWeight = Self.parcels.filter { ($0.weight ?? 0) > 6 }.sorted(using: byWeight).map(\.id)
        #expect(try Parcel.findAll(where: Self.heavy, in: store).map(\.id) == Self.heavyIDs)
        #expect(try Parcel.findAll(where: Self.heavy, orderBy: [.descending(\.weight)], in: store).map(\.id) == expectedByWeight)
        #expect(try Parcel.findAll(where: Self.heavy, orderBy: byWeight, in: store).map(\.id) == expectedByWeight)
        #expect(try Parcel.findAll(where: \.weight > 6, orderBy: byWeight, in: store).map(\.id) == expectedByWeight)
        #expect(try Parcel.findFirst(where: Self.heavy, in: store)?.id == Self.heavyIDs.first)
        #expect(try Parcel.findFirst(where: Self.heavy, orderBy: byWeight, in: store)?.id == expectedByWeight.first)
        #expect(try Parcel.findFirst(where: \.weight > 6, orderBy: byWeight, in: store)?.id == expectedByWeight.first)
        #expect(try Parcel.count(where: Self.heavy, in: store) == Self.heavyIDs.count)
        #expect(try Parcel.exists(where: Self.heavy, in: store))
        #expect(try !Parcel.exists(where: #Predicate { $0.label == "none" }, in: store))
        #expect(
            try Parcel.order([SortDescriptor(\Parcel.weight)]).findAll(in: store).map(\.id)
                == Self.parcels.sorted(using: [SortDescriptor(\Parcel.weight)]).map(\.id))
        #expect(
            try Parcel.all().order(SortDescriptor(\Parcel.weight), SortDescriptor(\Parcel.id, order: .reverse)).findAll(in: store).map(\.id)
                == Self.parcels.sorted(using: [SortDescriptor(\Parcel.weight), SortDescriptor(\Parcel.id, order: .reverse)]).map(\.id))
    }

    @Test(arguments: Backend.available) func findersCountsAndExistsTakeAPredicateAsyncAndWithACompletionHandler(_ backend: Backend)
        async throws
    {
        let test = try store(backend)
        let store = test.store
        let byWeight = [SortDescriptor(\Parcel.weight, order: .reverse)]
        let expectedByWeight = Self.parcels.filter { ($0.weight ?? 0) > 6 }.sorted(using: byWeight).map(\.id)
        #expect(try await Parcel.findAll(where: Self.heavy, in: store).map(\.id) == Self.heavyIDs)
        #expect(try await Parcel.findAll(where: Self.heavy, orderBy: byWeight, in: store).map(\.id) == expectedByWeight)
        #expect(try await Parcel.findAll(where: \.weight > 6, orderBy: byWeight, in: store).map(\.id) == expectedByWeight)
        #expect(try await Parcel.findFirst(where: Self.heavy, in: store)?.id == Self.heavyIDs.first)
        #expect(try await Parcel.findFirst(where: Self.heavy, orderBy: byWeight, in: store)?.id == expectedByWeight.first)
        #expect(try await Parcel.findFirst(where: \.weight > 6, orderBy: byWeight, in: store)?.id == expectedByWeight.first)
        #expect(try await Parcel.count(where: Self.heavy, in: store) == Self.heavyIDs.count)
        #expect(try await Parcel.exists(where: Self.heavy, in: store))

        // completion handlers
        func completed<T: Sendable>(_ call: (@escaping @Sendable (Result<T, ModelStoreError>) -> Void) -> Void) async throws -> T {
            try await withCheckedThrowingContinuation { continuation in call { continuation.resume(with: $0.mapError { $0 as any Error }) }
            }
        }
        #expect(try await completed { Parcel.findAll(where: Self.heavy, in: store, completion: $0) }.map(\.id) == Self.heavyIDs)
        #expect(
            try await completed { Parcel.findAll(where: Self.heavy, orderBy: byWeight, in: store, completion: $0) }.map(\.id)
                == expectedByWeight)
        #expect(
            try await completed { Parcel.findAll(where: \.weight > 6, orderBy: byWeight, in: store, completion: $0) }.map(\.id)
                == expectedByWeight)
        #expect(try await completed { Parcel.findFirst(where: Self.heavy, in: store, completion: $0) }?.id == Self.heavyIDs.first)
        #expect(
            try await completed { Parcel.findFirst(where: Self.heavy, orderBy: byWeight, in: store, completion: $0) }?.id
                == expectedByWeight.first)
        #expect(
            try await completed { Parcel.findFirst(where: \.weight > 6, orderBy: byWeight, in: store, completion: $0) }?.id
                == expectedByWeight.first)
        #expect(try await completed { Parcel.count(where: Self.heavy, in: store, completion: $0) } == Self.heavyIDs.count)
        #expect(try await completed { Parcel.exists(where: Self.heavy, in: store, completion: $0) })
    }

    @Test(arguments: Backend.available) func changesTakeAPredicateInEveryForm(_ backend: Backend) async throws {
        func completed<T: Sendable>(_ call: (@escaping @Sendable (Result<T, ModelStoreError>) -> Void) -> Void) async throws -> T {
            try await withCheckedThrowingContinuation { continuation in call { continuation.resume(with: $0.mapError { $0 as any Error }) }
            }
        }
        let light = #Predicate<Parcel> { $0.weight != nil && ($0.weight ?? 0) < 3 }
        let unweighed = #Predicate<Parcel> { $0.weight == nil }
        for form in 0..<3 {
            let test = try store(backend)
            let store = test.store
            let changed: Int
            let deleted: Int
            func synchronously() throws -> (Int, Int) {
                (
                    try Parcel.updateAll(where: unweighed, set: [.set(\.label, to: "unweighed")], in: store),
                    try Parcel.deleteAll(where: light, in: store)
                )
            }
            switch form {
            case 0:
                (changed, deleted) = try synchronously()
            case 1:
                changed = try await Parcel.updateAll(where: unweighed, set: [.set(\.label, to: "unweighed")], in: store)
                deleted = try await Parcel.deleteAll(where: light, in: store)
            default:
                changed = try await completed {
                    Parcel.updateAll(where: unweighed, set: [.set(\.label, to: "unweighed")], in: store, completion: $0)
                }
                deleted = try await completed { Parcel.deleteAll(where: light, in: store, completion: $0) }
            }
            #expect(changed == Self.parcels.filter { $0.weight == nil }.count, "form \(form)")
            #expect(deleted == 2, "form \(form)")
            let left = try await Parcel.findAll(in: store)
            #expect(left.map(\.id) == Self.parcels.filter { !(($0.weight ?? 9) < 3) }.map(\.id), "form \(form)")
            #expect(left.filter { $0.label == "unweighed" }.map(\.id) == Self.parcels.filter { $0.weight == nil }.map(\.id), "form \(form)")

            let crate = Parcel(id: 99, label: "crate", weight: 99, stops: [])
            let only = #Predicate<Parcel> { $0.weight == 5 }
            let outcome: SaveOutcome
            func saveSynchronously() throws -> SaveOutcome { try crate.save(matching: only, in: store) }
            switch form {
            case 0: outcome = try saveSynchronously()
            case 1: outcome = try await crate.save(matching: only, in: store)
            default: outcome = try await completed { crate.save(matching: only, in: store, completion: $0) }
            }
            #expect(outcome == .updated, "form \(form)")
            #expect(try await Parcel.find(key: 5, in: store)?.weight == 99, "form \(form)")
            // More than one match without updatingAll: refused, nothing written.
            let ambiguous = await #expect(throws: ModelStoreError.self) {
                try await crate.save(matching: #Predicate { $0.weight != nil }, in: store)
            }
            #expect(ambiguous?.code == .ambiguousMatch)
        }
    }

    @Test(arguments: Backend.available) func anUntranslatablePredicateIsEvaluatedInMemoryOnlyWhenAsked(_ backend: Backend) throws {
        let test = try store(backend)
        let store = test.store
        // `label.count` (characters) does not translate; `weight` does.
        let odd = #Predicate<Parcel> { $0.weight != nil && $0.label.count == 3 }
        let expected = Self.parcels.filter { $0.weight != nil && $0.label.count == 3 }.map(\.id)
        #expect(expected.count > 1 && expected.count < Self.parcels.count)
        let refused = #expect(throws: ModelStoreError.self) { _ = try Parcel.filter(odd).findAll(in: store) }
        #expect(refused?.code == .invalidQuery)

        test.resetSQL()
        let query = Parcel.filter(odd, untranslated: .evaluateInMemory)
        #expect(try query.findAll(in: store).map(\.id) == expected)
        // The translated part narrowed the read: the statement names the weight.
        let narrowed = backend == .sqlite ? "\"weight\" IS NOT ?" : "\"weight\" IS DISTINCT FROM $1"
        #expect(test.sql.last { $0.hasPrefix("SELECT") }?.contains(narrowed) == true)
        #expect(try query.count(in: store) == expected.count)
        #expect(try query.exists(in: store))
        #expect(try query.findFirst(in: store)?.id == expected.first)
        // Pages and order are applied after the filter, with other filters kept.
        let descending = expected.sorted(by: >)
        #expect(
            try query.order(.descending(\.id)).limit(2, offset: 1).findAll(in: store).map(\.id) == Array(descending.dropFirst().prefix(2)))
        #expect(try query.order(.descending(\.id)).page(5, rows: 3).findAll(in: store).isEmpty)
        #expect(try query.filter(\.id > 5).findAll(in: store).map(\.id) == expected.filter { $0 > 5 })

        // Operations that run in SQL refuse it rather than ignore part of the predicate.
        let countBefore = try Parcel.count(in: store)
        let refusals: [() throws -> Void] = [
            { _ = try query.deleteAll(in: store) },
            { _ = try query.updateAll([.set(\.label, to: "x")], in: store) },
            { _ = try query.sum(\.weight, in: store) },
            { _ = try query.values(of: \.label, in: store) },
            { try query.forEach(in: store) { _ in } },
        ]
        for refusal in refusals {
            let error = #expect(throws: ModelStoreError.self) { try refusal() }
            #expect(error?.code == .invalidQuery)
            #expect(error?.message.contains("in memory") == true)
        }
        #expect(try Parcel.count(in: store) == countBefore)
        // An evaluation that throws in Swift (`!` of nil) is reported, not skipped.
        let forced = Parcel.filter(#Predicate { $0.weight! > 1 }, untranslated: .evaluateInMemory)
        let failed = #expect(throws: ModelStoreError.self) { _ = try forced.findAll(in: store) }
        #expect(failed?.code == .invalidQuery)
        #expect(failed?.model == "Parcel")
    }

    @Test(arguments: Backend.available) func anInMemoryFilterWorksAsyncAndInALiveQuery(_ backend: Backend) async throws {
        let test = try store(backend)
        let store = test.store
        let query = Parcel.filter(#Predicate { $0.weight != nil && $0.label.count == 3 }, untranslated: .evaluateInMemory)
        let expected = Self.parcels.filter { $0.weight != nil && $0.label.count == 3 }.map(\.id)
        #expect(try await query.findAll(in: store).map(\.id) == expected)
        #expect(try await query.count(in: store) == expected.count)
        #expect(try await query.exists(in: store))
        var updates = query.observe(in: store).makeAsyncIterator()
        #expect(try await updates.next()?.map(\.id) == expected)
        try await Parcel(id: 50, label: "abc", weight: 1, stops: []).save(in: store)
        #expect(try await updates.next()?.map(\.id) == expected + [50])
    }
}
