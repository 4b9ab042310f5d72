import Foundation
import ReliabilityFixtures
import Testing
@testable import ModelStore

/// A model with a text key and a full-text index: the index finds records by rowid, which a
/// `VACUUM` must leave as they were.
private struct KeptNote: StoredModel, Equatable {
    var id: String
    var body: String
    static let primaryKey = ["id"]
    static let searchable: [SearchableText<KeptNote>] = [.text(\.body)]
}

/// The result a completion-form call delivers.
private func delivered<T: Sendable>(_ call: (@escaping @Sendable (Result<T, ModelStoreError>) -> Void) -> Void) async -> Result<
    T, ModelStoreError
> {
    await withCheckedContinuation { continuation in call { continuation.resume(returning: $0) } }
}

/// The code of the `ModelStoreError` a call threw (nil when it threw none).
private func thrownCode(_ body: () throws -> Void) -> ModelStoreError.Code? {
    do {
        try body()
        return nil
    } catch {
        return (error as? ModelStoreError)?.code
    }
}

private func thrownCode(_ body: () async throws -> Void) async -> ModelStoreError.Code? {
    do {
        try await body()
        return nil
    } catch {
        return (error as? ModelStoreError)?.code
    }
}

extension Result {
    fileprivate var failureCode: ModelStoreError.Code? {
        if case .failure(let error) = self { return (error as? ModelStoreError)?.code }
        return nil
    }
}

/// One maintenance call in its three forms: each runs it once and returns its error code.
private struct EveryForm {
    let sync: () -> ModelStoreError.Code?
    let completion: () async -> ModelStoreError.Code?
    let async: () async -> ModelStoreError.Code?

    func codes() async -> [ModelStoreError.Code?] { [sync(), await completion(), await async()] }

    static func vacuum(_ store: ModelStore) -> EveryForm {
        EveryForm(
            sync: { thrownCode { try store.vacuum() } }, completion: { await delivered { store.vacuum(completion: $0) }.failureCode },
            async: { await thrownCode { try await store.vacuum() } })
    }

    static func vacuum(_ store: ModelStore, into path: String) -> EveryForm {
        EveryForm(
            sync: { thrownCode { try store.vacuum(into: path) } },
            completion: { await delivered { store.vacuum(into: path, completion: $0) }.failureCode },
            async: { await thrownCode { try await store.vacuum(into: path) } })
    }

    static func checkpoint(_ store: ModelStore, _ mode: ModelStore.CheckpointMode) -> EveryForm {
        EveryForm(
            sync: { thrownCode { try store.checkpoint(mode) } },
            completion: { await delivered { store.checkpoint(mode, completion: $0) }.failureCode },
            async: { await thrownCode { try await store.checkpoint(mode) } })
    }

    /// Every call, every mode.
    static func all(_ store: ModelStore, copyTo path: String) -> [EveryForm] {
        [vacuum(store), vacuum(store, into: path)] + ModelStore.CheckpointMode.allCases.map { checkpoint(store, $0) }
    }
}

// SQLite-only where not marked: vacuum and WAL checkpoints of a file.
/// Issue item 8: the maintenance SQLite cannot run inside a transaction has calls of its own
/// (`vacuum()`, `vacuum(into:)`, `checkpoint(_:)`), in every form, run on the writer between
/// transactions, refused inside a block of the store, and on a server either run there or
/// refused by name.
@Suite("Reliability: vacuum and checkpoints")
struct MaintenanceTests {
    private func integer(_ store: ModelStore, _ sql: String) throws -> Int64 {
        guard case .integer(let value)? = try store.rawRows(sql).first?.first else { throw ModelStoreError(.sqlite, "no value for \(sql)") }
        return value
    }

    /// Saves 300 notes of a round, then deletes two thirds of them; returns the ones kept.
    private func fillAndThin(_ store: ModelStore, round: Int) throws -> [KeptNote] {
        let notes = (0..<300).map {
            KeptNote(id: "r\(round)-\($0)", body: "note \($0) of round\(round) " + String(repeating: "x", count: 2000))
        }
        _ = try KeptNote.save(notes, in: store)
        let gone = notes.indices.filter { $0 % 3 != 0 }.map { notes[$0].id }
        #expect(try KeptNote.deleteAll(where: .in(\.id, gone), in: store) == gone.count)
        return notes.indices.filter { $0 % 3 == 0 }.map { notes[$0] }
    }

