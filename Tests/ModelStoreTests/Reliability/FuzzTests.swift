import Foundation
import Testing
@testable import ModelStore

/// A composite key, optionals of three storage classes and a JSON column.
private struct Shelved: StoredModel, Equatable, CustomStringConvertible {
    var shelf: Int64
    var code: String
    var label: String?
    var score: Double?
    var count: Int?
    var tags: [String]
    static let primaryKey = ["shelf", "code"]

    var key: [String: any SQLValueConvertible] { ["shelf": shelf, "code": code] }
    var description: String {
        "(\(shelf), \(code.debugDescription), \(label?.debugDescription ?? "nil"), \(score.map { "\($0)" } ?? "nil"), \(count.map { "\($0)" } ?? "nil"), \(tags))"
    }
}

private enum Comparison: CaseIterable {
    case less, lessOrEqual, greater, greaterOrEqual

    func holds<T: Comparable>(_ lhs: T, _ rhs: T) -> Bool {
        switch self {
        case .less: return lhs < rhs
        case .lessOrEqual: return lhs <= rhs
        case .greater: return lhs > rhs
        case .greaterOrEqual: return lhs >= rhs
        }
    }

    func condition<Value: SQLValueConvertible>(_ property: KeyPath<Shelved, Value?>, _ value: Value) -> Condition<Shelved> {
        switch self {
        case .less: return property < value
        case .lessOrEqual: return property <= value
        case .greater: return property > value
        case .greaterOrEqual: return property >= value
        }
    }
}

private enum TextMatch: CaseIterable { case contains, prefix, suffix }

/// A generated predicate: what ModelStore compiles, and what the reference evaluates with
/// SQL's three-valued logic (nil is "unknown", which a WHERE clause does not match).
private indirect enum Predicate: CustomStringConvertible {
    case count(Comparison, Int)
    case countEquals(Int?)
    case countDiffers(Int?)
    case countIn([Int], negated: Bool)
    case countBetween(Int, Int)
    case score(Comparison, Double)
    case labelEquals(String)
    case labelDiffers(String)
    case labelCompared(Comparison, String)
    case labelMatches(TextMatch, String, caseInsensitive: Bool)
    case labelIsNull(negated: Bool)
    case and(Predicate, Predicate)
    case or(Predicate, Predicate)
    case not(Predicate)

    var description: String { "\(condition.node)" }

    var condition: Condition<Shelved> {
        switch self {
        case .count(let comparison, let value): return comparison.condition(\.count, value)
        case .countEquals(let value): return \.count == value
        case .countDiffers(let value): return \.count != value
        case .countIn(let values, let negated):
            return negated ? .notIn(\.count, values.map(Optional.some)) : .in(\.count, values.map(Optional.some))
        case .countBetween(let lower, let upper): return .between(\.count, lower, upper)
        case .score(let comparison, let value): return comparison.condition(\.score, value)
        case .labelEquals(let text): return \.label == text
        case .labelDiffers(let text): return \.label != text
        case .labelCompared(let comparison, let text): return comparison.condition(\.label, text)
        case .labelMatches(.contains, let text, let folded): return .contains(\.label, text, caseInsensitive: folded)
        case .labelMatches(.prefix, let text, let folded): return .hasPrefix(\.label, text, caseInsensitive: folded)
        case .labelMatches(.suffix, let text, let folded): return .hasSuffix(\.label, text, caseInsensitive: folded)
        case .labelIsNull(let negated): return negated ? .isNotNull(\.label) : .isNull(\.label)
        case .and(let lhs, let rhs): return lhs.condition && rhs.condition
        case .or(let lhs, let rhs): return lhs.condition || rhs.condition
        case .not(let inner): return !inner.condition
        }
    }

    func evaluate(_ record: Shelved) -> Bool? {
        switch self {
        case .count(let comparison, let value): return record.count.map { comparison.holds($0, value) }
        case .countEquals(let value?): return record.count.map { $0 == value }
        case .countEquals(nil): return record.count == nil
        case .countDiffers(let value): return record.count != value  // IS NOT: never unknown
        case .countIn(let values, let negated):
            guard !values.isEmpty else { return negated }
            return record.count.map { values.contains($0) != negated }
        case .countBetween(let lower, let upper): return record.count.map { lower <= $0 && $0 <= upper }
        case .score(let comparison, let value): return record.score.map { comparison.holds($0, value) }
        case .labelEquals(let text): return record.label.map { Bytes($0) == Bytes(text) }
        case .labelDiffers(let text): return record.label.map { Bytes($0) != Bytes(text) } ?? true
        case .labelCompared(let comparison, let text): return record.label.map { comparison.holds(Bytes($0), Bytes(text)) }
        case .labelMatches(let match, let text, let folded):
            guard !text.isEmpty else { return record.label != nil }
            guard let label = record.label else { return nil }
            let haystack = folded ? Bytes(label).asciiLowercased : Bytes(label)
            let needle = folded ? Bytes(text).asciiLowercased : Bytes(text)
            switch match {
            case .contains: return haystack.contains(needle)
            case .prefix: return haystack.bytes.starts(with: needle.bytes)
            case .suffix: return haystack.bytes.reversed().starts(with: needle.bytes.reversed())
            }
        case .labelIsNull(let negated): return (record.label == nil) != negated
        case .and(let lhs, let rhs):
            let (l, r) = (lhs.evaluate(record), rhs.evaluate(record))
            if l == false || r == false { return false }
            return l == nil || r == nil ? nil : true
        case .or(let lhs, let rhs):
            let (l, r) = (lhs.evaluate(record), rhs.evaluate(record))
            if l == true || r == true { return true }
            return l == nil || r == nil ? nil : false
        case .not(let inner): return inner.evaluate(record).map { !$0 }
        }
    }
}

