import Foundation
import ReliabilityFixtures
import Testing
@testable import ModelStore

/// The result a completion-form call delivers.
private func delivered<T: Sendable>(_ call: (@escaping @Sendable (Result<T, ModelStoreError>) -> Void) -> Void) async -> Result<
    T, ModelStoreError
> {
    await withCheckedContinuation { continuation in call { continuation.resume(returning: $0) } }
}

private func thrown(_ body: () throws -> Void) -> ModelStoreError? {
    do {
        try body()
        return nil
    } catch {
        return error as? ModelStoreError
    }
}

private func thrown(_ body: () async throws -> Void) async -> ModelStoreError? {
    do {
        try await body()
        return nil
    } catch {
        return error as? ModelStoreError
    }
}

/// What a cleanup tool does to the files beside an open store.
enum CompanionChange: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case walDeleted, shmDeleted, bothDeleted, bothReplaced

    var testDescription: String { rawValue }

    func apply(to path: String) throws {
        let suffixes = self == .walDeleted ? ["-wal"] : self == .shmDeleted ? ["-shm"] : ["-wal", "-shm"]
        for suffix in suffixes {
            try FileManager.default.removeItem(atPath: path + suffix)
            if self == .bothReplaced { _ = FileManager.default.createFile(atPath: path + suffix, contents: Data()) }
        }
    }

    /// The file the error names first.
    var named: String { self == .shmDeleted ? "-shm" : "-wal" }
}

// SQLite-only: deletes the WAL and shared-memory files.
/// Issue item 9: a store's `-wal` and `-shm` deleted (or replaced) under it by a cleanup tool
/// are noticed, like a replaced database file: writes, new readers and new stores on the path
/// are refused with `.fileReplaced` saying what happened and what to do, and `close()` then
/// keeps every commit.
@Suite("Reliability: the log and shared memory deleted under an open store")
struct CompanionFileTests {
    @Test(arguments: CompanionChange.allCases)
    func aLogOrSharedMemoryFileDeletedUnderAnOpenStoreIsNoticedAndCloseKeepsEveryCommit(change: CompanionChange) async throws {
        let test = try TestStore(.file)
        let store = test.store
        let path = try #require(store.path)
        var saved = (1...20).map { Snack(snackId: $0, name: "saved \($0)") }
        _ = try await Snack.save(saved, in: store)
        // Another process opening and closing the file cannot delete them while this store
        // has them (its close is not the last), so that is never taken for a cleanup tool.
        let other = try HelperProcess("count-and-exit", path: path)
        #expect(other.waitForExit() == 0)
        saved.append(Snack(snackId: 21, name: "after the other process"))
        try await saved[20].save(in: store)
        try change.apply(to: path)

        // Writes, in every form, are refused before anything is written.
        let writes: [ModelStoreError?] = [
            thrown { try Snack(snackId: 99).save(in: store) },
            await delivered { Snack(snackId: 99).save(in: store, completion: $0) }.failureError,
            await thrown { _ = try await Snack(snackId: 99).save(in: store) },
            thrown { _ = try store.execute("DELETE FROM Snack") },
        ]
        for error in writes {
            #expect(error?.code == .fileReplaced, "\(String(describing: error))")
            #expect(error?.value == path + change.named)
            #expect(error?.message.contains(change == .bothReplaced ? "replaced by another file" : "deleted") == true)
            #expect(error?.suggestion?.contains("close()") == true)
        }
        // A read that needs a new reader (none was opened yet) is refused the same way,
        // instead of SQLite's short read.
        let reads: [ModelStoreError?] = [
            thrown { _ = try Snack.count(in: store) },
            await delivered { Snack.count(in: store, completion: $0) }.failureError,
            await thrown { _ = try await Snack.count(in: store) },
        ]
        #expect(reads.map(\.?.code) == [.fileReplaced, .fileReplaced, .fileReplaced])
        // Another store on the path in this process would read the file without the commits.
        let opening = try #require(throws: ModelStoreError.self) { try ModelStore(path: path) }
        #expect(opening.code == .fileReplaced)
        #expect(opening.suggestion?.contains("Close the other store") == true)

        // Following the advice loses nothing.
        try store.close()
        let reopened = try ModelStore(path: path)
        #expect(try await Snack.findAll(in: reopened) == saved)
        #expect(try reopened.integrityCheck() == "ok")
        try await Snack(snackId: 99).save(in: reopened)
        #expect(try await Snack.count(in: reopened) == 22)
    }
}

extension Result {
    fileprivate var failureError: ModelStoreError? {
        if case .failure(let error) = self { return error as? ModelStoreError }
        return nil
    }
}
