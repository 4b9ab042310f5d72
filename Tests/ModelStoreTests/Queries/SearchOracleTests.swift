import Foundation
import Testing
@testable import ModelStore

struct OracleNote: StoredModel {
    var id: Int64
    var title: String
    var body: String?
    var tag: String?
    static let primaryKey = ["id"]
    static let searchable: [SearchableText<OracleNote>] = [.text(\.title, weight: 2), .text(\.body), .text(\.tag)]
}

/// Full-text queries against an oracle written here: random records of words that every
/// backend's tokenizer splits and folds alike (case, Latin accents, punctuation between
/// words), and random FTS5 queries — phrases, prefixes, `AND`, `OR`, `NOT`, words side by
/// side, column filters — whose answers Swift works out from the words. One body on both
/// backends: a difference from the oracle is a wrong answer on that backend.
@Suite("Full-text search against an oracle")
struct SearchOracleTests {
    static let columns = ["title", "body", "tag"]
    static let words = [
        "apple", "Apple", "APPLE", "banana", "band", "bandana", "cherry", "café", "Cafe", "crème", "creme", "naïve", "Naive",
        "garçon", "x1", "2024", "日本語", "zed",
    ]
    static let separators = [" ", ", ", "-", ". ", "'", "/", " (", ") ", "!  "]
    static let prefixes = ["ban", "ch", "cr", "caf", "na", "ap", "x", "20"]

    /// A word as both tokenizers keep it: lower case, without accents.
    static func fold(_ word: String) -> String {
        String(
            String.UnicodeScalarView(
                word.lowercased().decomposedStringWithCanonicalMapping.unicodeScalars.filter { !(0x300...0x36F).contains($0.value) }))
    }

    static func tokens(_ text: String?) -> [String] {
        guard let text else { return [] }
        return text.split { !($0.isLetter || $0.isNumber) }.map { fold(String($0)) }
    }

    indirect enum Query {
        case phrase([String], prefix: String?, columns: Set<Int>?)
        case and(Query, Query), or(Query, Query), not(Query, Query), implicit(Query, Query)
        case filtered(Set<Int>, excluding: Bool, Query)

        /// FTS5 syntax.
        var text: String {
            switch self {
            case .phrase(let words, let prefix, let columns):
                var phrase: String
                if words.count == 1, prefix == nil {
                    phrase = words[0].contains(where: { !$0.isLetter && !$0.isNumber }) ? "\"\(words[0])\"" : words[0]
                } else if words.isEmpty, let prefix {
                    phrase = prefix + "*"
                } else {
                    phrase = "\"" + (words + (prefix.map { [$0] } ?? [])).joined(separator: " ") + "\"" + (prefix == nil ? "" : "*")
                }
                if let columns { phrase = Query.filter(columns, excluding: false) + " : " + phrase }
                return phrase
            case .and(let left, let right): return "(\(left.text)) AND (\(right.text))"
            case .or(let left, let right): return "(\(left.text)) OR (\(right.text))"
            case .not(let left, let right): return "(\(left.text)) NOT (\(right.text))"
            case .implicit(let left, let right): return "\(left.text) \(right.text)"
            case .filtered(let columns, let excluding, let query): return Query.filter(columns, excluding: excluding) + " : (\(query.text))"
            }
        }

        static func filter(_ columns: Set<Int>, excluding: Bool) -> String {
            let names = columns.sorted().map { SearchOracleTests.columns[$0] }
            return (excluding ? "- " : "") + (names.count == 1 ? names[0] : "{" + names.joined(separator: " ") + "}")
        }

        func matches(_ note: [[String]], in scope: Set<Int>) -> Bool {
            switch self {
            case .phrase(let words, let prefix, let columns):
                let allowed = scope.intersection(columns ?? Set(0..<3))
                let wanted = words.map(SearchOracleTests.fold)
                return allowed.contains { column in
                    let tokens = note[column]
                    let length = wanted.count + (prefix == nil ? 0 : 1)
                    guard tokens.count >= length else { return false }
                    return (0...(tokens.count - length)).contains { start in
                        zip(wanted, tokens[start...]).allSatisfy { $0 == $1 }
                            && (prefix.map { tokens[start + wanted.count].hasPrefix($0) } ?? true)
                    }
                }
            case .and(let left, let right), .implicit(let left, let right):
                return left.matches(note, in: scope) && right.matches(note, in: scope)
            case .or(let left, let right): return left.matches(note, in: scope) || right.matches(note, in: scope)
            case .not(let left, let right): return left.matches(note, in: scope) && !right.matches(note, in: scope)
            case .filtered(let columns, let excluding, let query):
                return query.matches(note, in: scope.intersection(excluding ? Set(0..<3).subtracting(columns) : columns))
            }
        }
    }

    static func randomColumns(_ random: inout SeededGenerator) -> Set<Int> {
        var set = Set<Int>()
        while set.isEmpty { set = Set((0..<3).filter { _ in Bool.random(using: &random) }) }
        return set
    }

    static func randomPhrase(_ random: inout SeededGenerator) -> Query {
        let count = Int.random(in: 0...2, using: &random)
        var words = (0..<count).map { _ in Self.words.randomElement(using: &random)! }
        var prefix: String? = Int.random(in: 0..<4, using: &random) == 0 ? Self.prefixes.randomElement(using: &random)! : nil
        if words.isEmpty, prefix == nil { words = [Self.words.randomElement(using: &random)!] }
        if words.isEmpty, prefix == nil { prefix = "a" }
        let columns = Int.random(in: 0..<5, using: &random) == 0 ? randomColumns(&random) : nil
        return .phrase(words, prefix: prefix, columns: columns)
    }

