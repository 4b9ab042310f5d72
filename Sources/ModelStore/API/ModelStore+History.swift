import Foundation

extension HistoryChange {
    /// Whether the change is of `type`'s table.
    ///
    /// ```swift
    /// if change.isChange(of: Order.self) { try refresh(order: change.key(as: Int64.self)) }
    /// ```
    public func isChange<M: StoredModel>(of type: M.Type) -> Bool {
        table.lowercased() == M.tableName.lowercased()
    }
}

extension ModelStore {
    /// Where the history stands now: reading from it later answers the changes committed
    /// after this call (on PostgreSQL, also those of transactions still running during it).
    ///
    /// ```swift
    /// let token = try store.historyToken()
    /// ```
    /// - Throws: `ModelStoreError` — `.invalidQuery` inside a transaction block (it would see the
    ///   block's uncommitted changes); `.closed` or `.noStore`.
    public func historyToken() throws -> HistoryToken {
        try refuseHistoryInsideWrite("historyToken()")
        return try read { try History.token(on: $0.connection) }
    }

    /// `historyToken()`, delivered later on the store's completion queue.
    public func historyToken(completion: @escaping @Sendable (Result<HistoryToken, ModelStoreError>) -> Void) {
        do {
            try refuseHistoryInsideWrite("historyToken()")
        } catch {
            completionQueue.async { completion(.failure(ModelStoreError.wrapping(error))) }
            return
        }
        read({ try History.token(on: $0.connection) }, completion: completion)
    }

    /// `historyToken()` without blocking the calling task.
    /// - Throws: as `historyToken()`.
    public func historyToken() async throws -> HistoryToken {
        try await read { try History.token(on: $0.connection) }
    }

    /// The changes of history-keeping models (`StoredModel.keepsHistory`) committed after
    /// `token`, by any writer — this store, other processes and machines, raw SQL — in commit
    /// order, each exactly once across successive calls.
    ///
    /// ```swift
    /// var token = loadToken() ?? .beginning
    /// while true {
    ///     let page = try store.history(since: token, limit: 500)
    ///     for change in page.changes where change.isChange(of: Order.self) {
    ///         try sync(order: change.key(as: Int64.self), deleted: change.operation == .delete)
    ///     }
    ///     token = page.token
    ///     saveToken(token)
    ///     if page.isComplete { break }
    /// }
    /// ```
    ///
    /// A change is recorded when its transaction commits, by triggers the store made on the
    /// model's table when it first used the model; changes made before then are not in the
    /// history. A page runs as one read on a reader. On PostgreSQL a transaction that wrote
    /// before others but commits after a page was read comes in a later page, once.
    ///
    /// - Parameters:
    ///   - token: Where the last page ended (`page.token`), `historyToken()`, or `.beginning`.
    ///   - limit: The most changes the page holds (at least 1).
    /// - Throws: `ModelStoreError` — `.historyPurged` when changes after `token` were purged
    ///   (`purgeHistory(olderThan:)`), or it is another store's token or ahead of this one's (a
    ///   copy restored since): read the consumer's data again from the records, then go on from
    ///   `historyToken()`; `.invalidQuery` for a limit below 1 or inside a block of this store
    ///   (the `async` form: `.reentrancy`, as for any `async` call there); `.timedOut`,
    ///   `.closed` or `.noStore`.
    public func history(since token: HistoryToken, limit: Int = 1000) throws -> HistoryPage {
        try refuseHistoryInsideWrite("history(since:)")
        return try read { try History.page(since: token, limit: limit, on: $0.connection) }
    }

    /// `history(since:limit:)`, delivered later on the store's completion queue.
    public func history(
        since token: HistoryToken, limit: Int = 1000, completion: @escaping @Sendable (Result<HistoryPage, ModelStoreError>) -> Void
    ) {
        do {
            try refuseHistoryInsideWrite("history(since:)")
        } catch {
            completionQueue.async { completion(.failure(ModelStoreError.wrapping(error))) }
            return
        }
        read({ try History.page(since: token, limit: limit, on: $0.connection) }, completion: completion)
    }

    /// `history(since:limit:)` without blocking the calling task.
    /// - Throws: as `history(since:limit:)`.
    public func history(since token: HistoryToken, limit: Int = 1000) async throws -> HistoryPage {
        try await read { try History.page(since: token, limit: limit, on: $0.connection) }
    }

