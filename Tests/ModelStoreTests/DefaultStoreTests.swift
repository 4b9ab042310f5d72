import Foundation
import Testing

@testable import ModelStore

/// What calls that name no store use. The state is the process's own, and other suites open
/// stores all the time: each test saves it, starts from the state it describes, and restores
/// it; a test that acts as a program that opens no store stops openings being noted.
@Suite("The default store", .serialized)
struct DefaultStoreTests {
    /// Runs `body` with the default store's state set to a fresh program's (nothing set,
    /// nothing opened, nothing created), the implicit default's folder in a temporary
    /// `XDG_DATA_HOME`, and restores both afterwards, closing any implicit store it made.
    private func asAFreshProgram<T>(notingOpenings: Bool = true, _ body: (URL) async throws -> T) async throws -> T {
        let saved = ModelStore.withDefaultState { $0 }
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("xdg-\(UUID().uuidString)")
        let previous = ProcessInfo.processInfo.environment["XDG_DATA_HOME"]
        setenv("XDG_DATA_HOME", data.path, 1)
        ModelStore.withDefaultState { state in
            state = ModelStore.DefaultState()
            state.notesOpenings = notingOpenings
        }
        defer {
            let made = ModelStore.withDefaultState { state -> ModelStore? in
                let implicit = state.implicit
                state = saved
                return implicit
            }
            try? made?.close()
            if let previous { setenv("XDG_DATA_HOME", previous, 1) } else { unsetenv("XDG_DATA_HOME") }
            try? FileManager.default.removeItem(at: data)
        }
        return try await body(ModelStore.defaultLocation)
    }

    /// Every form of a call that names no store, each expected to throw `.noStore`.
    private func expectNoStoreInEveryForm(_ comment: Comment) async {
        #expect(errorCode { _ = try Snack.count() } == .noStore, comment)
        #expect(errorCode { try Snack(snackId: 1).save() } == .noStore, comment)
        #expect(errorCode { _ = try Snack.find(key: 1) } == .noStore, comment)
        #expect(errorCode { _ = try Snack.all().order(.ascending(\.name)).findAll() } == .noStore, comment)
        #expect(errorCode { _ = try Snack.all().max(\.price) } == .noStore, comment)
        #expect(errorCode { try ModelStore.default.transaction {} } == .noStore, comment)
        #expect(await asyncErrorCode { _ = try await Snack.findAll() } == .noStore, comment)
        #expect(await asyncErrorCode { try await Snack(snackId: 2).save() } == .noStore, comment)
        #expect(await asyncErrorCode { _ = try await ModelStore.default.read { 1 } } == .noStore, comment)
        let counted = await withCheckedContinuation { continuation in
            Snack.count { continuation.resume(returning: $0) }
        }
        #expect(errorCode { _ = try counted.get() } == .noStore, comment)
        let saved = await withCheckedContinuation { continuation in
            Snack(snackId: 3).save { continuation.resume(returning: $0) }
        }
        #expect(errorCode { _ = try saved.get() } == .noStore, comment)
    }

    @Test(arguments: Backend.available) func staticCallsUseTheDefaultStore(_ backend: Backend) async throws {
        try await asAFreshProgram { _ in
            let test = try TestStore(backend)
            ModelStore.default = test.store
            try synchronously { try Snack(snackId: 9, name: "via default").save() }
            #expect(try synchronously { try Snack.find(key: 9)?.name } == "via default")
            #expect(try Snack.find(key: 9, in: test.store)?.name == "via default")
            #expect(try synchronously { try Snack.count() } == 1)
            #expect(try synchronously { try Snack.delete(key: 9) } == 1)
        }
    }

    /// A program that opens its own store and forgets `in: store` once would write a second
    /// database under ~/.local/share/<process>/ that nothing reads. Every way of opening a
    /// store makes such a call throw `.noStore` in every form, naming the store it opened,
    /// and creates no file; setting `default` makes the calls use it.
    // Both backends: the "postgres" opening is a PostgreSQL store.
    @Test(arguments: ["path", "url", "inMemory"] + (Backend.available.contains(.postgres) ? ["postgres"] : []))
    func aProgramThatOpenedItsOwnStoreGetsNoStoreFromACallThatNamesNone(opening: String) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("own-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("own.sqlite")
        try await asAFreshProgram { defaultFile in
            let store: ModelStore
            var server: BackendStore?  // a PostgreSQL store in a schema of its own
            switch opening {
            case "path": store = try ModelStore(path: file.path)
            case "url": store = try ModelStore(url: file)
            case "inMemory": store = ModelStore.inMemory()
            default:
                server = try BackendStore(.postgres)
                store = server!.store
            }
            defer { if server == nil { try? store.close() } }
            await expectNoStoreInEveryForm("after opening by \(opening)")
            let error = try #require(throws: ModelStoreError.self) { try synchronously { try Snack.count() } }
            #expect(error.message.contains("opened its own store ("), "\(error)")
            #expect(error.message.contains(defaultFile.path), "\(error)")
            #expect(error.suggestion?.contains("in: store") == true)
            #expect(error.suggestion?.contains("ModelStore.default = store") == true)
            #expect(!FileManager.default.fileExists(atPath: defaultFile.deletingLastPathComponent().path))
            // The fix the error gives works.
            ModelStore.default = store
            try synchronously { try Snack(snackId: 1, name: "kept").save() }
            #expect(try await Snack.find(key: 1)?.name == "kept")
            #expect(try synchronously { try Snack.count(in: store) } == 1)
        }
    }

