import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Runs a store's migration steps when it opens: each pending step once, in order, in its own
/// `BEGIN IMMEDIATE` transaction that also records it in `modelstore_migrations`.
///
/// Several processes may open the file at once. Each step's transaction reads the record
/// again after taking the write lock, so a step another process ran meanwhile is skipped:
/// every step runs exactly once, whoever runs it, and a process that waited sees the schema
/// the other left. A process killed mid-step leaves the file as it was before that step
/// (SQLite's transaction); the next open runs the step again.
///
/// On a server the steps run the same way, inside the dialect's migration lock
/// (`migrationLockSQL`, PostgreSQL's advisory lock on the schema), which stores elsewhere
/// take in turn. A step's DDL is part of its transaction (PostgreSQL's transactional DDL), so
/// a failed or killed step leaves the schema as it was too. The server checks foreign keys
/// at each statement; SQLite's are switched off while steps run and checked before each
/// commits.
enum MigrationRunner {
    static let versionTable = "modelstore_migrations"
    /// The files this process is migrating, and the threads running their steps.
    private static let migrating = Locked<[String: Set<ObjectIdentifier>]>([:])

    /// Checks the list itself: names present and unique.
    static func validate(_ steps: [MigrationStep]) throws {
        var seen = Set<String>()
        for (position, step) in steps.enumerated() {
            guard !step.name.isEmpty else {
                throw ModelStoreError(
                    .invalidModel, "Migration step \(position + 1) of \(steps.count) has an empty name.",
                    suggestion: "Give every step a name unique in the list, and never change it once shipped.")
            }
            guard seen.insert(step.name).inserted else {
                throw ModelStoreError(
                    .invalidModel, "The migration steps name '\(step.name)' twice; each step's name must be unique.",
                    value: step.name, suggestion: "Give each step its own name.")
            }
        }
    }

    /// The names of the steps the file records, in the order they ran.
    static func applied(on connection: Connection) throws -> [String] {
        guard try SchemaRenamer.exists("table", versionTable, on: connection) else { return [] }
        let statement = try connection.makeStatement("SELECT name FROM \(versionTable) ORDER BY position")
        var names: [String] = []
        try statement.forEachRow { names.append(statement.string(at: 0)) }
        return names
    }

    /// The steps still to run, after checking that the file's record is the start of the list.
    static func pending(_ steps: [MigrationStep], applied: [String], place: String = "file") throws -> ArraySlice<MigrationStep> {
        for (position, name) in applied.enumerated() {
            guard position < steps.count, steps[position].name == name else {
                let listed = steps.firstIndex { $0.name == name }
                throw ModelStoreError(
                    .invalidModel,
                    listed == nil
                        ? "The \(place) records migration step '\(name)', which the store's steps do not list: it was migrated by another version of the program. Nothing was run."
                        : "The migration steps are out of order: the \(place) ran '\(name)' as step \(position + 1), but the list has it at \(listed! + 1). Nothing was run.",
                    value: name,
                    suggestion: listed == nil
                        ? "Open the \(place) with the version of the program that migrated it, or a newer one; a program keeps every shipped step in its list, in order, under its name."
                        : "Keep shipped steps in the list, in their order, under their names; add new steps at the end.")
            }
        }
        return steps[applied.count...]
    }

