/// Reading a query's records one at a time, without holding them all.
extension Query {
    /// Calls `body` with each record the query selects, in its order, decoding one row at a
    /// time: memory stays bounded however many records there are.
    ///
    /// ```swift
    /// var total = 0.0
    /// try Snack.filter(\.price != nil).forEach(in: store) { snack in total += snack.price! }
    /// ```
    ///
    /// It reads one snapshot on a pooled reader, off the store's queue: writes submitted
    /// meanwhile on other threads commit without waiting for it. Relationships the query
    /// loads (`.loading(_:)`) are filled for every 256 records at once. `body` runs inside
    /// the read: calls it makes on the store join it (they see the same snapshot), and a
    /// write there throws `.reentrancy` — collect what to write, or use a transaction block,
    /// in which `forEach` joins the block. Throw from `body` to stop early; the error is
    /// rethrown.
    ///
    /// The read time limit (`Configuration.readTimeLimit`, `withReadTimeLimit(_:_:)`) counts
    /// the time spent reading, not the time `body` takes.
    /// - Throws: What `body` throws, or `ModelStoreError` — `.invalidQuery` for a condition the model cannot
    ///   use, `.decodingFailed` for a record that does not decode, `.timedOut` past the read time limit,
    ///   `.closed` or `.noStore`.
    public func forEach(in store: ModelStore? = nil, _ body: (Model) throws -> Void) throws {
        let store = ModelStore.resolve(store)
        try store.streamingRead(prepare: { _ = try $0.table(Model.self) }) { session, interruption in
            try session.forEachModelChunk(self, chunkSize: RecordStream<Model>.chunkSize) { chunk in
                // The time `body` holds the records is not the read's: it is out of the limit.
                if let interruption {
                    try interruption.excludingFromLimit { for model in chunk { try body(model) } }
                } else {
                    for model in chunk { try body(model) }
                }
                return true
            }
        }
    }

    /// The records the query selects, as an `AsyncSequence` that holds at most a few hundred
    /// at a time (see `RecordStream`).
    ///
    /// ```swift
    /// for try await snack in Snack.all().stream(in: store) { index(snack) }
    /// ```
    public func stream(in store: ModelStore? = nil) -> RecordStream<Model> {
        RecordStream(self, store: ModelStore.resolve(store))
    }
}