    @Test(arguments: StoreKind.allCases)
    func vacuumGivesBackTheSpaceDeletedRecordsLeftInEveryFormAndKeepsEveryRecordAndIndex(kind: StoreKind) async throws {
        let test = try TestStore(kind)
        let store = test.store
        var kept: [KeptNote] = []
        let forms = EveryForm.vacuum(store)
        for (round, form) in [forms.sync, forms.completion, forms.async].enumerated() {
            kept += try fillAndThin(store, round: round)
            let pages = try integer(store, "PRAGMA page_count")
            #expect(try integer(store, "PRAGMA freelist_count") > 0)
            #expect(await form() == nil)
            #expect(try integer(store, "PRAGMA freelist_count") == 0)
            #expect(try integer(store, "PRAGMA page_count") < pages)
            #expect(try await KeptNote.findAll(in: store).sorted { $0.id < $1.id } == kept.sorted { $0.id < $1.id })
            // The index still finds each record by its rowid.
            expectIndexIntact(store, "KeptNote_fts")
            let found = try await KeptNote.search(.words("round\(round)"), limit: 1_000, in: store).map(\.model.id)
            #expect(Set(found) == Set(kept.filter { $0.id.hasPrefix("r\(round)-") }.map(\.id)))
            #expect(try store.integrityCheck() == "ok")
        }
        // Writes go on afterwards, with the tables the store had checked.
        try await KeptNote(id: "after", body: "after").save(in: store)
        #expect(try await KeptNote.count(in: store) == kept.count + 1)
    }

    @Test func aVacuumThatCannotTakeTheWriteLockIsBusyAndChangesNothing() async throws {
        let test = try TestStore(.file, configuration: .init(busyTimeout: 0.3))
        let store = test.store
        let path = try #require(store.path)
        _ = try await Parcel.save(Parcel.batch(1), in: store)
        _ = try await Parcel.deleteAll(where: \.id > 1011, in: store)
        let pages = try integer(store, "PRAGMA page_count")
        let holder = try HelperProcess("hold-write-lock", path: path)
        try holder.waitFor("locked")
        #expect(await EveryForm.vacuum(store).codes() == [.busy, .busy, .busy])
        #expect(try integer(store, "PRAGMA page_count") == pages)
        holder.send("commit")
        try holder.waitFor("released")
        #expect(holder.waitForExit() == 0)
        try await store.vacuum()
        #expect(try integer(store, "PRAGMA freelist_count") == 0)
        #expect(try await Parcel.count(in: store) == 13)  // and the holder's own record
    }

    @Test(arguments: StoreKind.allCases)
    func vacuumIntoWritesACompactedCopyInEveryFormAndNeverOverwritesSilently(kind: StoreKind) async throws {
        let test = try TestStore(kind)
        let store = test.store
        let kept = try fillAndThin(store, round: 0)
        let directory = test.directory.path
        let forms = (0..<3).map { EveryForm.vacuum(store, into: "\(directory)/copy-\($0).sqlite") }
        let runs = [forms[0].sync, forms[1].completion, forms[2].async]
        for (index, run) in runs.enumerated() {
            #expect(await run() == nil)
            let copy = try ModelStore(path: "\(directory)/copy-\(index).sqlite")
            #expect(try await KeptNote.findAll(in: copy).sorted { $0.id < $1.id } == kept.sorted { $0.id < $1.id })
            #expect(try integer(copy, "PRAGMA freelist_count") == 0)
            expectIndexIntact(copy, "KeptNote_fts")
            try copy.close()
        }
        // The store itself is unchanged.
        #expect(try integer(store, "PRAGMA freelist_count") > 0)
        // An existing file is not replaced unless asked; the files of an open store never are.
        let existing = "\(directory)/copy-0.sqlite"
        let before = try Data(contentsOf: URL(fileURLWithPath: existing))
        try await KeptNote(id: "new", body: "new").save(in: store)
        #expect(await EveryForm.vacuum(store, into: existing).codes() == [.alreadyExists, .alreadyExists, .alreadyExists])
        #expect(try Data(contentsOf: URL(fileURLWithPath: existing)) == before)
        try await store.vacuum(into: existing, replacingExisting: true)
        let replaced = try ModelStore(path: existing)
        #expect(try await KeptNote.find(key: "new", in: replaced) != nil)
        #expect(await EveryForm.vacuum(store, into: existing).codes() == [.invalidQuery, .invalidQuery, .invalidQuery])
        try replaced.close()
        if let path = store.path {
            for target in [path, path + "-wal", path + "-shm"] {
                #expect(thrownCode { try store.vacuum(into: target, replacingExisting: true) } == .invalidQuery)
            }
        }
        // No temporary file is left behind.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.contains(".vacuum-") }
        #expect(leftovers.isEmpty)
    }

