import Foundation

/// The maintenance calls (`vacuum()`, `vacuum(into:)`, `checkpoint(_:)`): statements that
/// cannot run inside a transaction, so they run as a barrier on the writer between
/// transactions — never inside a block of the store, which would wait for them. Each public
/// form (API/ModelStore+Maintenance.swift) is a thin wrapper around one function here.
extension ModelStore {
    /// How much of the write-ahead log a checkpoint folds into the database file, and how
    /// long it waits for that (SQLite's `sqlite3_wal_checkpoint_v2` modes).
    public enum CheckpointMode: Sendable, CaseIterable, CustomStringConvertible {
        /// Folds in as many frames as it can without waiting for anyone: frames newer than
        /// the oldest snapshot another connection reads stay in the log. Never `.busy`.
        case passive
        /// Waits (up to the busy timeout) for other writers and for readers of older
        /// snapshots, then folds in every frame.
        case full
        /// As `.full`, then also waits for every reader to leave the log, so the next write
        /// starts it again from the beginning (it stops growing).
        case restart
        /// As `.restart`, then truncates the log file to zero bytes.
        case truncate

        /// The mode's name: `"passive"`, `"full"`, `"restart"` or `"truncate"`.
        public var description: String {
            switch self {
            case .passive: return "passive"
            case .full: return "full"
            case .restart: return "restart"
            case .truncate: return "truncate"
            }
        }

        var sqliteMode: Int32 {
            switch self {
            case .passive: return SQLiteCode.checkpointPassive
            case .full: return SQLiteCode.checkpointFull
            case .restart: return SQLiteCode.checkpointRestart
            case .truncate: return SQLiteCode.checkpointTruncate
            }
        }
    }

    /// What a checkpoint did, as SQLite reports it.
    public struct CheckpointOutcome: Sendable, Hashable, CustomStringConvertible {
        /// The frames (changed pages) in the write-ahead log when the checkpoint ended; 0
        /// after a `.truncate` one, or for a store without a log (in memory).
        public let logFrames: Int
        /// How many of those frames are now in the database file.
        public let checkpointedFrames: Int

        /// Creates an outcome; ModelStore makes these, tests may too.
        public init(logFrames: Int, checkpointedFrames: Int) {
            self.logFrames = logFrames
            self.checkpointedFrames = checkpointedFrames
        }

        /// Whether every frame of the log is in the database file, so the file alone holds
        /// every commit.
        public var isComplete: Bool { checkpointedFrames == logFrames }

        /// `3 of 3 frames checkpointed`.
        public var description: String { "\(checkpointedFrames) of \(logFrames) frames checkpointed" }
    }

    // MARK: The three forms, around one runner

    /// Runs `body` on the writer as a barrier, outside any transaction; `call` names the
    /// public call for messages.
    func maintain<T>(_ call: String, _ body: (PooledConnection) throws -> T) throws -> T {
        try refuseMaintenanceInsideBlock(call)
        return try queue.sync(flags: .barrier) { try runMaintenance(body) }
    }

    /// `maintain`, later: `completion` receives the result on `completionQueue`.
    func maintain<T: Sendable>(
        _ call: String, _ body: @escaping @Sendable (PooledConnection) throws -> T,
        completion: @escaping @Sendable (Result<T, ModelStoreError>) -> Void
    ) {
        let deliver = completionQueue
        do {
            try refuseMaintenanceInsideBlock(call)
        } catch {
            deliverInline(.failure(ModelStoreError.wrapping(error)), on: deliver, to: completion)
            return
        }
        submitMaintenance(body) { result in deliver.async { completion(result.mapError { ModelStoreError.wrapping($0) }) } }
    }

    /// `maintain` without blocking the calling task.
    func maintain<T: Sendable>(_ call: String, _ body: @escaping @Sendable (PooledConnection) throws -> T) async throws -> T {
        try refuseMaintenanceInsideBlock(call)
        return try await withCheckedThrowingContinuation { continuation in
            submitMaintenance(body) { continuation.resume(with: $0) }
        }
    }

