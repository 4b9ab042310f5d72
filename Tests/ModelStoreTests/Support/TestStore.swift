import Foundation
import Testing
@testable import ModelStore

/// Where a test's store lives; tests that care run against both.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory
    case file

    var testDescription: String { rawValue }
}

/// A fresh store for one test, recording every SQL statement it runs.
final class TestStore: @unchecked Sendable {
    // @unchecked: `recorded` is Locked; the rest is immutable.
    let store: ModelStore
    let directory: URL
    private let recorded = Locked<[String]>([])

    init(_ kind: StoreKind = .memory, configuration: ModelStore.Configuration = .init()) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ModelStoreTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        switch kind {
        case .memory: store = ModelStore.inMemory(configuration: configuration)
        case .file: store = try ModelStore(path: directory.appendingPathComponent("store.sqlite").path, configuration: configuration)
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
