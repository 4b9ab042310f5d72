extension Session {
    /// `compiler`, checking with this session each full-text index it is about to read.
    func checkingSearchIndexes(_ compiler: QueryCompiler) -> QueryCompiler {
        var compiler = compiler
        compiler.beforeSearch = { try self.readySearchIndex(of: $0) }
        return compiler
    }

    /// Called before a read uses `table`'s full-text index (a search, `.matches`). Another
    /// program may have dropped some of the index's triggers and changed rows since, so the
    /// index lags the table. The writer notices such schema changes as each transaction
    /// begins, and rebuilds the index on the table's next use; a reader notices them here,
    /// once per read, from the schema version. A lagging index is handed to the writer to
    /// rebuild; a read that cannot hand it over (a read block, a read-only store) searches a
    /// copy made from the rows instead, for that read only.
    func readySearchIndex(of table: TableDescription) throws {
        // (A model nothing has written reads an empty stand-in index of this read's own.)
        guard role != .writer, let search = table.search, !link.standIns.contains(search.name) else { return }
        guard try !link.searchIndexIsComplete(table) else { return }
        guard role == .pinnedReader || store.pool.isReadOnly else { throw NeedsWriter() }
        try link.copySearchIndex(search)
    }
}
