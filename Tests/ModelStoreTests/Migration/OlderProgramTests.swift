import Foundation
import ModelStoreCSQLite
import Testing
@testable import ModelStore

private struct Note: StoredModel, Equatable {
    var id: Int64
    var text: String
    static let primaryKey = ["id"]
}

/// The note as the newer program stores it: its text split out into a required title.
private struct TitledNote: StoredModel, Equatable {
    var id: Int64
    var title: String
    static let primaryKey = ["id"]
    static let tableName = "Note"
}

// SQLite-only: written on SQLite files (raw checks through SQLite's catalog, backups, process
// kills); what they promise for a server runs in MigrationsOnBothBackendsTests.
/// A file migrated by one version's steps, opened by a program whose list differs — an
/// older version with no steps at all included. Its models would read `nil` for columns it
/// does not know and write into a schema it never saw: the file is refused before anything
/// is read or written, whichever way the store is opened.
@Suite("Migrations: a migrated file and an older program")
struct OlderProgramTests {
    private let directory: URL
    private let path: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("older-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("store.sqlite").path
    }

    private func cleanUp() { try? FileManager.default.removeItem(at: directory) }

    private static let titles = MigrationStep("text becomes title") { step in
        try step.transform(Note.self, to: TitledNote.self) { TitledNote(id: $0.id, title: $0.text) }
    }

    /// A file with notes, migrated by the newer version's step.
    private func migratedFile() throws {
        let old = try ModelStore(path: path)
        _ = try Note.save([Note(id: 1, text: "one"), Note(id: 2, text: "two")], in: old)
        try old.close()
        let new = try ModelStore(path: path, configuration: .init(migrations: [Self.titles]))
        #expect(try TitledNote.find(key: 1, in: new)?.title == "one")
        try new.close()
    }

    /// The file as bytes plus the rows of its tables, to show a refusal changed nothing.
    private func snapshot() throws -> [[SQLValue]] {
        let connection = try Connection(location: path, flags: SQLITE_OPEN_READONLY, busyTimeout: 5)
        defer { connection.close() }
        var rows: [[SQLValue]] = []
        for sql in [
            "SELECT type, name, sql FROM sqlite_master ORDER BY name", "SELECT * FROM Note ORDER BY id",
            "SELECT position, name FROM modelstore_migrations ORDER BY position",
        ] {
            let statement = try connection.makeStatement(sql)
            try statement.forEachRow { rows.append((0..<statement.columnCount).map { statement.value(at: $0) }) }
        }
        return rows
    }

    private func expectRefusedNamingTheStep(_ error: ModelStoreError?, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error?.code == .invalidModel, sourceLocation: sourceLocation)
        #expect(error?.value == "text becomes title", sourceLocation: sourceLocation)
        #expect(
            error?.message.contains("another version of the program") == true, "\(error?.message ?? "")", sourceLocation: sourceLocation)
        #expect(error?.suggestion != nil, sourceLocation: sourceLocation)
    }

    @Test(arguments: [false, true])
    func aProgramWithNoStepsRefusesAFileAnotherVersionMigrated(readOnly: Bool) throws {
        defer { cleanUp() }
        try migratedFile()
        let before = try snapshot()
        let error = #expect(throws: ModelStoreError.self) {
            try ModelStore(path: path, configuration: .init(readOnly: readOnly))
        }
        expectRefusedNamingTheStep(error)
        #expect(try snapshot() == before)
    }

    /// A store that opens its file on first use (as the default store does): every call, in
    /// every form, is refused the same way, and none reaches the file.
    @Test func everyCallOfALazilyOpenedStoreIsRefusedInEveryForm() async throws {
        defer { cleanUp() }
        try migratedFile()
        let before = try snapshot()
        let store = ModelStore(location: .file(path), path: path, configuration: .init(), createsDirectory: false)
        expectRefusedNamingTheStep(#expect(throws: ModelStoreError.self) { try Note.find(key: 1, in: store) })
        expectRefusedNamingTheStep(#expect(throws: ModelStoreError.self) { try Note(id: 3, text: "three").save(in: store) })
        let completed = await withCheckedContinuation { continuation in
            Note.count(in: store) { continuation.resume(returning: $0) }
        }
        expectRefusedNamingTheStep(#expect(throws: ModelStoreError.self) { try completed.get() })
        await #expect(throws: ModelStoreError.self) { try await Note(id: 3, text: "three").save(in: store) }
        do {
            _ = try await Note.findAll(in: store)
            Issue.record("an async read of the migrated file succeeded")
        } catch let error as ModelStoreError {
            expectRefusedNamingTheStep(error)
        }
        // The plan refuses it the same way.
        expectRefusedNamingTheStep(#expect(throws: ModelStoreError.self) { try ModelStore.migrationPlan(at: path, for: [Note.self]) })
        #expect(try snapshot() == before)
    }

    @Test func aFileWithNoRecordedStepsAndAProgramWithNoneOpenAsBefore() throws {
        defer { cleanUp() }
        let store = try ModelStore(path: path)
        try Note(id: 1, text: "one").save(in: store)
        try store.close()
        let again = try ModelStore(path: path, configuration: .init(readOnly: true))
        #expect(try Note.find(key: 1, in: again)?.text == "one")
        try again.close()
        // A version table with no steps in it (a tool made it, or every step was removed
        // by hand) records nothing a program could differ from.
        let raw = try Connection(location: path, flags: SQLITE_OPEN_READWRITE, busyTimeout: 5)
        try raw.execute(
            "CREATE TABLE modelstore_migrations (position INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied REAL NOT NULL)")
        raw.close()
        let third = try ModelStore(path: path)
        defer { try? third.close() }
        #expect(try Note.count(in: third) == 1)
    }

    /// The newer program itself, and a newer one still that adds a step, open it.
    @Test func theMigratingProgramAndANewerOneStillOpenIt() throws {
        defer { cleanUp() }
        try migratedFile()
        try ModelStore(path: path, configuration: .init(migrations: [Self.titles])).close()
        let newer = try ModelStore(
            path: path, configuration: .init(migrations: [Self.titles, .sql("shout", "UPDATE Note SET title = upper(title)")]))
        defer { try? newer.close() }
        #expect(try TitledNote.find(key: 2, in: newer)?.title == "TWO")
    }

    /// An in-memory store has no file another version could have migrated.
    @Test func anInMemoryStoreWithNoStepsOpensAsBefore() throws {
        let store = ModelStore.inMemory()
        try Note(id: 1, text: "one").save(in: store)
        #expect(try store.appliedMigrations().isEmpty)
    }
}
