import Foundation
import Testing
@testable import ModelStore

struct Listed: StoredModel, Equatable {
    var k: String
    var n: Int64?
    var r: Double?
    var b: Data?
    static let primaryKey = ["k"]
}

/// IN lists of every length: past the inline limit values travel differently, and the long
/// form must match exactly what the short form matches, for every value type it accepts.
@Suite("Reliability: long IN lists match exactly what short ones do")
struct LongListTests {
    private static let alphabet: [String] = ["a", "b", "\u{0}", "\"", "\\", "'", "%", "_", "\n", "\u{1}", "é", "e\u{301}", "🦉", "/", " "]

    private func randomText(_ generator: inout SeededGenerator, _ backend: Backend = .sqlite) -> String {
        // PostgreSQL text cannot hold NUL (U+0000): saving one throws .encodingFailed there.
        let alphabet = backend == .sqlite ? Self.alphabet : Self.alphabet.filter { $0 != "\u{0}" }
        return String((0..<Int.random(in: 0...4, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }.joined())
    }

    private func randomReal(_ generator: inout SeededGenerator) -> Double {
        switch Int.random(in: 0..<4, using: &generator) {
        case 0: return Double(Int.random(in: -3...3, using: &generator))
        case 1: return Double.random(in: -1...1, using: &generator)
        case 2:
            return [0.1, 0.2, 0.30000000000000004, 1e300, Double.leastNonzeroMagnitude, .infinity, -.infinity, 9007199254740992]
                .randomElement(using: &generator)!
        default: return Double(Int.random(in: 0...10, using: &generator)) / 10
        }
    }

    @Test(arguments: Backend.available) func longAndShortListsMatchTheSameRecordsForEveryValueType(_ backend: Backend) throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["MODELSTORE_LIST_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max)
        var generator = SeededGenerator(seed: seed)
        let test = try TestStore(.file, or: backend)
        var records: [String: Listed] = [:]
        while records.count < 300 {
            let text = randomText(&generator, backend)
            records[text] = Listed(
                k: text,
                n: Bool.random(using: &generator) ? Int64.random(in: -5...5, using: &generator) : nil,
                r: Bool.random(using: &generator) ? randomReal(&generator) : nil,
                b: Bool.random(using: &generator) ? Data(randomText(&generator).utf8) : nil)
        }
        _ = try Listed.save(Array(records.values), in: test.store)
        let stored = Array(records.values)

        func check<Value: SQLValueConvertible & Hashable>(
            _ property: KeyPath<Listed, Value?>, _ list: [Value], _ name: String
        ) throws {
            // SQLite compares text by bytes, where Swift's == treats "é" and "e\u{301}" as equal.
            func identity(_ value: Value) -> AnyHashable { (value as? String).map { AnyHashable(Array($0.utf8)) } ?? AnyHashable(value) }
            let set = Set(list.map(identity))
            // SQL's rule: a NULL column is neither in nor not in a list.
            let inside = stored.filter { $0[keyPath: property].map { set.contains(identity($0)) } == true }.count
            let outside = stored.filter { $0[keyPath: property].map { !set.contains(identity($0)) } == true }.count
            let column = Column(String(name))
            #expect(try Listed.count(where: .in(column, list), in: test.store) == inside, "\(name) IN, seed \(seed)")
            #expect(try Listed.count(where: .notIn(column, list), in: test.store) == outside, "\(name) NOT IN, seed \(seed)")
            // The union of short lists over the same values finds the same records.
            var union = Set<String>()
            for start in stride(from: 0, to: list.count, by: 400) {
                let chunk = Array(list[start..<min(start + 400, list.count)])
                union.formUnion(try Listed.findAll(where: .in(column, chunk), in: test.store).map(\.k))
            }
            #expect(union.count == inside, "\(name) short lists, seed \(seed)")
        }

        for round in 0..<6 {
            let size = [3, 499, 501, 608, 1_200, 2_500][round]
            var texts = (0..<size).map { _ in randomText(&generator, backend) }
            texts[0] = backend == .sqlite ? "a\u{0}b" : "a\u{1}b"
            try check(\Listed.kOptional, texts, "k")
            try check(\Listed.n, (0..<size).map { _ in Int64.random(in: -7...7, using: &generator) }, "n")
            try check(\Listed.r, (0..<size).map { _ in randomReal(&generator) }, "r")
            try check(\Listed.b, (0..<size).map { _ in Data(randomText(&generator).utf8) }, "b")
        }
    }

    // SQLite-only: PostgreSQL text cannot hold NUL (U+0000), the value the test is about; saving one throws .encodingFailed.
    @Test func aTextWithANulInALongListMatchesOnlyItself() throws {
        let test = try TestStore(.file)
        _ = try Listed.save([Listed(k: "a"), Listed(k: "a\u{0}b")], in: test.store)
        let others = (0..<600).map { "other \($0)" }
        #expect(try Listed.findAll(where: .in(\.k, ["a\u{0}b"] + others), in: test.store).map(\.k) == ["a\u{0}b"])
        #expect(try Listed.count(where: .in(\.k, ["a", "a\u{0}b"] + others), in: test.store) == 2)
        #expect(try Listed.findAll(where: .notIn(\.k, ["a\u{0}b"] + others), in: test.store).map(\.k) == ["a"])
    }
}

extension Listed {
    /// The key as an optional, so one check serves every column.
    var kOptional: String? { k }
}

extension Listed {
    init(k: String) { self.init(k: k, n: nil, r: nil, b: nil) }
}
