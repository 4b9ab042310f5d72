import Foundation
import Testing
@testable import ModelStore

private struct Lot: StoredModel, Equatable {
    var id: Int64
    var shelf: String
    var price: Decimal
    var bid: Decimal?
    static let primaryKey = ["id"]
}

private struct ShelfExtremes: Decodable, Sendable, Equatable {
    var shelf: String
    var price: Decimal?
    var highest: Decimal?
    var lowestBid: Decimal?
}

private struct ShelfTotal: Decodable, Sendable, Equatable {
    var shelf: String
    var total: Decimal?
}

/// Decimals are stored as their exact text, yet every ordering operation on them — conditions,
/// orderings, `min`, `max` and `sum` — must agree with Swift's own comparison of the Decimals,
/// never with the text's ("10" < "9").
@Suite struct DecimalOrderingTests {
    /// Values whose text order differs from their numeric order in every way text can go
    /// wrong: length, sign, leading "0.", tiny and huge magnitudes, 38 digits, negative zero.
    static let values: [Decimal] = [
        9, 10, -1, -10, Decimal(string: "0.5")!, Decimal(string: "0.05")!, 100, 0, -Decimal(0),
        Decimal(string: "0.00000000000000000001")!, Decimal(string: "-0.00000000000000000001")!,
        Decimal(string: "12345678901234567890.123456789012345678")!,
        Decimal(string: "-12345678901234567890.123456789012345678")!, Decimal(string: "99.99")!, Decimal(string: "1e30")!,
        Decimal(string: "-9.5")!, Decimal(string: "-0.5")!,
    ]

    /// Every value as a price, with bids that are nil for every third record.
    fileprivate static let lots: [Lot] = values.enumerated().map { offset, value in
        Lot(
            id: Int64(offset), shelf: ["a", "b", "c"][offset % 3], price: value,
            bid: offset % 3 == 2 ? nil : values[(offset * 5 + 3) % values.count])
    }

    private func store(_ backend: Backend) throws -> TestStore {
        let test = try TestStore(backend)
        _ = try Lot.save(Self.lots, in: test.store)
        return test
    }

    private func ids(_ condition: Condition<Lot>, _ test: TestStore) throws -> [Int64] {
        try Lot.findAll(where: condition, orderBy: [.ascending(\.id)], in: test.store).map(\.id)
    }

    private func expected(_ matches: (Lot) -> Bool) -> [Int64] {
        Self.lots.filter(matches).map(\.id)
    }

    @Test(arguments: Backend.available) func everyOrderingOperatorOnADecimalAgreesWithSwiftsComparison(_ backend: Backend) throws {
        let test = try store(backend)
        for limit in Self.values {
            #expect(try ids(\.price < limit, test) == expected { $0.price < limit }, "< \(limit)")
            #expect(try ids(\.price <= limit, test) == expected { $0.price <= limit }, "<= \(limit)")
            #expect(try ids(\.price > limit, test) == expected { $0.price > limit }, "> \(limit)")
            #expect(try ids(\.price >= limit, test) == expected { $0.price >= limit }, ">= \(limit)")
            #expect(try ids(\.price == limit, test) == expected { $0.price == limit }, "== \(limit)")
            // An optional column: nil never matches an ordering comparison.
            #expect(try ids(\.bid < limit, test) == expected { $0.bid.map { $0 < limit } ?? false }, "bid < \(limit)")
            #expect(try ids(\.bid <= limit, test) == expected { $0.bid.map { $0 <= limit } ?? false }, "bid <= \(limit)")
            #expect(try ids(\.bid > limit, test) == expected { $0.bid.map { $0 > limit } ?? false }, "bid > \(limit)")
            #expect(try ids(\.bid >= limit, test) == expected { $0.bid.map { $0 >= limit } ?? false }, "bid >= \(limit)")
            // A column named by string compares the same way.
            #expect(try ids(Column("price") > limit, test) == expected { $0.price > limit }, "Column > \(limit)")
        }
    }