    /// A program that opens no store keeps the implicit default: a file at
    /// `defaultLocation`, created on first use.
    // SQLite-only: the implicit default store is a SQLite file.
    @Test func aProgramThatOpensNoStoreStillGetsTheImplicitDefault() async throws {
        try await asAFreshProgram(notingOpenings: false) { defaultFile in
            #expect(!FileManager.default.fileExists(atPath: defaultFile.path))
            try synchronously { try Snack(snackId: 1, name: "implicit").save() }
            #expect(FileManager.default.fileExists(atPath: defaultFile.path))
            #expect(try await Snack.find(key: 1)?.name == "implicit")
            let counted = await withCheckedContinuation { continuation in
                Snack.count { continuation.resume(returning: $0) }
            }
            #expect(try counted.get() == 1)
        }
    }

    /// Switching the implicit default off after it was created is not ignored: later calls
    /// that name no store throw `.noStore` in every form, and switching it on again gives the
    /// same store back.
    // SQLite-only: the implicit default store is a SQLite file.
    @Test func switchingTheImplicitDefaultOffAfterItWasCreatedTakesEffect() async throws {
        try await asAFreshProgram(notingOpenings: false) { _ in
            try synchronously { try Snack(snackId: 1, name: "before").save() }
            ModelStore.implicitDefaultEnabled = false
            await expectNoStoreInEveryForm("switched off after the implicit default was created")
            let error = try #require(throws: ModelStoreError.self) { try synchronously { try Snack.count() } }
            #expect(error.message.contains("implicitDefaultEnabled = false"))
            ModelStore.implicitDefaultEnabled = true
            #expect(try synchronously { try Snack.find(key: 1)?.name } == "before")
        }
    }

    /// A service that injects one store switches the implicit default off: a call that
    /// forgets `in: store` then fails in every form instead of using a second database.
    @Test(arguments: Backend.available)
    func withTheImplicitDefaultOffACallWithoutAStoreThrowsNoStoreInEveryForm(_ backend: Backend) async throws {
        try await asAFreshProgram(notingOpenings: false) { defaultFile in
            ModelStore.implicitDefaultEnabled = false
            await expectNoStoreInEveryForm("switched off at launch")
            let error = try #require(throws: ModelStoreError.self) { try synchronously { try Snack.count() } }
            #expect(error.suggestion?.contains("in: store") == true)
            #expect(!FileManager.default.fileExists(atPath: defaultFile.path))
            // Setting the default (the injected store, on either backend) still works.
            let test = try TestStore(backend)
            ModelStore.default = test.store
            try synchronously { try Snack(snackId: 1).save() }
            #expect(try synchronously { try Snack.count(in: test.store) } == 1)
        }
    }

    // SQLite-only: the implicit default store is a SQLite file.
    @Test func theDefaultLocationFollowsXDGDataHome() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("xdg-\(UUID().uuidString)")
        let previous = ProcessInfo.processInfo.environment["XDG_DATA_HOME"]
        setenv("XDG_DATA_HOME", directory.path, 1)
        defer {
            if let previous { setenv("XDG_DATA_HOME", previous, 1) } else { unsetenv("XDG_DATA_HOME") }
            try? FileManager.default.removeItem(at: directory)
        }
        let location = ModelStore.defaultLocation
        #expect(location.path.hasPrefix(directory.path + "/"))
        #expect(location.lastPathComponent == "ModelStore.sqlite")
        #if !canImport(Darwin)
            unsetenv("XDG_DATA_HOME")
            #expect(ModelStore.defaultLocation.path.hasPrefix(FileManager.default.homeDirectoryForCurrentUser.path + "/.local/share/"))
            setenv("XDG_DATA_HOME", directory.path, 1)
        #endif
    }

    // SQLite-only: the implicit default store is a SQLite file.
    @Test func aProgramThatNeverSetsTheDefaultGetsAFileCreatedOnFirstUse() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("xdg-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("tool/ModelStore.sqlite")
        // The same lazily opened store the `default` getter makes, at a test location.
        let store = ModelStore(location: .file(file.path), path: file.path, configuration: .init(), createsDirectory: true)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        try Snack(snackId: 1).save(in: store)
        #expect(FileManager.default.fileExists(atPath: file.path))
        #expect(try Snack.count(in: ModelStore(path: file.path)) == 1)
    }
}
