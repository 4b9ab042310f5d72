import Foundation
@testable import ModelStore
#if PostgreSQL
    import ModelStorePostgres
#endif
import Testing

/// The backends the shared behaviour suite runs on: one test body, two stores.
///
/// PostgreSQL runs when `MODELSTORE_POSTGRES_URL` names a server (`.ci/run` starts a
/// throwaway one: `scripts/postgres-cluster.sh`). Without it the PostgreSQL cases are left
/// out and `postgresSuiteRanOrSaysWhy` says so; with `MODELSTORE_REQUIRE_POSTGRES=1` (set by
/// CI) they run anyway, and fail when no server answers, so the suite never skips silently.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    static var postgresURL: String? {
        let url = ProcessInfo.processInfo.environment["MODELSTORE_POSTGRES_URL"]
        return url?.isEmpty == false ? url : nil
    }

    static var postgresRequired: Bool {
        ProcessInfo.processInfo.environment["MODELSTORE_REQUIRE_POSTGRES"] == "1"
    }

    /// Whether this build has the PostgreSQL trait (`swift test --traits PostgreSQL`).
    static var postgresBuilt: Bool {
        #if PostgreSQL
            true
        #else
            false
        #endif
    }

    /// The backends to run: SQLite always, PostgreSQL when there is (or must be) a server.
    /// A build without the trait with `MODELSTORE_REQUIRE_POSTGRES=1` still lists it, so the
    /// PostgreSQL half fails (it cannot run) instead of vanishing.
    static var available: [Backend] {
        postgresURL != nil && postgresBuilt || postgresRequired ? [.sqlite, .postgres] : [.sqlite]
    }
}

/// A store for one test on `backend`: a fresh in-memory SQLite store, or a PostgreSQL store
/// in a schema of its own (dropped by `close`), so tests running side by side never share
/// a table.
final class BackendStore: Sendable {
    let backend: Backend
    let store: ModelStore
    private let schema: String?

    init(_ backend: Backend, configuration: ModelStore.Configuration = ModelStore.Configuration()) throws {
        self.backend = backend
        switch backend {
        case .sqlite:
            store = ModelStore.inMemory(configuration: configuration)
            schema = nil
        case .postgres:
            #if !PostgreSQL
                throw ModelStoreError(
                    .cannotOpen, "These tests were built without the PostgreSQL trait.",
                    suggestion: "Run `swift test --traits PostgreSQL`.")
            #else
                guard let url = Backend.postgresURL else {
                    throw ModelStoreError(
                        .cannotOpen, "MODELSTORE_REQUIRE_POSTGRES=1 but MODELSTORE_POSTGRES_URL names no server.",
                        suggestion: "Start one with scripts/postgres-cluster.sh start DIR and export the URL it prints.")
                }
                let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
                var server = try PostgresConfiguration(url: url)
                server.schema = String(name)
                store = try ModelStore(postgres: server, configuration: configuration)
                schema = String(name)
            #endif
        }
    }

    /// A second store on the same database (another process's view): the same schema.
    func another(configuration: ModelStore.Configuration = ModelStore.Configuration()) throws -> ModelStore {
        switch backend {
        case .sqlite: throw ModelStoreError(.invalidQuery, "in-memory SQLite stores are private")
        case .postgres:
            #if PostgreSQL
                var server = try PostgresConfiguration(url: Backend.postgresURL!)
                server.schema = schema
                return try ModelStore(postgres: server, configuration: configuration)
            #else
                throw ModelStoreError(.cannotOpen, "These tests were built without the PostgreSQL trait.")
            #endif
        }
    }

    /// The schema's name, for helper processes.
    var schemaName: String? { schema }

    deinit {
        try? store.close()
        #if PostgreSQL
            if let schema, let url = Backend.postgresURL, let server = try? PostgresConfiguration(url: url),
                let admin = try? ModelStore(postgres: server)
            {
                _ = try? admin.execute(SQLStatement(stringLiteral: "DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE"))
                try? admin.close()
            }
        #endif
    }
}