    /// Removes the changes recorded more than `age` seconds ago from the history, as a write.
    /// A consumer whose token is older than the oldest change kept is refused by name
    /// (`.historyPurged`), never silently given a history with a hole. On PostgreSQL changes
    /// of transactions newer than the oldest one still running are kept, and a token read
    /// while a transaction the purge reached past was writing is refused too (the server
    /// does not say whether that transaction wrote history): purge changes days old.
    ///
    /// ```swift
    /// try store.purgeHistory(olderThan: 30 * 24 * 3600)   // keep thirty days
    /// ```
    /// - Returns: How many changes were removed.
    /// - Throws: `ModelStoreError` — `.invalidQuery` for a negative or non-finite age;
    ///   `.readOnly`, `.busy`, `.closed` or `.noStore`.
    @discardableResult
    public func purgeHistory(olderThan age: TimeInterval) throws -> Int {
        try History.checkAge(age)
        return try write { try History.purge(olderThan: age, on: $0.connection) }
    }

    /// `purgeHistory(olderThan:)`, delivered later on the store's completion queue.
    public func purgeHistory(
        olderThan age: TimeInterval, completion: @escaping @Sendable (Result<Int, ModelStoreError>) -> Void
    ) {
        do {
            try History.checkAge(age)
        } catch {
            completionQueue.async { completion(.failure(ModelStoreError.wrapping(error))) }
            return
        }
        write({ try History.purge(olderThan: age, on: $0.connection) }, completion: completion)
    }

    /// `purgeHistory(olderThan:)` without blocking the calling task.
    /// - Throws: as `purgeHistory(olderThan:)`.
    @discardableResult
    public func purgeHistory(olderThan age: TimeInterval) async throws -> Int {
        try History.checkAge(age)
        return try await write { try History.purge(olderThan: age, on: $0.connection) }
    }

    /// Stops recording the changes of `type`'s table: drops the triggers that record them
    /// (the changes already recorded stay until purged). Declaring `keepsHistory = false`
    /// alone does not: another process may still rely on them. Call it once no model of the
    /// table declares history any more — a store whose model declares it makes the triggers
    /// again when it prepares the model (on its first use, and on SQLite after any change of
    /// the schema).
    ///
    /// ```swift
    /// try store.stopHistory(of: Order.self)
    /// ```
    /// - Throws: `ModelStoreError` — `.readOnly`, `.busy`, `.closed` or `.noStore`.
    public func stopHistory<M: StoredModel>(of type: M.Type) throws {
        try write(Self.stoppingHistory(of: M.tableName))
    }

    /// `stopHistory(of:)`, delivered later on the store's completion queue.
    public func stopHistory<M: StoredModel>(
        of type: M.Type, completion: @escaping @Sendable (Result<Void, ModelStoreError>) -> Void
    ) {
        write(Self.stoppingHistory(of: M.tableName), completion: completion)
    }

    /// `stopHistory(of:)` without blocking the calling task.
    /// - Throws: as `stopHistory(of:)`.
    public func stopHistory<M: StoredModel>(of type: M.Type) async throws {
        try await write(Self.stoppingHistory(of: M.tableName))
    }

    /// The write that drops `table`'s recording triggers, if the store keeps a history.
    private static func stoppingHistory(of table: String) -> @Sendable (Session) throws -> Void {
        { session in
            guard try History.logExists(on: session.connection) else { return }
            try SchemaMigrator.dropHistoryTriggers(ofTable: table, on: session.connection)
        }
    }

    /// Refuses the call inside a transaction block (it would see, and count read, the block's
    /// uncommitted changes), and `history(since:)` inside a read block too (the block's
    /// snapshot may be older than the token: changes after it would be counted read).
    private func refuseHistoryInsideWrite(_ call: String) throws {
        guard let context = SessionContext.current(for: ObjectIdentifier(self)) else { return }
        if context.isWriter {
            throw ModelStoreError(
                .invalidQuery,
                "\(call) was called inside a transaction block of this store, where it would see the block's own changes before they commit (and count them read if the block rolls back).",
                suggestion: "Read the history before or after the block.")
        }
        guard call == "history(since:)" else { return }
        throw ModelStoreError(
            .invalidQuery,
            "history(since:) was called inside a read block of this store, whose snapshot may be older than the token: changes committed between them would be counted read.",
            suggestion: "Read the history outside the block.")
    }
}
