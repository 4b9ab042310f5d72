extension Condition {
    /// Records whose searchable properties match `text` in the model's full-text index; it
    /// combines with every other condition and works wherever conditions do (finds, counts,
    /// `updateAll`, `deleteAll`, live queries). `search(_:)` adds ranking and snippets.
    ///
    /// ```swift
    /// let cheap = try Recipe.filter(.matches("choc*") && \.minutes < 30).findAll()
    /// let typed = try Recipe.count(where: .matches(.words(userInput)))
    /// ```
    ///
    /// A model without `searchable` properties, or malformed FTS5 syntax in a `.query`, throws
    /// `.invalidQuery` naming the model and the text when the query runs.
    public static func matches(_ text: SearchText) -> Condition {
        Condition(.fullText(text, columns: []))
    }

    /// Records whose `properties` (searchable ones) match `text`; the others are not searched.
    ///
    /// ```swift
    /// let titled = try Recipe.findAll(where: .matches(.words("lemon tart"), in: \.title))
    /// ```
    public static func matches(_ text: SearchText, in properties: PartialKeyPath<Model>...) -> Condition {
        Condition(.fullText(text, columns: properties.map { ColumnReference($0) }))
    }
}
