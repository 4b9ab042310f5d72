/// Maintenance of the store's file: giving back the space deleted records left, writing a
/// compacted copy, and folding the write-ahead log into the file. These cannot run inside a
/// transaction (`store.execute("VACUUM")` is refused and points here): each runs on the
/// writer as a barrier, between transactions — after the writes submitted before it, before
/// those submitted after.
extension ModelStore {
    /// Gives back the space that deleted records left in the store (SQLite's `VACUUM`: the
    /// file is rebuilt, as small as its records allow).
    ///
    /// ```swift
    /// try Snack.deleteAll(where: \.price < 1, in: store)
    /// try store.vacuum()
    /// ```
    ///
    /// It runs on the writer outside any transaction, so writes wait for it (reads go on);
    /// it needs about as much free disk space as the store takes. On PostgreSQL it runs the
    /// server's `VACUUM` of the store's tables, outside any transaction there too.
    /// - Throws: `ModelStoreError` — `.reentrancy` inside a block of this store (it would
    ///   wait for the block); `.busy` when another process holds the write lock past the busy
    ///   timeout; `.storeFull` without room for the rebuilt file; `.readOnly`, `.fileReplaced`,
    ///   `.closed` or `.noStore`. A failed vacuum leaves the store as it was.
    public func vacuum() throws {
        try maintain("vacuum()") { try Self.vacuum(on: $0) }
    }

    /// `vacuum()`, delivered later on the store's completion queue.
    public func vacuum(completion: @escaping @Sendable (Result<Void, ModelStoreError>) -> Void) {
        maintain("vacuum()", { try Self.vacuum(on: $0) }, completion: completion)
    }

    /// `vacuum()` without blocking the calling task.
    /// - Throws: as `vacuum()`.
    public func vacuum() async throws {
        try await maintain("vacuum()") { try Self.vacuum(on: $0) }
    }

    /// Writes a compacted copy of the store to a new file at `path` (SQLite's
    /// `VACUUM INTO`): one snapshot, every transaction committed before it, none after, in
    /// as few pages as its records allow. The store itself is not changed.
    ///
    /// ```swift
    /// try store.vacuum(into: "/var/backups/snacks-compact.sqlite")
    /// let copy = try ModelStore(path: "/var/backups/snacks-compact.sqlite")
    /// ```
    ///
    /// The copy is written beside `path` and moved into place only when complete, so a failed
    /// call leaves no partial file there. Unlike `backup(to:)`, it runs on the writer, between
    /// transactions.
    ///
    /// - Parameters:
    ///   - path: The new file. Its directory must exist.
    ///   - replacingExisting: Whether a file already at `path` may be replaced (by default it
    ///     is an error: a copy never overwrites a file silently).
    /// - Throws: `ModelStoreError` — `.alreadyExists` when a file is at `path` and
    ///   `replacingExisting` is false; `.invalidQuery` when `path` is a file of a store open in
    ///   this process; `.reentrancy` inside a block of this store; `.unsupported` on
    ///   PostgreSQL (a server's data is not one file); `.cannotOpen` or `.storeFull` when the
    ///   copy cannot be written; `.readOnly`, `.fileReplaced`, `.closed` or `.noStore`.
    public func vacuum(into path: String, replacingExisting: Bool = false) throws {
        try maintain("vacuum(into:)") { try self.vacuum(on: $0, into: path, replacingExisting: replacingExisting) }
    }

    /// `vacuum(into:replacingExisting:)`, delivered later on the store's completion queue.
    public func vacuum(
        into path: String, replacingExisting: Bool = false, completion: @escaping @Sendable (Result<Void, ModelStoreError>) -> Void
    ) {
        maintain("vacuum(into:)", { try self.vacuum(on: $0, into: path, replacingExisting: replacingExisting) }, completion: completion)
    }

    /// `vacuum(into:replacingExisting:)` without blocking the calling task.
    /// - Throws: as `vacuum(into:replacingExisting:)`.
    public func vacuum(into path: String, replacingExisting: Bool = false) async throws {
        try await maintain("vacuum(into:)") { try self.vacuum(on: $0, into: path, replacingExisting: replacingExisting) }
    }

    /// Folds the write-ahead log into the database file (a WAL checkpoint), and says how
    /// much of it is there now.
    ///
    /// ```swift
    /// let outcome = try store.checkpoint(.truncate)   // the log file is now empty
    /// if outcome.isComplete { /* the .sqlite file alone holds every commit */ }
    /// ```
    ///
    /// SQLite checkpoints by itself as the log grows; call this to choose when, for example
    /// before copying the file while the store stays open. `.passive` never waits;
    /// `.full`, `.restart` and `.truncate` wait up to the busy timeout for other
    /// connections (other stores or processes reading older snapshots, another writer).
    ///
    /// - Parameter mode: How much to fold in, and how long to wait for it. Default: `.passive`.
    /// - Returns: The frames in the log and how many of them are in the file; both 0 for a
    ///   store in memory, which has no log.
    /// - Throws: `ModelStoreError` — `.busy` when a `.full`, `.restart` or `.truncate`
    ///   checkpoint waited past the busy timeout (what it folded in stays folded in; the
    ///   store is usable); `.reentrancy` inside a block of this store; `.unsupported` on
    ///   PostgreSQL (the server checkpoints its own log); `.readOnly`, `.fileReplaced`,
    ///   `.closed` or `.noStore`.
    @discardableResult
    public func checkpoint(_ mode: CheckpointMode = .passive) throws -> CheckpointOutcome {
        try maintain("checkpoint(_:)") { try self.checkpoint(on: $0, mode: mode) }
    }

    /// `checkpoint(_:)`, delivered later on the store's completion queue.
    public func checkpoint(
        _ mode: CheckpointMode = .passive, completion: @escaping @Sendable (Result<CheckpointOutcome, ModelStoreError>) -> Void
    ) {
        maintain("checkpoint(_:)", { try self.checkpoint(on: $0, mode: mode) }, completion: completion)
    }

    /// `checkpoint(_:)` without blocking the calling task.
    /// - Throws: as `checkpoint(_:)`.
    @discardableResult
    public func checkpoint(_ mode: CheckpointMode = .passive) async throws -> CheckpointOutcome {
        try await maintain("checkpoint(_:)") { try self.checkpoint(on: $0, mode: mode) }
    }
}
