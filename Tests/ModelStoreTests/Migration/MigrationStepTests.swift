import Foundation
import ModelStoreCSQLite
import Testing
@testable import ModelStore

private struct Gadget: StoredModel, Equatable {
    var id: Int64
    var name: String
    var weight: Double?
    static let primaryKey = ["id"]
    static let indexes: [TableIndex<Gadget>] = [.on(\.name)]
}

/// The gadget with its weight in whole grams, no longer optional.
private struct GadgetInGrams: StoredModel, Equatable {
    var id: Int64
    var name: String
    var grams: Int64
    static let primaryKey = ["id"]
    static let tableName = "Gadget"
}

/// The gadget keyed by its name instead.
private struct GadgetByName: StoredModel, Equatable {
    var name: String
    var id: Int64
    var weight: Double?
    static let primaryKey = ["name"]
    static let tableName = "Gadget"
}

private struct StepFailure: Error, CustomStringConvertible {
    var description: String { "the step gave up" }
}

// SQLite-only: written on SQLite files (raw checks through SQLite's catalog, backups, process
// kills); what they promise for a server runs in MigrationsOnBothBackendsTests.
@Suite("Migrations: versioned steps")
struct MigrationStepTests {
    private let directory: URL
    private let path: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("steps-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("store.sqlite").path
    }

    private let gadgets = [
        Gadget(id: 1, name: "lamp", weight: 1.25), Gadget(id: 2, name: "fan", weight: nil), Gadget(id: 3, name: "kettle", weight: 0.9),
    ]

    private func seed() throws {
        let store = try ModelStore(path: path)
        _ = try Gadget.save(gadgets, in: store)
        try store.close()
    }

    private func open(_ steps: [MigrationStep], backsUp: Bool = false) throws -> ModelStore {
        try ModelStore(path: path, configuration: .init(migrations: steps, backsUpBeforeMigrating: backsUp))
    }

    /// The file read with SQL through a bare connection: a store without the steps would
    /// refuse a file they migrated.
    private func rows(_ sql: String) throws -> [[SQLValue]] {
        let connection = try Connection(location: path, flags: SQLITE_OPEN_READONLY, busyTimeout: 5)
        defer { connection.close() }
        let statement = try connection.makeStatement(sql)
        var result: [[SQLValue]] = []
        try statement.forEachRow { result.append((0..<statement.columnCount).map { statement.value(at: $0) }) }
        return result
    }

    private static func logging(_ name: String) -> MigrationStep {
        MigrationStep(name) { step in
            try step.execute("CREATE TABLE IF NOT EXISTS log (name TEXT)")
            try step.execute("INSERT INTO log VALUES (?)", arguments: [name])
        }
    }

    private func cleanUp() { try? FileManager.default.removeItem(at: directory) }

    // MARK: Running once, in order

    @Test func stepsRunOnceEachInOrderAndTheFileRecordsThem() throws {
        defer { cleanUp() }
        try seed()
        try open([Self.logging("a"), Self.logging("b")]).close()
        try open([Self.logging("a"), Self.logging("b")]).close()
        let store = try open([Self.logging("a"), Self.logging("b"), Self.logging("c")])
        #expect(try store.appliedMigrations() == ["a", "b", "c"])
        try store.close()
        #expect(try rows("SELECT name FROM log ORDER BY rowid") == [[.text("a")], [.text("b")], [.text("c")]])
    }

    @Test(arguments: StoreKind.allCases)
    func aNewFileRecordsEveryStepWithoutRunningIt(_ kind: StoreKind) throws {
        let test = try TestStore(kind, configuration: .init(migrations: [Self.logging("a"), Self.logging("b")]))
        #expect(try test.store.appliedMigrations() == ["a", "b"])
        #expect(try test.rawRows("SELECT 1 FROM sqlite_master WHERE name = 'log'").isEmpty)
    }

    @Test func helpersDoNothingToTablesTheFileDoesNotHave() throws {
        defer { cleanUp() }
        try seed()
        let store = try open([
            MigrationStep("absent tables") { step in
                try step.rebuild(V3.Contract.self)
                try step.transform(HistoryTests.Unused.self, to: HistoryTests.Unused.self) { $0 }
                try step.dropColumn("x", from: "Nowhere")
                try step.dropTable("Nowhere")
            }
        ])
        #expect(try store.appliedMigrations() == ["absent tables"])
        try store.close()
        #expect(try rows("SELECT 1 FROM sqlite_master WHERE name IN ('Unused', 'Nowhere', 'Contract')").isEmpty)
    }