    /// Runs the pending steps. `backupPath`: where to copy the file before the first step
    /// that runs. `waitLimit`: how long to wait for another process's migration.
    /// A program with no steps still checks the file: one that another version's steps
    /// migrated is refused, as a differing list is.
    /// - Returns: whether a step's transaction ran (the connection then ran the steps' SQL,
    ///   whose session settings a server keeps).
    @discardableResult
    static func run(_ steps: [MigrationStep], on connection: Connection, backupPath: String?, waitLimit: TimeInterval) throws -> Bool {
        try validate(steps)
        let recorded = try applied(on: connection)
        guard let first = try pending(steps, applied: recorded, place: place(of: connection)).first else { return false }
        // A step that opens another store on its own file (or schema) would wait for its own
        // write (or migration) lock.
        let file = connection.filename ?? connection.remote?.tablesIdentity
        let thread = ObjectIdentifier(Thread.current)
        if let file {
            let reentered = migrating.withLock { files -> Bool in
                if files[file]?.contains(thread) == true { return true }
                files[file, default: []].insert(thread)
                return false
            }
            if reentered {
                throw ModelStoreError(
                    .reentrancy,
                    "A migration step of \(file) opened a store on the same database, whose steps would wait for the running step's lock forever.",
                    suggestion: "Do a step's work through its MigrationContext; open stores on the file after it has migrated.")
            }
        }
        defer {
            if let file { migrating.withLock { _ = $0[file]?.remove(thread) } }
        }
        var backup: String?
        if let backupPath, try !isNew(connection) {
            let name = String(first.name.map { $0.isLetter || $0.isNumber || "-_.".contains($0) ? $0 : "-" })
            backup = backupPath + ".before-\(recorded.count + 1)-" + name
            try copy(connection, to: backup!, before: first.name)
        }
        // A rebuild drops and recreates a table, which foreign keys would cascade into its
        // links; SQLite can switch them only outside a transaction. Each step checks them all
        // before it commits.
        let switchesForeignKeys = connection.capabilities.sqliteCatalog
        if switchesForeignKeys { try connection.execute("PRAGMA foreign_keys = OFF") }
        defer { if switchesForeignKeys { try? connection.execute("PRAGMA foreign_keys = ON") } }
        // Taken again before each step: a session's lock counts its takes, and a connection the
        // driver replaced between two steps (the server ended the old one) holds none, so the
        // next step must not run until this one has it again.
        var key: SQLValue?
        var takes = 0
        defer { releaseMigrationLock(key, times: takes, on: connection) }
        for step in steps {
            var lostLock = 0
            while true {
                if let taken = try takeMigrationLock(key, on: connection, waitLimit: waitLimit, step: step.name) {
                    key = taken
                    takes += 1
                }
                do {
                    try withWriteLock(on: connection, waitLimit: waitLimit, step: step.name) {
                        // The lock was taken before BEGIN; a connection replaced in between
                        // (the server ended the old one) holds none: the step must not run.
                        if let held = connection.dialect.migrationLockSQL?.held, let key, try connection.scalar(held, [key]) == nil {
                            throw LockLost()
                        }
                        try runPending(step)
                    }
                    break
                } catch is LockLost {
                    lostLock += 1
                    takes = 0  // the old session's locks went with it
                    guard lostLock < 3 else {
                        throw ModelStoreError(
                            .connectionLost,
                            "The connection to \(connection.location) was replaced three times while migration step '\(step.name)' waited to run; nothing of it was run.",
                            value: step.name, suggestion: "Open the store again once the server's connections are stable.")
                    }
                }
            }
        }
        return true

        /// Runs `step` inside the transaction when it is still the next to run.
        func runPending(_ step: MigrationStep) throws {
            try connection.execute(createVersionTableSQL(connection.dialect))
            let recorded = try applied(on: connection)
            // Another process may have run it while this one waited for the lock.
            guard try pending(steps, applied: recorded, place: place(of: connection)).first?.name == step.name else { return }
            if recorded.isEmpty, try isNew(connection) {
                // A new file: its tables will be made from the current models, so every
                // step is done already. Recorded, none run.
                for (position, step) in steps.enumerated() { try record(step.name, position: position, on: connection) }
                return
            }
            try runStep(step, position: recorded.count, on: connection, backup: backup)
        }
    }

    /// The table recording the steps that ran, in the backend's column types.
    static func createVersionTableSQL(_ dialect: any SQLDialect) -> String {
        let integer = dialect.columnType("INTEGER", isDecimal: false)
        let text = dialect.columnType("TEXT", isDecimal: false)
        let real = dialect.columnType("REAL", isDecimal: false)
        return
            "CREATE TABLE IF NOT EXISTS \(versionTable) (position \(integer) PRIMARY KEY, name \(text) NOT NULL UNIQUE, applied \(real) NOT NULL)"
    }

