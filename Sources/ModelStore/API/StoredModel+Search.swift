/// Full-text search over a model's `searchable` properties, in the three call forms.
extension StoredModel {
    /// The records whose searchable properties match `text`, most relevant first (SQLite's
    /// bm25, PostgreSQL's `ts_rank`, with the declared weights), each with a snippet of every
    /// searchable property.
    ///
    /// ```swift
    /// let hits = try Recipe.search("choc*", where: \.minutes < 30, limit: 10)
    /// hits.first?.model.title              // the best match
    /// hits.first?.snippet(\.body)          // "…melt the [chocolate] slowly…"
    /// let typed = try Recipe.search(.words(userInput, prefix: true))   // user text, literally
    /// ```
    ///
    /// `where` narrows the results with any condition; `limit` and `offset` page them (ties in
    /// rank come in rowid order on SQLite, key order on PostgreSQL). Text a user typed belongs in `.words(…)` or `.phrase(…)`:
    /// nothing in them is syntax. Relationships are not loaded; results hold stored values.
    /// - Throws: `ModelStoreError` — `.invalidQuery` when the model declares no searchable
    ///   property, for malformed FTS5 syntax in a `.query` (naming the model and the text)
    ///   or syntax a server cannot answer (`NEAR`, `^`), a condition the model cannot use, a limit below 1, a negative offset or a snippet
    ///   length outside 1–64; `.decodingFailed` for a stored value that does not read back
    ///   exactly; `.invalidModel` when the declaration cannot work (a property that is not
    ///   text, or an SQLite without FTS5); `.unsupported` for more than four searchable
    ///   properties on a server; `.closed` or `.noStore`.
    public static func search(
        _ text: SearchText, where condition: Condition<Self>? = nil, limit: Int = 20, offset: Int = 0,
        highlight: SearchHighlight = .brackets, in store: ModelStore? = nil
    ) throws -> [SearchResult<Self>] {
        try ModelStore.resolve(store).read {
            try $0.search(Self.self, text, where: condition, limit: limit, offset: offset, highlight: highlight)
        }
    }

    /// `search(_:where:limit:offset:highlight:in:)`, delivered later on the completion queue.
    ///
    /// ```swift
    /// Recipe.search(.words(field.text)) { result in show(try? result.get()) }
    /// ```
    public static func search(
        _ text: SearchText, where condition: Condition<Self>? = nil, limit: Int = 20, offset: Int = 0,
        highlight: SearchHighlight = .brackets, in store: ModelStore? = nil,
        completion: @escaping @Sendable (Result<[SearchResult<Self>], ModelStoreError>) -> Void
    ) {
        ModelStore.resolve(store).read(
            { try $0.search(Self.self, text, where: condition, limit: limit, offset: offset, highlight: highlight) },
            completion: completion)
    }

    /// `search(_:where:limit:offset:highlight:in:)` without blocking the calling task.
    ///
    /// ```swift
    /// let hits = try await Recipe.search("lemon AND tart")
    /// ```
    /// - Throws: `ModelStoreError` — `.invalidQuery` when the model declares no searchable
    ///   property, for malformed FTS5 syntax in a `.query`, a condition the model cannot use,
    ///   a limit below 1, a negative offset or a snippet length outside 1–64;
    ///   `.decodingFailed`, `.invalidModel`, `.closed` or `.noStore`.
    public static func search(
        _ text: SearchText, where condition: Condition<Self>? = nil, limit: Int = 20, offset: Int = 0,
        highlight: SearchHighlight = .brackets, in store: ModelStore? = nil
    ) async throws -> [SearchResult<Self>] {
        try await ModelStore.resolve(store).read {
            try $0.search(Self.self, text, where: condition, limit: limit, offset: offset, highlight: highlight)
        }
    }
}