    @Test func aCheckpointInEveryModeAndFormFoldsTheLogIntoTheFile() async throws {
        let test = try TestStore(.file)
        let store = test.store
        let wal = try #require(store.path) + "-wal"
        var saved = 0
        for mode in ModelStore.CheckpointMode.allCases {
            let forms = EveryForm.checkpoint(store, mode)
            for form in [forms.sync, forms.completion, forms.async] {
                _ = try await Snack.save((0..<50).map { Snack(snackId: Int64(saved + $0), name: "snack \(saved + $0)") }, in: store)
                saved += 50
                #expect(await form() == nil)
            }
            // What the call returns, in each form.
            _ = try await Snack.save([Snack(snackId: Int64(saved), name: "last")], in: store)
            saved += 1
            let outcomes = [
                try synchronously { try store.checkpoint(mode) },
                try await delivered { store.checkpoint(mode, completion: $0) }.get(),
                try await store.checkpoint(mode),
            ]
            for outcome in outcomes {
                #expect(outcome.isComplete, "\(mode): \(outcome)")
                if mode == .truncate {
                    #expect(outcome == ModelStore.CheckpointOutcome(logFrames: 0, checkpointedFrames: 0))
                }
            }
            #expect(outcomes[0].logFrames > 0 || mode == .truncate, "\(mode): \(outcomes[0])")
            if mode == .truncate {
                let size = try FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int
                #expect(size == 0)
            }
        }
        // The file alone, copied now, holds every record.
        let copy = test.directory.appendingPathComponent("copied.sqlite").path
        try FileManager.default.copyItem(atPath: store.path!, toPath: copy)
        #expect(try await Snack.count(in: ModelStore(path: copy)) == saved)
    }

    @Test func aCheckpointThatAReaderBlocksPastTheBusyTimeoutIsBusyAndPassiveOnesNeverWait() async throws {
        let test = try TestStore(.file, configuration: .init(busyTimeout: 0.3))
        let store = test.store
        let path = try #require(store.path)
        _ = try await Snack.save((1...20).map { Snack(snackId: $0) }, in: store)
        try await store.checkpoint(.truncate)
        // Another store on the file reads an older snapshot until told to stop.
        let other = try ModelStore(path: path)
        let reading = DispatchSemaphore(value: 0)
        let stop = DispatchSemaphore(value: 0)
        let reader = Thread {
            try? other.read {
                _ = try Snack.count(in: other)
                reading.signal()
                stop.wait()
            }
        }
        reader.start()
        reading.wait()
        _ = try await Snack.save((21...40).map { Snack(snackId: $0) }, in: store)
        for mode in [ModelStore.CheckpointMode.full, .restart, .truncate] {
            let started = Date()
            #expect(await EveryForm.checkpoint(store, mode).codes() == [.busy, .busy, .busy], "\(mode)")
            #expect(Date().timeIntervalSince(started) >= 0.25 * 3, "\(mode) gave up before the busy timeout")
            let error = try #require(throws: ModelStoreError.self) { try store.checkpoint(mode) }
            #expect(error.message.contains("\(mode) checkpoint"))
            #expect(error.suggestion?.contains(".passive") == true)
        }
        // A passive checkpoint never waits for the reader: from a store whose busy timeout is
        // long, it answers well before that timeout (a bound on the clock alone was flaky on
        // a loaded 2-core machine).
        let patient = try ModelStore(path: path, configuration: .init(busyTimeout: 30))
        let started = Date()
        let passive = try await patient.checkpoint(.passive)
        #expect(Date().timeIntervalSince(started) < 15)
        // (Closed while the reader still holds its snapshot: close() says .busy, and closes.)
        try? patient.close()
        #expect(!passive.isComplete, "\(passive)")
        // The store goes on, and once the reader is done the log folds in completely.
        try await Snack(snackId: 41).save(in: store)
        stop.signal()
        #expect(await eventually { reader.isFinished })
        try other.close()
        #expect(try await store.checkpoint(.truncate).isComplete)
        #expect(try await Snack.count(in: store) == 41)
    }

