import Foundation
import Testing
@testable import ModelStore

private struct Spot: Codable, Sendable, Equatable {
    var city: String
    var rank: Int
}

private enum GadgetMood: String, Codable, Sendable {
    case calm, loud
}

private struct Gadget: StoredModel, Equatable {
    var id: Int64
    var name: String
    var price: Double?
    var stock: Int
    var tags: [String]
    var spot: Spot?
    var mood: GadgetMood
    var made: Date
    static let primaryKey = ["id"]
}

/// Foundation's `#Predicate` translated to SQL, checked against `Predicate.evaluate`.
@Suite struct PredicateTests {
    private static let day = Date(timeIntervalSince1970: 1_700_000_000)

    /// Records with NULLs, empty and NUL-free edge text, negative and zero values.
    private static func gadgets(seed: UInt64 = 7, count: Int = 120) -> [Gadget] {
        var generator = SeededGenerator(seed: seed)
        let names = ["Pocky", "pocky", "Kit", "", "Rock", "ock", "Pöcky", "a%b_c", "Zed"]
        let tags = ["x", "y", "rock", "", "X"]
        let cities = ["Paris", "Lyon", "Nice"]
        return (0..<count).map { number in
            Gadget(
                id: Int64(number),
                name: names[Int.random(in: 0..<names.count, using: &generator)],
                price: Bool.random(using: &generator) ? nil : [0, -1.5, 1, 2.25, 1e9][Int.random(in: 0..<5, using: &generator)],
                stock: Int.random(in: -3...20, using: &generator),
                tags: (0..<Int.random(in: 0...3, using: &generator)).map { _ in tags[Int.random(in: 0..<tags.count, using: &generator)] },
                spot: Bool.random(using: &generator)
                    ? nil : Spot(city: cities[Int.random(in: 0..<3, using: &generator)], rank: Int.random(in: 0...5, using: &generator)),
                mood: Bool.random(using: &generator) ? .calm : .loud,
                made: day.addingTimeInterval(Double(Int.random(in: -10...10, using: &generator)) * 86_400))
        }
    }

    private func store(_ backend: Backend, with records: [Gadget]) throws -> TestStore {
        let test = try TestStore(backend)
        _ = try Gadget.save(records, in: test.store)
        return test
    }

