#if PostgreSQL
    import Foundation
    import ModelStore

    /// Full-text search on PostgreSQL (the rule of `FullTextSQL`): an expression GIN index over
    /// a `tsvector` of the model's searchable columns, which the server keeps in step with
    /// every write of the table by itself (no trigger, no second table), in the writing
    /// transaction.
    ///
    /// **Words.** Each column's text is lowered and split as SQLite's `unicode61` tokenizer
    /// with `remove_diacritics 2` splits it: letters and digits make words (ICU's classes, the
    /// collation `und-x-icu`), everything else separates them, and combining accents
    /// (U+0300–U+036F, after canonical decomposition) are dropped, so "Café" is the word
    /// "cafe". The server's `simple` configuration then takes those words as they are. The
    /// words of a search's text are made by the same SQL on the server, so the text and the
    /// stored words can never be split two ways.
    ///
    /// **Columns.** Each column's words carry a weight label (A, B, C, D in declaration
    /// order), so a search limited to some columns (`title: …`, `.matches(_:in:)`) asks for
    /// those labels, and the ranking weighs each column as declared (`ts_rank`). A word that
    /// never occurs (`-modelstore-`: no word holds a `-`) separates the columns, so a phrase
    /// never runs from one column into the next, as in FTS5. Four labels: a model searches at
    /// most four columns here.
    ///
    /// **Queries.** A search's text is FTS5 query syntax, checked by SQLite first as on every
    /// backend; it is parsed here and built into a `tsquery` on the server: a phrase is
    /// `<->`, a prefix `:*`, `AND`/`OR`/`NOT` are `&&`/`||`/`&& !!`. A phrase without words
    /// matches nothing (as in FTS5): it is a word no text holds (`!`). `NEAR` and `^` have no
    /// equal in a `tsquery` and are refused by name.
    ///
    /// **Snippets** are made here from the stored text, with the words of the query marked.
    struct PostgresFullText: FullTextSQL {
        /// The word between two columns' words, and what tells ModelStore's indexes from
        /// others in `pg_get_indexdef`.
        static let separator = "-modelstore-"
        static let labels = ["A", "B", "C", "D"]
        /// What the comment on the index starts with; the rest is the declaration it indexes.
        static let commentPrefix = "modelstore full-text index v2: "

        func refusal(of index: SearchIndexDescription, model: String) -> (message: String, suggestion: String)? {
            guard index.columns.count > Self.labels.count else { return nil }
            return (
                "\(model) declares \(index.columns.count) searchable properties (\(index.columns.joined(separator: ", "))); PostgreSQL's full-text index tells at most 4 apart (its weight labels A to D).",
                "Search at most four properties of \(model) on a server, or join the texts to search into one property."
            )
        }

        /// The words of `text` (SQL of a text), as the server splits and folds them.
        static func words(_ text: String) -> String {
            #"regexp_replace(normalize(translate(regexp_replace(normalize(lower((\#(text)) COLLATE "und-x-icu"), NFD) COLLATE "und-x-icu", '[\u0300-\u036f]+', '', 'g'), 'ς', 'σ'), NFC) COLLATE "und-x-icu", '[^[:alnum:]]+', ' ', 'g')"#
        }

        /// The `tsvector` of the index's columns, each with its label, each after the
        /// separating word (so every index of ModelStore's, of one column too, shows it).
        static func vector(_ index: SearchIndexDescription) -> String {
            let parts = index.columns.enumerated().map { position, column in
                "'''\(separator)'':1'::tsvector || setweight(to_tsvector('simple'::regconfig, coalesce(\(words(quoted(column))), '')), '\(labels[position])')"
            }
            return "(" + parts.joined(separator: " || ") + ")"
        }

        /// What the index's comment says: the columns and weights it indexes.
        static func comment(_ index: SearchIndexDescription) -> String {
            // Not the weights: they rank, in each search's SQL, and changing one needs no new index.
            commentPrefix + index.columns.joined(separator: ", ")
        }

        /// ModelStore's full-text indexes on `table`: name → comment ("" when none).
        private func stored(ofTable table: String, on database: FullTextDatabase) throws -> [String: String] {
            let rows = try database.rows(
                """
                SELECT c.relname::text, coalesce(obj_description(c.oid, 'pg_class'), '') FROM pg_catalog.pg_index i
                JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid JOIN pg_catalog.pg_class t ON t.oid = i.indrelid
                WHERE t.relnamespace = current_schema()::regnamespace AND t.relname = ?
                AND strpos(pg_catalog.pg_get_indexdef(c.oid), ?) > 0
                """, [.text(table), .text(Self.separator)])
            var found: [String: String] = [:]
            for row in rows {
                guard case .text(let name) = row[0], case .text(let comment) = row[1] else { continue }
                found[name] = comment
            }
            return found
        }

        func prepare(_ index: SearchIndexDescription?, table: String, model: String, on database: FullTextDatabase) throws {
            let stored = try stored(ofTable: table, on: database)
            if let index, stored.values.elementsEqual([Self.comment(index)]) { return }
            // Another declaration's, a renamed column's, or one a rebuild carried over.
            for name in stored.keys.sorted() { try database.execute("DROP INDEX IF EXISTS \(quoted(name))") }
            guard let index else { return }
            guard try !database.rows("SELECT 1 FROM pg_catalog.pg_collation WHERE collname = 'und-x-icu'", []).isEmpty else {
                throw ModelStoreError(
                    .unsupported,
                    "\(model) declares searchable properties, but this PostgreSQL has no ICU collation und-x-icu, which splits text into words as SQLite does. Nothing was written.",
                    model: model, suggestion: "Run a PostgreSQL built with ICU (most packages are), or remove \(model).searchable.")
            }
            try database.execute(
                "CREATE INDEX IF NOT EXISTS \(quoted(Self.indexName(table))) ON \(quoted(table)) USING gin (\(Self.vector(index)))")
            try database.execute(
                "COMMENT ON INDEX \(quoted(Self.indexName(table))) IS '\(Self.comment(index).replacingOccurrences(of: "'", with: "''"))'")
        }

        /// The index's name: one per table, so stores in two processes preparing the table at
        /// once make one index (the second one's `IF NOT EXISTS` sees the first one's, which
        /// its transaction's snapshot would not). Within the server's 63 bytes.
        static func indexName(_ table: String) -> String {
            let name = table + "_fts"
            guard name.utf8.count > 63 else { return name }
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in table.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return "modelstore_fts_" + String(hash, radix: 16)
        }

        /// Whether the table has exactly the declared index. A search reads the table's own
        /// text, so one that is missing or old makes reads slower, never different; the
        /// writer makes it again at the table's next preparation.
        func isComplete(_ index: SearchIndexDescription, on database: FullTextDatabase) throws -> Bool {
            try stored(ofTable: index.tableName, on: database).values.elementsEqual([Self.comment(index)])
        }

        func drop(ofTable table: String, on database: FullTextDatabase) throws {
            for name in try stored(ofTable: table, on: database).keys.sorted() {
                try database.execute("DROP INDEX IF EXISTS \(quoted(name))")
            }
        }

        func indexTables(on database: FullTextDatabase) throws -> Set<String> { [] }
        func standIn(_ index: SearchIndexDescription) -> [String] { [] }
        func temporaryCopy(_ index: SearchIndexDescription) -> [String] { [] }

        func condition(_ expression: String, text: String, in index: SearchIndexDescription, model: String) throws -> (
            sql: String, values: [SQLValue]
        ) {
            let query = try Self.query(expression, text: text, in: index, model: model)
            return ("(\(Self.vector(index)) @@ \(query.sql))", query.values)
        }

        func rankedSearch(
            _ expression: String, text: String, in index: SearchIndexDescription, model: String, columns: [String], key: [String],
            condition: (sql: String, values: [SQLValue])?, limit: Int, offset: Int, marks: SnippetMarks
        ) throws -> (sql: String, values: [SQLValue]) {
            let query = try Self.query(expression, text: text, in: index, model: model)
            // ts_rank's weights are for D, C, B, A, each at most 1.
            let largest = index.weights.max() ?? 1
            // (At least float4's smallest normal number: a smaller one would not fit.)
            let weights = (0..<Self.labels.count).reversed().map {
                $0 < index.weights.count ? max(index.weights[$0] / largest, 1e-37) : 0
            }
            let vector = Self.vector(index)
            let weightList: String = weights.map { String($0) }.joined(separator: ",")
            let rank: String = "(-ts_rank('{\(weightList)}'::float4[], \(vector), modelstore_search.modelstore_tsquery))::float8"
            let selected: [String] = columns + [rank] + index.columns.map { quoted($0) }
            let table: String = quoted(index.tableName)
            var sql: String = "SELECT " + selected.joined(separator: ", ")
            sql += " FROM \(table), (SELECT \(query.sql) AS modelstore_tsquery) AS modelstore_search"
            sql += " WHERE \(vector) @@ modelstore_search.modelstore_tsquery"
            var values = query.values
            if let condition {
                sql += " AND (\(condition.sql))"
                values += condition.values
            }
            sql += " ORDER BY \(columns.count + 1)" + key.map { ", " + $0 }.joined() + " LIMIT ? OFFSET ?"
            values += [.integer(Int64(limit)), .integer(Int64(offset))]
            return (sql, values)
        }

        func snippet(_ selected: String, column: Int, expression: String, in index: SearchIndexDescription, marks: SnippetMarks) -> String {
            guard let parsed = try? FTS5Query.parse(expression, columns: index.columns) else { return selected }
            let terms = parsed.terms(in: column).map { (word: Snippets.fold($0.word), prefix: $0.prefix) }
            return Snippets.snippet(of: selected, terms: terms, marks: marks)
        }

        /// The `tsquery` of a checked FTS5 expression, built on the server from its words.
        static func query(_ expression: String, text: String, in index: SearchIndexDescription, model: String) throws -> (
            sql: String, values: [SQLValue]
        ) {
            let parsed: FTS5Query
            do {
                parsed = try FTS5Query.parse(expression, columns: index.columns)
            } catch let refusal as FTS5Query.Refusal {
                throw ModelStoreError(
                    .invalidQuery,
                    "The search text '\(text)' for \(model) uses \(refusal.what), which PostgreSQL's full-text search cannot answer as SQLite does.",
                    model: model, value: text,
                    suggestion:
                        "Search without \(refusal.what) on a server (words, \"phrases\", prefix*, AND, OR, NOT and column filters work on both)."
                )
            } catch {
                // What SQLite's check let through but its grammar does not take as a whole (text
                // after a NUL, which SQLite never reads).
                throw ModelStoreError(
                    .invalidQuery, "The search text '\(text)' for \(model) is not valid full-text query syntax as a whole.",
                    model: model, value: text,
                    suggestion: "Search for text a user typed with .words(…) or .phrase(…), which take it literally.")
            }
            var values: [SQLValue] = []
            let sql = build(parsed.node, all: Set(index.columns.indices), values: &values)
            return (sql, values)
        }

        /// The text of a word no text holds: what a phrase with no column matches, and a query
        /// whose phrases have no words.
        static let nothing = "'''!'''"

        private static func build(_ node: FTS5Query.Node, all: Set<Int>, values: inout [SQLValue]) -> String {
            switch node {
            case .and(let left, let right):
                return "(\(build(left, all: all, values: &values)) && \(build(right, all: all, values: &values)))"
            case .or(let left, let right):
                return "(\(build(left, all: all, values: &values)) || \(build(right, all: all, values: &values)))"
            case .not(let left, let right):
                return "(\(build(left, all: all, values: &values)) && !!\(build(right, all: all, values: &values)))"
            case .phrases(let phrases):
                // Side by side, a phrase without words is left out (as FTS5 leaves it out);
                // when all are, nothing matches.
                let texts = phrases.map { phrase($0, all: all, values: &values) }
                let joined =
                    texts.count == 1
                    ? texts[0] : "NULLIF(concat_ws(' & ', \(texts.map { "'(' || \($0) || ')'" }.joined(separator: ", "))), '')"
                return "(coalesce(\(joined), \(nothing))::tsquery)"
            }
        }

        /// A phrase's `tsquery` text ('a' <-> 'b':*), NULL when it has no words.
        private static func phrase(_ phrase: FTS5Query.Phrase, all: Set<Int>, values: inout [SQLValue]) -> String {
            guard !phrase.columns.isEmpty else { return nothing }
            let texts = phrase.parts.map { part -> String in
                values.append(.text(part.text))
                let words =
                    "(SELECT NULLIF(CASE WHEN w ~ '[^ ]' THEN phraseto_tsquery('simple'::regconfig, w)::text END, '') FROM (SELECT \(words("?::text")) AS w) AS modelstore_words)"
                return part.prefix ? "(\(words) || ':*')" : words
            }
            let joined = texts.count == 1 ? texts[0] : "NULLIF(concat_ws(' <-> ', \(texts.joined(separator: ", "))), '')"
            guard phrase.columns != all else { return joined }
            let labels = phrase.columns.sorted().map { Self.labels[$0] }.joined()
            return #"regexp_replace(\#(joined), '(''[^'']*'')(?::(\*))?', '\1:\2\#(labels)', 'g')"#
        }
    }

    /// A checked FTS5 query (sqlite.org/fts5.html#full_text_query_syntax), parsed by its
    /// grammar (`fts5parse.y`): `OR` binds loosest, then `AND`, then `NOT`, and phrases side
    /// by side (an implicit AND) tightest; a column filter applies to the one phrase after it
    /// or to a parenthesized query.
    struct FTS5Query {
        struct Part: Hashable {
            var text: String
            var prefix: Bool
        }
        /// The parts of a phrase (each one's words follow the last's), in these columns.
        struct Phrase {
            var parts: [Part]
            var columns: Set<Int>
        }
        indirect enum Node {
            case and(Node, Node)
            case or(Node, Node)
            case not(Node, Node)
            /// Phrases side by side: each must match.
            case phrases([Phrase])
        }
        /// Syntax a `tsquery` cannot say.
        struct Refusal: Error {
            let what: String
        }
        struct Malformed: Error {}

        let node: Node

        private enum Token: Equatable {
            case word(String)  // a bareword or a "string"
            case bare(String)  // a bareword, for AND, OR, NOT and NEAR
            case symbol(Character)
        }

        static func parse(_ expression: String, columns: [String]) throws -> FTS5Query {
            var parser = Parser(tokens: try tokens(of: expression), columns: columns)
            let node = try parser.expression(Set(columns.indices))
            guard parser.position == parser.tokens.count else { throw Malformed() }
            return FTS5Query(node: node)
        }

        /// FTS5's lexer: ASCII space separates; `"…"` is a string (`""` a quote); a bareword
        /// is a run of ASCII letters, digits, `_`, U+001A and anything beyond ASCII.
        private static func tokens(of text: String) throws -> [Token] {
            var tokens: [Token] = []
            let scalars = Array(text.unicodeScalars)
            var index = 0
            func isBare(_ scalar: Unicode.Scalar) -> Bool {
                scalar.value >= 0x80 || scalar.value == 0x1A || scalar == "_"
                    || ("0"..."9").contains(scalar) || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
            }
            while index < scalars.count {
                let scalar = scalars[index]
                if [" ", "\t", "\n", "\r", "\u{0B}", "\u{0C}"].contains(scalar) {
                    index += 1
                } else if scalar == "\"" {
                    var string = String.UnicodeScalarView()
                    index += 1
                    while true {
                        guard index < scalars.count else { throw Malformed() }
                        if scalars[index] == "\"" {
                            if index + 1 < scalars.count, scalars[index + 1] == "\"" {
                                string.append("\"")
                                index += 2
                                continue
                            }
                            index += 1
                            break
                        }
                        string.append(scalars[index])
                        index += 1
                    }
                    tokens.append(.word(String(string)))
                } else if isBare(scalar) {
                    var string = String.UnicodeScalarView()
                    while index < scalars.count, isBare(scalars[index]) {
                        string.append(scalars[index])
                        index += 1
                    }
                    tokens.append(.bare(String(string)))
                } else if "(){}:,+*-^".unicodeScalars.contains(scalar) {
                    tokens.append(.symbol(Character(scalar)))
                    index += 1
                } else {
                    throw Malformed()
                }
            }
            return tokens
        }

        private struct Parser {
            let tokens: [Token]
            let columns: [String]
            var position = 0

            init(tokens: [Token], columns: [String]) {
                self.tokens = tokens
                self.columns = columns
            }

            var next: Token? { position < tokens.count ? tokens[position] : nil }
            func peek(_ offset: Int) -> Token? { position + offset < tokens.count ? tokens[position + offset] : nil }

            mutating func take(_ symbol: Character) -> Bool {
                guard next == .symbol(symbol) else { return false }
                position += 1
                return true
            }

            mutating func keyword(_ word: String) -> Bool {
                guard next == .bare(word) else { return false }
                position += 1
                return true
            }

            mutating func expression(_ scope: Set<Int>) throws -> Node {
                var node = try conjunction(scope)
                while keyword("OR") { node = .or(node, try conjunction(scope)) }
                return node
            }

            mutating func conjunction(_ scope: Set<Int>) throws -> Node {
                var node = try negation(scope)
                while keyword("AND") { node = .and(node, try negation(scope)) }
                return node
            }

            mutating func negation(_ scope: Set<Int>) throws -> Node {
                var node = try unit(scope)
                while keyword("NOT") { node = .not(node, try unit(scope)) }
                return node
            }

            /// `( query )`, `columns : ( query )`, or phrases side by side.
            mutating func unit(_ scope: Set<Int>) throws -> Node {
                if take("(") {
                    let node = try expression(scope)
                    guard take(")") else { throw Malformed() }
                    return node
                }
                let start = position
                if let columns = try columnFilter(), take("(") {
                    let node = try expression(scope.intersection(columns))
                    guard take(")") else { throw Malformed() }
                    return node
                }
                position = start
                var phrases = [try filteredPhrase(scope)]
                while let token = next, startsPhrase(token) { phrases.append(try filteredPhrase(scope)) }
                return .phrases(phrases)
            }

            func startsPhrase(_ token: Token) -> Bool {
                switch token {
                case .word: return true
                case .bare(let word): return !["AND", "OR", "NOT"].contains(word)
                case .symbol(let symbol): return symbol == "-" || symbol == "{" || symbol == "^"
                }
            }

            mutating func filteredPhrase(_ scope: Set<Int>) throws -> Phrase {
                let start = position
                if let columns = try columnFilter() { return try phrase(scope.intersection(columns)) }
                position = start
                return try phrase(scope)
            }

            /// `name :`, `- name :`, `{names} :` or `- {names} :`: the columns named (or all
            /// but them); nil, with the position unspecified, when no filter starts here.
            mutating func columnFilter() throws -> Set<Int>? {
                let excluding = take("-")
                var names: [String] = []
                if take("{") {
                    while let token = next {
                        guard case .word(let name) = token else {
                            guard case .bare(let name) = token else { break }
                            names.append(name)
                            position += 1
                            continue
                        }
                        names.append(name)
                        position += 1
                    }
                    guard take("}") else { return nil }
                } else {
                    switch next {
                    case .word(let name), .bare(let name):
                        names.append(name)
                        position += 1
                    default:
                        return nil
                    }
                }
                guard take(":") else { return nil }
                var named = Set<Int>()
                for name in names {
                    guard let column = columns.firstIndex(where: { $0.lowercased() == name.lowercased() }) else { throw Malformed() }
                    named.insert(column)
                }
                return excluding ? Set(columns.indices).subtracting(named) : named
            }

            /// `word`, `"words"`, `word*`, joined by `+`; NEAR(…) and `^` are refused.
            mutating func phrase(_ scope: Set<Int>) throws -> Phrase {
                if next == .symbol("^") { throw Refusal(what: "^ (a phrase at the start of a column)") }
                if next == .bare("NEAR"), peek(1) == .symbol("(") { throw Refusal(what: "NEAR(…)") }
                var parts: [Part] = []
                repeat {
                    switch next {
                    case .word(let text), .bare(let text):
                        position += 1
                        parts.append(Part(text: text, prefix: take("*")))
                    default:
                        throw Malformed()
                    }
                } while take("+")
                return Phrase(parts: parts, columns: scope)
            }
        }

        /// The words of the phrases a match needs (not those after a NOT) that may be in
        /// `column`, each with whether it is a prefix.
        func terms(in column: Int) -> [(word: String, prefix: Bool)] {
            var found: [(word: String, prefix: Bool)] = []
            func walk(_ node: Node) {
                switch node {
                case .and(let left, let right), .or(let left, let right):
                    walk(left)
                    walk(right)
                case .not(let left, _):
                    walk(left)
                case .phrases(let phrases):
                    for phrase in phrases where phrase.columns.contains(column) {
                        for part in phrase.parts {
                            let words = Snippets.words(of: part.text)
                            for (offset, word) in words.enumerated() {
                                found.append((word, part.prefix && offset == words.count - 1))
                            }
                        }
                    }
                }
            }
            walk(node)
            return found
        }
    }

    /// Snippets made in Swift from a stored text: the window of words with the most matched
    /// words, each matched word marked, an ellipsis where text is left out. Words are split
    /// and folded as the server splits them (letters and digits; combining accents dropped).
    enum Snippets {
        static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .decimalNumber: return true
            default: return (0x300...0x36F).contains(scalar.value)
            }
        }

        /// `word` lowered, decomposed and without combining accents.
        static func fold(_ word: String) -> String {
            let decomposed = word.lowercased().decomposedStringWithCanonicalMapping
            let stripped = String(String.UnicodeScalarView(decomposed.unicodeScalars.filter { !(0x300...0x36F).contains($0.value) }))
            return stripped.replacingOccurrences(of: "ς", with: "σ").precomposedStringWithCanonicalMapping
        }

        /// The words of `text`, folded.
        static func words(of text: String) -> [String] {
            ranges(of: text).map { fold(String(text.unicodeScalars[$0])) }.filter { !$0.isEmpty }
        }

        static func ranges(of text: String) -> [Range<String.UnicodeScalarView.Index>] {
            var ranges: [Range<String.UnicodeScalarView.Index>] = []
            let scalars = text.unicodeScalars
            var start: String.UnicodeScalarView.Index?
            var index = scalars.startIndex
            while index < scalars.endIndex {
                if isWordScalar(scalars[index]) {
                    if start == nil { start = index }
                } else if let begun = start {
                    ranges.append(begun..<index)
                    start = nil
                }
                index = scalars.index(after: index)
            }
            if let begun = start { ranges.append(begun..<scalars.endIndex) }
            return ranges
        }

        static func snippet(of text: String, terms: [(word: String, prefix: Bool)], marks: SnippetMarks) -> String {
            let scalars = text.unicodeScalars
            let words = ranges(of: text)
            guard !words.isEmpty else { return text }
            let hits = words.map { range -> Bool in
                let word = fold(String(scalars[range]))
                return !word.isEmpty && terms.contains { $0.prefix ? word.hasPrefix($0.word) : word == $0.word }
            }
            let length = max(1, marks.tokens)
            var first = 0
            if words.count > length {
                var best = -1
                for start in 0...(words.count - length) {
                    let count = hits[start..<(start + length)].filter { $0 }.count
                    if count > best {
                        best = count
                        first = start
                    }
                }
            }
            let last = min(words.count, first + length) - 1
            var result = first > 0 ? marks.ellipsis : ""
            var cursor = first > 0 ? words[first].lowerBound : scalars.startIndex
            for position in first...last {
                let range = words[position]
                result += String(scalars[cursor..<range.lowerBound])
                let word = String(scalars[range])
                result += hits[position] ? marks.open + word + marks.close : word
                cursor = range.upperBound
            }
            if last == words.count - 1 {
                result += String(scalars[cursor..<scalars.endIndex])
            } else {
                result += marks.ellipsis
            }
            return result
        }
    }
#endif
