import Foundation

/// The result of a fetch now, and again after every committed transaction that can change
/// it: an `AsyncSequence` that yields at once, then after each commit that wrote a table the
/// fetch reads. A burst of commits coalesces (a slow consumer gets the latest result, not a
/// backlog), and an `Equatable` result is not repeated while it stays equal.
///
/// ```swift
/// for try await cheap in Snack.filter(\.price < 2).observe(in: store) {
///     print("\(cheap.count) cheap snacks")
/// }
/// ```
///
/// Each iteration is one observer; it ends when the loop ends or its task is cancelled, and
/// throws `.closed` when the store closes, so a loop can tell that from a normal end. A
/// fetch that throws ends the sequence with the error. While it is iterated it keeps its
/// store open; ending the loop releases it.
public struct LiveQuery<Value: Sendable>: AsyncSequence, Sendable {
    let store: ModelStore
    let fetch: @Sendable () throws -> Value
    let isDuplicate: (@Sendable (Value, Value) -> Bool)?

    /// Starts observing.
    public func makeAsyncIterator() -> AsyncThrowingStream<Value, any Error>.Iterator {
        let (stream, continuation) = AsyncThrowingStream<Value, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let observer = LiveObserver(
            store: store, fetch: fetch, isDuplicate: isDuplicate,
            deliver: { result in
                switch result {
                case .success(let value): continuation.yield(value)
                case .failure(let error): continuation.finish(throwing: error)
                }
            }, finish: { continuation.finish() })
        continuation.onTermination = { _ in observer.cancel() }
        observer.start()
        return stream.makeAsyncIterator()
    }
}

/// Stops a completion-handler observation: call `cancel()`, or let the token go.
public final class ObservationToken: Sendable {
    private let stop: @Sendable () -> Void

    init(_ stop: @escaping @Sendable () -> Void) {
        self.stop = stop
    }

    deinit {
        stop()
    }

    /// Stops the observation; no handler runs afterwards.
    public func cancel() {
        stop()
    }
}

/// What one committed transaction did to a model's records: the keys it inserted, updated
/// and deleted, net of the transaction (a record inserted and deleted in it appears in
/// none), each key as its values in `primaryKey` order.
public struct ModelChanges<Model: StoredModel>: Sendable {
    /// Keys of records the transaction inserted.
    public let inserted: [[SQLValue]]
    /// Keys of records it changed (a save that changed nothing is not an update).
    public let updated: [[SQLValue]]
    /// Keys of records it deleted (delete rules and cascades included).
    public let deleted: [[SQLValue]]
    /// False when the store knows the model's table may have changed but not which
    /// records: a commit by another process (or another store on the file), or one whose
    /// transaction began just before this stream started. The key lists are then empty.
    public let keysAreKnown: Bool

    /// The keys of a model with a single-property key, converted: `changes.keys(\.inserted, as: Int64.self)`.
    ///
    /// ```swift
    /// let added = try changes.keys(\.inserted, as: Int64.self)
    /// ```
    /// - Throws: `ModelStoreError` `.decodingFailed` when a key is not a `Key`.
    public func keys<Key: SQLValueConvertible>(_ list: KeyPath<ModelChanges, [[SQLValue]]>, as type: Key.Type) throws -> [Key] {
        try self[keyPath: list].map { key in
            guard key.count == 1 else {
                throw ModelStoreError(
                    .invalidKey, "\(Model.self) has a key of \(key.count) properties; read the lists of values instead.",
                    model: String(describing: Model.self))
            }
            return try Key(sqlValue: key[0])
        }
    }
}