/// Text as SQLite compares it: UTF-8 bytes, not Swift's canonical equivalence.
private struct Bytes: Comparable {
    let bytes: [UInt8]
    init(_ text: String) { bytes = Array(text.utf8) }
    init(bytes: [UInt8]) { self.bytes = bytes }
    static func < (lhs: Bytes, rhs: Bytes) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
    var asciiLowercased: Bytes { Bytes(bytes: bytes.map { (65...90).contains($0) ? $0 + 32 : $0 }) }
    func contains(_ needle: Bytes) -> Bool {
        guard bytes.count >= needle.bytes.count else { return false }
        return (0...(bytes.count - needle.bytes.count)).contains { bytes[$0..<($0 + needle.bytes.count)].elementsEqual(needle.bytes) }
    }
}

private enum SortKey: CaseIterable { case none, count, score, label }

/// Generates records, predicates and operations from one seed.
private struct Generator {
    var random: SeededGenerator
    static let codes = ["a", "b", "B", "é", "e\u{301}", "a b", "%"]
    static let characters: [String] = ["a", "A", "b", "%", "_", "é", "\u{0}", " ", "\\"]
    static let scores: [Double] = [-.infinity, -2.5, -1, 0, 0.5, 1, 3.25, 1e10, .infinity]

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }
    mutating func pick<T>(_ values: [T]) -> T { values.randomElement(using: &random)! }
    mutating func int() -> Int { Int.random(in: -3...3, using: &random) }
    mutating func text() -> String { (0..<Int.random(in: 0...3, using: &random)).map { _ in pick(Self.characters) }.joined() }

    mutating func record() -> Shelved {
        Shelved(
            shelf: Int64.random(in: 0..<3, using: &random), code: pick(Self.codes),
            label: chance(70) ? text() : nil, score: chance(60) ? pick(Self.scores) : nil,
            count: chance(70) ? int() : nil, tags: chance(50) ? [] : [text()])
    }

    mutating func predicate(depth: Int = 0) -> Predicate {
        if depth < 2, chance(35) {
            switch Int.random(in: 0..<3, using: &random) {
            case 0: return .and(predicate(depth: depth + 1), predicate(depth: depth + 1))
            case 1: return .or(predicate(depth: depth + 1), predicate(depth: depth + 1))
            default: return .not(predicate(depth: depth + 1))
            }
        }
        switch Int.random(in: 0..<11, using: &random) {
        case 0: return .count(pick(Comparison.allCases), int())
        case 1: return .countEquals(chance(80) ? int() : nil)
        case 2: return .countDiffers(chance(80) ? int() : nil)
        case 3: return .countIn((0..<Int.random(in: 0...4, using: &random)).map { _ in int() }, negated: chance(50))
        case 4: let a = int(), b = int(); return .countBetween(min(a, b), max(a, b))
        case 5: return .score(pick(Comparison.allCases), pick(Self.scores))
        case 6: return .labelEquals(text())
        case 7: return .labelDiffers(text())
        case 8: return .labelCompared(pick(Comparison.allCases), text())
        case 9: return .labelMatches(pick(TextMatch.allCases), text(), caseInsensitive: chance(40))
        default: return .labelIsNull(negated: chance(50))
        }
    }
}