    /// Runs one step inside the caller's transaction, checks every foreign key, and records it.
    static func runStep(_ step: MigrationStep, position: Int, on connection: Connection, backup: String?) throws {
        let context = MigrationContext(connection: connection, stepName: step.name)
        defer { context.isActive = false }
        // SQLite's foreign keys are off while steps run; a server checks its own at each
        // statement (or, deferred, at the commit), so a step that breaks a link fails there.
        let checksForeignKeys = connection.capabilities.sqliteCatalog
        do {
            // Links the file already broke (another tool's data) are not the step's doing.
            let brokenBefore = checksForeignKeys ? try foreignKeyViolations(on: connection) : []
            try connection.refusingTransactionControl { try step.body(context) }
            // A statement of the step may have made SQLite end the transaction, and the step
            // caught its error and went on: nothing of it stands.
            try connection.requireOpenTransaction()
            if checksForeignKeys { try checkForeignKeys(on: connection, except: brokenBefore) }
            try record(step.name, position: position, on: connection)
        } catch {
            throw failure(
                of: step.name, error, backup: backup, place: place(of: connection))
        }
    }

    private static func record(_ name: String, position: Int, on connection: Connection) throws {
        try connection.execute(
            "INSERT INTO \(versionTable) (position, name, applied) VALUES (?, ?, ?)",
            [.integer(Int64(position)), .text(name), .real(Date().timeIntervalSince1970)])
    }

    /// Whether the file holds no table but ModelStore's own: a new file.
    static func isNew(_ connection: Connection) throws -> Bool {
        try userTables(on: connection).isEmpty
    }

    /// ModelStore's own tables, lowercased: not a model's.
    static let internalTables: Set<String> = Set([versionTable, TableRebuild.temporaryName, ChangeLogNames.table] + HistoryNames.tables)

    /// The names of the schema's tables but ModelStore's own, in the order the backend lists them.
    static func userTables(on connection: Connection) throws -> [String] {
        let statement = try connection.makeStatement(connection.dialect.tableNamesSQL)
        var names: [String] = []
        try statement.forEachRow {
            let name = statement.string(at: 0)
            if !internalTables.contains(name.lowercased()) { names.append(name) }
        }
        return names
    }

    /// What the messages call the store's data: its file, or a server's database.
    static func place(of connection: Connection) -> String { connection.remote == nil ? "file" : "database" }

    /// A step's error, saying which step failed, that it was undone, and where the backup is.
    static func failure(of step: String, _ error: any Error, backup: String?, place: String = "file") -> ModelStoreError {
        let underlying = error as? ModelStoreError
        var failure = underlying ?? ModelStoreError(.migrationFailed, "\(error)")
        failure.code = .migrationFailed
        var cause = underlying?.message ?? "\(error)"
        // An undefined table or column, in SQLite's words or the server's SQLSTATE.
        let server = underlying?.serverState
        if let message = underlying?.sqliteMessage, SchemaDrift(message) != nil || server == "42P01" || server == "42703" {
            // Steps run before any model has checked a table: a name the step's SQL does not
            // find is the step's, not a change another program made behind the store's back.
            cause =
                "the step names a table or column the \(place) does not have when the step runs (\(server == nil ? "SQLite" : "the server"): \(message))."
            failure.suggestion =
                "Name tables and columns as the \(place) has them when the step runs: steps run first, on the \(place) as the previous release left it, before the models' renames; transform, rebuild and prepare work in the names of the model they write."
                + (server == nil ? "" : " A server compares quoted names by their case (\"Crate\" is not crate).")
        }
        failure.message =
            "Migration step '\(step)' failed and was rolled back; the \(place) is as it was before the step. "
            + (backup.map { "A copy of the file from before migrating is at \($0). " } ?? "") + "Cause: " + cause
        if failure.value == nil { failure.value = step }
        return failure
    }

    struct Violation: Hashable {
        let table: String
        let rowid: Int64
        let parent: String
        let constraint: Int64
    }

    /// Every row that refers to a missing one, as `PRAGMA foreign_key_check` reports them.
    private static func foreignKeyViolations(on connection: Connection) throws -> Set<Violation> {
        let check = try connection.makeStatement("PRAGMA main.foreign_key_check")
        var found = Set<Violation>()
        try check.forEachRow {
            found.insert(
                Violation(
                    table: check.string(at: 0), rowid: check.int64(at: 1), parent: check.string(at: 2), constraint: check.int64(at: 3)))
        }
        return found
    }

