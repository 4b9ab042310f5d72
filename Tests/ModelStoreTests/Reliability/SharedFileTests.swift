import Foundation
import ReliabilityFixtures
import Testing
@testable import ModelStore

#if canImport(Glibc)
    import Glibc
#endif

// SQLite-only where not marked: one SQLite file shared by stores and processes.
/// Several stores and processes on one file, descriptors opened and closed around them, the
/// file replaced under a store, closing, and the files' permissions.
@Suite("Reliability: one file, many stores and processes")
struct SharedFileTests {
    private func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ModelStoreShared-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    private func parcels(_ range: Range<Int64>, _ text: String) -> [Parcel] {
        range.map { Parcel(id: $0, batch: 0, payload: text) }
    }

    /// The attack's reproduction and its neighbours: other stores on the same path opened,
    /// used and released; other processes that, as the file's last connection in their view,
    /// checkpoint and delete `-wal` and `-shm` on exit. With the process's locks dropped (a
    /// descriptor of the file closed behind SQLite's back) they would take the committed WAL
    /// away from the first store.
    @Test func acknowledgedSavesSurviveOtherStoresAndProcessesOnTheSameFile() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("shared.sqlite").path
        let first = try ModelStore(path: path)
        _ = try Parcel.save(parcels(0..<100, "first"), in: first)
        var expected = 100
        for round in 0..<4 {
            do {
                // Another store on the same path, used and released (each form of opening).
                let second = round % 2 == 0 ? try ModelStore(path: path) : try ModelStore(url: URL(fileURLWithPath: path))
                #expect(try Parcel.count(in: second) == expected)
                if round == 3 { try second.close() }
            }
            do {
                let reader = try ModelStore(path: path, configuration: .init(readOnly: true))
                #expect(try Parcel.count(in: reader) == expected)
            }
            // Another process that counts and exits.
            let helper = try HelperProcess("count-and-exit", path: path)
            #expect(helper.waitForExit() == 0)
            let start = Int64(100 + round * 100)
            _ = try Parcel.save(parcels(start..<(start + 100), "round \(round)"), in: first)
            expected += 100
            #expect(try Parcel.count(in: first) == expected)
        }
        try first.close()
        let reopened = try ModelStore(path: path)
        #expect(try Parcel.count(in: reopened) == expected)
        #expect(try reopened.integrityCheck() == "ok")
    }

    #if os(Linux)
        /// The process's descriptors on the store's files, read from /proc.
        private func openDescriptors(on path: String) -> Int {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return entries.filter { entry in
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + entry) else {
                    return false
                }
                return [path, path + "-wal", path + "-shm"].contains(target)
            }.count
        }

        /// Every kind of work, relationship loads included, then the last reference goes: the
        /// store is freed and every descriptor on its files is closed.
        @Test func aReleasedStoreClosesEveryDescriptorOnItsFiles() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("released.sqlite").path
            #expect(openDescriptors(on: path) == 0)
            weak var released: ModelStore?
            do {
                let store = try ModelStore(path: path)
                released = store
                var team = Team(id: 1, name: "Owls")
                team.players = [Player(id: 1, name: "Ann"), Player(id: 2, name: "Bo")]
                team.coach = Coach(id: 1, name: "Cy")
                try synchronously {
                    try team.save(in: store)
                    #expect(try Team.find(key: 1, loading: .all, in: store)?.players?.count == 2)
                    #expect(try Player.findAll(loading: .all, in: store).count == 2)
                }
                #expect(try await Team.findAll(in: store).count == 1)
                try await Snack(snackId: 1, name: "Pocky").save(in: store)
                try synchronously {
                    try store.transaction { _ = try Employee.count(in: store) }
                    _ = try store.read { try Food.findAll(in: store) }
                }
                let done = DispatchSemaphore(value: 0)
                Snack(snackId: 2).save(in: store) { _ in done.signal() }
                done.wait()
                #expect(openDescriptors(on: path) > 0)
            }
            // Completion handlers may still hold the store for a moment on their queue.
            for _ in 0..<100 where released != nil { try await Task.sleep(nanoseconds: 10_000_000) }
            #expect(released == nil, "the store must be freed when its last reference goes")
            #expect(openDescriptors(on: path) == 0)
        }
    #endif

    @Test func closeFoldsTheLogIntoTheFileSoTheFileAloneCanBeCopied() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("closing.sqlite").path
        let store = try ModelStore(path: path)
        // Work submitted before close() finishes first.
        let handled = Locked(0)
        let group = DispatchGroup()
        for batch in 0..<20 {
            group.enter()
            Parcel.save(parcels(Int64(batch * 50)..<Int64(batch * 50 + 50), "queued"), in: store) { result in
                if case .success = result { handled.withLock { $0 += 1 } }
                group.leave()
            }
        }
        try store.close()
        try store.close()  // twice does nothing
        let walSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        #expect(walSize == 0)
        let copy = directory.appendingPathComponent("copy.sqlite").path
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        #expect(try Parcel.count(in: try ModelStore(path: copy)) == 1000)
        #expect(group.wait(timeout: .now() + 30) == .success)
        #expect(handled.current == 20)
    }

    @Test(arguments: Backend.available) func everyCallFormOnAClosedStoreThrowsClosed(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        try synchronously { try Snack(snackId: 1).save(in: test.store) }
        try test.store.close()
        #expect(errorCode { _ = try Snack(snackId: 2).save(in: test.store) } == .closed)
        #expect(errorCode { _ = try Snack.find(key: 1, in: test.store) } == .closed)
        #expect(errorCode { _ = try test.store.read { try Snack.count(in: test.store) } } == .closed)
        #expect(errorCode { _ = try test.store.transaction { try Snack(snackId: 3).save(in: test.store) } } == .closed)
        #expect(await asyncErrorCode { _ = try await Snack.findAll(in: test.store) } == .closed)
        #expect(await asyncErrorCode { _ = try await Snack(snackId: 4).save(in: test.store) } == .closed)
        let result = await withCheckedContinuation { continuation in
            Snack.find(key: 1, in: test.store) { continuation.resume(returning: $0) }
        }
        #expect(errorCode { _ = try result.get() } == .closed)
        let memory = ModelStore.inMemory()
        try synchronously { try Snack(snackId: 1).save(in: memory) }
        try memory.close()
        #expect(errorCode { _ = try Snack.count(in: memory) } == .closed)
    }

    @Test(arguments: Backend.available) func closeInsideTheStoresOwnBlockIsRefusedNotADeadlock(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let inTransaction = try #require(throws: ModelStoreError.self) { try test.store.transaction { try test.store.close() } }
        #expect(inTransaction.code == .reentrancy)
        let inRead = try #require(throws: ModelStoreError.self) { try test.store.read { try test.store.close() } }
        #expect(inRead.code == .reentrancy)
        try Snack(snackId: 1).save(in: test.store)
    }

    /// Another database moved over the path, or the file deleted, while a store has it open:
    /// the store's writes would go to a file nobody can see any more.
    @Test func aFileReplacedOrDeletedUnderAnOpenStoreRefusesWrites() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("replaced.sqlite").path
        let store = try ModelStore(path: path)
        try Snack(snackId: 1, name: "original").save(in: store)

        let otherPath = directory.appendingPathComponent("other.sqlite").path
        do {
            let other = try ModelStore(path: otherPath)
            try Snack(snackId: 7, name: "other").save(in: other)
            try other.close()
        }
        _ = rename(otherPath, path)
        let error = try #require(throws: ModelStoreError.self) { try Snack(snackId: 2, name: "lost?").save(in: store) }
        #expect(error.code == .fileReplaced)
        #expect(error.message.contains(path))
        #expect(errorCode { _ = try store.transaction { try Snack(snackId: 3).save(in: store) } } == .fileReplaced)
        // A new store on the path while the old one still has the replaced file (and its
        // -wal, which SQLite finds by name) open would mix the two: refused.
        #expect(errorCode { _ = try ModelStore(path: path) } == .fileReplaced)
        try store.close()
        let fresh = try ModelStore(path: path)
        #expect(try Snack.findAll(in: fresh).map(\.snackId) == [7])

        let deletedPath = directory.appendingPathComponent("deleted.sqlite").path
        let doomed = try ModelStore(path: deletedPath)
        try Snack(snackId: 1).save(in: doomed)
        try FileManager.default.removeItem(atPath: deletedPath)
        #expect(errorCode { _ = try Snack(snackId: 2).save(in: doomed) } == .fileReplaced)
        #expect(errorCode { _ = try ModelStore(path: deletedPath) } == .fileReplaced)
    }

    #if os(Linux)
        private func mode(_ path: String) -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1) & 0o777
        }

        @Test func theDefaultStoresFolderAndFilesArePrivate() throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("app/ModelStore.sqlite").path
            let store = ModelStore(location: .file(path), path: path, configuration: .init(), createsDirectory: true)
            try Snack(snackId: 1).save(in: store)
            #expect(mode(directory.appendingPathComponent("app").path) == 0o700)
            #expect(mode(path) == 0o600)
            #expect(mode(path + "-wal") == 0o600)
            #expect(mode(path + "-shm") == 0o600)
        }

        @Test func aStoreAtAnExplicitPathKeepsTheUsersUmask() throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("explicit.sqlite").path
            let mask = umask(0o022)
            defer { umask(mask) }
            let store = try ModelStore(path: path)
            try Snack(snackId: 1).save(in: store)
            #expect(mode(path) == 0o644)
        }
    #endif
}