    /// After a write committed: purges the history for `Configuration.historyRetention` when
    /// it is due, as a barrier after the writes already submitted. Its failure (a busy
    /// server, another store purging at the same moment) is no failure of any call: the
    /// next one due tries again.
    func purgeHistoryIfDue() {
        guard let retention = configuration.historyRetention, retention.isFinite, retention > 0 else { return }
        let now = Date()
        let due = lastHistoryPurge.withLock { last -> Bool in
            guard now.timeIntervalSince(last) >= min(3600, retention / 10) else { return false }
            last = now
            return true
        }
        guard due else { return }
        submitMaintenance({ link in
            try link.connection.inTransaction { try History.purge(olderThan: retention, on: link.connection) }
        }) { _ in }
    }

    private func submitMaintenance<T: Sendable>(
        _ body: @escaping @Sendable (PooledConnection) throws -> T, then finish: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        // Counted until delivered: close() waits for it.
        inFlight.begin()
        queue.async(flags: .barrier) {
            finish(Result { try self.runMaintenance(body) })
            self.inFlight.end()
        }
    }

    /// On the queue, as a barrier: the writer (checked, like every write's, to still be on
    /// the store's files), held against the change poll, and no transaction open on it.
    private func runMaintenance<T>(_ body: (PooledConnection) throws -> T) throws -> T {
        let link = try pool.writer()
        return try link.exclusively {
            pool.applyWriterTrace(to: link)
            return try body(link)
        }
    }

    /// Inside a block of this store — on its thread, or in a task started inside it — the
    /// call would wait for the block, which may wait for it: refused, as `close()` is.
    private func refuseMaintenanceInsideBlock(_ call: String) throws {
        let id = ObjectIdentifier(self)
        guard SessionContext.current(for: id) != nil || BlockMarker.current?.isActive(for: id) == true else { return }
        throw ModelStoreError(
            .reentrancy,
            "\(call) was called inside a block of the store; it runs on the writer outside any transaction, so it would wait for the block.",
            suggestion: "Call \(call) after the block returns.")
    }

    // MARK: What each call does on the writer

    static func vacuum(on link: PooledConnection) throws {
        try link.connection.vacuum()
    }

    /// Writes the compacted copy beside `path` and moves it into place only when complete,
    /// so a failed call leaves no partial file at `path`.
    func vacuum(on link: PooledConnection, into path: String, replacingExisting: Bool) throws {
        let connection = link.connection
        guard connection.dialect.canVacuumIntoFile else {
            throw connection.unsupported("vacuum(into:)", "a server's data is not one file to copy")
        }
        let destination = try copyDestination(path, replacingExisting: replacingExisting, copy: "compacted copy")
        let temporary = destination + ".vacuum-\(UUID().uuidString)"
        defer {
            for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: temporary + suffix) }
        }
        do {
            try connection.vacuum(into: temporary)
        } catch var error as ModelStoreError {
            if error.value == nil { error.value = destination }
            throw error
        }
        guard rename(temporary, destination) == 0 else {
            throw ModelStoreError(
                .cannotOpen,
                "The compacted copy was written but could not be moved to \(destination): \(String(cString: strerror(errno))).",
                value: destination, suggestion: "Check that the directory can be written, then call vacuum(into:) again.")
        }
    }

    func checkpoint(on link: PooledConnection, mode: CheckpointMode) throws -> CheckpointOutcome {
        let connection = link.connection
        guard connection.dialect.hasCheckpoints else {
            throw connection.unsupported("checkpoint(_:)", "a server checkpoints its own write-ahead log")
        }
        let (rc, log, done) = connection.checkpoint(mode: mode.sqliteMode)
        // No log (a store in memory): nothing to fold in.
        let outcome =
            log < 0 ? CheckpointOutcome(logFrames: 0, checkpointedFrames: 0) : CheckpointOutcome(logFrames: log, checkpointedFrames: done)
        switch rc {
        case SQLiteCode.ok:
            return outcome
        case SQLiteCode.busy:
            var error = ModelStoreError(
                .busy,
                "The \(mode) checkpoint waited the busy timeout (\(configuration.busyTimeout) s) for another connection — a reader of an older snapshot, or another writer — and stopped: \(outcome).",
                value: outcome.description,
                suggestion:
                    "End long reads first (read blocks, streams, other stores or processes on the file) and call it again, or use .passive, which never waits. The store is unchanged and usable."
            )
            error.sqliteCode = rc
            throw error
        default:
            throw ModelStoreError.sqlite(
                resultCode: rc, message: connection.lastErrorMessage, sql: nil, database: connection.handle)
        }
    }
}