    @Test(arguments: Backend.available) func betweenOnADecimalAgreesWithSwiftsComparison(_ backend: Backend) throws {
        let test = try store(backend)
        for lower in Self.values {
            for upper in Self.values {
                let inside = expected { lower <= $0.price && $0.price <= upper }
                #expect(try ids(.between(\.price, lower, upper), test) == inside, "between \(lower) and \(upper)")
                #expect(
                    try ids(!.between(\.price, lower, upper), test) == expected { !(lower <= $0.price && $0.price <= upper) },
                    "not between \(lower) and \(upper)")
                #expect(
                    try ids(.between(\.bid, lower, upper), test) == expected { $0.bid.map { lower <= $0 && $0 <= upper } ?? false },
                    "bid between \(lower) and \(upper)")
            }
        }
    }

    @Test(arguments: Backend.available) func orderingByADecimalAgreesWithSwiftsSortWithNilFirstAscending(_ backend: Backend) throws {
        let test = try store(backend)
        // Ties (0 and negative zero) are broken by key, as a stable sort of the id-ordered list keeps them.
        let ascending = Self.lots.sorted { $0.price < $1.price || ($0.price == $1.price && $0.id < $1.id) }.map(\.id)
        let descending = Self.lots.sorted { $0.price > $1.price || ($0.price == $1.price && $0.id < $1.id) }.map(\.id)
        #expect(try Lot.order(.ascending(\.price)).findAll(in: test.store).map(\.id) == ascending)
        #expect(try Lot.order(.descending(\.price)).findAll(in: test.store).map(\.id) == descending)
        #expect(try Lot.order(.ascending(Column("price"))).findAll(in: test.store).map(\.id) == ascending)
        func bidBefore(_ lhs: Lot, _ rhs: Lot) -> Bool {
            switch (lhs.bid, rhs.bid) {
            case (nil, nil): return lhs.id < rhs.id
            case (nil, _): return true
            case (_, nil): return false
            case (let l?, let r?): return l < r || (l == r && lhs.id < rhs.id)
            }
        }
        let bidsAscending = Self.lots.sorted(by: bidBefore).map(\.id)
        #expect(try Lot.order(.ascending(\.bid)).findAll(in: test.store).map(\.id) == bidsAscending)
        let bidsDescending = Self.lots.sorted { lhs, rhs in
            switch (lhs.bid, rhs.bid) {
            case (nil, nil): return lhs.id < rhs.id
            case (nil, _): return false
            case (_, nil): return true
            case (let l?, let r?): return l > r || (l == r && lhs.id < rhs.id)
            }
        }
        #expect(try Lot.order(.descending(\.bid)).findAll(in: test.store).map(\.id) == bidsDescending.map(\.id))
        // A page of a sorted query is that slice of the whole order.
        #expect(try Lot.order(.ascending(\.price)).limit(4, offset: 3).findAll(in: test.store).map(\.id) == Array(ascending[3..<7]))
    }

    @Test(arguments: Backend.available) func minAndMaxOfADecimalAgreeWithSwift(_ backend: Backend) throws {
        let test = try store(backend)
        let prices = Self.lots.map(\.price)
        let bids = Self.lots.compactMap(\.bid)
        #expect(try Lot.all().min(\.price, in: test.store) == prices.min())
        #expect(try Lot.all().max(\.price, in: test.store) == prices.max())
        #expect(try Lot.all().min(\.bid, in: test.store) == bids.min())
        #expect(try Lot.all().max(\.bid, in: test.store) == bids.max())
        let small = Decimal(50)
        #expect(try Lot.filter(\.price < small).max(\.price, in: test.store) == prices.filter { $0 < small }.max())
        #expect(try Lot.filter(\.price > small).min(\.price, in: test.store) == prices.filter { $0 > small }.min())
    }

    @Test(arguments: Backend.available) func groupedMinAndMaxOfADecimalAgreeWithSwiftAndOrderTheGroups(_ backend: Backend) throws {
        let test = try store(backend)
        let shelves = Dictionary(grouping: Self.lots, by: \.shelf)
        let expected = shelves.keys.sorted().map { shelf in
            let lots = shelves[shelf]!
            return ShelfExtremes(
                shelf: shelf, price: lots.map(\.price).min(), highest: lots.map(\.price).max(),
                lowestBid: lots.compactMap(\.bid).min())
        }
        let found = try Lot.all().grouped(by: \.shelf)
            .findAll(
                as: ShelfExtremes.self, .min(\.price, as: "price"), .max(\.price, as: "highest"), .min(\.bid, as: "lowestBid"),
                in: test.store)
        #expect(found == expected)
        // Ordered by an aggregate, and filtered by one (HAVING), numerically.
        let byHighest = try Lot.all().grouped(by: \.shelf).order(.descending(Aggregate.max(\.price, as: "highest")))
            .findAll(
                as: ShelfExtremes.self, .min(\.price, as: "price"), .max(\.price, as: "highest"), .min(\.bid, as: "lowestBid"),
                in: test.store)
        #expect(byHighest.map(\.shelf) == expected.sorted { $0.highest! > $1.highest! }.map(\.shelf))
        for limit in Self.values {
            let having = try Lot.all().grouped(by: \.shelf).having(Aggregate.min(\.price, as: "price") < limit)
                .findAll(
                    as: ShelfExtremes.self, .min(\.price, as: "price"), .max(\.price, as: "highest"), .min(\.bid, as: "lowestBid"),
                    in: test.store)
            #expect(having == expected.filter { $0.price! < limit }, "min < \(limit)")
        }
    }

    @Test(arguments: Backend.available) func sumOfADecimalIsExactNotFloatingPoint(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let cents = (1...10).map { Lot(id: $0, shelf: $0 % 2 == 0 ? "even" : "odd", price: Decimal(string: "0.1")!, bid: nil) }
        try Lot.save(cents, in: test.store)
        try Lot.save(
            [Lot(id: 11, shelf: "odd", price: Decimal(string: "0.2")!, bid: Decimal(string: "12345678901234567890.1")!)], in: test.store)
        try Lot.save([Lot(id: 12, shelf: "even", price: Decimal(string: "-0.3")!, bid: Decimal(string: "0.01")!)], in: test.store)
        // In binary floating point 0.1 + 0.2 is 0.30000000000000004, and 12345678901234567890.1 is 12345678901234567000.
        #expect(try Lot.all().sum(\.price, in: test.store) == Decimal(1) + Decimal(string: "0.2")! - Decimal(string: "0.3")!)
        #expect(try Lot.filter(\.id >= 10).sum(\.price, in: test.store) == Decimal(0))
        #expect(try Lot.all().sum(\.bid, in: test.store) == Decimal(string: "12345678901234567890.11")!)
        #expect(try Lot.filter(\.id > 100).sum(\.price, in: test.store) == Decimal(0))
        let totals = try Lot.all().grouped(by: \.shelf).findAll(as: ShelfTotal.self, .sum(\.price, as: "total"), in: test.store)
        #expect(
            totals == [
                ShelfTotal(shelf: "even", total: Decimal(string: "0.2")!), ShelfTotal(shelf: "odd", total: Decimal(string: "0.7")!),
            ])
    }

    @Test(arguments: Backend.available) func aDecimalSumBeyond38DigitsIsRefusedRatherThanRounded(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let big = Decimal(string: "12345678901234567890.123456789012345678")!
        try Lot.save([Lot(id: 1, shelf: "a", price: big, bid: nil), Lot(id: 2, shelf: "a", price: big, bid: nil)], in: test.store)
        // 24691357802469135780.246913578024691356 has 38 digits: exact.
        #expect(try Lot.all().sum(\.price, in: test.store) == big + big)
        try Lot.save([Lot(id: 3, shelf: "a", price: Decimal(string: "0.00000000000000000001")!, bid: nil)], in: test.store)
        let error = #expect(throws: ModelStoreError.self) { _ = try Lot.all().sum(\.price, in: test.store) }
        #expect(error?.code == .invalidQuery)
    }

    @Test(arguments: Backend.available) func theStoredSchemaNamesNoCollationOtherToolsLack(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        _ = try Lot.save(Self.lots, in: test.store)
        #expect(try Lot.order(.ascending(\.price)).findFirst(in: test.store)?.price == Self.values.min())
        // The schema's text: SQLite's CREATE statements, or a server's index definitions and column collations.
        let schemaSQL =
            backend == .sqlite
            ? "SELECT group_concat(sql, ';') FROM sqlite_master"
            : """
            SELECT concat_ws(';', (SELECT string_agg(indexdef, ';') FROM pg_indexes WHERE schemaname = current_schema()),
                (SELECT string_agg(coalesce(collation_name, ''), ';') FROM information_schema.columns WHERE table_schema = current_schema()))
            """
        let schema = try test.rawRows(schemaSQL).first?.first
        guard case .text(let sql)? = schema else {
            Issue.record("no schema")
            return
        }
        #expect(!sql.contains("modelstore"))
    }

    // SQLite-only: a unit test of SQLite's decimal collation function, no store behind it.
    @Test func theDecimalCollationIsATotalOrderThatAgreesWithDecimal() {
        let texts = [
            "0", "-0", "1", "01", "1.0", "1.50", "1.5", "+1", "-1", "10", "9", "0.05", ".5", "5.", "-.5", "", "abc", "1e5", "NaN",
            " 7", "12abc", "-", ".", "99999999999999999999999999999999999999999999", "-0.000", "0.0000000000000000000000000000000000000001",
        ]
        func sign(_ value: Int32) -> Int { value < 0 ? -1 : value > 0 ? 1 : 0 }
        for a in texts {
            #expect(DecimalCollation.compare(a, a) == 0, "\(a) equals itself")
            for b in texts {
                let ab = sign(DecimalCollation.compare(a, b))
                #expect(ab == -sign(DecimalCollation.compare(b, a)), "\(a) vs \(b) is antisymmetric")
                for c in texts where ab <= 0 && sign(DecimalCollation.compare(b, c)) <= 0 {
                    #expect(DecimalCollation.compare(a, c) <= 0, "\(a) <= \(b) <= \(c) is transitive")
                }
            }
        }
        // Every Decimal's own text compares as the Decimals do.
        for a in Self.values {
            for b in Self.values {
                let expected = a < b ? -1 : a > b ? 1 : 0
                #expect(sign(DecimalCollation.compare(a.description, b.description)) == expected, "\(a) vs \(b)")
            }
        }
        // Text that is no decimal sorts after every decimal.
        #expect(DecimalCollation.compare("abc", "99999999999999999999999999999999999999999999") > 0)
        #expect(DecimalCollation.compare("", "-1") > 0)
    }
}

