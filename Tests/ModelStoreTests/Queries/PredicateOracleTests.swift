import Foundation
import Testing
@testable import ModelStore

// The oracle: Foundation's own `Predicate.evaluate` decides which records a predicate selects;
// the store must return exactly those, for every construct the translator accepts, on
// records full of NULLs and edge values, over seeded random data. `SortDescriptor`s must
// order as `sorted(using:)` does.
//
// CI runs a fixed seed. A longer run:
//   MODELSTORE_ORACLE_SEED=123 MODELSTORE_ORACLE_ROUNDS=200 swift test --filter PredicateOracleTests

private enum OracleMood: String, Codable, Sendable {
    case calm, loud, odd = "ödd"
}

private enum OracleLevel: Int, Codable, Sendable {
    case low = 1, mid = 5, high = 10
}

private struct OracleSpot: Codable, Sendable, Equatable {
    var city: String
    var rank: Int
    var codes: [Int]
}

private struct OracleCrew: StoredModel, Equatable {
    var id: Int64
    var name: String
    var region: String?
    var size: Int
    var members: [OracleItem]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<OracleCrew>] = [.toMany(\.members, inverse: \OracleItem.crew)]
}

private struct OracleItem: StoredModel, Equatable {
    var id: Int64
    var name: String
    var note: String?
    var price: Double?
    var stock: Int
    var big: Int64
    var tags: [String]
    var spot: OracleSpot?
    var mood: OracleMood
    var level: OracleLevel?
    var made: Date
    var code: UUID
    var amount: Decimal
    var flag: Bool
    var crew: OracleCrew?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<OracleItem>] = [.toOne(\.crew, inverse: \OracleCrew.members)]
}

/// Values the predicates capture, drawn per round so the same shapes meet different constants.
private struct Captured {
    var stock: Int
    var price: Double
    var name: String
    var prefix: String
    var fragment: String
    var tag: String
    var city: String
    var made: Date
    var code: UUID
    var amount: Decimal
    var ids: [Int64]
    var prices: [Double?]
    var moods: [OracleMood]
    var mood: OracleMood
    var level: OracleLevel
    var region: String
    var low: Int
    var high: Int
}

@Suite struct PredicateOracleTests {
    static let seed: UInt64 = ProcessInfo.processInfo.environment["MODELSTORE_ORACLE_SEED"].flatMap { UInt64($0) } ?? 20_261_123
    static let rounds: Int = ProcessInfo.processInfo.environment["MODELSTORE_ORACLE_ROUNDS"].flatMap { Int($0) } ?? 4

    // NFC text, each character one code point: SQLite compares such text by its bytes as
    // Swift compares it (decomposed text differs, as the README says and
    // `decomposedTextComparesByItsCodePoints` shows).
    private static let names = ["Pocky", "pocky", "Kit", "", "Rock", "ock", "Pöcky", "a%b_c", "Zed", "日本語", "é", "x\u{0}y", " ", "👍🏽"]
    private static let tags = ["x", "y", "rock", "", "X", "ü"]
    private static let cities = ["Paris", "Lyon", "Nice", ""]
    private static let regions = ["north", "south", "North"]
    private static let codes =
        (0..<5).map { UUID(uuidString: "00000000-0000-0000-0000-00000000000\($0)")! }
        + [UUID(uuidString: "FFFFFFFF-0000-0000-0000-000000000000")!]
    private static let amounts = ["0", "1.5", "-2", "10", "9", "0.05", "12345678901234567890.123"].map { Decimal(string: $0)! }
    private static let day = Date(timeIntervalSince1970: 1_700_000_000)

    private static func pick<T>(_ list: [T], _ random: inout SeededGenerator) -> T { list[Int.random(in: 0..<list.count, using: &random)] }

    private static func crews(_ random: inout SeededGenerator) -> [OracleCrew] {
        (1...6).map { id in
            OracleCrew(
                id: Int64(id), name: pick(names, &random), region: Bool.random(using: &random) ? nil : pick(regions, &random),
                size: Int.random(in: 0...4, using: &random))
        }
    }

