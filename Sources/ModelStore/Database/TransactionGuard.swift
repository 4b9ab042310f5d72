import ModelStoreCSQLite

/// Keeps a transaction that SQLite ended by itself from committing half of a block.
///
/// Some statement errors end the whole transaction, not just the statement: a trigger's
/// `RAISE(ROLLBACK)`, an `ON CONFLICT ROLLBACK` constraint on a table another tool made, and
/// some full-disk, I/O and out-of-memory errors. The block that made the failing call may
/// catch its error and go on; without this guard its next call would run in autocommit mode
/// (or open a transaction of its own with `SAVEPOINT`) and commit at once, so the block would
/// commit the part after the rollback and lose the part before it.
///
/// Two SQLite hooks make that impossible, at no cost per statement:
/// - the rollback hook notes that the transaction ended without ModelStore's own `ROLLBACK`;
/// - the commit hook refuses every commit while ModelStore still counts a transaction open
///   (`depth > 0`): the only commit ModelStore makes is its own `COMMIT` at depth 0, so
///   whatever else would commit is rolled back instead (`SQLITE_CONSTRAINT_COMMITHOOK`).
///
/// `Connection.inTransaction` reads what the hooks noted and fails the block's later calls,
/// and the block itself, with `.rolledBack`.
final class TransactionGuard {
    /// How many transactions and savepoints ModelStore has open on the connection.
    var depth = 0
    /// Set while ModelStore runs its own outermost `ROLLBACK`, which the hook ignores.
    var rollingBack = false
    /// Set when the open transaction ended before ModelStore ended it: by SQLite itself (the
    /// rollback hook), by a server that dropped the connection, or by a server conflict that
    /// dooms it.
    var ended = false
    /// The error that ended it, once `Connection` has seen it.
    var cause: ModelStoreError?

    /// Forgets what ended the last transaction; called when the outermost one ends.
    func reset() {
        ended = false
        cause = nil
    }

    /// Installs the hooks on `handle`; the connection keeps `self` alive as long as it.
    func install(on handle: OpaquePointer) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_commit_hook(
            handle,
            { context in
                guard let context else { return 0 }
                // Non-zero turns the commit into a rollback.
                return Unmanaged<TransactionGuard>.fromOpaque(context).takeUnretainedValue().depth > 0 ? 1 : 0
            }, context)
        sqlite3_rollback_hook(
            handle,
            { context in
                guard let context else { return }
                let state = Unmanaged<TransactionGuard>.fromOpaque(context).takeUnretainedValue()
                if !state.rollingBack, state.depth > 0 { state.ended = true }
            }, context)
    }

    /// The error for a call made after SQLite ended the transaction, or for the block that
    /// returned normally after it.
    func rolledBackError() -> ModelStoreError {
        // A server that dropped the connection, or doomed the transaction in a conflict, is
        // reported as it happened: the caller matches `.connectionLost`, and a conflict makes
        // the store run the block again.
        if let cause, cause.code == .connectionLost || cause.isRetryableConflict { return cause }
        let reason = cause.map { " (\($0.sqliteMessage ?? $0.message))" } ?? ""
        var error = ModelStoreError(
            .rolledBack,
            "SQLite rolled back the whole transaction when an earlier call in it failed\(reason): nothing of the block was written, and none of its later calls runs.",
            suggestion:
                "Let the error end the block (do not catch it and go on), or run the call that may fail in a transaction of its own.")
        error.underlying = cause
        error.sqliteCode = cause?.sqliteCode
        error.sqliteMessage = cause?.sqliteMessage
        return error
    }
}