    /// The store's answer must be exactly the records `evaluate` accepts.
    /// Returns whether the predicate told records apart (neither none nor all matched).
    @discardableResult
    private func check(
        _ predicate: Predicate<Gadget>, _ records: [Gadget], _ test: TestStore, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Bool {
        let expected = try records.filter { try predicate.evaluate($0) }.map(\.id)
        let found = try Gadget.filter(predicate).findAll(in: test.store).map(\.id)
        #expect(found == expected, sourceLocation: sourceLocation)
        return !expected.isEmpty && expected.count < records.count
    }

    @Test(arguments: Backend.available) func predicatesAgreeWithFoundationsOwnEvaluation(_ backend: Backend) throws {
        let records = Self.gadgets()
        let test = try store(backend, with: records)
        let ids: [Int64] = [1, 5, 9, 200]
        let noPrices: [Double?] = [nil, 1]
        let loud = GadgetMood.loud
        let paris = "Paris"
        let early = Self.day.addingTimeInterval(-3 * 86_400)
        var predicates: [Predicate<Gadget>] = [
            #Predicate { $0.stock > 3 },
            #Predicate { $0.stock >= 3 && $0.stock <= 10 },
            #Predicate { $0.stock < 0 || $0.stock == 7 },
            #Predicate { !($0.stock > 3) },
            #Predicate { $0.price == nil },
            #Predicate { $0.price != nil },
            #Predicate { $0.price != 1 },
            #Predicate { $0.price == 1 },
            #Predicate { ($0.price ?? 0) > 1 },
            #Predicate { ($0.price ?? -100) < 0 },
            #Predicate { !(($0.price ?? 0) > 1) },
            #Predicate { $0.price.flatMap { $0 > 1 } ?? false },
            #Predicate { $0.price.flatMap { $0 == 1 } == nil },
            #Predicate { $0.name == "Pocky" },
            #Predicate { $0.name != "Pocky" },
            #Predicate { $0.name < "P" },
            #Predicate { $0.name.contains("ock") },
            #Predicate { !$0.name.contains("ock") },
            #Predicate { $0.name.contains("") },
            #Predicate { $0.name.contains("%") },
            #Predicate { $0.name.starts(with: "Po") },
            #Predicate { $0.name.starts(with: "") },
            #Predicate { ids.contains($0.id) },
            #Predicate { !ids.contains($0.id) },
            #Predicate { noPrices.contains($0.price) },
            #Predicate { $0.tags.contains("rock") },
            #Predicate { !$0.tags.contains("x") },
            #Predicate { $0.tags.contains { $0 == "" } },
            #Predicate { $0.tags.contains { $0.starts(with: "r") } },
            #Predicate { $0.spot?.city == "Paris" },
            #Predicate { $0.spot?.city != paris },
            #Predicate { $0.spot == nil },
            #Predicate { ($0.spot?.rank ?? -1) >= 3 },
            #Predicate { $0.mood == loud },
            #Predicate { $0.made < early },
            #Predicate { $0.stock * 2 - 1 > 5 },
            #Predicate { $0.stock % 3 == 0 },
            #Predicate { $0.stock / 4 == 1 },
            #Predicate { -$0.stock > 0 },
            #Predicate { $0.tags.count == 2 },
            #Predicate { $0.tags.isEmpty },
            #Predicate { $0.tags.allSatisfy { $0 != "x" } },
            #Predicate { (2...9).contains($0.stock) },
            #Predicate { ($0.stock % 2 == 0 ? $0.stock : 0) > 4 },
            #Predicate { $0.stock > 3 ? $0.price != nil : $0.name.contains("o") },
            #Predicate { ($0.price ?? 0) / 2 > 0.5 },
            #Predicate { (($0.price ?? 0) > 1 || $0.stock > 15) && !$0.tags.contains("y") },
            #Predicate { _ in true },
            #Predicate { _ in false },
        ]
        predicates.append(#Predicate { $0.spot.flatMap { $0.rank > 2 } ?? true })
        var informative = 0
        for predicate in predicates where try check(predicate, records, test) { informative += 1 }
        #expect(predicates.count >= 50)
        // The records exercise the predicates: most match some records and not others.
        #expect(informative >= 44, "only \(informative) predicates told records apart")
    }

    @Test(arguments: Backend.available) func translatesToBoundSQLWithNoValueSpliced(_ backend: Backend) throws {
        let test = try store(backend, with: Self.gadgets(count: 10))
        test.resetSQL()
        let hostile = "'; DROP TABLE Gadget; --"
        _ = try Gadget.filter(#Predicate { $0.name == hostile || $0.price != 1 }).findAll(in: test.store)
        let select = try #require(test.sql.last { $0.hasPrefix("SELECT") })
        #expect(!select.contains("DROP"))
        // The values are parameters (`?` here, `$1` on a server), compared as Swift compares nil.
        #expect(select.contains(backend == .sqlite ? "IS NOT ?" : "IS DISTINCT FROM $2"))
        #expect(try Gadget.all().count(in: test.store) == 10)
    }

    @Test(arguments: Backend.available) func whatCannotBeTranslatedIsRefusedBeforeAnySQLRuns(_ backend: Backend) throws {
        let test = try store(backend, with: Self.gadgets(count: 10))
        test.resetSQL()
        let error = #expect(throws: ModelStoreError.self) {
            _ = try Gadget.filter(#Predicate { $0.tags.first == "x" }).findAll(in: test.store)
        }
        #expect(error?.code == .invalidQuery)
        #expect(error?.model == "Gadget")
        #expect(!test.sql.contains { $0.hasPrefix("SELECT") })
        let spot = Spot(city: "Paris", rank: 1)
        let noSQLValue = #expect(throws: ModelStoreError.self) {
            _ = try Gadget.filter(#Predicate { $0.spot == spot }).findAll(in: test.store)
        }
        #expect(noSQLValue?.code == .invalidQuery)
        // Swift counts characters, SQLite code points: refused rather than differing on "é".
        let characters = #expect(throws: ModelStoreError.self) {
            _ = try Gadget.filter(#Predicate { $0.name.count > 2 }).findAll(in: test.store)
        }
        #expect(characters?.code == .invalidQuery)
        #expect(characters?.message.contains("characters") == true)
        // `!` on nil makes Swift's evaluate throw; SQL would silently skip the record.
        let forced = #expect(throws: ModelStoreError.self) {
            _ = try Gadget.filter(#Predicate { $0.price! > 1 }).findAll(in: test.store)
        }
        #expect(forced?.code == .invalidQuery)
        #expect(forced?.value?.hasPrefix("ForcedUnwrap") == true)
        // Swift traps on a range whose bounds are out of order; the store refuses it instead.
        let (low, high) = (5, 2)
        let backwards = #expect(throws: ModelStoreError.self) {
            _ = try Gadget.filter(#Predicate { (low...high).contains($0.stock) }).findAll(in: test.store)
        }
        #expect(backwards?.code == .invalidQuery)
        #expect(backwards?.value == "5...2")
        #expect(!test.sql.contains { $0.hasPrefix("SELECT") })
    }

    /// Swift's `==` finds canonically equivalent text equal; SQLite compares code points. The
    /// README documents it; this holds the documentation true.
    @Test(arguments: Backend.available) func decomposedTextComparesByItsCodePoints(_ backend: Backend) throws {
        var composed = Self.gadgets(count: 1)[0]
        composed.id = 1
        composed.name = "caf\u{E9}"
        var decomposed = composed
        decomposed.id = 2
        decomposed.name = "cafe\u{301}"
        let test = try store(backend, with: [composed, decomposed])
        let predicate = #Predicate<Gadget> { $0.name == "caf\u{E9}" }
        #expect(try [composed, decomposed].filter { try predicate.evaluate($0) }.map(\.id) == [1, 2])
        #expect(try Gadget.filter(predicate).findAll(in: test.store).map(\.id) == [1])
        // In-memory evaluation does not change that: the parts that translate still select.
        #expect(
            try Gadget.filter(#Predicate { $0.name.contains("caf") && $0.name == "caf\u{E9}" }, untranslated: .evaluateInMemory)
                .findAll(in: test.store).map(\.id) == [1])
    }

    @Test(arguments: Backend.available) func keyPathsThroughARelationshipBecomeSubqueriesOfTheSameStatement(_ backend: Backend) throws {
        let test = try TestStore(backend)
        var rockets = Team(id: 1, name: "Rockets")
        rockets.players = [Player(id: 1, name: "a")]
        rockets.coach = Coach(id: 1, name: "Ann")
        var comets = Team(id: 2, name: nil)
        comets.players = [Player(id: 2, name: "b")]
        _ = try Team.save([rockets, comets], in: test.store)
        try Player(id: 3, name: "c").save(in: test.store)
        test.resetSQL()
        #expect(try Player.findAll(where: #Predicate { $0.team?.name == "Rockets" }, loading: .none, in: test.store).map(\.id) == [1])
        #expect(test.sql.filter { $0.hasPrefix("SELECT") }.count == 1)
        // nil when linked to none, and when the linked record's value is nil, as in Swift.
        #expect(try Player.findAll(where: #Predicate { $0.team?.name != "Rockets" }, in: test.store).map(\.id) == [2, 3])
        #expect(try Player.findAll(where: #Predicate { $0.team?.name == nil }, in: test.store).map(\.id) == [2, 3])
        #expect(try Player.findAll(where: #Predicate { $0.team == nil }, in: test.store).map(\.id) == [3])
        #expect(try Player.findAll(where: #Predicate { $0.team != nil }, in: test.store).map(\.id) == [1, 2])
        // A to-one stored on the other side (a team's coach) and a to-many.
        #expect(try Team.findAll(where: #Predicate { $0.coach?.name == "Ann" }, in: test.store).map(\.id) == [1])
        #expect(try Team.findAll(where: #Predicate { $0.players?.contains { $0.name == "b" } == true }, in: test.store).map(\.id) == [2])
        #expect(try Team.findAll(where: #Predicate { ($0.players?.count ?? 0) == 1 }, in: test.store).map(\.id) == [1, 2])
        let twoHops = #expect(throws: ModelStoreError.self) {
            _ = try Coach.findAll(where: #Predicate { $0.team?.players?.isEmpty == false }, in: test.store)
        }
        #expect(twoHops?.code == .invalidQuery)
        let wholeRecord = #expect(throws: ModelStoreError.self) {
            _ = try Player.findAll(where: #Predicate { $0.team == rockets }, in: test.store)
        }
        #expect(wholeRecord?.code == .invalidQuery)
        #expect(wholeRecord?.message.contains("nil") == true)
    }

    @Test(arguments: Backend.available) func partsThatUseNoRecordAreEvaluatedOnceAsValues(_ backend: Backend) throws {
        let records = Self.gadgets(count: 40)
        let test = try store(backend, with: records)
        let ids: [Int64] = [1, 2, 3]
        try check(#Predicate { ids.contains { $0 > 2 } && $0.stock > 3 }, records, test)
        try check(#Predicate { ids.contains { $0 > 5 } || $0.stock > 3 }, records, test)
    }

    @Test(arguments: Backend.available) func aPredicateCombinesWithTypedConditionsOrderingAndPages(_ backend: Backend) throws {
        let records = Self.gadgets()
        let test = try store(backend, with: records)
        let predicate = #Predicate<Gadget> { $0.stock > 2 }
        let page = try Gadget.filter(predicate).filter(Column("mood") == "calm").order(.descending(\.stock)).page(0, rows: 5)
            .findAll(in: test.store)
        let expected = try records.filter { try predicate.evaluate($0) && $0.mood == .calm }
            .sorted { ($0.stock, -$0.id) > ($1.stock, -$1.id) }.prefix(5).map(\.id)
        #expect(page.map(\.id) == Array(expected))
        #expect(try Gadget.filter(predicate).count(in: test.store) == records.filter { $0.stock > 2 }.count)
        #expect(
            try Gadget.findAll(where: Condition(predicate) && .isNull(\.price), in: test.store).allSatisfy {
                $0.price == nil && $0.stock > 2
            })
    }

    @Test(arguments: Backend.available) func sortDescriptorsOrderAsSortedUsingDoes(_ backend: Backend) throws {
        let records = Self.gadgets()
        let test = try store(backend, with: records)
        let orders: [[SortDescriptor<Gadget>]] = [
            [SortDescriptor(\Gadget.stock)],
            [SortDescriptor(\Gadget.stock, order: .reverse)],
            [SortDescriptor(\Gadget.price), SortDescriptor(\Gadget.stock, order: .reverse)],
            [SortDescriptor(\Gadget.price, order: .reverse)],
            [SortDescriptor(\Gadget.made), SortDescriptor(\Gadget.id, order: .reverse)],
        ]
        for descriptors in orders {
            let expected = records.sorted(using: descriptors).map(\.id)
            #expect(try Gadget.all().order(descriptors).findAll(in: test.store).map(\.id) == expected)
        }
        // A String key path sorts by a localized comparator where Foundation gives it one
        // (Apple platforms): refused, since SQLite cannot order that way. Where it sorts by
        // `<` (Linux), the store's byte order agrees with Swift's on NFC text.
        let byName = [SortDescriptor(\Gadget.name), SortDescriptor(\Gadget.id)]
        if byName[0].stringComparator != nil {
            let refused = #expect(throws: ModelStoreError.self) { _ = try Gadget.all().order(byName).findAll(in: test.store) }
            #expect(refused?.code == .invalidQuery)
            #expect(refused?.model == "Gadget")
        } else {
            #expect(try Gadget.all().order(byName).findAll(in: test.store).map(\.id) == records.sorted(using: byName).map(\.id))
        }
    }

    @Test(arguments: Backend.available) func everyCallForm(_ backend: Backend) async throws {
        let test = try store(backend, with: Self.gadgets(count: 30))
        let predicate = #Predicate<Gadget> { $0.stock > 5 }
        let viaAsync = try await Gadget.filter(predicate).findAll(in: test.store)
        let viaCompletion: [Gadget] = try await withCheckedThrowingContinuation { continuation in
            Gadget.filter(predicate).findAll(in: test.store) { continuation.resume(with: $0.mapError { $0 as any Error }) }
        }
        #expect(viaAsync == viaCompletion)
        #expect(viaAsync.allSatisfy { $0.stock > 5 })
    }
}