    private static func items(_ crews: [OracleCrew], _ random: inout SeededGenerator) -> [OracleItem] {
        (0..<90).map { number in
            OracleItem(
                id: Int64(number), name: pick(names, &random), note: Bool.random(using: &random) ? nil : pick(names, &random),
                price: Int.random(in: 0..<3, using: &random) == 0 ? nil : pick([0, -0.0, -1.5, 1, 2.25, 1e9, 0.1], &random),
                stock: Int.random(in: -3...20, using: &random),
                big: pick([0, 1, -1, .max, .min, 1 << 53, (1 << 53) + 1], &random),
                tags: (0..<Int.random(in: 0...3, using: &random)).map { _ in pick(tags, &random) },
                spot: Bool.random(using: &random)
                    ? nil
                    : OracleSpot(
                        city: pick(cities, &random), rank: Int.random(in: -1...5, using: &random),
                        codes: (0..<Int.random(in: 0...2, using: &random)).map { _ in Int.random(in: 0...3, using: &random) }),
                mood: pick([.calm, .loud, .odd], &random),
                level: Bool.random(using: &random) ? nil : pick([.low, .mid, .high], &random),
                made: day.addingTimeInterval(Double(Int.random(in: -10...10, using: &random)) * 86_400 + pick([0, 0.25, -0.5], &random)),
                code: pick(codes, &random), amount: pick(amounts, &random), flag: Bool.random(using: &random),
                crew: Int.random(in: 0..<4, using: &random) == 0 ? nil : pick(crews, &random))
        }
    }

    private static func captured(_ random: inout SeededGenerator) -> Captured {
        let low = Int.random(in: -3...8, using: &random)
        return Captured(
            stock: Int.random(in: -2...15, using: &random), price: pick([0, 1, 2.25, -1.5, 0.1], &random), name: pick(names, &random),
            prefix: pick(["P", "p", "", "Po", "日", "e"], &random), fragment: pick(["ock", "", "%", "_", "ö", "k"], &random),
            tag: pick(tags, &random), city: pick(cities, &random),
            made: day.addingTimeInterval(Double(Int.random(in: -5...5, using: &random)) * 86_400), code: pick(codes, &random),
            amount: pick(amounts, &random),
            ids: (0..<Int.random(in: 0...6, using: &random)).map { _ in Int64.random(in: -1...95, using: &random) },
            prices: [nil, pick([0, 1, 2.25], &random)], moods: [pick([.calm, .loud, .odd], &random)],
            mood: pick([.calm, .loud, .odd], &random), level: pick([.low, .mid, .high], &random), region: pick(regions, &random),
            low: low, high: low + Int.random(in: 0...12, using: &random))
    }

