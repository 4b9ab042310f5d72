import Foundation
import Testing
@testable import ModelStore

// SQLite-only: bad files and locations on disk.
/// Promise 5: a file that is not an intact database, a directory, or a path that cannot be
/// written gives a clear error at open — never a crash — and the file is left as it was.
@Suite("Reliability: bad files and locations")
struct BadFileTests {
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

    /// A store file written by ModelStore and closed, so everything is in the main file.
    private func storedDatabase(in directory: URL) throws -> (file: URL, bytes: Data) {
        let file = directory.appendingPathComponent("store.sqlite")
        do {
            let store = try ModelStore(path: file.path)
            _ = try Snack.save((1...2000).map { Snack(snackId: $0, name: "snack \($0)") }, in: store)
        }
        #expect(!FileManager.default.fileExists(atPath: file.path + "-wal"), "closing the store checkpoints its WAL")
        return (file, try Data(contentsOf: file))
    }

    @Test func aTruncatedDatabaseFailsAtOpenAndIsNotModified() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (file, bytes) = try storedDatabase(in: directory)
        for length in [bytes.count / 2, bytes.count - 4096, 4096 + 100] {
            let truncated = bytes.prefix(length)
            try truncated.write(to: file)
            let error = try #require(throws: ModelStoreError.self) { try ModelStore(path: file.path) }
            #expect(error.code == .corrupt, "cut at \(length)")
            #expect(error.message.contains("truncated"))
            #expect(error.message.contains(file.path))
            #expect(try Data(contentsOf: file) == truncated)
            #expect(!FileManager.default.fileExists(atPath: file.path + "-wal"))
            #expect(!FileManager.default.fileExists(atPath: file.path + "-shm"))
        }
    }

    @Test func aFileCutInsideItsHeaderFailsAtOpenAndIsNotModified() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (file, bytes) = try storedDatabase(in: directory)
        let truncated = bytes.prefix(60)
        try truncated.write(to: file)
        let error = try #require(throws: ModelStoreError.self) { try ModelStore(path: file.path) }
        #expect(error.code == .notADatabase)
        #expect(error.message.contains("too short"))
        #expect(try Data(contentsOf: file) == truncated)
    }

    @Test func aDatabaseWithADamagedPageOpensButReportsCorruptionWhenRead() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var (file, bytes) = try storedDatabase(in: directory)
        // Overwrite the pages after the schema with garbage: the header is intact, so the
        // damage shows only when a damaged page is read.
        let pageSize = 4096
        for offset in stride(from: 2 * pageSize, to: bytes.count, by: 1) { bytes[offset] = 0xA5 }
        try bytes.write(to: file)
        let store = try ModelStore(path: file.path)
        let error = try #require(throws: ModelStoreError.self) { try Snack.findAll(in: store) }
        #expect(error.code == .corrupt)
        // integrity_check itself may stop at the damage with the same error.
        #expect((try? store.integrityCheck()) != "ok")
    }

    @Test func aDirectoryFailsAtOpenAndIsLeftEmpty() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let error = try #require(throws: ModelStoreError.self) { try ModelStore(path: directory.path) }
        #expect(error.code == .cannotOpen)
        #expect(error.message.contains("is a directory"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory.path + "-wal"))
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
}
