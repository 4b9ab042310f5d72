import Foundation
import ModelStoreCSQLite
import ReliabilityFixtures
import Testing
@testable import ModelStore

#if canImport(Glibc)
    import Glibc
#endif

/// The error a save threw in each call form: synchronous, completion handler, `async`.
private func saveErrorsInEveryForm(_ snacks: [Snack], _ store: ModelStore) async -> [ModelStoreError?] {
    var errors: [ModelStoreError?] = []
    do {
        _ = try synchronously { try Snack.save(snacks, in: store) }
        errors.append(nil)
    } catch {
        errors.append(error as? ModelStoreError)
    }
    let delivered = await withCheckedContinuation { continuation in Snack.save(snacks, in: store) { continuation.resume(returning: $0) } }
    if case .failure(let error) = delivered { errors.append(error) } else { errors.append(nil) }
    do {
        _ = try await Snack.save(snacks, in: store)
        errors.append(nil)
    } catch {
        errors.append(error as? ModelStoreError)
    }
    return errors
}

/// Runs a command to its end; its exit status.
@discardableResult
private func run(_ arguments: [String]) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}

/// A disk of its own, small enough to fill: a tmpfs mounted for one test (mounting needs the
/// privilege the test machines have).
private final class SmallDisk {
    let directory: URL
    private var filler: URL { directory.appendingPathComponent("filler") }

    static var isAvailable: Bool {
        #if os(Linux)
            return geteuid() == 0
        #else
            return false
        #endif
    }

    init(megabytes: Int) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ModelStoreDisk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard try run(["mount", "-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", directory.path]) == 0 else {
            throw ModelStoreError(.cannotOpen, "could not mount a tmpfs at \(directory.path)")
        }
    }

    /// Takes every byte left.
    func fill() throws {
        try run(["dd", "if=/dev/zero", "of=\(filler.path)", "bs=4k"])
    }

    /// Gives the bytes back.
    func free() throws {
        try FileManager.default.removeItem(at: filler)
    }

    deinit {
        _ = try? run(["umount", "-l", directory.path])
        try? FileManager.default.removeItem(at: directory)
    }
}

// SQLite-only: SQLite I/O-fault shims.
/// Issue item 9: a full disk is `.storeFull` whatever file ran out of room (the database, its
/// log, its shared memory, or a file-size limit), and any other I/O error has a code of its
/// own (`.ioError`) that says what failed — never SQLite's bare "disk I/O error".
@Suite("Reliability: I/O errors say what happened")
struct IOErrorTests {
    @Test(.enabled(if: SmallDisk.isAvailable))
    func aDiskThatFillsWhileSQLiteGrowsTheSharedMemoryFileIsStoreFullInEveryFormAndWritesNothing() async throws {
        // Room for the log and, once the filler goes, for the checkpoint that folds it in.
        let disk = try SmallDisk(megabytes: 64)
        let path = disk.directory.appendingPathComponent("store.sqlite").path
        let store = try ModelStore(path: path)
        let kept = (1...10).map { Snack(snackId: $0, name: "kept") }
        _ = try await Snack.save(kept, in: store)
        // The log's room is taken beforehand (fallocate, keeping its size), so a transaction's
        // frames fit on the disk; past 4,062 frames SQLite grows -shm by 32 KiB, which does not.
        #expect(try run(["fallocate", "-n", "-l", "20M", path + "-wal"]) == 0)
        try disk.fill()
        let large = (100..<4_400).map { Snack(snackId: Int64($0), name: String(repeating: "n", count: 3_500)) }
        for error in await saveErrorsInEveryForm(large, store) {
            #expect(error?.code == .storeFull, "\(String(describing: error))")
            #expect(error?.message.contains("The store is full") == true)
            #expect(error?.message.contains("shared-memory file (-shm)") == true, "\(String(describing: error))")
            #expect(error?.sqliteCode == SQLITE_IOERR | (19 << 8))
        }
        #expect(try await Snack.findAll(in: store) == kept)
        // Once there is room, the same store saves it.
        try disk.free()
        #expect(try await Snack.save(large, in: store).inserted == large.count)
        #expect(try store.integrityCheck() == "ok")
        try store.close()
    }

    @Test func aWritePastTheProcesssFileSizeLimitIsStoreFullInEveryFormAndWritesNothing() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ModelStoreLimit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        // A second process lowers its own limit (RLIMIT_FSIZE), so this one keeps writing.
        let helper = try HelperProcess("write-past-file-size-limit", path: path)
        #expect(helper.waitForExit() == 0)
        let lines = helper.allLines()
        #expect(lines.contains("codes storeFull storeFull storeFull"), "\(lines)")
        let message = lines.first { $0.hasPrefix("message ") } ?? ""
        #expect(message.contains("RLIMIT_FSIZE"), "\(message)")
        #expect(message.contains("The store is full"))
        // Nothing of the batches that did not fit was written; the one before is whole.
        let store = try ModelStore(path: path)
        #expect(try Parcel.findAll(in: store) == Parcel.batch(1))
        #expect(try store.integrityCheck() == "ok")
    }

    @Test func aLogOrSharedMemoryFileSQLiteCannotUseIsAnIOErrorNamingWhatFailedInEveryForm() async throws {
        let test = try TestStore(.file)
        let path = try #require(test.store.path)
        let kept = (1...5).map { Snack(snackId: $0, name: "kept") }
        _ = try await Snack.save(kept, in: test.store)
        try test.store.close()
        // A FIFO where SQLite expects its shared-memory file: it cannot map it.
        #expect(mkfifo(path + "-shm", 0o600) == 0)
        let opening = try #require(throws: ModelStoreError.self) { try ModelStore(path: path) }
        #expect(opening.code == .ioError)
        #expect(opening.message.contains("opening the shared-memory file (-shm)"), "\(opening)")
        #expect(opening.message.contains("SQLITE_IOERR_SHMOPEN"))
        #expect(opening.suggestion != nil)
        // (The failed open made an empty -wal.)
        for suffix in ["-shm", "-wal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        // A FIFO where SQLite expects its log: it opens, but cannot write it.
        #expect(mkfifo(path + "-wal", 0o600) == 0)
        do {
            let store = try ModelStore(path: path)
            for error in await saveErrorsInEveryForm([Snack(snackId: 9)], store) {
                #expect(error?.code == .ioError, "\(String(describing: error))")
                #expect(error?.message.contains("writing a file (SQLITE_IOERR_WRITE") == true, "\(String(describing: error))")
                #expect(error?.message.contains(path) == true)
            }
            try? store.close()
        }
        try? FileManager.default.removeItem(atPath: path + "-wal")
        let reopened = try ModelStore(path: path)
        #expect(try await Snack.findAll(in: reopened) == kept)
    }

    @Test func everyIOErrorSQLiteReportsHasACodeOfItsOwnAndNamesWhatFailed() {
        for step in Int32(0)...33 {
            let code = SQLITE_IOERR | (step << 8)
            let error = ModelStoreError.sqlite(resultCode: code, message: "disk I/O error", sql: nil)
            // Growing the shared-memory file fails only for want of room.
            #expect(error.code == (step == 19 ? .storeFull : .ioError), "\(code)")
            #expect(error.message.contains("SQLITE_IOERR"), "\(error)")
            #expect(error.suggestion != nil)
            #expect(error.sqliteCode == code)
        }
    }
}