/// Every committed transaction that wrote a model's table, in commit order, as
/// `ModelChanges`: an `AsyncSequence` with no lossy buffering (each transaction arrives,
/// however slow the consumer).
///
/// ```swift
/// for await change in store.changes(of: Snack.self) {
///     print("inserted \(change.inserted.count), deleted \(change.deleted.count)")
/// }
/// if store.isClosed { print("the store closed") }
/// ```
///
/// It ends when its loop ends, its task is cancelled, or the store closes; it cannot throw,
/// so `ModelStore.isClosed` tells a closed store from a cancelled loop. While it is iterated
/// it keeps its store open; ending the loop releases it.
public struct ModelChangeStream<Model: StoredModel>: AsyncSequence, Sendable {
    let store: ModelStore
    let table: ObservedTable?
    let failure: ModelStoreError?

    /// Starts observing.
    public func makeAsyncIterator() -> AsyncStream<ModelChanges<Model>>.Iterator {
        let (stream, continuation) = AsyncStream<ModelChanges<Model>>.makeStream()
        guard let table else {
            continuation.finish()
            return stream.makeAsyncIterator()
        }
        let observer = StreamObserver(
            store: store, table: table,
            deliver: { net in
                continuation.yield(
                    ModelChanges(inserted: net.inserted, updated: net.updated, deleted: net.deleted, keysAreKnown: net.isKnown))
            }, finish: { continuation.finish() })
        continuation.onTermination = { _ in observer.cancel() }
        // A stream that cannot start (its server's feed cannot record the table) ends at once;
        // `ModelStore.isClosed` is false, so a loop can tell it from a closed store.
        do { try observer.start() } catch { continuation.finish() }
        return stream.makeAsyncIterator()
    }
}

extension ModelStore {
    /// Observes the result of `fetch`, any reads of this store (finds, queries, counts,
    /// aggregates, relationship loading): it runs now, and again after each commit that
    /// wrote a table it read. Equal results are not repeated.
    ///
    /// ```swift
    /// for try await count in store.observe({ try Snack.count(in: store) }) { print(count) }
    /// ```
    public func observe<Value: Sendable & Equatable>(_ fetch: @escaping @Sendable () throws -> Value) -> LiveQuery<Value> {
        LiveQuery(store: self, fetch: fetch, isDuplicate: { $0 == $1 })
    }

    /// Observes the result of `fetch`, as `observe(_:)` does, for a result that is not
    /// `Equatable`: each re-run is delivered, even when it reads the same.
    public func observe<Value: Sendable>(_ fetch: @escaping @Sendable () throws -> Value) -> LiveQuery<Value> {
        LiveQuery(store: self, fetch: fetch, isDuplicate: nil)
    }

    /// Observes `fetch` with a handler, called on the completion queue with each new result
    /// (or an error, after which observation goes on). Keep the token: releasing or
    /// cancelling it stops the observation.
    ///
    /// ```swift
    /// let token = store.observe({ try Snack.count(in: store) }) { result in print(result) }
    /// ```
    public func observe<Value: Sendable & Equatable>(
        _ fetch: @escaping @Sendable () throws -> Value, onChange: @escaping @Sendable (Result<Value, ModelStoreError>) -> Void
    ) -> ObservationToken {
        startObservation(fetch, isDuplicate: { $0 == $1 }, onChange: onChange)
    }

    /// `observe(_:onChange:)` for a result that is not `Equatable`.
    public func observe<Value: Sendable>(
        _ fetch: @escaping @Sendable () throws -> Value, onChange: @escaping @Sendable (Result<Value, ModelStoreError>) -> Void
    ) -> ObservationToken {
        startObservation(fetch, isDuplicate: nil, onChange: onChange)
    }

    private func startObservation<Value: Sendable>(
        _ fetch: @escaping @Sendable () throws -> Value, isDuplicate: (@Sendable (Value, Value) -> Bool)?,
        onChange: @escaping @Sendable (Result<Value, ModelStoreError>) -> Void
    ) -> ObservationToken {
        let deliver = completionQueue
        let observer = LiveObserver(
            store: self, fetch: fetch, isDuplicate: isDuplicate,
            deliver: { result in deliver.async { onChange(result) } }, finish: {})
        observer.start()
        return ObservationToken { observer.cancel() }
    }

