extension Session {
    /// The records of `M` that match `text`, best first, each with its rank and snippets.
    /// One statement: the index ranks, the table supplies the records and filters them.
    func search<M: StoredModel>(
        _ type: M.Type, _ text: SearchText, where predicate: Condition<M>?, limit: Int, offset: Int, highlight: SearchHighlight
    ) throws -> [SearchResult<M>] {
        let table = try table(type)
        let compiler = compiler(table)
        let search = try compiler.searchIndex()
        guard
            let (fragment, expression) = try compiler.search(
                text, where: predicate?.node, limit: limit, offset: offset, highlight: highlight)
        else {
            // Text without words: nothing matches.
            return []
        }
        let statement = try connection.cachedStatement(fragment.sql)
        defer { statement.reset() }
        try statement.bind(fragment.values)
        let decoder = RowDecoder(statement: statement, layout: table.layout, keyPositions: table.keyPositions)
        let rankColumn = Int32(table.columns.count)
        let fullText = connection.dialect.fullText
        var results: [SearchResult<M>] = []
        while try statement.step() {
            let model = try decoder.decode(type)
            var snippets: [String: String] = [:]
            for (offset, column) in search.columns.enumerated() where !statement.isNull(at: rankColumn + 1 + Int32(offset)) {
                snippets[column] = fullText.snippet(
                    statement.string(at: rankColumn + 1 + Int32(offset)), column: offset, expression: expression, in: search,
                    marks: highlight.marks)
            }
            results.append(SearchResult(model: model, rank: statement.double(at: rankColumn), snippets: snippets))
        }
        return results
    }
}
