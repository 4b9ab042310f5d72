import Foundation
import Testing
@testable import ModelStore

/// Where a test's store lives; tests that care run against both.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory
    case file
    /// A PostgreSQL store in a schema of its own (see `BackendStore`).
    case postgres

    var testDescription: String { rawValue }

    /// SQLite's two kinds of store: in memory and in a file.
    static var allCases: [StoreKind] { [.memory, .file] }

    /// SQLite's two kinds of store, and PostgreSQL when `Backend.available` has it: the
    /// shared behaviour suite's form for tests that also run on a file.
    static var everywhere: [StoreKind] { allCases + (Backend.available.contains(.postgres) ? [.postgres] : []) }

    /// This kind on SQLite, or PostgreSQL when `backend` is the server.
    func or(_ backend: Backend) -> StoreKind { backend == .sqlite ? self : .postgres }
}

/// A fresh store for one test, recording every SQL statement it runs.
final class TestStore: @unchecked Sendable {
    // @unchecked: `recorded` is Locked; the rest is immutable.
    let store: ModelStore
    let directory: URL
    private let recorded = Locked<[String]>([])
    /// The PostgreSQL store's owner (it drops the store's schema), nil on SQLite.
    private let server: BackendStore?

    /// A fresh store on `backend`: an in-memory SQLite store, or a PostgreSQL store in a
    /// schema of its own.
    convenience init(_ backend: Backend, configuration: ModelStore.Configuration = .init()) throws {
        try self.init(backend == .sqlite ? .memory : .postgres, configuration: configuration)
    }

    /// A fresh store of `kind` on SQLite, or a PostgreSQL store when `backend` is the server:
    /// for shared tests that want SQLite's file store (separate readers and writer).
    convenience init(_ kind: StoreKind, or backend: Backend, configuration: ModelStore.Configuration = .init()) throws {
        try self.init(backend == .sqlite ? kind : .postgres, configuration: configuration)
    }

    init(_ kind: StoreKind = .memory, configuration: ModelStore.Configuration = .init()) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ModelStoreTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        switch kind {
        case .memory:
            store = ModelStore.inMemory(configuration: configuration)
            server = nil
        case .file:
            store = try ModelStore(path: directory.appendingPathComponent("store.sqlite").path, configuration: configuration)
            server = nil
        case .postgres:
            let owner = try BackendStore(.postgres, configuration: configuration)
            store = owner.store
            server = owner
        }
        let recorded = self.recorded
        store.setTrace { sql in recorded.withLock { $0.append(sql) } }
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Another store on this test's file: the program after its models changed (one store
    /// refuses two models that declare one table).
    func later() throws -> ModelStore {
        guard let path = store.path else { throw ModelStoreError(.invalidQuery, "an in-memory store has no file to open again") }
        return try ModelStore(path: path)
    }

    /// The backend the store is on.
    var backend: Backend { server == nil ? .sqlite : .postgres }

    /// The statements run since the last `resetSQL()`.
    var sql: [String] { recorded.current }

    func resetSQL() {
        recorded.withLock { $0.removeAll() }
    }

    /// Statements run, without transaction control (BEGIN, COMMIT, …).
    var dataSQL: [String] {
        sql.filter { !["BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "PRAGMA schema_version"].contains(where: $0.hasPrefix) }
    }

    /// Runs one SQL query on a read connection and returns the rows as values: a view of the
    /// file that does not go through ModelStore's mapping.
    func rawRows(_ sql: String) throws -> [[SQLValue]] {
        try store.rawRows(sql)
    }

    /// Runs raw SQL on the writer (to set up states ModelStore itself would never write).
    func rawExecute(_ sql: String) throws {
        try store.rawExecute(sql)
    }
}

extension ModelStore {
    /// Runs one SQL query on a read connection and returns the rows as values.
    func rawRows(_ sql: String) throws -> [[SQLValue]] {
        try read { session in
            let statement = try session.connection.makeStatement(sql)
            var rows: [[SQLValue]] = []
            try statement.forEachRow {
                rows.append((0..<statement.columnCount).map { statement.value(at: $0) })
            }
            return rows
        }
    }

    /// Runs raw SQL on the writer connection.
    func rawExecute(_ sql: String) throws {
        try write { session in try session.connection.execute(sql) }
    }

    /// `PRAGMA integrity_check`'s verdict: "ok" for an intact file.
    func integrityCheck() throws -> String {
        try rawRows("PRAGMA integrity_check").map { row in
            if case .text(let line)? = row.first { return line }
            return row.first?.description ?? ""
        }.joined(separator: "; ")
    }
}