/// `#Predicate` and `SortDescriptor` on a Decimal agree with `Predicate.evaluate` and `sorted(using:)`.
@Suite struct DecimalPredicateTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(arguments: Backend.available) func predicatesAndSortDescriptorsOnADecimalAgreeWithFoundation(_ backend: Backend) throws {
        let test = try TestStore(backend)
        _ = try Lot.save(DecimalOrderingTests.lots, in: test.store)
        let records = DecimalOrderingTests.lots
        for limit in DecimalOrderingTests.values {
            let predicates: [Predicate<Lot>] = [
                #Predicate { $0.price > limit }, #Predicate { $0.price >= limit }, #Predicate { $0.price < limit },
                #Predicate { $0.price <= limit }, #Predicate { limit < $0.price },
            ]
            for predicate in predicates {
                let expected = try records.filter { try predicate.evaluate($0) }.map(\.id)
                #expect(try Lot.filter(predicate).order(.ascending(\.id)).findAll(in: test.store).map(\.id) == expected, "\(limit)")
            }
        }
        for descriptors in [
            [SortDescriptor(\Lot.price), SortDescriptor(\Lot.id)], [SortDescriptor(\Lot.price, order: .reverse), SortDescriptor(\Lot.id)],
            [SortDescriptor(\Lot.bid), SortDescriptor(\Lot.id)], [SortDescriptor(\Lot.bid, order: .reverse), SortDescriptor(\Lot.id)],
        ] {
            #expect(try Lot.all().order(descriptors).findAll(in: test.store).map(\.id) == records.sorted(using: descriptors).map(\.id))
        }
    }
}