// SQLite-only: a long property-based run on a file store; too slow for the PostgreSQL half.
/// Promise 8: random sequences of saves, deletes, updates and finds give exactly the results
/// of an in-memory reference of the same operations.
@Suite("Reliability: property-based comparison with a reference model")
struct FuzzTests {
    @Test func randomOperationSequencesMatchTheReferenceModel() throws {
        let runs = SeededGenerator.count(from: "MODELSTORE_FUZZ_RUNS", default: 60)
        let steps = SeededGenerator.count(from: "MODELSTORE_FUZZ_STEPS", default: 80)
        let base = SeededGenerator.seed(from: "MODELSTORE_FUZZ_SEED")
        for run in 0..<runs {
            let seed = base &+ UInt64(run)
            try Self.run(seed: seed, steps: steps, kind: run % 6 == 5 ? .file : .memory)
        }
    }

    /// One sequence; the first difference is recorded with the seed that replays it
    /// (`MODELSTORE_FUZZ_SEED=<seed> MODELSTORE_FUZZ_RUNS=1 swift test --filter FuzzTests`).
    private static func run(seed: UInt64, steps: Int, kind: StoreKind) throws {
        var generate = Generator(random: SeededGenerator(seed: seed))
        let test = try TestStore(kind)
        let store = test.store
        var reference: [String: Shelved] = [:]
        func id(_ record: Shelved) -> String { "\(record.shelf)/\(record.code.unicodeScalars.map { $0.value })" }
        func merged(_ record: Shelved, clearing: Bool = false) -> Shelved {
            guard let stored = reference[id(record)] else { return record }
            return Shelved(
                shelf: record.shelf, code: record.code, label: clearing ? nil : record.label ?? stored.label,
                score: record.score ?? stored.score, count: record.count ?? stored.count, tags: record.tags)
        }
        func sorted(_ records: [Shelved], by key: SortKey, descending: Bool) -> [Shelved] {
            func keyOrder(_ a: Shelved, _ b: Shelved) -> Bool {
                (a.shelf, Bytes(a.code)) < (b.shelf, Bytes(b.code))
            }
            func order<T: Comparable>(_ a: T?, _ b: T?) -> Bool? {
                if a == b { return nil }
                // SQLite puts NULL first ascending, last descending.
                guard let a else { return !descending }
                guard let b else { return descending }
                return descending ? a > b : a < b
            }
            return records.sorted { a, b in
                let decided: Bool?
                switch key {
                case .none: decided = nil
                case .count: decided = order(a.count, b.count)
                case .score: decided = order(a.score, b.score)
                case .label: decided = order(a.label.map(Bytes.init), b.label.map(Bytes.init))
                }
                return decided ?? keyOrder(a, b)
            }
        }
        var step = 0
        func check(_ condition: Bool, _ what: @autoclosure () -> String) -> Bool {
            if !condition { Issue.record("seed \(seed), step \(step): \(what())") }
            return condition
        }

        for current in 0..<steps {
            step = current
            let roll = Int.random(in: 0..<100, using: &generate.random)
            switch roll {
            case 0..<25:
                let record = generate.record()
                try record.save(in: store)
                reference[id(record)] = merged(record)
            case 25..<30:
                var record = generate.record()
                record.label = nil
                try record.save(clearing: [\.label], in: store)
                reference[id(record)] = merged(record, clearing: true)
            case 30..<35:
                let record = generate.record()
                do {
                    try record.insert(in: store)
                    guard check(reference[id(record)] == nil, "insert of \(record) succeeded over a stored record") else { return }
                    reference[id(record)] = record
                } catch let error as ModelStoreError {
                    guard check(error.code == .alreadyExists && reference[id(record)] != nil, "insert of \(record) failed: \(error)") else {
                        return
                    }
                }
            case 35..<40:
                let record = generate.record()
                do {
                    try record.update(in: store)
                    guard check(reference[id(record)] != nil, "update of \(record) succeeded without a stored record") else { return }
                    reference[id(record)] = merged(record)
                } catch let error as ModelStoreError {
                    guard check(error.code == .notFound && reference[id(record)] == nil, "update of \(record) failed: \(error)") else {
                        return
                    }
                }
            case 40..<50:
                let batch = (0..<Int.random(in: 0...6, using: &generate.random)).map { _ in generate.record() }
                let before = Set(reference.keys)
                let result = try Shelved.save(batch, in: store)
                for record in batch { reference[id(record)] = merged(record) }
                let inserted = Set(batch.map(id)).subtracting(before).count
                guard check(result.inserted == inserted, "batch \(batch) reported \(result.inserted) inserted, not \(inserted)") else {
                    return
                }
            case 50..<56:
                let record = generate.record()
                let deleted = try Shelved.delete(key: record.key, in: store)
                let expected = reference.removeValue(forKey: id(record)) == nil ? 0 : 1
                guard check(deleted == expected, "delete of \(record.shelf)/\(record.code) removed \(deleted)") else { return }
            case 56..<61:
                let predicate = generate.predicate()
                let deleted = try Shelved.filter(predicate.condition).deleteAll(in: store)
                let matching = reference.filter { predicate.evaluate($0.value) == true }
                matching.keys.forEach { reference[$0] = nil }
                guard check(deleted == matching.count, "deleteAll(\(predicate)) removed \(deleted), not \(matching.count)") else { return }
            case 61..<66:
                let predicate = generate.predicate()
                let value: Int? = generate.chance(80) ? generate.int() : nil
                let updated = try Shelved.filter(predicate.condition).updateAll(.set(\.count, to: value), in: store)
                let matching = reference.filter { predicate.evaluate($0.value) == true }
                for key in matching.keys { reference[key]?.count = value }
                guard check(updated == matching.count, "updateAll(\(predicate)) changed \(updated), not \(matching.count)") else { return }
            case 66..<72:
                let record = generate.record()
                let found = try Shelved.find(key: record.key, in: store)
                guard check(found == reference[id(record)], "find \(record.shelf)/\(record.code) gave \(String(describing: found))") else {
                    return
                }
            case 72..<90:
                let predicate = generate.predicate()
                let key = generate.pick(SortKey.allCases)
                let descending = generate.chance(50)
                var query = Shelved.filter(predicate.condition)
                switch key {
                case .none: break
                case .count: query = query.order(descending ? .descending(\.count) : .ascending(\.count))
                case .score: query = query.order(descending ? .descending(\.score) : .ascending(\.score))
                case .label: query = query.order(descending ? .descending(\.label) : .ascending(\.label))
                }
                var expected = sorted(reference.values.filter { predicate.evaluate($0) == true }, by: key, descending: descending)
                if generate.chance(40) {
                    let limit = Int.random(in: 0...5, using: &generate.random)
                    let offset = Int.random(in: 0...4, using: &generate.random)
                    query = query.limit(limit, offset: offset)
                    expected = Array(expected.dropFirst(offset).prefix(limit))
                }
                let found = try query.findAll(in: store)
                guard
                    check(
                        found == expected, "findAll(\(predicate)) by \(key)\(descending ? " desc" : "") gave \(found), expected \(expected)"
                    )
                else { return }
            case 90..<100:
                let predicate = generate.predicate()
                let matching = reference.values.filter { predicate.evaluate($0) == true }
                let query = Shelved.filter(predicate.condition)
                let count = try query.count(in: store)
                let sum = try query.sum(\.count, in: store)
                let lowest = try query.min(\.score, in: store)
                let highest = try query.max(\.label, in: store)
                guard check(count == matching.count, "count(\(predicate)) = \(count), not \(matching.count)"),
                    check(sum == matching.compactMap(\.count).reduce(0, +), "sum(count) where \(predicate) = \(sum)"),
                    check(lowest == matching.compactMap(\.score).min(), "min(score) where \(predicate) = \(String(describing: lowest))"),
                    check(
                        highest.map(Bytes.init) == matching.compactMap(\.label).map(Bytes.init).max(),
                        "max(label) where \(predicate) = \(String(describing: highest))")
                else { return }
            default: break
            }
            // After every write the whole store equals the reference, so a difference is
            // caught at the operation that made it.
            if roll < 66 {
                let all = try Shelved.findAll(in: store)
                let expected = sorted(Array(reference.values), by: .none, descending: false)
                guard check(all == expected, "after this write the store holds \(all), the reference \(expected)") else { return }
            }
        }
        // The whole store, at the end of the sequence.
        let all = try Shelved.findAll(in: store)
        _ = check(
            all == sorted(Array(reference.values), by: .none, descending: false),
            "the store holds \(all), the reference \(reference.values)")
    }
}
