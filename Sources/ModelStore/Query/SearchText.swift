/// What a full-text search looks for: FTS5 query syntax written by the program, or text a
/// user typed, searched literally.
///
/// ```swift
/// let hits = try Recipe.search("choc* AND NOT mint")               // a literal is FTS5 syntax
/// let typed = try Recipe.search(.words(searchField.text, prefix: true))   // user input: literal words
/// let exact = try Recipe.search(.phrase("dark chocolate"))         // the words next to each other
/// ```
///
/// Text a user typed must not be passed as `.query`: a stray quote, `*`, `-`, `AND` or `:` is
/// FTS5 syntax, and the search would fail with `.invalidQuery` or mean something else.
/// `.words` and `.phrase` quote every word, so nothing in the text is syntax. (A string
/// literal is a `.query`; a `String` variable has to say which it is.)
///
/// Matching follows the index's tokenizer: words are compared without regard to case or
/// diacritics ("cafe" finds "Café"), and punctuation separates words.
public struct SearchText: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    enum Kind: Sendable, Hashable {
        case query
        case phrase
        case words(prefix: Bool)
    }

    let kind: Kind
    /// The text as the caller gave it.
    public let text: String

    /// FTS5 query syntax (sqlite.org/fts5.html#full_text_query_syntax): words, `"phrases"`,
    /// `prefix*`, `AND`, `OR`, `NOT`, `NEAR(…)`, `column: …`. Malformed syntax throws
    /// `.invalidQuery` naming the model and the text when the search runs.
    public static func query(_ text: String) -> SearchText { SearchText(kind: .query, text: text) }

    /// The words of `text`, next to each other and in order, as typed: nothing in it is syntax.
    /// Text without words matches nothing.
    public static func phrase(_ text: String) -> SearchText { SearchText(kind: .phrase, text: text) }

    /// Every word of `text`, anywhere and in any order, as typed: nothing in it is syntax. With
    /// `prefix`, the last word also matches longer words that start with it (search as you
    /// type: "choc" finds "chocolate"). Text without words matches nothing.
    public static func words(_ text: String, prefix: Bool = false) -> SearchText {
        SearchText(kind: .words(prefix: prefix), text: text)
    }

    /// A literal in code is FTS5 query syntax, as `.query`.
    public init(stringLiteral value: String) {
        self.init(kind: .query, text: value)
    }

    init(kind: Kind, text: String) {
        self.kind = kind
        self.text = text
    }

    /// The text, for messages.
    public var description: String { text }

    /// The FTS5 expression to match, or nil when the text can match nothing (user text
    /// without words).
    var expression: String? {
        switch kind {
        case .query:
            return text
        case .phrase:
            let words = Self.words(of: text)
            return words.isEmpty ? nil : Self.string(words.joined(separator: " "))
        case .words(let prefix):
            let words = Self.words(of: text)
            guard !words.isEmpty else { return nil }
            var terms = words.map(Self.string)
            if prefix { terms[terms.count - 1] += "*" }
            return terms.joined(separator: " ")
        }
    }

    /// The runs of text between white space. NUL separates words too: FTS5 reads a query only
    /// up to its first NUL, and its tokenizer splits stored text there.
    private static func words(of text: String) -> [String] {
        text.split { $0.isWhitespace || $0 == "\0" }.map(String.init)
    }

    /// An FTS5 string: everything between the double quotes is text, a quote is doubled.
    static func string(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// How search results mark the matched words in their snippets.
///
/// ```swift
/// let hits = try Recipe.search("chocolate", highlight: SearchHighlight(open: "<b>", close: "</b>", tokens: 8))
/// hits[0].snippet(\.body)   // "…melt the <b>chocolate</b> slowly…"
/// ```
public struct SearchHighlight: Sendable, Hashable {
    /// Put before each matched word.
    public var open: String
    /// Put after each matched word.
    public var close: String
    /// Marks text left out at the start or end of a snippet.
    public var ellipsis: String
    /// The most words a snippet holds, 1 to 64.
    public var tokens: Int

    /// Markers and a snippet length.
    public init(open: String, close: String, ellipsis: String = "…", tokens: Int = 12) {
        self.open = open
        self.close = close
        self.ellipsis = ellipsis
        self.tokens = tokens
    }

    /// `[chocolate]`, snippets of up to 12 words.
    public static let brackets = SearchHighlight(open: "[", close: "]")
}

/// One record a search found: the model, how well it matched, and a snippet of each
/// searchable property with the matched words marked.
///
/// ```swift
/// for hit in try Recipe.search(.words("dark chocolate")) {
///     print(hit.model.title, hit.rank, hit.snippet(\.body) ?? "")
/// }
/// ```
public struct SearchResult<Model: StoredModel>: Sendable {
    /// The record, with its stored values (relationships are not loaded).
    public let model: Model
    /// The rank with the declared weights — SQLite's bm25, PostgreSQL's `ts_rank` negated:
    /// more negative is more relevant, and results come in this order, most relevant first.
    public let rank: Double
    /// A snippet of each searchable property, by property name: the part of its text with
    /// the most matched words, each marked; the start of the text when none matched there;
    /// nil when the stored value is NULL.
    public let snippets: [String: String]

    /// The snippet of `property`, or nil when it is not searchable or stored NULL.
    public func snippet(_ property: PartialKeyPath<Model>) -> String? {
        snippets[PropertyName.of(property)]
    }

    init(model: Model, rank: Double, snippets: [String: String]) {
        self.model = model
        self.rank = rank
        self.snippets = snippets
    }
}
