extension Session {
    /// The query's models in chunks of `chunkSize`, each chunk with the relationships the
    /// query loads (one bulk load per chunk, as `findAll` does for all of them), until
    /// `body` returns false.
    func forEachModelChunk<M: StoredModel>(_ query: Query<M>, chunkSize: Int, _ body: ([M]) throws -> Bool) throws {
        try forEachRecordChunk(query, chunkSize: chunkSize) { chunk in
            try body(try loadRelationships(of: chunk, loading: query.loadOptions))
        }
    }
}
