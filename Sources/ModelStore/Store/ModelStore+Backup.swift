import Foundation

extension ModelStore {
    /// Writes a consistent copy of the store's database to a new file at `path`, while the
    /// store stays open and in use.
    ///
    /// ```swift
    /// try store.backup(to: "/var/backups/app-\(Date.now.timeIntervalSince1970).sqlite")
    /// ```
    ///
    /// The copy is one snapshot: every transaction committed before it began, none after
    /// (SQLite's online backup API, read inside one read transaction; in WAL mode writers go on
    /// meanwhile). It is written to a temporary file beside `path` and moved into place only
    /// when complete, so a failed or interrupted backup leaves no partial file at `path`. Open
    /// the copy as any store: `ModelStore(path:)`.
    ///
    /// - Parameters:
    ///   - path: The new file. Its directory must exist.
    ///   - replacingExisting: Whether a file already at `path` may be replaced (by default it is
    ///     an error: a backup never overwrites a file silently).
    /// - Throws: `ModelStoreError` — `.alreadyExists` when a file is at `path` and
    ///   `replacingExisting` is false; `.invalidQuery` inside a transaction block of this
    ///   store (its uncommitted writes must not be copied), or when `path` is the database
    ///   file of a store open in this process (this one or another: writing it would corrupt it, and even
    ///   opening it would drop that store's locks); `.cannotOpen` when the directory cannot be
    ///   written; `.closed` or `.noStore`; `.busy`.
    public func backup(to path: String, replacingExisting: Bool = false) throws {
        let destination = try backupDestination(path, replacingExisting: replacingExisting)
        // No read time limit: SQLite's backup copies pages without running statements, so a
        // limit could only fail a backup after its file was in place.
        try withReadTimeLimit(nil) { try read { session in try Self.writeBackup(of: session, to: destination) } }
    }

    /// `backup(to:replacingExisting:)`, delivered later on the completion queue.
    public func backup(
        to path: String, replacingExisting: Bool = false, completion: @escaping @Sendable (Result<Void, ModelStoreError>) -> Void
    ) {
        let destination: String
        do {
            destination = try backupDestination(path, replacingExisting: replacingExisting)
        } catch let error as ModelStoreError {
            let deliver = completionQueue
            deliver.async { completion(.failure(error)) }
            return
        } catch {
            preconditionFailure("backupDestination throws only ModelStoreError")
        }
        // (No read time limit, as for the synchronous form.)
        _ = try? withReadTimeLimit(nil) {
            read({ session in try Self.writeBackup(of: session, to: destination) }, completion: completion)
        }
    }

    /// `backup(to:replacingExisting:)` without blocking the calling task. A backup that
    /// started runs to its end even when the task is cancelled (the copy cannot be stopped
    /// half way without leaving a file), and has no read time limit.
    /// - Throws: as `backup(to:replacingExisting:)`.
    public func backup(to path: String, replacingExisting: Bool = false) async throws {
        let destination = try backupDestination(path, replacingExisting: replacingExisting)
        try refuseInsideBlock()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            _ = try? withReadTimeLimit(nil) {
                read({ session in try Self.writeBackup(of: session, to: destination) }) { continuation.resume(with: $0.mapError { $0 }) }
            }
        }
    }

    /// The checked destination path (expanded, with its directory resolved).
    private func backupDestination(_ path: String, replacingExisting: Bool) throws -> String {
        if SessionContext.current(for: ObjectIdentifier(self))?.isWriter == true {
            // The writer's view includes the block's uncommitted writes, which a copy must
            // not hold: the block may still roll back.
            throw ModelStoreError(
                .invalidQuery, "A backup cannot run inside a transaction block of the store it copies.", value: path,
                suggestion: "Back up after the transaction, or inside a read block.")
        }
        return try copyDestination(path, replacingExisting: replacingExisting, copy: "backup")
    }

    /// `path` checked as the destination of a new copy of the store (`copy`: "backup", …):
    /// expanded, with its directory resolved; never the file of an open store, nor a file
    /// already there unless `replacingExisting`.
    func copyDestination(_ path: String, replacingExisting: Bool, copy: String) throws -> String {
        let expanded = ConnectionPool.key((path as NSString).expandingTildeInPath)
        // The write-ahead log, shared memory and journal of an open store are its files too:
        // replacing one would break that store's locking.
        for suffix in ["-wal", "-shm", "-journal"] where expanded.hasSuffix(suffix) {
            let database = String(expanded.dropLast(suffix.count))
            let open = ConnectionPool.openFiles.withLock { $0[database].map { !$0.isEmpty } ?? false }
            if open || self.path.map(ConnectionPool.key) == database {
                throw ModelStoreError(
                    .invalidQuery, "\(path) belongs to the database of a store open in this process; a \(copy) cannot be written over it.",
                    value: path, suggestion: "Write the \(copy) to a new path.")
            }
        }
        if let identity = FileIdentity(path: expanded) {
            let heldByAStore = ConnectionPool.openFiles.withLock { files in
                files.values.contains { $0[identity] != nil }
            }
            if heldByAStore || (self.path.map { FileIdentity(path: $0) == identity } ?? false) {
                throw ModelStoreError(
                    .invalidQuery, "\(path) is the database file of a store open in this process; a \(copy) cannot be written over it.",
                    value: path, suggestion: "Write the \(copy) to a new path.")
            }
            guard replacingExisting else {
                throw ModelStoreError(
                    .alreadyExists, "A file already exists at \(path); the \(copy) did not replace it.", value: path,
                    suggestion: "Choose a new path, or pass replacingExisting: true.")
            }
        }
        return expanded
    }

    /// Copies the session's snapshot to a temporary file beside `destination`, then moves it
    /// into place; on failure nothing is left behind.
    private static func writeBackup(of session: Session, to destination: String) throws {
        let temporary = destination + ".backup-\(UUID().uuidString)"
        func removeTemporary() {
            for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: temporary + suffix) }
        }
        do {
            // One read transaction: the copy is one snapshot, even if the backup API has to
            // restart because this connection's view changed.
            try session.connection.inReadTransaction { try session.connection.backup(to: temporary) }
            guard rename(temporary, destination) == 0 else {
                throw ModelStoreError(
                    .cannotOpen, "The backup was written but could not be moved to \(destination): \(String(cString: strerror(errno))).",
                    value: destination)
            }
            removeTemporary()  // the journal files of the temporary name, if any were left
        } catch let error as ModelStoreError {
            removeTemporary()
            var error = error
            if error.value == nil { error.value = destination }
            throw error
        }
    }
}