    /// Fails when the step left a row referring to a missing one: it must leave links whole.
    /// Foreign keys are off while steps run (a rebuild must not cascade), so a delete does
    /// not remove or clear the rows that refer to it: the step must.
    private static func checkForeignKeys(on connection: Connection, except before: Set<Violation>) throws {
        var problems: [String: (parent: String, count: Int)] = [:]
        for violation in try foreignKeyViolations(on: connection) where !before.contains(violation) {
            problems[violation.table] = (violation.parent, (problems[violation.table]?.count ?? 0) + 1)
        }
        guard !problems.isEmpty else { return }
        let listed = problems.sorted { $0.key < $1.key }
            .map { "\($0.value.count) row(s) of \($0.key) refer to missing \($0.value.parent) rows" }
        throw ModelStoreError(
            .constraintViolation, "The step leaves broken links: " + listed.joined(separator: "; ") + ".",
            suggestion:
                "Foreign keys are off while migration steps run, so deletes do not cascade: delete or update the referring rows in the same step."
        )
    }

    /// Takes the backend's migration lock (`migrationLockSQL`), waiting up to `waitLimit` for
    /// a store elsewhere that holds it; nothing where there is none.
    private struct LockLost: Error {}

    /// Takes the migration lock of `key` (nil: of the store's schema), waiting up to
    /// `waitLimit`; answers the key, or nil where the backend has no such lock.
    private static func takeMigrationLock(_ key: SQLValue?, on connection: Connection, waitLimit: TimeInterval, step: String) throws
        -> SQLValue?
    {
        guard let lock = connection.dialect.migrationLockSQL else { return nil }
        let deadline = Date().addingTimeInterval(waitLimit)
        while true {
            if let taken = try connection.scalar(lock.take, [key ?? .null]) { return taken }
            guard Date() < deadline else {
                throw ModelStoreError(
                    .busy,
                    "Another store on \(connection.location) has been running migration steps for over \(Int(waitLimit.rounded(.up))) seconds; this one waited to run '\(step)' and gave up. Nothing was run.",
                    value: step,
                    suggestion:
                        "Open the store again once the other has migrated, or allow a longer wait (Configuration.migrationWaitLimit)."
                )
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Releases the lock as many times as it was taken (a session's lock counts its takes);
    /// stops at the first failure: a lost connection took its locks with it, and each further
    /// try would wait for a server that is gone.
    private static func releaseMigrationLock(_ key: SQLValue?, times: Int, on connection: Connection) {
        guard let lock = connection.dialect.migrationLockSQL, let key else { return }
        for _ in 0..<times {
            guard (try? connection.scalar(lock.release, [key])) != nil else { return }
        }
    }

    /// Runs `body` in a write transaction, waiting up to `waitLimit` for another process's
    /// migration step to finish (each wait is one busy timeout).
    private static func withWriteLock(on connection: Connection, waitLimit: TimeInterval, step: String, _ body: () throws -> Void)
        throws
    {
        let deadline = Date().addingTimeInterval(waitLimit)
        while true {
            do {
                try connection.inTransaction(body)
                return
            } catch let error as ModelStoreError where error.code == .busy && !connection.isInTransaction && Date() < deadline {
                continue
            }
        }
    }

    /// Copies the file with SQLite's backup API to a temporary file, then moves it into place.
    private static func copy(_ connection: Connection, to destination: String, before step: String) throws {
        let temporary = destination + ".backup-\(UUID().uuidString)"
        do {
            try connection.inReadTransaction { try connection.backup(to: temporary) }
            guard rename(temporary, destination) == 0 else {
                throw ModelStoreError(
                    .cannotOpen, "The backup could not be moved to \(destination): \(String(cString: strerror(errno))).",
                    value: destination)
            }
        } catch {
            for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: temporary + suffix) }
            var failure = ModelStoreError.wrapping(error)
            failure.message =
                "Before migration step '\(step)', the file could not be backed up to \(destination), so no step ran: "
                + failure.message
            throw failure
        }
    }
}