    @Test func aStepCannotEndItsOwnTransaction() throws {
        defer { cleanUp() }
        try seed()
        for control in ["COMMIT", "ROLLBACK", "BEGIN"] {
            let error = #expect(throws: ModelStoreError.self) {
                try open([
                    MigrationStep("sneaky") { step in
                        try step.execute("UPDATE Gadget SET name = 'changed'")
                        try step.execute(control)
                    }
                ])
            }
            #expect(error?.code == .migrationFailed)
            #expect(error?.message.contains("begin, commit or roll back") == true, "\(control)")
            #expect(try rows("SELECT name FROM Gadget ORDER BY id") == gadgets.map { [.text($0.name)] }, "\(control)")
        }
    }

    @Test(arguments: ["read", "write", "transaction", "readBlock", "isReadOnly"])
    func aStepCallingItsOwnStoreIsRefusedInsteadOfWaitingForItself(_ call: String) throws {
        defer { cleanUp() }
        try seed()
        final class Box: @unchecked Sendable {
            // @unchecked: set before the store's first use, read by the step on that thread.
            var store: ModelStore?
        }
        let box = Box()
        let step = MigrationStep("calls the store") { _ in
            let store = try #require(box.store)
            switch call {
            case "read": _ = try Gadget.count(in: store)
            case "write": try Gadget(id: 9, name: "x").save(in: store)
            case "transaction": try store.transaction { _ = try Gadget.count(in: store) }
            case "readBlock": try store.read { _ = try Gadget.count(in: store) }
            default: #expect(!store.isReadOnly)  // answers without waiting for the steps
            }
        }
        // A store that opens on first use, as the default store does.
        let store = ModelStore(location: .file(path), path: path, configuration: .init(migrations: [step]), createsDirectory: false)
        box.store = store
        if call == "isReadOnly" {
            try Gadget(id: 4, name: "bulb").save(in: store)
            #expect(try store.appliedMigrations() == ["calls the store"])
        } else {
            let error = #expect(throws: ModelStoreError.self) { try Gadget(id: 4, name: "bulb").save(in: store) }
            #expect(error?.code == .migrationFailed)
            #expect(error?.message.contains("called the store") == true, "\(error?.message ?? "")")
            #expect(try rows("SELECT count(*) FROM Gadget") == [[.integer(3)]])
        }
        try store.close()
    }

    @Test func anSQLStepBindsItsArguments() throws {
        defer { cleanUp() }
        try seed()
        let store = try open([.sql("rename lamp", "UPDATE Gadget SET name = ? WHERE id = ?", arguments: ["lantern", 1])])
        #expect(try Gadget.find(key: 1, in: store)?.name == "lantern")
        try store.close()
    }

    // MARK: Failure leaves the file as it was

    @Test func aFailingStepRollsBackCompletelyNamesItselfAndRunsAgainNextTime() throws {
        defer { cleanUp() }
        try seed()
        let failing = MigrationStep("half done") { step in
            try step.execute("UPDATE Gadget SET name = 'broken'")
            try step.execute("CREATE TABLE scratch (x)")
            throw StepFailure()
        }
        let error = #expect(throws: ModelStoreError.self) { try open([Self.logging("a"), failing]) }
        #expect(error?.code == .migrationFailed)
        #expect(error?.message.contains("'half done'") == true)
        #expect(error?.message.contains("the step gave up") == true)
        // Step a committed; nothing of the failed step did.
        #expect(try rows("SELECT name FROM modelstore_migrations") == [[.text("a")]])
        #expect(try rows("SELECT name FROM Gadget ORDER BY id") == gadgets.map { [.text($0.name)] })
        #expect(try rows("SELECT 1 FROM sqlite_master WHERE name = 'scratch'").isEmpty)
        // Fixed, it runs on the next open.
        let store = try open([Self.logging("a"), Self.logging("half done")])
        #expect(try store.appliedMigrations() == ["a", "half done"])
        try store.close()
    }

    @Test func aStepThatLeavesBrokenLinksIsRolledBack() throws {
        defer { cleanUp() }
        let store = try ModelStore(path: path)
        try HistoryData.writeVersion1(to: store)
        try store.close()
        let error = #expect(throws: ModelStoreError.self) {
            try open([.sql("drop a team", "DELETE FROM Team WHERE teamId = 1")])
        }
        #expect(error?.code == .migrationFailed)
        #expect(error?.message.contains("Player") == true)
        #expect(try rows("SELECT count(*) FROM Team") == [[.integer(3)]])
    }

    @Test func theBackupFromBeforeMigratingHoldsTheOldDataAndTheErrorSaysWhere() throws {
        defer { cleanUp() }
        try seed()
        let failing = MigrationStep("wipe") { step in
            try step.execute("DELETE FROM Gadget")
            throw StepFailure()
        }
        let error = #expect(throws: ModelStoreError.self) { try open([failing], backsUp: true) }
        let backup = path + ".before-1-wipe"
        #expect(error?.message.contains(backup) == true)
        let copy = try ModelStore(path: backup)
        #expect(try Gadget.findAll(in: copy) == gadgets)
        try copy.close()
        // A successful migration leaves its backup too.
        try open([.sql("tidy", "UPDATE Gadget SET weight = 2 WHERE id = 2")], backsUp: true).close()
        let before = try ModelStore(path: path + ".before-1-tidy")
        #expect(try Gadget.find(key: 2, in: before)?.weight == nil)
        try before.close()
    }

    // MARK: Checks of the list

    @Test func duplicateOrEmptyStepNamesAreRefusedBeforeAnythingRuns() throws {
        defer { cleanUp() }
        try seed()
        let duplicate = #expect(throws: ModelStoreError.self) { try open([Self.logging("a"), Self.logging("a")]) }
        #expect(duplicate?.code == .invalidModel)
        #expect(duplicate?.message.contains("'a' twice") == true)
        let empty = #expect(throws: ModelStoreError.self) { try open([Self.logging("")]) }
        #expect(empty?.code == .invalidModel)
        #expect(try rows("SELECT 1 FROM sqlite_master WHERE name = 'log'").isEmpty)
    }

    @Test func stepsOutOfOrderOrUnknownToTheFileAreRefused() throws {
        defer { cleanUp() }
        try seed()
        try open([Self.logging("a"), Self.logging("b")]).close()
        let reordered = #expect(throws: ModelStoreError.self) { try open([Self.logging("b"), Self.logging("a")]) }
        #expect(reordered?.code == .invalidModel)
        #expect(reordered?.message.contains("out of order") == true)
        let inserted = #expect(throws: ModelStoreError.self) { try open([Self.logging("a"), Self.logging("x"), Self.logging("b")]) }
        #expect(inserted?.code == .invalidModel)
        let older = #expect(throws: ModelStoreError.self) { try open([Self.logging("a")]) }
        #expect(older?.message.contains("'b'") == true)
        #expect(try rows("SELECT name FROM log ORDER BY rowid") == [[.text("a")], [.text("b")]])
    }

    @Test func aReadOnlyStoreRefusesAFileWithPendingSteps() throws {
        defer { cleanUp() }
        try seed()
        let error = #expect(throws: ModelStoreError.self) {
            _ = try Gadget.count(in: ModelStore(path: path, configuration: .init(readOnly: true, migrations: [Self.logging("a")])))
        }
        #expect(error?.code == .readOnly)
        #expect(error?.message.contains("'a'") == true)
        try open([Self.logging("a")]).close()
        let reader = try ModelStore(path: path, configuration: .init(readOnly: true, migrations: [Self.logging("a")]))
        #expect(try Gadget.count(in: reader) == 3)
    }

    @Test func aContextKeptPastItsStepRefusesWork() throws {
        defer { cleanUp() }
        try seed()
        final class Box: @unchecked Sendable {
            // @unchecked: written by the step, read after the store opened, on one thread.
            var context: MigrationContext?
        }
        let kept = Box()
        try open([MigrationStep("keep") { step in kept.context = step }]).close()
        let error = #expect(throws: ModelStoreError.self) { try kept.context?.execute("DELETE FROM Gadget") }
        #expect(error?.code == .invalidQuery)
        #expect(try rows("SELECT count(*) FROM Gadget") == [[.integer(3)]])
    }

    // MARK: Transform

    @Test func aTransformChangesATypeAndCanLeaveRecordsOut() throws {
        defer { cleanUp() }
        try seed()
        let store = try open([
            MigrationStep("grams") { step in
                try step.transform(Gadget.self, to: GadgetInGrams.self) { old in
                    guard let weight = old.weight else { return nil }
                    return GadgetInGrams(id: old.id, name: old.name, grams: Int64((weight * 1000).rounded()))
                }
            }
        ])
        #expect(
            try GadgetInGrams.findAll(in: store) == [
                GadgetInGrams(id: 1, name: "lamp", grams: 1250), GadgetInGrams(id: 3, name: "kettle", grams: 900),
            ])
        try store.close()
        #expect(
            try rows("SELECT name, type, \"notnull\" FROM pragma_table_info('Gadget') WHERE name = 'grams'") == [
                [.text("grams"), .text("INTEGER"), .integer(1)]
            ])
        #expect(try rows("SELECT name FROM pragma_table_info('Gadget') WHERE name = 'weight'").isEmpty)
    }

    @Test func aTransformThatThrowsHalfwayLeavesEveryRecordAsItWas() throws {
        defer { cleanUp() }
        try seed()
        #expect(throws: ModelStoreError.self) {
            try open([
                MigrationStep("grams") { step in
                    try step.transform(Gadget.self, to: GadgetInGrams.self) { old in
                        guard let weight = old.weight else { throw StepFailure() }
                        return GadgetInGrams(id: old.id, name: old.name, grams: Int64(weight * 1000))
                    }
                }
            ])
        }
        let store = try ModelStore(path: path)
        #expect(try Gadget.findAll(in: store) == gadgets)
        #expect(try store.rawRows("SELECT 1 FROM sqlite_master WHERE name LIKE 'modelstore_rebuild%'").isEmpty)
        try store.close()
    }

    // MARK: Rebuild

    @Test func aRebuildChangesTheKeyAndKeepsIndexesTriggersViewsAndColumnsNoModelHas() throws {
        defer { cleanUp() }
        try seed()
        let setup = try ModelStore(path: path)
        try setup.rawExecute(
            """
            ALTER TABLE Gadget ADD COLUMN note TEXT;
            UPDATE Gadget SET note = 'n' || id;
            CREATE TABLE audit (gadget INTEGER, at TEXT);
            CREATE TRIGGER gadget_audit AFTER UPDATE ON Gadget BEGIN INSERT INTO audit VALUES (new.id, 'now'); END;
            CREATE VIEW heavy AS SELECT name FROM Gadget WHERE weight > 1;
            CREATE INDEX gadget_note ON Gadget (note);
            """)
        try setup.close()
        let store = try open([MigrationStep("by name") { try $0.rebuild(GadgetByName.self) }])
        #expect(try GadgetByName.find(key: "kettle", in: store) == GadgetByName(name: "kettle", id: 3, weight: 0.9))
        try store.close()
        #expect(try rows("SELECT name FROM pragma_table_info('Gadget') WHERE pk > 0") == [[.text("name")]])
        #expect(try rows("SELECT note FROM Gadget ORDER BY id") == [[.text("n1")], [.text("n2")], [.text("n3")]])
        #expect(try rows("SELECT name FROM heavy") == [[.text("lamp")]])
        let objects = try rows(
            "SELECT name FROM sqlite_master WHERE name IN ('gadget_audit', 'gadget_note', 'index_Gadget_name') ORDER BY name")
        #expect(objects == [[.text("gadget_audit")], [.text("gadget_note")], [.text("index_Gadget_name")]])
    }

    @Test func aRebuildDropsOnlyWhatItNamesAndRefusesNamesThatDoNotFit() throws {
        defer { cleanUp() }
        try seed()
        let setup = try ModelStore(path: path)
        try setup.rawExecute("ALTER TABLE Gadget ADD COLUMN note TEXT; ALTER TABLE Gadget ADD COLUMN junk BLOB")
        try setup.close()
        let unknown = #expect(throws: ModelStoreError.self) {
            try open([MigrationStep("x") { try $0.rebuild(Gadget.self, dropping: ["nope"]) }])
        }
        #expect(unknown?.message.contains("nope") == true)
        let stillModelled = #expect(throws: ModelStoreError.self) {
            try open([MigrationStep("x") { try $0.rebuild(Gadget.self, dropping: ["weight"]) }])
        }
        #expect(stillModelled?.message.contains("still has") == true)
        let badValue = #expect(throws: ModelStoreError.self) {
            try open([MigrationStep("x") { try $0.rebuild(Gadget.self, values: ["mass": "weight"]) }])
        }
        #expect(badValue?.column == "mass")
        try open([MigrationStep("x") { try $0.rebuild(Gadget.self, dropping: ["junk"]) }]).close()
        #expect(
            try rows("SELECT name FROM pragma_table_info('Gadget') ORDER BY cid").map { $0[0] }
                == ["id", "name", "weight", "note"].map(SQLValue.text))
    }

    @Test func aRebuildWhoseNewKeyCollidesIsRolledBackWithTheConstraintNamed() throws {
        defer { cleanUp() }
        try seed()
        let error = #expect(throws: ModelStoreError.self) {
            try open([MigrationStep("same name") { try $0.rebuild(GadgetByName.self, values: ["name": "'x'"]) }])
        }
        #expect(error?.code == .migrationFailed)
        #expect(error?.message.contains("UNIQUE") == true)
        #expect(try rows("SELECT name FROM pragma_table_info('Gadget') WHERE pk > 0") == [[.text("id")]])
    }

    // MARK: Dropping

    @Test func droppingAColumnTakesItsIndexAlongAndOnlyWhenAsked() throws {
        defer { cleanUp() }
        try seed()
        let setup = try ModelStore(path: path)
        try setup.rawExecute(
            "ALTER TABLE Gadget ADD COLUMN color TEXT; CREATE INDEX gadget_color ON Gadget (color); CREATE TABLE old_stuff (x)")
        try setup.close()
        let missing = #expect(throws: ModelStoreError.self) {
            try open([MigrationStep("x") { try $0.dropColumn("colour", from: "Gadget") }])
        }
        #expect(missing?.message.contains("colour") == true)
        try open([
            MigrationStep("drop color") { step in
                try step.dropColumn("color", from: "Gadget")
                try step.dropTable("old_stuff")
            }
        ]).close()
        #expect(try rows("SELECT 1 FROM sqlite_master WHERE name IN ('gadget_color', 'old_stuff')").isEmpty)
        #expect(try rows("SELECT count(*) FROM Gadget") == [[.integer(3)]])
    }

    // MARK: The plan

    @Test func thePlanListsPendingStepsAndStatementsWithoutChangingTheFile() throws {
        defer { cleanUp() }
        try seed()
        let before = try FileManager.default.contentsOfItem(atPathChecked: path)
        let steps = [
            Self.logging("a"),
            MigrationStep("grams") { step in
                try step.transform(Gadget.self, to: GadgetInGrams.self) { GadgetInGrams(id: $0.id, name: $0.name, grams: 0) }
            },
        ]
        let plan = try ModelStore.migrationPlan(at: path, configuration: .init(migrations: steps), for: [GadgetInGrams.self])
        #expect(plan.pendingSteps == ["a", "grams"])
        #expect(plan.statements.contains("INSERT INTO log VALUES (?)"))
        #expect(plan.statements.contains { $0.hasPrefix("DROP TABLE \"Gadget\"") })
        #expect(!plan.changesNothing)
        #expect(try FileManager.default.contentsOfItem(atPathChecked: path) == before)
        // A failing step fails the plan the same way, naming it.
        let failing = #expect(throws: ModelStoreError.self) {
            try ModelStore.migrationPlan(
                at: path, configuration: .init(migrations: [MigrationStep("no") { _ in throw StepFailure() }]), for: [])
        }
        #expect(failing?.code == .migrationFailed)
        #expect(throws: ModelStoreError.self) { try ModelStore.migrationPlan(at: path + "-missing", for: []) }
    }

    @Test func thePlanOfAStoreListsNewColumnsAndTablesAndWhatNoModelUses() throws {
        defer { cleanUp() }
        try seed()
        let store = try ModelStore(path: path)
        try store.rawExecute("CREATE TABLE notes (x); ALTER TABLE Gadget ADD COLUMN legacy TEXT")
        let plan = try store.migrationPlan(for: [GadgetByNameWithColor.self, HistoryTests.Unused.self])
        #expect(plan.unusedColumns.map(\.description) == ["Gadget.legacy"])
        #expect(plan.unusedTables == ["notes"])
        #expect(plan.statements.contains { $0.contains("ADD COLUMN \"color\"") })
        #expect(plan.statements.contains { $0.hasPrefix("CREATE TABLE IF NOT EXISTS \"Unused\"") })
        #expect(!plan.statements.contains { $0.contains("index_Gadget_name") }, "an index that exists is not in the plan")
        #expect(plan.description.contains("unused column: Gadget.legacy"))
        // Nothing changed.
        #expect(try store.rawRows("SELECT name FROM pragma_table_info('Gadget') WHERE name = 'color'").isEmpty)
        let inside = #expect(throws: ModelStoreError.self) { try store.transaction { _ = try store.migrationPlan(for: []) } }
        #expect(inside?.code == .reentrancy)
        try store.close()
    }
}

private struct GadgetByNameWithColor: StoredModel {
    var id: Int64
    var name: String
    var weight: Double?
    var color: String?
    static let primaryKey = ["id"]
    static let tableName = "Gadget"
    static let indexes: [TableIndex<GadgetByNameWithColor>] = [.on(\.name)]
}

extension HistoryTests {
    struct Unused: StoredModel {
        var id: Int64
        static let primaryKey = ["id"]
    }
}

extension FileManager {
    fileprivate func contentsOfItem(atPathChecked path: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path))
    }
}