    @Test func aStoreInMemoryHasNoLogToCheckpoint() async throws {
        let test = try TestStore(.memory)
        try await Snack(snackId: 1).save(in: test.store)
        for mode in ModelStore.CheckpointMode.allCases {
            #expect(try await test.store.checkpoint(mode) == ModelStore.CheckpointOutcome(logFrames: 0, checkpointedFrames: 0))
            #expect(await EveryForm.checkpoint(test.store, mode).codes() == [nil, nil, nil])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func maintenanceInsideABlockOfTheStoreIsRefusedNotADeadlock(kind: StoreKind) async throws {
        let test = try TestStore(kind)
        let store = test.store
        try await Snack(snackId: 1).save(in: store)
        let copy = test.directory.appendingPathComponent("copy.sqlite").path
        let delivered = Collected<ModelStoreError.Code?>()
        let everyCallRefused: @Sendable () -> Void = {
            #expect(thrownCode { try store.vacuum() } == .reentrancy)
            #expect(thrownCode { try store.vacuum(into: copy) } == .reentrancy)
            for mode in ModelStore.CheckpointMode.allCases {
                #expect(thrownCode { try store.checkpoint(mode) } == .reentrancy)
            }
            store.vacuum { delivered.add($0.failureCode) }
            store.vacuum(into: copy) { delivered.add($0.failureCode) }
            store.checkpoint(.full) { delivered.add($0.failureCode) }
        }
        try synchronously {
            try store.transaction {
                everyCallRefused()
                try Snack(snackId: 2).save(in: store)
            }
            try store.read { everyCallRefused() }
        }
        #expect(await eventually { delivered.current.count == 6 })
        #expect(delivered.current == Array(repeating: .reentrancy, count: 6))
        // From a task started inside a block, every async form is refused at once.
        let refused = Collected<ModelStoreError.Code?>()
        try await store.transaction {
            let done = DispatchSemaphore(value: 0)
            Task(priority: .high) {
                refused.add(await thrownCode { try await store.vacuum() })
                refused.add(await thrownCode { try await store.vacuum(into: copy) })
                refused.add(await thrownCode { try await store.checkpoint(.truncate) })
                done.signal()
            }
            done.wait()
        }
        #expect(refused.current == [.reentrancy, .reentrancy, .reentrancy])
        #expect(!FileManager.default.fileExists(atPath: copy))
        // After the blocks they run.
        #expect(EveryForm.all(store, copyTo: copy).map { $0.sync() }.allSatisfy { $0 == nil })
        #expect(try await Snack.count(in: store) == 2)
    }

    @Test func aClosedOrReadOnlyStoreRefusesMaintenanceSayingWhy() async throws {
        let test = try TestStore(.file)
        let path = try #require(test.store.path)
        try await Snack(snackId: 1).save(in: test.store)
        let readOnly = try ModelStore(path: path, configuration: .init(readOnly: true))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let copy = test.directory.appendingPathComponent("copy.sqlite").path
        for form in EveryForm.all(readOnly, copyTo: copy) {
            #expect(await form.codes() == [.readOnly, .readOnly, .readOnly])
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        try test.store.close()
        for form in EveryForm.all(test.store, copyTo: copy) {
            #expect(await form.codes() == [.closed, .closed, .closed])
        }
        #expect(!FileManager.default.fileExists(atPath: copy))
    }

    @Test(arguments: Backend.available)
    func vacuumRunsOnEveryBackendAndTheFileCallsAreRefusedByNameOnAServer(backend: Backend) async throws {
        let test = try BackendStore(backend)
        let store = test.store
        _ = try await Snack.save((1...200).map { Snack(snackId: $0, name: String(repeating: "s", count: 500)) }, in: store)
        #expect(try await Snack.deleteAll(where: \.snackId > 50, in: store) == 150)
        #expect(await EveryForm.vacuum(store).codes() == [nil, nil, nil])
        #expect(try await Snack.count(in: store) == 50)
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("vacuum-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: copy) }
        switch backend {
        case .sqlite:
            #expect(await EveryForm.checkpoint(store, .full).codes() == [nil, nil, nil])
            #expect(thrownCode { try store.vacuum(into: copy) } == nil)
        case .postgres:
            for (form, call) in [(EveryForm.vacuum(store, into: copy), "vacuum(into:)")]
                + ModelStore.CheckpointMode.allCases.map({
                    (EveryForm.checkpoint(store, $0), "checkpoint(_:)")
                })
            {
                #expect(await form.codes() == [.unsupported, .unsupported, .unsupported])
                let error = try #require(throws: ModelStoreError.self) {
                    if call == "vacuum(into:)" { try store.vacuum(into: copy) } else { try store.checkpoint() }
                }
                #expect(error.message.contains(call))
            }
            #expect(!FileManager.default.fileExists(atPath: copy))
        }
        // The store works on.
        try await Snack(snackId: 500).save(in: store)
        #expect(try await Snack.count(in: store) == 51)
    }
}
