import Foundation
import Testing
@testable import ModelStore

/// The result a completion-form call delivers.
private func delivered<T: Sendable>(_ call: (@escaping @Sendable (Result<T, ModelStoreError>) -> Void) -> Void) async -> Result<
    T, ModelStoreError
> {
    await withCheckedContinuation { continuation in call { continuation.resume(returning: $0) } }
}

/// The error a call threw, or nil.
private func failure<T>(_ body: () throws -> T) -> ModelStoreError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error as? ModelStoreError
    }
}

private func failure<T>(_ body: () async throws -> T) async -> ModelStoreError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error as? ModelStoreError
    }
}

/// The errors `sql` gets from every form of `execute`, and — for a single statement — of
/// `findAll(_:sql:)`; nil where a form did not fail.
private func errorsInEveryForm(_ sql: String, _ store: ModelStore) async -> [ModelStoreError?] {
    let statement = SQLStatement(sql)
    var errors: [ModelStoreError?] = [
        failure { try store.execute(statement) },
        await delivered { store.execute(statement, completion: $0) }.failure,
        await failure { try await store.execute(statement) },
    ]
    if !sql.contains(";") {
        errors += [
            failure { try store.findAll(Int.self, sql: statement) },
            await delivered { store.findAll(Int.self, sql: statement, completion: $0) }.failure,
            await failure { try await store.findAll(Int.self, sql: statement) },
        ]
    }
    return errors
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

// SQLite-only where not marked: raw SQLite SQL and pragmas.
/// Issue item 8: raw SQL refuses, by name and saying why, what would break the store — every
/// pragma the store configures or relies on, in any spelling — and points what cannot run
/// inside a transaction to the store's own calls.
@Suite("Reliability: raw SQL refuses what would break the store")
struct GuardedSQLTests {
    /// What the store configures on its connections or relies on.
    static let guarded = [
        "schema_version", "busy_timeout", "wal_autocheckpoint", "recursive_triggers", "trusted_schema", "journal_mode", "foreign_keys",
        "synchronous", "locking_mode", "query_only", "writable_schema", "case_sensitive_like", "legacy_alter_table", "read_uncommitted",
        "count_changes", "full_column_names", "short_column_names",
    ]

    /// Every way SQLite accepts to write `PRAGMA name = value`.
    static func spellings(of name: String) -> [String] {
        [
            "PRAGMA \(name) = 0", "pragma \(name.uppercased())=0", "PRAGMA main.\(name) = 0", "PRAGMA \"main\" . \"\(name)\" = 0",
            "PRAGMA \(name)(0)", "PRAGMA [\(name)] (0)", "PRAGMA `\(name)`=0", "PRAGMA temp.\(name) = 0",
            "/* a comment */ PRAGMA \(name) = 0", "-- a comment\n  PRAGMA \(name) = 0",
            "SELECT 1; PRAGMA \(name) = 0", "UPDATE Snack SET price = -1; PRAGMA \(name) = 0",
        ]
    }

    /// The writer's settings, read on the writer itself (a reader's are its own).
    private func writerSettings(_ store: ModelStore) throws -> [String: SQLValue] {
        try store.write { session in
            var settings: [String: SQLValue] = [:]
            for name in Self.guarded where name != "case_sensitive_like" {  // it cannot be read
                settings[name] = try session.connection.scalar("PRAGMA \(name)")
            }
            return settings
        }
    }

    // SQLite-only: PRAGMAs are SQLite's.
    @Test(arguments: StoreKind.allCases)
    func everyPragmaTheStoreReliesOnIsRefusedInEverySpellingAndFormAndChangesNothing(kind: StoreKind) async throws {
        let test = try TestStore(kind)
        let store = test.store
        _ = try await Snack.save((1...3).map { Snack(snackId: $0, price: Double($0)) }, in: store)
        let before = try writerSettings(store)
        for name in Self.guarded {
            for sql in Self.spellings(of: name) {
                let errors = await errorsInEveryForm(sql, store)
                for error in errors {
                    #expect(error?.code == .invalidQuery, "\(sql)")
                    #expect(error?.message.contains("cannot set PRAGMA \(name): ") == true, "\(sql): \(String(describing: error))")
                    #expect(error?.suggestion?.isEmpty == false, "\(sql)")
                }
            }
        }
        // Nothing was set, and a script's earlier statements were rolled back.
        #expect(try writerSettings(store) == before)
        #expect(try await Snack.findAll(in: store).map(\.price) == [1, 2, 3])
        // Reading them still works, and so do the pragmas the store does not rely on.
        #expect(try await store.findFirst(Int.self, sql: "PRAGMA busy_timeout") == 5000)
        #expect(try await store.findFirst(String.self, sql: "PRAGMA main.journal_mode") == (kind == .file ? "wal" : "memory"))
        try await store.execute("PRAGMA user_version = 7")
        #expect(try await store.findFirst(Int.self, sql: "PRAGMA user_version") == 7)
        try await store.execute("PRAGMA cache_size = -4000")
        // The store goes on as before.
        try await Snack(snackId: 4, price: 4).save(in: store)
        #expect(try await Snack.count(in: store) == 4)
    }

    // SQLite-only: VACUUM and wal_checkpoint in raw SQL are SQLite's.
    @Test(arguments: StoreKind.allCases)
    func vacuumAndCheckpointsInRawSQLAreRefusedNamingTheStoresOwnCalls(kind: StoreKind) async throws {
        let test = try TestStore(kind)
        let store = test.store
        try await Snack(snackId: 1, price: 1).save(in: store)
        let copy = test.directory.appendingPathComponent("copy.sqlite").path
        let cases: [(sql: String, call: String)] = [
            ("VACUUM", "store.vacuum()"), ("vacuum main", "store.vacuum()"), ("/* compact */ VACUUM", "store.vacuum()"),
            ("-- compact\n  Vacuum", "store.vacuum()"), ("SELECT 1; VACUUM", "store.vacuum()"),
            ("UPDATE Snack SET price = -1; VACUUM", "store.vacuum()"),
            ("VACUUM INTO '\(copy)'", "store.vacuum(into:"), ("vacuum \"main\" into '\(copy)'", "store.vacuum(into:"),
            ("PRAGMA wal_checkpoint", "store.checkpoint("), ("PRAGMA main.wal_checkpoint(TRUNCATE)", "store.checkpoint("),
            ("pragma WAL_CHECKPOINT(full)", "store.checkpoint("), ("PRAGMA \"wal_checkpoint\" = passive", "store.checkpoint("),
        ]
        for (sql, call) in cases {
            for error in await errorsInEveryForm(sql, store) {
                #expect(error?.code == .invalidQuery, "\(sql): \(String(describing: error))")
                #expect(error?.suggestion?.contains(call) == true, "\(sql): \(String(describing: error))")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: copy))
        #expect(try await Snack.find(key: 1, in: store)?.price == 1)
        // `EXPLAIN VACUUM` runs nothing, so it may.
        _ = try await store.findAll(Int.self, sql: "EXPLAIN VACUUM")
    }

    @Test(arguments: Backend.available)
    func vacuumInRawSQLIsRefusedOnEveryBackendNamingVacuum(backend: Backend) async throws {
        let test = try BackendStore(backend)
        let store = test.store
        try await Snack(snackId: 1, price: 1).save(in: store)
        for sql in ["VACUUM", "/* compact */ vacuum", #"UPDATE "Snack" SET price = -1; VACUUM"#] {
            let errors = [
                failure { try store.execute(SQLStatement(sql)) },
                await delivered { store.execute(SQLStatement(sql), completion: $0) }.failure,
                await failure { try await store.execute(SQLStatement(sql)) },
            ]
            for error in errors {
                #expect(error?.code == .invalidQuery, "\(sql): \(String(describing: error))")
                #expect(error?.suggestion?.contains("store.vacuum()") == true, "\(sql)")
            }
        }
        #expect(try await Snack.find(key: 1, in: store)?.price == 1)
    }
}