    static func randomQuery(_ random: inout SeededGenerator, depth: Int) -> Query {
        guard depth > 0, Int.random(in: 0..<3, using: &random) > 0 else { return randomPhrase(&random) }
        let left = randomQuery(&random, depth: depth - 1)
        let right = randomQuery(&random, depth: depth - 1)
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return .and(left, right)
        case 1: return .or(left, right)
        case 2: return .not(left, right)
        case 3: return .implicit(randomPhrase(&random), randomPhrase(&random))
        case 4: return .filtered(randomColumns(&random), excluding: Bool.random(using: &random), left)
        default: return .or(.and(left, right), randomPhrase(&random))
        }
    }

    static func randomText(_ random: inout SeededGenerator, optional: Bool) -> String? {
        if optional, Int.random(in: 0..<5, using: &random) == 0 { return nil }
        let count = Int.random(in: 0...7, using: &random)
        var text = Bool.random(using: &random) ? "" : Self.separators.randomElement(using: &random)!
        for index in 0..<count {
            if index > 0 { text += Self.separators.randomElement(using: &random)! }
            text += Self.words.randomElement(using: &random)!
        }
        return text
    }

    @Test(arguments: Backend.available) func randomQueriesFindWhatTheOracleFinds(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let seed = SeededGenerator.seed(from: "MODELSTORE_SEARCH_SEED")
        var random = SeededGenerator(seed: seed)
        let notes = (1...80).map { id in
            OracleNote(
                id: Int64(id), title: Self.randomText(&random, optional: false)!, body: Self.randomText(&random, optional: true),
                tag: Self.randomText(&random, optional: true))
        }
        try OracleNote.save(notes, in: test.store)
        let tokens = notes.map { [Self.tokens($0.title), Self.tokens($0.body), Self.tokens($0.tag)] }
        var failures = 0
        for _ in 0..<SeededGenerator.count(from: "MODELSTORE_SEARCH_QUERIES", default: 150) where failures < 5 {
            let query = Self.randomQuery(&random, depth: 3)
            let expected = Set(zip(notes, tokens).filter { query.matches($1, in: Set(0..<3)) }.map(\.0.id))
            let found = Set(try OracleNote.findAll(where: .matches(.query(query.text)), in: test.store).map(\.id))
            let searched = try OracleNote.search(.query(query.text), limit: 1_000, in: test.store)
            if found != expected || Set(searched.map(\.model.id)) != expected {
                failures += 1
                Issue.record(
                    "seed \(seed) (MODELSTORE_SEARCH_SEED): '\(query.text)' found \(found.sorted()), searched \(searched.map(\.model.id).sorted()), expected \(expected.sorted())"
                )
            }
            #expect(searched.map(\.rank) == searched.map(\.rank).sorted())
        }
    }

    @Test(arguments: Backend.available) func userTextAndColumnsMatchTheOracle(_ backend: Backend) throws {
        let test = try TestStore(backend)
        var random = SeededGenerator(seed: SeededGenerator.seed(from: "MODELSTORE_SEARCH_SEED"))
        let notes = (1...60).map { id in
            OracleNote(
                id: Int64(id), title: Self.randomText(&random, optional: false)!, body: Self.randomText(&random, optional: true),
                tag: Self.randomText(&random, optional: true))
        }
        try OracleNote.save(notes, in: test.store)
        let tokens = notes.map { [Self.tokens($0.title), Self.tokens($0.body), Self.tokens($0.tag)] }
        let paths: [PartialKeyPath<OracleNote>] = [\.title, \.body, \.tag]
        for _ in 0..<60 {
            // What a user typed: quotes, stars, keywords and punctuation are text.
            let typed = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                Bool.random(using: &random)
                    ? Self.words.randomElement(using: &random)!
                    : ["AND", "\"", "*", "title:", "NOT", "-", "(", "ban"].randomElement(using: &random)!
            }.joined(separator: " ")
            let column = Int.random(in: 0..<3, using: &random)
            let words = Self.tokens(typed)
            func has(_ phrase: Bool, _ prefix: Bool, in scope: [Int], _ note: [[String]]) -> Bool {
                guard !words.isEmpty else { return false }
                if phrase {
                    return scope.contains { column in
                        let found = note[column]
                        guard found.count >= words.count else { return false }
                        return (0...(found.count - words.count)).contains { Array(found[$0..<($0 + words.count)]) == words }
                    }
                }
                return words.enumerated().allSatisfy { offset, word in
                    scope.contains { column in
                        note[column].contains { prefix && offset == words.count - 1 ? $0.hasPrefix(word) : $0 == word }
                    }
                }
            }
            let prefix = Bool.random(using: &random)
            // A typed run without words ("-") is left out, and a prefix on it prefixes nothing.
            let lastRun = typed.split(whereSeparator: \.isWhitespace).last.map(String.init)
            let prefixes = prefix && !Self.tokens(lastRun).isEmpty
            for (text, phrase) in [(SearchText.words(typed, prefix: prefix), false), (SearchText.phrase(typed), true)] {
                let everywhere = Set(zip(notes, tokens).filter { has(phrase, prefixes && !phrase, in: [0, 1, 2], $1) }.map(\.0.id))
                #expect(
                    Set(try OracleNote.findAll(where: .matches(text), in: test.store).map(\.id)) == everywhere, "'\(typed)' \(text)")
                let inColumn = Set(zip(notes, tokens).filter { has(phrase, prefixes && !phrase, in: [column], $1) }.map(\.0.id))
                #expect(
                    Set(try OracleNote.findAll(where: .matches(text, in: paths[column]), in: test.store).map(\.id)) == inColumn,
                    "'\(typed)' in \(Self.columns[column])")
            }
        }
    }
}
