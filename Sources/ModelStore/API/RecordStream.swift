/// Rows of a query, as an `AsyncSequence` that holds only a few hundred of them at a time.
///
/// ```swift
/// for try await snack in Snack.filter(\.price < 2).stream(in: store) {
///     total += snack.price ?? 0          // a million records, in bounded memory
/// }
/// ```
///
/// Each iteration reads on a pooled reader of its own, in one read transaction, on a thread
/// of its own: rows are decoded there, 256 at a time, at most two chunks ahead of the loop.
/// On a PostgreSQL server the query is read through a cursor, 256 rows at a time, so the
/// bound holds there too.
/// It starts after the writes submitted before it and never holds back writes submitted
/// later (WAL readers do not block the writer); it sees the snapshot it started on.
/// Breaking out of the loop, cancelling its task or closing the store ends the read and
/// returns the connection. Errors (a record that does not decode, a closed store) are
/// thrown by the loop: a store closed while the loop runs makes it throw `.closed` after
/// the rows already read, never end as if the rows were all there. Inside a block of the store (a task started in a `transaction` or
/// `read`) iterating throws `.reentrancy`: use `forEach`, which joins the block.
public struct RecordStream<Row: Sendable>: AsyncSequence, Sendable {
    let store: ModelStore
    let prepare: @Sendable (Session) throws -> Void
    let produce: @Sendable (Session, _ send: ([Row]) -> Bool) throws -> Void

    /// Starts the read.
    public func makeAsyncIterator() -> Iterator {
        guard !store.isInsideBlock else { return Iterator(state: IteratorState(channel: nil, failure: ModelStore.streamInsideBlock())) }
        return Iterator(state: IteratorState(channel: store.startStream(prepare: prepare, produce: produce), failure: nil))
    }

    /// Hands out the rows of one read.
    public struct Iterator: AsyncIteratorProtocol {
        let state: IteratorState

        /// The next row, or nil at the end (or once the task is cancelled). A store that
        /// closed under the stream makes it throw `.closed`, never return nil.
        /// - Throws: `ModelStoreError` — `.decodingFailed` for a row that does not decode,
        ///   `.invalidQuery`, `.closed`, `.reentrancy` inside a block of the store.
        public mutating func next() async throws -> Row? {
            try await state.next()
        }
    }

    /// The iterator's state; ending it (the loop broke, the iterator went away) ends the read.
    final class IteratorState: @unchecked Sendable {
        // @unchecked: an iterator is used by one task at a time, which alone touches these.
        private let channel: ChunkChannel<Row>?
        private var failure: ModelStoreError?
        private var chunk: [Row] = []
        private var index = 0
        private var done = false

        init(channel: ChunkChannel<Row>?, failure: ModelStoreError?) {
            self.channel = channel
            self.failure = failure
        }

        deinit {
            channel?.cancel()
        }

        func next() async throws -> Row? {
            if let failure {
                self.failure = nil
                done = true
                throw failure
            }
            while index == chunk.count {
                chunk = []
                index = 0
                guard !done, let channel else { return nil }
                do {
                    guard let next = try await channel.next() else {
                        done = true
                        return nil
                    }
                    chunk = next
                } catch {
                    done = true
                    throw error
                }
            }
            defer { index += 1 }
            return chunk[index]
        }
    }
}

extension RecordStream {
    /// The rows of a query's records.
    init(_ query: Query<Row>, store: ModelStore) where Row: StoredModel {
        self.store = store
        self.prepare = { session in _ = try session.table(Row.self) }
        self.produce = { session, send in
            try session.forEachModelChunk(query, chunkSize: RecordStream.chunkSize) { send($0) }
        }
    }

    /// The rows of the user's SQL.
    init(sql: SQLStatement, store: ModelStore) where Row: Decodable {
        self.store = store
        self.prepare = { session in try session.prepareTable(for: Row.self) }
        self.produce = { session, send in
            var chunk: [Row] = []
            chunk.reserveCapacity(RecordStream.chunkSize)
            var open = true
            try session.forEachRawRow(Row.self, sql, streaming: true) { row in
                chunk.append(row)
                guard chunk.count == RecordStream.chunkSize else { return true }
                open = send(chunk)
                chunk = []
                chunk.reserveCapacity(RecordStream.chunkSize)
                return open
            }
            if open, !chunk.isEmpty { _ = send(chunk) }
        }
    }

    /// Rows per chunk: enough to amortise the hand-over, few enough to stay small.
    static var chunkSize: Int { 256 }
}

extension Session {
    /// Makes `T`'s table ready when `T` is a model (a raw read decodes it as finders do).
    func prepareTable<T>(for type: T.Type) throws {
        func prepare<M: StoredModel>(_ model: M.Type) throws { _ = try table(model) }
        if let model = T.self as? any StoredModel.Type { try prepare(model) }
    }
}