    /// At least 60 predicates over items: every construct, alone, nested and combined.
    private static func itemPredicates(_ c: Captured) -> [(String, Predicate<OracleItem>)] {
        let (stock, price, name, prefix, fragment, tag, city) = (c.stock, c.price, c.name, c.prefix, c.fragment, c.tag, c.city)
        let (made, code, amount, ids, prices, moods, mood, level) = (c.made, c.code, c.amount, c.ids, c.prices, c.moods, c.mood, c.level)
        let (region, low, high) = (c.region, c.low, c.high)
        let noLevel: OracleLevel? = nil
        let maxBig = Int64.max
        let later = made.addingTimeInterval(172_800)
        return [
            ("stock > c", #Predicate { $0.stock > stock }),
            ("stock <= c && stock >= low", #Predicate { $0.stock <= stock && $0.stock >= low }),
            ("stock == c || stock < 0", #Predicate { $0.stock == stock || $0.stock < 0 }),
            ("!(stock > c)", #Predicate { !($0.stock > stock) }),
            ("stock != c", #Predicate { $0.stock != stock }),
            ("big > 1 << 53", #Predicate { $0.big > 9_007_199_254_740_992 }),
            ("big == .max", #Predicate { $0.big == maxBig }),
            ("big < 0", #Predicate { $0.big < 0 }),
            ("price == nil", #Predicate { $0.price == nil }),
            ("price != nil", #Predicate { $0.price != nil }),
            ("price == c", #Predicate { $0.price == price }),
            ("price != c (nil included)", #Predicate { $0.price != price }),
            ("price ?? 0 > c", #Predicate { ($0.price ?? 0) > price }),
            ("price ?? -100 <= c", #Predicate { ($0.price ?? -100) <= price }),
            ("!(price ?? 0 > c)", #Predicate { !(($0.price ?? 0) > price) }),
            ("price.flatMap > c ?? false", #Predicate { $0.price.flatMap { $0 > price } ?? false }),
            ("price.flatMap == c == nil", #Predicate { $0.price.flatMap { $0 == price } == nil }),
            ("price == 0 (-0.0 too)", #Predicate { $0.price == 0 }),
            ("name == c", #Predicate { $0.name == name }),
            ("name != c", #Predicate { $0.name != name }),
            ("name < c", #Predicate { $0.name < name }),
            ("name >= c", #Predicate { $0.name >= name }),
            ("name.contains(c)", #Predicate { $0.name.contains(fragment) }),
            ("!name.contains(c)", #Predicate { !$0.name.contains(fragment) }),
            ("name.starts(with: c)", #Predicate { $0.name.starts(with: prefix) }),
            ("name.isEmpty", #Predicate { $0.name.isEmpty }),
            ("!name.isEmpty && name < c", #Predicate { !$0.name.isEmpty && $0.name < name }),
            ("note == nil", #Predicate { $0.note == nil }),
            ("note == c", #Predicate { $0.note == name }),
            ("note != c", #Predicate { $0.note != name }),
            ("note ?? name contains", #Predicate { ($0.note ?? $0.name).contains(fragment) }),
            ("note?.contains ?? false", #Predicate { $0.note?.contains(fragment) ?? false }),
            ("note?.starts == true", #Predicate { $0.note?.starts(with: prefix) == true }),
            ("note.flatMap isEmpty == false", #Predicate { $0.note.flatMap { $0.isEmpty } == false }),
            ("ids.contains(id)", #Predicate { ids.contains($0.id) }),
            ("!ids.contains(id)", #Predicate { !ids.contains($0.id) }),
            ("prices.contains(price)", #Predicate { prices.contains($0.price) }),
            ("moods.contains(mood)", #Predicate { moods.contains($0.mood) }),
            ("tags.contains(c)", #Predicate { $0.tags.contains(tag) }),
            ("!tags.contains(c)", #Predicate { !$0.tags.contains(tag) }),
            ("tags.contains(where: ==)", #Predicate { $0.tags.contains { $0 == tag } }),
            ("tags.contains(where: starts)", #Predicate { $0.tags.contains { $0.starts(with: prefix) } }),
            ("tags.allSatisfy(!isEmpty)", #Predicate { $0.tags.allSatisfy { !$0.isEmpty } }),
            ("tags.allSatisfy(== c)", #Predicate { $0.tags.allSatisfy { $0 == tag } }),
            ("tags.count >= 2", #Predicate { $0.tags.count >= 2 }),
            ("tags.isEmpty", #Predicate { $0.tags.isEmpty }),
            ("spot == nil", #Predicate { $0.spot == nil }),
            ("spot?.city == c", #Predicate { $0.spot?.city == city }),
            ("spot?.city != c", #Predicate { $0.spot?.city != city }),
            ("spot?.rank ?? -9 >= 2", #Predicate { ($0.spot?.rank ?? -9) >= 2 }),
            ("spot.flatMap rank > 2 ?? true", #Predicate { $0.spot.flatMap { $0.rank > 2 } ?? true }),
            ("spot?.codes.contains(1) == true", #Predicate { $0.spot?.codes.contains(1) == true }),
            ("spot?.city.isEmpty == false", #Predicate { $0.spot?.city.isEmpty == false }),
            ("mood == c", #Predicate { $0.mood == mood }),
            ("mood != c", #Predicate { $0.mood != mood }),
            ("level == c", #Predicate { $0.level == level }),
            ("level == nil (captured)", #Predicate { $0.level == noLevel }),
            ("level != c", #Predicate { $0.level != level }),
            ("made < c", #Predicate { $0.made < made }),
            ("made >= c && made <= c + 2 days", #Predicate { $0.made >= made && $0.made <= later }),
            ("made == c", #Predicate { $0.made == made }),
            ("code == c", #Predicate { $0.code == code }),
            ("code != c", #Predicate { $0.code != code }),
            ("amount == c", #Predicate { $0.amount == amount }),
            ("amount != c", #Predicate { $0.amount != amount }),
            ("amount < c", #Predicate { $0.amount < amount }),
            ("amount >= c", #Predicate { $0.amount >= amount }),
            ("flag", #Predicate { $0.flag }),
            ("!flag", #Predicate { !$0.flag }),
            ("flag == (stock > c)", #Predicate { $0.flag == ($0.stock > stock) }),
            ("stock * 2 - 1 > c", #Predicate { $0.stock * 2 - 1 > stock }),
            ("stock % 3 == 0", #Predicate { $0.stock % 3 == 0 }),
            ("stock / 4 == 1", #Predicate { $0.stock / 4 == 1 }),
            ("-stock > 0", #Predicate { -$0.stock > 0 }),
            ("(price ?? 0) / 2 > 0.5", #Predicate { ($0.price ?? 0) / 2 > 0.5 }),
            ("(price ?? 1) * 3 + 1 < 5", #Predicate { ($0.price ?? 1) * 3 + 1 < 5 }),
            ("ternary value", #Predicate { ($0.stock % 2 == 0 ? $0.stock : 0) > 4 }),
            ("ternary condition", #Predicate { $0.stock > stock ? $0.price != nil : $0.name.contains(fragment) }),
            ("(low...high).contains", #Predicate { (low...high).contains($0.stock) }),
            ("(low..<high).contains", #Predicate { (low..<high).contains($0.stock) }),
            ("crew == nil", #Predicate { $0.crew == nil }),
            ("crew != nil", #Predicate { $0.crew != nil }),
            ("crew?.region == c", #Predicate { $0.crew?.region == region }),
            ("crew?.region != c", #Predicate { $0.crew?.region != region }),
            ("crew?.name.contains", #Predicate { $0.crew?.name.contains(fragment) == true }),
            ("crew?.size ?? -1 >= 2", #Predicate { ($0.crew?.size ?? -1) >= 2 }),
            ("crew.flatMap size > stock/5", #Predicate { $0.crew.flatMap { $0.size > 2 } ?? false }),
            ("crew region nil", #Predicate { $0.crew != nil && $0.crew?.region == nil }),
            ("combined 1", #Predicate { (($0.price ?? 0) > 1 || $0.stock > 15) && !$0.tags.contains(tag) }),
            ("combined 2", #Predicate { $0.spot?.city == city || ($0.mood == mood && $0.stock < stock) }),
            ("combined 3", #Predicate { !($0.name.starts(with: prefix) || $0.price == nil) && $0.big != 0 }),
            ("combined 4", #Predicate { $0.crew?.region == region && ($0.tags.isEmpty || $0.flag) }),
            ("constant true", #Predicate { _ in true }),
            ("constant false", #Predicate { _ in false }),
            ("value-only part", #Predicate { ids.contains { $0 > 40 } && $0.stock > stock }),
        ]
    }

    /// Predicates over crews: a to-many relationship's contains(where:), allSatisfy, count, isEmpty.
    private static func crewPredicates(_ c: Captured) -> [(String, Predicate<OracleCrew>)] {
        let (stock, fragment, region) = (c.stock, c.fragment, c.region)
        return [
            ("members.contains(where: stock > c)", #Predicate { $0.members?.contains { $0.stock > stock } == true }),
            ("members.allSatisfy(price != nil)", #Predicate { $0.members?.allSatisfy { $0.price != nil } ?? true }),
            ("members.count >= 3", #Predicate { ($0.members?.count ?? 0) >= 3 }),
            ("members.isEmpty", #Predicate { $0.members?.isEmpty ?? true }),
            ("members name contains", #Predicate { $0.members?.contains { $0.name.contains(fragment) } ?? false }),
            ("region == c && size > 1", #Predicate { $0.region == region && $0.size > 1 }),
        ]
    }

    /// Descriptor lists checked against `sorted(using:)`.
    private static let descriptors: [[SortDescriptor<OracleItem>]] = [
        [SortDescriptor(\OracleItem.stock)],
        [SortDescriptor(\OracleItem.stock, order: .reverse)],
        [SortDescriptor(\OracleItem.price), SortDescriptor(\OracleItem.stock, order: .reverse)],
        [SortDescriptor(\OracleItem.price, order: .reverse)],
        [SortDescriptor(\OracleItem.made), SortDescriptor(\OracleItem.id, order: .reverse)],
        [SortDescriptor(\OracleItem.big, order: .reverse)],
        [SortDescriptor(\OracleItem.code)],
        [SortDescriptor(\OracleItem.amount, order: .reverse)],
    ]

    // On PostgreSQL, whose text cannot hold NUL (U+0000), the name with one holds U+0001 instead.
    @Test(arguments: Backend.available) func theStoreReturnsExactlyTheRecordsFoundationsEvaluateAccepts(_ backend: Backend) throws {
        var random = SeededGenerator(seed: Self.seed)
        var informative = Set<String>()
        var checked = 0
        func text(_ value: String) -> String { backend == .sqlite ? value : value.replacingOccurrences(of: "\u{0}", with: "\u{1}") }
        for round in 0..<Self.rounds {
            let crews = Self.crews(&random).map { crew in
                var crew = crew
                crew.name = text(crew.name)
                return crew
            }
            let items = Self.items(crews, &random).map { item in
                var item = item
                item.name = text(item.name)
                item.note = item.note.map(text)
                return item
            }
            let test = try TestStore(backend)
            _ = try OracleCrew.save(crews, in: test.store)
            _ = try OracleItem.save(items, in: test.store)
            // Evaluate on the records as the store reads them, relationships loaded.
            let storedItems = try OracleItem.findAll(loading: .direct, in: test.store)
            let storedCrews = try OracleCrew.findAll(loading: .direct, in: test.store)
            #expect(storedItems.count == items.count)
            var captured = Self.captured(&random)
            captured.name = text(captured.name)
            let itemPredicates = Self.itemPredicates(captured)
            let crewPredicates = Self.crewPredicates(captured)
            #expect(itemPredicates.count + crewPredicates.count >= 60)
            for (name, predicate) in itemPredicates {
                let expected = try storedItems.filter { try predicate.evaluate($0) }.map(\.id)
                let found = try OracleItem.filter(predicate).findAll(in: test.store).map(\.id)
                #expect(found == expected, "round \(round) (seed \(Self.seed)): \(name)")
                if !expected.isEmpty && expected.count < storedItems.count { informative.insert(name) }
                checked += 1
            }
            for (name, predicate) in crewPredicates {
                let expected = try storedCrews.filter { try predicate.evaluate($0) }.map(\.id)
                let found = try OracleCrew.filter(predicate).findAll(in: test.store).map(\.id)
                #expect(found == expected, "round \(round) (seed \(Self.seed)): \(name)")
                if !expected.isEmpty && expected.count < storedCrews.count { informative.insert(name) }
                checked += 1
            }
            // Ordered: the filtered records in SortDescriptor order, as sorted(using:) orders them.
            let filter = itemPredicates[Int.random(in: 0..<itemPredicates.count, using: &random)]
            for order in Self.descriptors {
                let expected = try storedItems.filter { try filter.1.evaluate($0) }.sorted(using: order).map(\.id)
                let found = try OracleItem.filter(filter.1).order(order).findAll(in: test.store).map(\.id)
                #expect(found == expected, "round \(round): \(filter.0) ordered by \(order.map { "\($0)" })")
            }
        }
        // The data exercises the predicates: across the rounds, nearly all of them match some
        // records and not others (a constant true or false cannot).
        let total = Self.itemPredicates(Self.captured(&random)).count + Self.crewPredicates(Self.captured(&random)).count
        #expect(informative.count >= total - 8, "only \(informative.count) of \(total) predicates told records apart in \(checked) checks")
    }
}