@Test func postgresSuiteRanOrSaysWhy() throws {
    if !Backend.postgresBuilt && !Backend.postgresRequired {
        print("◇ The PostgreSQL half of the shared behaviour suite did not run: run `swift test --traits PostgreSQL`.")
        return
    }
    if Backend.postgresURL == nil && !Backend.postgresRequired {
        // Not a failure: a machine without a server runs the SQLite half of the suite.
        print(
            "◇ The PostgreSQL half of the shared behaviour suite did not run: MODELSTORE_POSTGRES_URL is not set. "
                + "Start a server with `scripts/postgres-cluster.sh start /tmp/pg` and export the URL it prints.")
        return
    }
    let store = try BackendStore(.postgres)
    struct Sum: Decodable, Sendable { var total: Int64 }
    #expect(try store.store.findFirst(Sum.self, sql: "SELECT 1 + 1 AS total")?.total == 2)
}

/// One database that several stores open, in turn or at once, as programs (or releases of
/// one program) do: a SQLite file in a directory of its own, or a PostgreSQL schema of its
/// own. Both go when this does.
final class BackendDatabase: Sendable {
    let backend: Backend
    private let directory: URL
    private let schema: String

    init(_ backend: Backend) throws {
        self.backend = backend
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("database-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
    }

    /// A new store on the database: a program starting.
    func open(_ configuration: ModelStore.Configuration = ModelStore.Configuration()) throws -> ModelStore {
        switch backend {
        case .sqlite:
            return try ModelStore(path: directory.appendingPathComponent("store.sqlite").path, configuration: configuration)
        case .postgres:
            #if PostgreSQL
                guard let url = Backend.postgresURL else {
                    throw ModelStoreError(.cannotOpen, "MODELSTORE_REQUIRE_POSTGRES=1 but MODELSTORE_POSTGRES_URL names no server.")
                }
                var server = try PostgresConfiguration(url: url)
                server.schema = schema
                return try ModelStore(postgres: server, configuration: configuration)
            #else
                throw ModelStoreError(.cannotOpen, "These tests were built without the PostgreSQL trait.")
            #endif
        }
    }

    /// A store that reaches its database only at its first call (SQLite: as the default store
    /// opens its file; PostgreSQL: `connectsAtOpen = false`).
    func openLazily(_ configuration: ModelStore.Configuration = ModelStore.Configuration()) throws -> ModelStore {
        switch backend {
        case .sqlite:
            let path = directory.appendingPathComponent("store.sqlite").path
            return ModelStore(location: .file(path), path: path, configuration: configuration, createsDirectory: false)
        case .postgres:
            #if PostgreSQL
                var server = try PostgresConfiguration(url: Backend.postgresURL ?? "")
                server.schema = schema
                server.connectsAtOpen = false
                return try ModelStore(postgres: server, configuration: configuration)
            #else
                throw ModelStoreError(.cannotOpen, "These tests were built without the PostgreSQL trait.")
            #endif
        }
    }

    /// The plan of opening the database with `configuration` and using `models`, without
    /// opening it: `ModelStore.migrationPlan(at:)` or `(postgres:)`.
    func migrationPlan(_ configuration: ModelStore.Configuration, for models: [any StoredModel.Type]) throws -> MigrationPlan {
        switch backend {
        case .sqlite:
            return try ModelStore.migrationPlan(
                at: directory.appendingPathComponent("store.sqlite").path, configuration: configuration, for: models)
        case .postgres:
            #if PostgreSQL
                var server = try PostgresConfiguration(url: Backend.postgresURL ?? "")
                server.schema = schema
                return try ModelStore.migrationPlan(postgres: server, configuration: configuration, for: models)
            #else
                throw ModelStoreError(.cannotOpen, "These tests were built without the PostgreSQL trait.")
            #endif
        }
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
        #if PostgreSQL
            if backend == .postgres, let url = Backend.postgresURL, let server = try? PostgresConfiguration(url: url),
                let admin = try? ModelStore(postgres: server)
            {
                _ = try? admin.execute(SQLStatement(stringLiteral: "DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE"))
                try? admin.close()
            }
        #endif
    }
}
