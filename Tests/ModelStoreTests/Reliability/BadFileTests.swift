import Foundation
import Testing
@testable import ModelStore

@Suite("Opening bad locations")
struct OpenErrorTests {
    private func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("open-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func aFileThatIsNotADatabaseFailsAtOpenAndIsNotModified() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("random.sqlite")
        var generator = SystemRandomNumberGenerator()
        let bytes = Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try bytes.write(to: file)
        let error = try #require(throws: ModelStoreError.self) { try ModelStore(path: file.path) }
        #expect(error.code == .notADatabase)
        #expect(error.message.contains(file.path))
        #expect(try Data(contentsOf: file) == bytes)
        #expect(!FileManager.default.fileExists(atPath: file.path + "-wal"))
    }

    @Test func aDirectoryFailsAtOpen() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let error = try #require(throws: ModelStoreError.self) { try ModelStore(path: directory.path) }
        #expect(error.code == .cannotOpen)
        #expect(error.message.contains("is a directory"))
    }

    @Test func aMissingDirectoryFailsAtOpen() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("missing-\(UUID().uuidString)/store.sqlite").path
        let error = try #require(throws: ModelStoreError.self) { try ModelStore(path: path) }
        #expect(error.code == .cannotOpen)
        #expect(error.message.contains("does not exist"))
    }

    @Test func aLocationThatCannotBeWrittenFailsAtOpen() throws {
        // /proc refuses new files even to root; elsewhere a directory without write permission does.
        #if os(Linux)
        let path = "/proc/modelstore-\(UUID().uuidString).sqlite"
        let error = try #require(throws: ModelStoreError.self) { try ModelStore(path: path) }
        #expect([.cannotOpen, .readOnly].contains(error.code))
        #expect(error.message.contains(path))
        #else
        let directory = try temporaryDirectory()
        defer {
            try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
            try? FileManager.default.removeItem(at: directory)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: directory.path)
        let error = try #require(throws: ModelStoreError.self) {
            try ModelStore(path: directory.appendingPathComponent("store.sqlite").path)
        }
        #expect([.cannotOpen, .readOnly].contains(error.code))
        #endif
    }

    @Test func aNonFileURLIsRefused() throws {
        let error = try #require(throws: ModelStoreError.self) { try ModelStore(url: URL(string: "https://example.com/db")!) }
        #expect(error.code == .cannotOpen)
    }

    @Test func aDefaultStoreThatCannotBeCreatedFailsOnItsFirstCallAndKeepsFailingClearly() throws {
        let path = "/proc/modelstore-\(UUID().uuidString)/ModelStore.sqlite"
        let store = ModelStore(location: .file(path), path: path, configuration: .init(), createsDirectory: true)
        for _ in 0..<2 {
            let error = try #require(throws: ModelStoreError.self) { try Snack.count(in: store) }
            #expect(error.code == .cannotOpen)
        }
    }

    @Test func aTableConstraintTheModelDoesNotKnowRefusesTheSaveAndChangesNothing() throws {
        let test = try TestStore()
        try test.rawExecute(#"CREATE TABLE "Snack" ("snackId" INTEGER NOT NULL PRIMARY KEY, "name" TEXT, "taste" TEXT, "size" REAL, "price" REAL, "tags" TEXT NOT NULL, "createdAt" REAL, "legacy" TEXT NOT NULL)"#)
        let error = try #require(throws: ModelStoreError.self) { try Snack(snackId: 1, name: "x").save(in: test.store) }
        #expect(error.code == .constraintViolation)
        #expect(error.model == "Snack")
        #expect(error.key == "snackId = 1")
        #expect(error.sqliteMessage == "NOT NULL constraint failed: Snack.legacy")
        #expect(try test.rawRows("SELECT count(*) FROM Snack") == [[.integer(0)]])
    }
}
