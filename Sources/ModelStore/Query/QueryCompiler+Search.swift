import Foundation

extension QueryCompiler {
    /// The model's full-text index, ready to be read, or `.invalidQuery` when it declares none.
    func searchIndex() throws -> SearchIndexDescription {
        guard let search = table.search else {
            throw ModelStoreError(
                .invalidQuery, "\(table.modelName) declares no searchable properties, so it has no full-text index to search.",
                model: table.modelName,
                suggestion: "Declare `static let searchable: [SearchableText<\(table.modelName)>] = [.text(\\.property)]`.")
        }
        try beforeSearch(table)
        return search
    }

    /// `.matches(text)`: the records the backend's index finds.
    func fullText(_ text: SearchText, columns: [ColumnReference]) throws -> SQLFragment {
        let search = try searchIndex()
        guard let expression = try matchExpression(text, columns: columns, in: search) else { return SQLFragment("FALSE") }
        let condition = try dialect.fullText.condition(expression, text: text.text, in: search, model: table.modelName)
        return SQLFragment(condition.sql, condition.values)
    }

    /// The checked FTS5 expression for `text`, limited to `columns` when some are named; nil
    /// when the text can match nothing.
    func matchExpression(_ text: SearchText, columns: [ColumnReference], in search: SearchIndexDescription) throws -> String? {
        for column in columns where !search.columns.contains(column.name) {
            throw ModelStoreError(
                .invalidQuery,
                "A search of \(table.modelName) names '\(column.name)', which is not one of its searchable properties (\(search.columns.joined(separator: ", "))).",
                model: table.modelName, column: column.name, value: text.text,
                suggestion: "Add it to \(table.modelName).searchable, or search the declared ones.")
        }
        guard var expression = text.expression else { return nil }
        if !columns.isEmpty {
            // The text must be a query on its own first: "a) OR (b" would otherwise close the
            // parenthesis of the filter and search `b` in every column.
            try SearchSyntax.shared.check(expression, columns: search.columns, text: text, model: table.modelName)
            expression = "{" + columns.map { SearchText.string($0.name) }.joined(separator: " ") + "} : (" + expression + ")"
        }
        try SearchSyntax.shared.check(expression, columns: search.columns, text: text, model: table.modelName)
        return expression
    }

    /// The ranked search: the model's columns, the rank, and one snippet column per
    /// searchable column, best first (`FullTextSQL.rankedSearch`). Nil when the text can
    /// match nothing.
    func search(
        _ text: SearchText, where predicate: PredicateNode?, limit: Int, offset: Int, highlight: SearchHighlight
    ) throws -> (fragment: SQLFragment, expression: String)? {
        let search = try searchIndex()
        guard limit > 0, offset >= 0 else {
            throw ModelStoreError(
                .invalidQuery,
                "A search of \(table.modelName) asks for \(limit) results from offset \(offset); the limit must be positive and the offset not negative.",
                model: table.modelName, value: "limit \(limit), offset \(offset)")
        }
        guard (1...64).contains(highlight.tokens) else {
            throw ModelStoreError(
                .invalidQuery,
                "A search of \(table.modelName) asks for snippets of \(highlight.tokens) words; FTS5 makes snippets of 1 to 64.",
                model: table.modelName, value: String(highlight.tokens))
        }
        guard let expression = try matchExpression(text, columns: [], in: search) else { return nil }
        let condition = try predicate.map { try compile($0) }
        let ranked = try dialect.fullText.rankedSearch(
            expression, text: text.text, in: search, model: table.modelName, columns: table.columns.map { quoted($0.name) },
            key: table.keyPositions.map { quoted(table.columns[$0].name) }, condition: condition.map { ($0.sql, $0.values) },
            limit: limit, offset: offset, marks: highlight.marks)
        return (SQLFragment(ranked.sql, ranked.values), expression)
    }
}

extension SearchHighlight {
    var marks: SnippetMarks { SnippetMarks(open: open, close: close, ellipsis: ellipsis, tokens: tokens) }
}

/// Checks FTS5 query syntax before a query runs, so that malformed text is an
/// `.invalidQuery` naming the model and the text — whatever call the condition is part of —
/// rather than an SQLite error from deep inside it.
///
/// It parses the expression against an empty FTS5 table with the index's columns in a
/// private in-memory database: FTS5 parses a MATCH expression (column names included)
/// before it reads anything, so an empty table answers at once.
final class SearchSyntax: @unchecked Sendable {
    // @unchecked: `connection` and `tables` are used only while `lock` is held.
    static let shared = SearchSyntax()

    private let lock = NSLock()
    private var connection: Connection?
    /// Probe table per column list.
    private var tables: [[String]: String] = [:]

    func check(_ expression: String, columns: [String], text: SearchText, model: String) throws {
        lock.lock()
        defer { lock.unlock() }
        do {
            let connection =
                try self.connection
                ?? Connection(
                    location: ":memory:", open: [.readWrite, .create], busyTimeout: 0)
            self.connection = connection
            let table: String
            if let known = tables[columns] {
                table = known
            } else {
                table = "probe\(tables.count)"
                try connection.execute("CREATE VIRTUAL TABLE \(table) USING fts5(" + columns.map(quoted).joined(separator: ", ") + ")")
                tables[columns] = table
            }
            _ = try connection.scalar("SELECT rowid FROM \(table) WHERE \(table) MATCH ?", [.text(expression)])
        } catch let error as ModelStoreError {
            let reason = error.sqliteMessage ?? error.message
            throw ModelStoreError(
                .invalidQuery, "The search text '\(text.text)' for \(model) is not valid full-text query syntax: \(reason).",
                model: model, value: text.text,
                suggestion: "Search for text a user typed with .words(…) or .phrase(…), which take it literally.")
        }
    }
}
