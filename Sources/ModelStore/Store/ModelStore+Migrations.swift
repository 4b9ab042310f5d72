import Foundation

extension ModelStore {
    /// What using `models` on this store would change, worked out without changing anything:
    /// declared renames, new tables, columns and indexes, and the columns and tables no model
    /// uses. The store's own migration steps ran when it opened, so none is pending here; to
    /// see steps too, ask `ModelStore.migrationPlan(at:configuration:for:)` before opening.
    ///
    /// ```swift
    /// let plan = try store.migrationPlan(for: [Athlete.self])
    /// #expect(plan.unusedColumns.map(\.description) == ["Team.city"])
    /// ```
    /// - Throws: `ModelStoreError` `.invalidModel` for declarations that cannot work,
    ///   `.schemaMismatch` for stored tables that do not fit, `.reentrancy` inside a block
    ///   of this store, `.readOnly` for a read-only store.
    public func migrationPlan(for models: [any StoredModel.Type]) throws -> MigrationPlan {
        if SessionContext.current(for: ObjectIdentifier(self)) != nil || BlockMarker.current?.isActive(for: ObjectIdentifier(self)) == true
        {
            throw ModelStoreError(
                .reentrancy, "migrationPlan(for:) was called inside a block of the store, whose transaction it needs.",
                suggestion: "Ask for the plan outside the block.")
        }
        return try queue.sync(flags: .barrier) {
            let link = try pool.writer()
            // The plan traces the connection itself; the store's own handler comes back on
            // the next hand-out.
            defer { link.traceGeneration = -1 }
            return try link.exclusively { try MigrationPlanner.plan(configuration.migrations, models: models, on: link.connection) }
        }
    }

    /// What opening the file at `path` with `configuration` and then using `models` would
    /// do — the migration steps still to run and every statement the steps and the models
    /// would run — worked out by doing it all in a transaction that is rolled back. For
    /// tests and CI checks of a shipped app: plan against a copy of real data, and see a step
    /// fail there instead of on a user's device. Steps run as they would (side effects
    /// outside the file happen); backups are not made.
    ///
    /// ```swift
    /// let plan = try ModelStore.migrationPlan(at: "fixtures/v1.sqlite", configuration: .app, for: [Athlete.self, Team.self])
    /// print(plan)
    /// ```
    /// - Throws: `ModelStoreError` `.cannotOpen` when there is no such file, `.busy` when
    ///   another connection holds the write lock past the busy timeout, `.migrationFailed`
    ///   naming a step that fails, and the model errors of `migrationPlan(for:)`.
    public static func migrationPlan(
        at path: String, configuration: Configuration = Configuration(), for models: [any StoredModel.Type]
    ) throws -> MigrationPlan {
        let expanded = (path as NSString).expandingTildeInPath
        guard FileManager.default.fileExists(atPath: expanded) else {
            throw ModelStoreError(.cannotOpen, "There is no database file at \(expanded) to plan a migration for.", value: expanded)
        }
        let connection = try Connection(
            location: expanded, open: [.readWrite, .noMutex], busyTimeout: configuration.busyTimeout)
        defer { connection.close() }
        return try MigrationPlanner.plan(configuration.migrations, models: models, on: connection)
    }

    /// `migrationPlan(at:configuration:for:)` on a database server, whose connection `opener`
    /// makes (ModelStorePostgres's `ModelStore.migrationPlan(postgres:configuration:for:)`).
    package static func migrationPlan(
        remote opener: any RemoteOpener, configuration: Configuration, for models: [any StoredModel.Type]
    ) throws -> MigrationPlan {
        let settings = RemoteConnectionSettings(lockTimeout: configuration.busyTimeout, storeIsOpen: false)
        let connection = try Connection(remote: opener.open(settings), dialect: opener.dialect)
        defer { connection.close() }
        return try MigrationPlanner.plan(configuration.migrations, models: models, on: connection)
    }

    /// The names of the migration steps the store's file has run, in order.
    ///
    /// ```swift
    /// #expect(try store.appliedMigrations() == ["prices in cents"])
    /// ```
    /// - Throws: `ModelStoreError` from SQLite.
    public func appliedMigrations() throws -> [String] {
        try read { try MigrationRunner.applied(on: $0.connection) }
    }
}