    /// The changes of every committed transaction that writes `type`'s table, from now on.
    /// Transactions that roll back yield nothing; one transaction of 10,000 saves yields one
    /// value. A model whose declarations cannot work yields nothing and finishes.
    ///
    /// ```swift
    /// for await change in store.changes(of: Snack.self) { print(change.inserted) }
    /// ```
    public func changes<M: StoredModel>(of type: M.Type) -> ModelChangeStream<M> {
        if cannotObserve { return ModelChangeStream(store: self, table: nil, failure: observationUnsupported()) }
        do {
            let table = try TableDescription.of(type)
            return ModelChangeStream(store: self, table: ObservedTable(name: table.tableName, keyColumns: table.keyNames), failure: nil)
        } catch {
            return ModelChangeStream(store: self, table: nil, failure: ModelStoreError.wrapping(error))
        }
    }

    /// `changes(of:)` with a handler, called on the completion queue for each transaction,
    /// in commit order. Keep the token: releasing or cancelling it stops the stream.
    ///
    /// ```swift
    /// let token = try store.changes(of: Snack.self) { change in print(change.deleted) }
    /// ```
    /// - Throws: `ModelStoreError` `.invalidModel` for a model whose declarations cannot work;
    ///   on a PostgreSQL store, the server's error when its change log cannot record the table
    ///   (the role may not create triggers on it, or the server is unreachable).
    public func changes<M: StoredModel>(of type: M.Type, onChange: @escaping @Sendable (ModelChanges<M>) -> Void) throws
        -> ObservationToken
    {
        if cannotObserve { throw observationUnsupported() }
        let table = try TableDescription.of(type)
        let deliver = completionQueue
        let observer = StreamObserver(
            store: self, table: ObservedTable(name: table.tableName, keyColumns: table.keyNames),
            deliver: { net in
                let change = ModelChanges<M>(inserted: net.inserted, updated: net.updated, deleted: net.deleted, keysAreKnown: net.isKnown)
                deliver.async { onChange(change) }
            }, finish: {})
        try observer.start()
        return ObservationToken { observer.cancel() }
    }
}

extension Query {
    /// The query's results now and after every commit that can change them (see
    /// `LiveQuery`), with its relationship loading.
    ///
    /// ```swift
    /// for try await page in Snack.filter(\.price < 2).order(.ascending(\.name)).observe(in: store) { show(page) }
    /// ```
    public func observe(in store: ModelStore? = nil) -> LiveQuery<[Model]> {
        let store = ModelStore.resolve(store)
        return store.observe { try self.findAll(in: store) }
    }
}

extension Query where Model: Equatable {
    /// The query's results now and after every commit that changes them; equal results are
    /// not repeated (see `LiveQuery`).
    ///
    /// ```swift
    /// for try await cheap in Snack.filter(\.price < 2).observe(in: store) { print(cheap.count) }
    /// ```
    public func observe(in store: ModelStore? = nil) -> LiveQuery<[Model]> {
        let store = ModelStore.resolve(store)
        return store.observe { try self.findAll(in: store) }
    }
}

extension StoredModel {
    /// The record with `key` now and after every commit that can change it; nil while there
    /// is none.
    ///
    /// ```swift
    /// for try await snack in Snack.observe(key: 1, in: store) { print(snack?.name ?? "gone") }
    /// ```
    public static func observe(key: some SQLValueConvertible, loading: LoadOptions = .declared, in store: ModelStore? = nil)
        -> LiveQuery<Self?>
    {
        let store = ModelStore.resolve(store)
        // The key as its stored value, carried into the `@Sendable` fetch; a key that has no
        // stored value (a NaN date) fails the fetch with its error.
        let key = Result { try key.sqlValue }.mapError { ModelStoreError.wrapping($0) }
        return store.observe { try Self.find(key: key.get(), loading: loading, in: store) }
    }
}
