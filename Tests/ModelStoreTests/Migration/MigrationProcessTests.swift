import Foundation
import ModelStoreCSQLite
import ReliabilityFixtures
import Testing
@testable import ModelStore

// SQLite-only: written on SQLite files (raw checks through SQLite's catalog, backups, process
// kills); what they promise for a server runs in MigrationsOnBothBackendsTests.
/// Migrations against other processes: two racing to migrate one file, and one killed at
/// random moments in the middle of migrating.
@Suite("Migrations: several processes, and kills")
struct MigrationProcessTests {
    private let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("migrating-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// A version-1 file of parcels, closed (so it is one file, safe to copy).
    private func seed() throws -> (path: String, parcels: [Parcel]) {
        let path = directory.appendingPathComponent("seed.sqlite").path
        let store = try ModelStore(path: path)
        let parcels = (1...30).flatMap { Parcel.batch(Int64($0)) }
        _ = try Parcel.save(parcels, in: store)
        try store.close()
        return (path, parcels)
    }

    private func copy(_ seed: String, _ name: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try FileManager.default.copyItem(atPath: seed, toPath: path)
        return path
    }

    /// What a file holds after a kill: the steps it recorded, and everything else checked
    /// against them — each recorded step ran exactly once, each unrecorded one not at all,
    /// and the parcels are all there in the shape the recorded steps say.
    private func inspect(_ path: String, parcels: [Parcel], context: String) throws -> [String] {
        // Opened with the steps the file recorded (found with a bare connection), which run
        // nothing: a store with other steps, or none, refuses a file steps migrated.
        let connection = try Connection(location: path, flags: SQLITE_OPEN_READONLY, busyTimeout: 5)
        let recorded = try MigrationRunner.applied(on: connection)
        connection.close()
        let store = try ModelStore(
            path: path, configuration: .init(migrations: Array(MigratingParcels.steps.prefix(recorded.count))))
        defer { try? store.close() }
        #expect(try store.integrityCheck() == "ok", "\(context)")
        let applied = try store.appliedMigrations()
        #expect(applied == Array(MigratingParcels.stepNames.prefix(applied.count)), "\(context)")
        let logged = applied.isEmpty ? [] : try store.rawRows("SELECT name FROM step_log ORDER BY rowid").map { $0[0] }
        #expect(logged == applied.map(SQLValue.text), "\(context): each recorded step logs once, others never")
        let columns = try store.rawRows("SELECT name FROM pragma_table_info('Parcel') ORDER BY cid").map { $0[0] }
        if applied.contains("parcels v2") {
            #expect(columns == ["id", "batch", "label", "size"].map(SQLValue.text), "\(context)")
            #expect(try MigratingParcels.ParcelV2.findAll(in: store) == parcels.map(MigratingParcels.ParcelV2.init), "\(context)")
        } else {
            #expect(columns == ["id", "batch", "payload"].map(SQLValue.text), "\(context)")
            #expect(try Parcel.findAll(in: store) == parcels, "\(context)")
        }
        return applied
    }

    @Test func twoProcessesOpeningAtOnceRunEachStepExactlyOnceAndBothSeeTheResult() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let (seed, parcels) = try seed()
        for round in 1...3 {
            let path = try copy(seed, "race-\(round).sqlite")
            let first = try HelperProcess("migrate", path: path)
            let second = try HelperProcess("migrate", path: path)
            let done = "migrated " + MigratingParcels.stepNames.joined(separator: ",")
            try first.waitFor(done)
            try second.waitFor(done)
            #expect(first.waitForExit() == 0)
            #expect(second.waitForExit() == 0)
            #expect(try inspect(path, parcels: parcels, context: "round \(round)") == MigratingParcels.stepNames)
        }
    }

    @Test func aProcessKilledWhileMigratingLeavesTheOldOrTheNewStateAndTheNextOpenCompletes() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let (seed, parcels) = try seed()
        // How long a whole migration takes here, so kills land inside it.
        let calibration = try copy(seed, "calibration.sqlite")
        let started = Date()
        let timed = try HelperProcess("migrate", path: calibration)
        #expect(timed.waitForExit() == 0)
        let duration = Date().timeIntervalSince(started)

        let kills = ProcessInfo.processInfo.environment["MODELSTORE_MIGRATION_KILLS"].flatMap(Int.init) ?? 10
        var partial = 0
        for kill in 1...kills {
            let path = try copy(seed, "kill-\(kill).sqlite")
            let migrating = try HelperProcess("migrate", path: path)
            try migrating.waitFor("opening")
            Thread.sleep(forTimeInterval: .random(in: 0...duration))
            migrating.stop()
            let applied = try inspect(path, parcels: parcels, context: "after kill \(kill)")
            if applied.count < MigratingParcels.stepNames.count { partial += 1 }
            // The next open completes what the kill interrupted.
            let store = try ModelStore(path: path, configuration: .init(migrations: MigratingParcels.steps))
            try store.close()
            #expect(try inspect(path, parcels: parcels, context: "reopened after kill \(kill)") == MigratingParcels.stepNames)
        }
        #expect(partial > 0, "no kill of \(kills) landed before the migration ended (it takes \(duration) s)")
    }
}
