import Foundation
import Testing
@testable import ModelStore

private struct Crate: StoredModel, Equatable {
    var id: Int64
    var label: String
    var weight: Double?
    static let primaryKey = ["id"]
    static let indexes: [TableIndex<Crate>] = [.on(\.label)]
}

/// Release 2 of `Crate`: a note every crate has, filled by a step.
private struct CrateWithNote: StoredModel, Equatable {
    var id: Int64
    var label: String
    var weight: Double?
    var note: String?
    static let primaryKey = ["id"]
    static let tableName = "Crate"
}

private struct StepFailure: Error, CustomStringConvertible {
    var description: String { "the step gave up" }
}

/// The table a step writes to say it ran: its rows are the steps that ran, in order.
private func logging(_ name: String, pause: TimeInterval = 0) -> MigrationStep {
    MigrationStep(name) { step in
        try step.execute("CREATE TABLE IF NOT EXISTS steplog (position INTEGER, name TEXT)")
        if pause > 0 { Thread.sleep(forTimeInterval: pause) }
        try step.execute("INSERT INTO steplog (position, name) SELECT count(*), ? FROM steplog", arguments: [name])
    }
}

private func log(_ store: ModelStore) throws -> [String] {
    try store.rawRows("SELECT name FROM steplog ORDER BY position").map { row in
        guard case .text(let name) = row[0] else { return "?" }
        return name
    }
}

private let crates = [
    Crate(id: 1, label: "lamp", weight: 1.25), Crate(id: 2, label: "fan", weight: nil), Crate(id: 3, label: "kettle", weight: 0.9),
]

/// Versioned steps and declared renames, one body on SQLite (a file) and on PostgreSQL (a
/// schema): a database that two releases of a program open in turn.
@Suite("Migrations on both backends")
struct MigrationsOnBothBackendsTests {
    private func seeded(_ backend: Backend) throws -> BackendDatabase {
        let database = try BackendDatabase(backend)
        let store = try database.open()
        _ = try Crate.save(crates, in: store)
        try store.close()
        return database
    }

    private func open(_ database: BackendDatabase, _ steps: [MigrationStep]) throws -> ModelStore {
        try database.open(.init(migrations: steps))
    }

    @Test(arguments: Backend.available)
    func stepsRunOnceEachInOrderAndTheDatabaseRecordsThem(_ backend: Backend) throws {
        let database = try seeded(backend)
        try open(database, [logging("a"), logging("b")]).close()
        try open(database, [logging("a"), logging("b")]).close()
        let store = try open(database, [logging("a"), logging("b"), logging("c")])
        defer { try? store.close() }
        #expect(try store.appliedMigrations() == ["a", "b", "c"])
        #expect(try log(store) == ["a", "b", "c"])
        #expect(try Crate.findAll(in: store).sorted { $0.id < $1.id } == crates)
    }

    @Test(arguments: Backend.available)
    func aNewDatabaseRecordsEveryStepWithoutRunningIt(_ backend: Backend) throws {
        let database = try BackendDatabase(backend)
        let store = try open(database, [logging("a"), logging("b")])
        defer { try? store.close() }
        #expect(try store.appliedMigrations() == ["a", "b"])
        #expect(try Crate.count(in: store) == 0)
        #expect(throws: ModelStoreError.self) { try log(store) }
    }

    @Test(arguments: Backend.available)
    func aDatabaseMigratedByAnotherReleasesStepsIsRefusedAndNothingRuns(_ backend: Backend) throws {
        let database = try seeded(backend)
        try open(database, [logging("a"), logging("b")]).close()
        for steps in [[logging("a"), logging("x")], [], [logging("b"), logging("a")]] {
            let error = #expect(throws: ModelStoreError.self) { try open(database, steps).close() }
            #expect(error?.code == .invalidModel, "\(steps.map(\.name))")
            #expect(error?.message.contains("Nothing was run") == true, "\(error?.message ?? "")")
        }
        let store = try open(database, [logging("a"), logging("b")])
        defer { try? store.close() }
        #expect(try log(store) == ["a", "b"])
    }

    @Test(arguments: Backend.available)
    func aFailingStepRollsBackItsDataAndItsSchemaChangesAndRunsAgainNextTime(_ backend: Backend) throws {
        let database = try seeded(backend)
        let failing = MigrationStep("note") { step in
            try step.execute(#"ALTER TABLE "Crate" ADD COLUMN note TEXT"#)
            try step.execute("CREATE TABLE extra (id INTEGER)")
            try step.execute(#"UPDATE "Crate" SET label = 'changed', note = 'n'"#)
            try step.execute(#"CREATE INDEX crate_note ON "Crate" (note)"#)
            throw StepFailure()
        }
        let error = #expect(throws: ModelStoreError.self) { try open(database, [logging("a"), failing]).close() }
        #expect(error?.code == .migrationFailed)
        #expect(error?.message.contains("Migration step 'note' failed and was rolled back") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("the step gave up") == true, "\(error?.message ?? "")")

        // The step before it stands; the failed one left nothing: no column, table, index or change.
        let after = try open(database, [logging("a")])
        #expect(try after.appliedMigrations() == ["a"])
        #expect(try Crate.findAll(in: after).sorted { $0.id < $1.id } == crates)
        let test = try #require(try? after.rawRows(#"SELECT * FROM "Crate" WHERE id = 1"#).first)
        #expect(test.count == 3, "the column the failed step added is gone")
        #expect(throws: ModelStoreError.self) { try after.rawRows("SELECT * FROM extra") }
        try after.close()

        let fixed = MigrationStep("note") { step in
            try step.prepare(CrateWithNote.self)
            try step.execute(#"UPDATE "Crate" SET note = label || '!'"#)
        }
        let store = try open(database, [logging("a"), fixed])
        defer { try? store.close() }
        #expect(try store.appliedMigrations() == ["a", "note"])
        #expect(try CrateWithNote.findAll(in: store).sorted { $0.id < $1.id }.map(\.note) == ["lamp!", "fan!", "kettle!"])
    }

    @Test(arguments: Backend.available)
    func aStepCannotEndItsOwnTransaction(_ backend: Backend) throws {
        let database = try seeded(backend)
        for control in ["COMMIT", "ROLLBACK", "BEGIN", "  commit", "SAVEPOINT s", "END"] {
            let error = #expect(throws: ModelStoreError.self) {
                try open(
                    database,
                    [
                        MigrationStep("sneaky") { step in
                            try step.execute(#"UPDATE "Crate" SET label = 'changed'"#)
                            try step.execute(control)
                        }
                    ]
                ).close()
            }
            #expect(error?.code == .migrationFailed, "\(control)")
            // (SQLite does not nest comments, nor take a parenthesis there: a syntax error.)
            if backend == .postgres || !control.contains("nested") && !control.hasPrefix("(") {
                #expect(error?.message.contains("begin, commit or roll back") == true, "\(control): \(error?.message ?? "")")
            }
            #expect(error?.code == .migrationFailed, "\(control)")
            let store = try database.open()
            #expect(try Crate.findAll(in: store).sorted { $0.id < $1.id } == crates, "\(control)")
            #expect(try store.appliedMigrations().isEmpty)
            try store.close()
        }
        let rows = #expect(throws: ModelStoreError.self) {
            try open(database, [MigrationStep("reads a commit") { step in _ = try step.rows("COMMIT") }]).close()
        }
        #expect(rows?.message.contains("begin, commit or roll back") == true, "\(rows?.message ?? "")")
    }

    @Test(arguments: Backend.available)
    func storesOpeningAtOnceRunEachStepExactlyOnce(_ backend: Backend) throws {
        let database = try seeded(backend)
        let steps = [logging("slow", pause: 0.3), logging("b"), logging("c")]
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            do {
                let store = try open(database, steps)
                #expect(try store.appliedMigrations() == ["slow", "b", "c"])
                // Closing while another store on the file still reads closes this one and says
                // `.busy` of the write-ahead log it could not fold in (as documented): not a
                // failure of the migration. Seen once in CI with four stores closing at once.
                do {
                    try store.close()
                } catch let error as ModelStoreError where error.code == .busy && store.isClosed {}
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        let store = try open(database, steps)
        defer { try? store.close() }
        #expect(try log(store) == ["slow", "b", "c"])
    }

    @Test(arguments: Backend.available)
    func aStepWorksThroughItsContextOnTheTablesAsTheyAre(_ backend: Backend) throws {
        let database = try seeded(backend)
        let store = try open(
            database,
            [
                MigrationStep("through the context") { step in
                    #expect(try step.tableExists("Crate"))
                    #expect(try !step.tableExists("Nowhere"))
                    #expect(try step.columns(of: "Crate") == ["id", "label", "weight"])
                    #expect(try step.columns(of: "Nowhere").isEmpty)
                    let heavy = try step.rows(#"SELECT id FROM "Crate" WHERE weight > ? ORDER BY id"#, arguments: [1.0])
                    #expect(heavy == [[.integer(1)]])
                    try step.dropColumn("weight", from: "Crate")
                    try step.dropColumn("x", from: "Nowhere")
                    try step.execute("CREATE TABLE scratch (id INTEGER)")
                    try step.dropTable("scratch")
                    try step.dropTable("Nowhere")
                }
            ])
        defer { try? store.close() }
        #expect(try store.rawRows(#"SELECT * FROM "Crate" ORDER BY id"#).map(\.count) == [2, 2, 2])
        #expect(throws: ModelStoreError.self) { try store.rawRows("SELECT * FROM scratch") }
        let dropped = #expect(throws: ModelStoreError.self) {
            try open(
                database,
                [
                    MigrationStep("through the context") { _ in },
                    MigrationStep("drops twice") { try $0.dropColumn("weight", from: "Crate") },
                ]
            ).close()
        }
        #expect(dropped?.message.contains("no such column") == true, "\(dropped?.message ?? "")")
    }

    @Test(arguments: Backend.available)
    func thePlanListsPendingStepsAndStatementsWithoutChangingTheDatabase(_ backend: Backend) throws {
        let database = try seeded(backend)
        let steps = [
            MigrationStep("note") { step in
                try step.prepare(CrateWithNote.self)
                try step.execute(#"UPDATE "Crate" SET note = 'x'"#)
            }
        ]
        let plan = try database.migrationPlan(.init(migrations: steps), for: [CrateWithNote.self])
        let store = try database.open()
        defer { try? store.close() }
        #expect(plan.pendingSteps == ["note"])
        #expect(plan.statements.contains { $0.contains("ADD COLUMN") && $0.contains("note") }, "\(plan.statements)")
        #expect(plan.statements.contains { $0.hasPrefix("UPDATE") }, "\(plan.statements)")
        #expect(try store.appliedMigrations().isEmpty)
        #expect(try store.rawRows(#"SELECT * FROM "Crate" WHERE id = 1"#).first?.count == 3)
        #expect(try Crate.findAll(in: store).sorted { $0.id < $1.id } == crates)
    }
}

// Renames: the models of release 1 and release 2.
private enum ReleaseOne {
    struct Kid: StoredModel, Equatable {
        var kidId: Int64
        var name: String
        var pet: Pet?
        var toys: [Toy]?
        static let primaryKey = ["kidId"]
        static let relationships: [Relationship<Kid>] = [.toOne(\.pet), .toMany(\.toys)]
        static let indexes: [TableIndex<Kid>] = [.unique(\.name)]
    }

    struct Pet: StoredModel, Equatable {
        var petId: Int64
        var name: String
        static let primaryKey = ["petId"]
    }

    struct Toy: StoredModel, Equatable {
        var toyId: Int64
        var name: String
        static let primaryKey = ["toyId"]
    }
}

private enum ReleaseTwo {
    /// Kid is Child now, its name `fullName`.
    struct Child: StoredModel, Equatable {
        var kidId: Int64
        var fullName: String
        var pet: Animal?
        static let primaryKey = ["kidId"]
        static let relationships: [Relationship<Child>] = [.toOne(\.pet)]
        static let indexes: [TableIndex<Child>] = [.unique(\.fullName)]
        static let formerNames: [FormerName<Child>] = [.table(from: "Kid"), .property(\.fullName, from: "name")]
    }

    struct Animal: StoredModel, Equatable {
        var animalId: Int64
        var name: String
        static let primaryKey = ["animalId"]
        static let formerNames: [FormerName<Animal>] = [.table(from: "Pet"), .property(\.animalId, from: "petId")]
    }
}

extension MigrationsOnBothBackendsTests {
    @Test(arguments: Backend.available)
    func declaredRenamesCarryRecordsLinksIndexesAndConstraintsAcross(_ backend: Backend) throws {
        let database = try BackendDatabase(backend)
        let first = try database.open()
        try ReleaseOne.Kid(
            kidId: 1, name: "Ann", pet: ReleaseOne.Pet(petId: 5, name: "Rex"), toys: [ReleaseOne.Toy(toyId: 7, name: "ball")]
        )
        .save(in: first)
        try ReleaseOne.Kid(kidId: 2, name: "Ben", pet: nil, toys: nil).save(in: first)
        try first.close()

        let next = try database.open()
        defer { try? next.close() }
        let children = try ReleaseTwo.Child.findAll(loading: .direct, in: next).sorted { $0.kidId < $1.kidId }
        #expect(children.map(\.fullName) == ["Ann", "Ben"])
        #expect(children.map(\.pet) == [ReleaseTwo.Animal(animalId: 5, name: "Rex"), nil])
        // The unique index came along: a second Ann merges into the first (without the index
        // she would be a third record).
        _ = try ReleaseTwo.Child(kidId: 3, fullName: "Ann", pet: nil).save(in: next)
        #expect(try ReleaseTwo.Child.count(in: next) == 2)
        // So did the link's foreign key, once: a link to a missing animal is refused, and a
        // deleted animal clears the link.
        let dangling = #expect(throws: ModelStoreError.self) {
            try next.rawExecute(#"UPDATE "Child" SET "pet_animalId" = 99 WHERE "kidId" = 2"#)
        }
        #expect(dangling?.code == .constraintViolation)
        _ = try ReleaseTwo.Animal.delete(key: 5, in: next)
        #expect(try ReleaseTwo.Child.find(key: 1, loading: .direct, in: next)?.pet == nil)
        if backend == .postgres {
            let constraints = try next.rawRows(
                #"SELECT conname::text FROM pg_catalog.pg_constraint WHERE contype = 'f' AND conrelid = '"Child"'::regclass"#)
            #expect(constraints == [[.text("fk_Child_0")]])
            let keys = try next.rawRows(
                #"SELECT conname::text FROM pg_catalog.pg_constraint WHERE contype = 'p' AND conrelid = '"Child"'::regclass"#)
            #expect(keys == [[.text("Child_pkey")]])
        }
        // The old names are gone; the plan lists what no model of release 2 uses.
        let plan = try next.migrationPlan(for: [ReleaseTwo.Child.self])
        #expect(plan.unusedTables == ["Kid_toys", "Toy"], "\(plan.unusedTables)")
        #expect(plan.statements.isEmpty, "\(plan.statements)")
    }

    @Test(arguments: Backend.available)
    func aConnectionLostMidStepLeavesTheDatabaseAsBeforeTheStepAndTheNextOpenRunsItOnce(_ backend: Backend) throws {
        let database = try seeded(backend)
        let dropsOnce = Locked(true)
        let step = MigrationStep("drops its connection") { step in
            try step.execute(#"ALTER TABLE "Crate" ADD COLUMN note TEXT"#)
            try step.execute(#"UPDATE "Crate" SET label = 'changed'"#)
            guard
                dropsOnce.withLock({ first in
                    defer { first = false }; return first
                })
            else {
                try step.execute("CREATE TABLE IF NOT EXISTS steplog (position INTEGER, name TEXT)")
                try step.execute("INSERT INTO steplog (position, name) VALUES (0, 'ran')")
                return
            }
            // The server ends the connection (an administrator, a failover); SQLite's stand-in is
            // an interrupted step.
            if backend == .postgres {
                _ = try step.rows("SELECT pg_terminate_backend(pg_backend_pid())")
            } else {
                throw ModelStoreError(.connectionLost, "stand-in for a lost connection")
            }
        }
        let error = #expect(throws: ModelStoreError.self) { try open(database, [step]).close() }
        #expect(error?.code == .migrationFailed, "\(error?.message ?? "")")
        let before = try database.open()
        #expect(try before.appliedMigrations().isEmpty)
        #expect(try Crate.findAll(in: before).sorted { $0.id < $1.id } == crates)
        try before.close()
        // The lock went with the connection: the next open does not wait, and runs the step once.
        let started = Date()
        let store = try open(database, [step])
        defer { try? store.close() }
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(try store.appliedMigrations() == ["drops its connection"])
        #expect(try log(store) == ["ran"])
    }
}

// Rebuilds and transforms: release 2's shapes of `Crate`.
private struct CrateInGrams: StoredModel, Equatable {
    var id: Int64
    var label: String
    var grams: Int64
    static let primaryKey = ["id"]
    static let tableName = "Crate"
}

/// Weight no longer optional: the column becomes NOT NULL.
private struct CrateWeighed: StoredModel, Equatable {
    var id: Int64
    var label: String
    var weight: Double
    static let primaryKey = ["id"]
    static let tableName = "Crate"
}

private struct CrateByLabel: StoredModel, Equatable {
    var label: String
    var id: Int64
    var weight: Double?
    static let primaryKey = ["label"]
    static let tableName = "Crate"
}

/// A shelf holds crates: its link refers to Crate's key.
private struct CrateShelf: StoredModel, Equatable {
    var id: Int64
    var crate: Crate?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<CrateShelf>] = [.toOne(\.crate)]
}

/// A key the database assigns.
private struct Token: StoredModel, Equatable {
    var id: Int64?
    var text: String
    static let primaryKey = ["id"]
}

extension MigrationsOnBothBackendsTests {
    private func indexExists(_ name: String, in store: ModelStore) throws -> Bool {
        try store.read { try SchemaRenamer.exists("index", name, on: $0.connection) }
    }

    @Test(arguments: Backend.available)
    func aTransformChangesATypeLeavesRecordsOutAndKeepsTheIndexes(_ backend: Backend) throws {
        let database = try seeded(backend)
        let store = try open(
            database,
            [
                MigrationStep("grams") { step in
                    try step.transform(Crate.self, to: CrateInGrams.self) { old in
                        old.weight.map { CrateInGrams(id: old.id, label: old.label, grams: Int64(($0 * 1000).rounded())) }
                    }
                }
            ])
        defer { try? store.close() }
        #expect(
            try CrateInGrams.findAll(in: store).sorted { $0.id < $1.id } == [
                CrateInGrams(id: 1, label: "lamp", grams: 1250), CrateInGrams(id: 3, label: "kettle", grams: 900),
            ])
        let index = try TableDescription.of(Crate.self).indexes[0].name
        #expect(try indexExists(index, in: store), "the index on label, a column both models have, came back")
        #expect(try store.read { try MigrationContext.columns(of: "Crate", on: $0.connection) } == ["id", "label", "grams"])
    }

    @Test(arguments: Backend.available)
    func aTransformThatThrowsHalfwayLeavesEveryRecordAsItWas(_ backend: Backend) throws {
        let database = try seeded(backend)
        let error = #expect(throws: ModelStoreError.self) {
            try open(
                database,
                [
                    MigrationStep("grams") { step in
                        try step.transform(Crate.self, to: CrateInGrams.self) { old in
                            if old.id == 3 { throw StepFailure() }
                            return CrateInGrams(id: old.id, label: old.label, grams: 1)
                        }
                    }
                ]
            ).close()
        }
        #expect(error?.code == .migrationFailed)
        let store = try database.open()
        defer { try? store.close() }
        #expect(try Crate.findAll(in: store).sorted { $0.id < $1.id } == crates)
        #expect(try store.appliedMigrations().isEmpty)
    }

    @Test(arguments: Backend.available)
    func aRebuildKeepsColumnsNoModelHasIndexesAndTheLinksOfOtherTables(_ backend: Backend) throws {
        let database = try seeded(backend)
        let first = try database.open()
        _ = try first.execute(#"ALTER TABLE "Crate" ADD COLUMN legacy TEXT DEFAULT 'old'"#)
        try CrateShelf(id: 10, crate: crates[0]).save(in: first)
        try CrateShelf(id: 11, crate: crates[2]).save(in: first)
        try first.close()

        let store = try open(
            database,
            [
                MigrationStep("weights required") { step in
                    try step.rebuild(CrateWeighed.self, values: ["weight": "coalesce(weight, 0)"])
                }
            ])
        defer { try? store.close() }
        #expect(try CrateWeighed.findAll(in: store).sorted { $0.id < $1.id }.map(\.weight) == [1.25, 0, 0.9])
        #expect(try store.read { try MigrationContext.columns(of: "Crate", on: $0.connection) } == ["id", "label", "weight", "legacy"])
        #expect(try store.rawRows(#"SELECT legacy FROM "Crate" ORDER BY id"#) == [[.text("old")], [.text("old")], [.text("old")]])
        #expect(try indexExists(TableDescription.of(Crate.self).indexes[0].name, in: store))
        // NOT NULL now holds.
        let missing = #expect(throws: ModelStoreError.self) {
            try store.rawExecute(#"UPDATE "Crate" SET weight = NULL WHERE id = 1"#)
        }
        #expect(missing?.code == .constraintViolation)
        try store.close()
        // The shelves' links still refer to the crates, and a deleted crate still clears them
        // (a store of the release that has both models as they were).
        let next = try open(database, [MigrationStep("weights required") { _ in }])
        defer { try? next.close() }
        let dangling = #expect(throws: ModelStoreError.self) {
            try next.rawExecute(#"UPDATE "CrateShelf" SET "crate_id" = 99 WHERE id = 10"#)
        }
        #expect(dangling?.code == .constraintViolation)
        _ = try Crate.delete(key: 1, in: next)
        #expect(try CrateShelf.find(key: 10, loading: .direct, in: next)?.crate == nil)
        #expect(try CrateShelf.find(key: 11, loading: .direct, in: next)?.crate?.id == 3)
    }

    @Test(arguments: Backend.available)
    func aRebuildWhoseNewKeyCollidesIsRolledBackWithTheConstraintNamed(_ backend: Backend) throws {
        let database = try seeded(backend)
        let first = try database.open()
        _ = try Crate.save([Crate(id: 4, label: "lamp", weight: 2)], in: first)
        try first.close()
        let error = #expect(throws: ModelStoreError.self) {
            try open(database, [MigrationStep("keyed by label") { try $0.rebuild(CrateByLabel.self) }]).close()
        }
        #expect(error?.code == .migrationFailed)
        #expect(error?.message.contains("label") == true, "\(error?.message ?? "")")
        #expect(error?.model == "CrateByLabel", "\(error?.model ?? "")")
        let store = try database.open()
        defer { try? store.close() }
        #expect(try Crate.count(in: store) == 4)
        #expect(try indexExists(TableDescription.of(Crate.self).indexes[0].name, in: store))
    }

    @Test(arguments: Backend.available)
    func aRebuiltTableWithAnAssignedKeyAssignsTheNextKeyAfterTheCopiedOnes(_ backend: Backend) throws {
        let database = try BackendDatabase(backend)
        let first = try database.open()
        for text in ["a", "b", "c"] { try Token(id: nil, text: text).save(in: first) }
        try first.close()
        let store = try open(database, [MigrationStep("rebuilt") { try $0.rebuild(Token.self) }])
        defer { try? store.close() }
        var token = Token(id: nil, text: "d")
        try token.save(in: store)
        token = try #require(try Token.findAll(in: store).first { $0.text == "d" })
        #expect(token.id == 4)
        #expect(try Token.count(in: store) == 4)
    }

    @Test(arguments: Backend.available)
    func aRebuildRefusesATableWithAConstraintItWouldLoseAndChangesNothing(_ backend: Backend) throws {
        let database = try BackendDatabase(backend)
        let first = try database.open()
        _ = try first.execute(
            #"CREATE TABLE "Crate" (id BIGINT PRIMARY KEY, label TEXT NOT NULL, weight DOUBLE PRECISION CHECK (weight > 0))"#)
        _ = try Crate.save(crates.filter { $0.weight != nil }, in: first)
        try first.close()
        let error = #expect(throws: ModelStoreError.self) {
            try open(database, [MigrationStep("weights required") { try $0.rebuild(CrateWeighed.self) }]).close()
        }
        #expect(error?.code == .migrationFailed)
        #expect(error?.message.contains("CHECK") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("would not keep") == true, "\(error?.message ?? "")")
        let store = try database.open()
        defer { try? store.close() }
        #expect(try Crate.count(in: store) == 2)
        #expect(throws: ModelStoreError.self) { try store.rawExecute(#"UPDATE "Crate" SET weight = -1"#) }
    }
}

// Attacks on the server's migrations (helper-i): transaction control behind comments, a
// step's session settings, a step opening its own database, constraints a dropped column
// holds, names that differ by case.
private struct Contract: StoredModel, Equatable {
    var athleteId: Int64
    var season: Int64
    var amount: Double?
    static let primaryKey = ["athleteId", "season"]
}

extension MigrationsOnBothBackendsTests {
    @Test(arguments: Backend.available)
    func aStepCannotEndItsTransactionBehindAComment(_ backend: Backend) throws {
        let database = try seeded(backend)
        for control in ["/* tidy */ COMMIT", "-- tidy\nCOMMIT", "/* a /* nested */ one */ END", "( /**/ ROLLBACK"] {
            let step = MigrationStep("sneaky") { step in
                try step.execute(#"ALTER TABLE "Crate" ADD COLUMN note TEXT"#)
                try step.execute(control)
                try step.execute(#"UPDATE "Crate" SET label = 'changed'"#)
            }
            let error = #expect(throws: ModelStoreError.self) { try open(database, [step]).close() }
            // (SQLite does not nest comments, nor take a parenthesis there: a syntax error.)
            if backend == .postgres || !control.contains("nested") && !control.hasPrefix("(") {
                #expect(error?.message.contains("begin, commit or roll back") == true, "\(control): \(error?.message ?? "")")
            }
            #expect(error?.code == .migrationFailed, "\(control)")
            let store = try database.open()
            #expect(try Crate.findAll(in: store).sorted { $0.id < $1.id } == crates, "\(control)")
            #expect(try store.rawRows(#"SELECT * FROM "Crate" WHERE id = 1"#).first?.count == 3, "\(control)")
            #expect(try store.appliedMigrations().isEmpty)
            try store.close()
        }
    }

    @Test(arguments: Backend.available)
    func aStepsSessionSettingsEndWithTheMigrationAndItsLockIsFreed(_ backend: Backend) throws {
        let database = try seeded(backend)
        // A step that points the session elsewhere (SQLite: an attached database's stand-in,
        // a pragma the store sets again).
        let setsPath = MigrationStep("sets the session") { step in
            if backend == .postgres {
                guard case .text(let schema) = try step.rows("SELECT current_schema()::text").first?.first else { return }
                try step.execute("CREATE SCHEMA IF NOT EXISTS modelstore_side_schema")
                try step.execute("SET search_path = modelstore_side_schema, \"\(schema)\"")
            } else {
                try step.execute("PRAGMA case_sensitive_like = ON")
            }
        }
        defer {
            if backend == .postgres, let admin = try? database.open(.init(migrations: [setsPath])) {
                _ = try? admin.execute("DROP SCHEMA IF EXISTS modelstore_side_schema CASCADE")
                try? admin.close()
            }
        }
        let store = try open(database, [setsPath])
        try Crate(id: 4, label: "cup", weight: nil).save(in: store)
        #expect(try Crate.count(in: store) == 4)
        #expect(try store.read { try Crate.count(in: store) } == 4)
        try store.close()
        let started = Date()
        let next = try database.open(.init(migrations: [setsPath, logging("b")], migrationWaitLimit: 3))
        defer { try? next.close() }
        #expect(Date().timeIntervalSince(started) < 2, "the lock was freed")
        #expect(try log(next) == ["b"])
    }

    @Test(arguments: Backend.available)
    func aStepOpeningAStoreOnItsOwnDatabaseIsRefusedAtOnce(_ backend: Backend) throws {
        let database = try seeded(backend)
        let inner = MigrationStep("opens its own database") { _ in }
        let outer = MigrationStep("opens its own database") { _ in
            try database.open(.init(busyTimeout: 0.5, migrations: [inner], migrationWaitLimit: 3)).close()
        }
        let started = Date()
        let error = #expect(throws: ModelStoreError.self) {
            try database.open(.init(busyTimeout: 0.5, migrations: [outer], migrationWaitLimit: 3)).close()
        }
        #expect(Date().timeIntervalSince(started) < 2)
        #expect(error?.message.contains("opened a store on the same") == true, "\(error?.message ?? "")")
    }

    @Test(arguments: Backend.available)
    func droppingAColumnAConstraintHoldsIsRefusedAndChangesNothing(_ backend: Backend) throws {
        let database = try BackendDatabase(backend)
        let first = try database.open()
        try Contract(athleteId: 1, season: 2024, amount: 1).save(in: first)
        try first.close()
        let error = #expect(throws: ModelStoreError.self) {
            try open(database, [MigrationStep("drop season") { try $0.dropColumn("season", from: "Contract") }]).close()
        }
        #expect(error?.code == .migrationFailed)
        let store = try database.open()
        defer { try? store.close() }
        try Contract(athleteId: 1, season: 2024, amount: 2).save(in: store)
        #expect(try Contract.findAll(in: store) == [Contract(athleteId: 1, season: 2024, amount: 2)])
    }

    @Test(arguments: Backend.available)
    func namesInAStepAndInRenamesMatchTheStoredOnesIgnoringCase(_ backend: Backend) throws {
        let database = try seeded(backend)
        let store = try open(
            database,
            [
                MigrationStep("lower-case names") { step in
                    #expect(try step.columns(of: "crate") == ["id", "label", "weight"])
                    try step.dropColumn("WEIGHT", from: "crate")
                    try step.execute("CREATE TABLE scratch (id INTEGER)")
                    try step.dropTable("SCRATCH")
                }
            ])
        #expect(try store.rawRows(#"SELECT * FROM "Crate" ORDER BY id"#).map(\.count) == [2, 2, 2])
        #expect(throws: ModelStoreError.self) { try store.rawRows("SELECT * FROM scratch") }
        try store.close()

        let renamed = try open(database, [MigrationStep("lower-case names") { _ in }])
        defer { try? renamed.close() }
        #expect(try CrateRenamedLoosely.count(in: renamed) == 3)
        #expect(try CrateRenamedLoosely.findAll(in: renamed).map(\.title).sorted() == ["fan", "kettle", "lamp"])
    }
}

extension MigrationsOnBothBackendsTests {
    @Test(arguments: Backend.available)
    func aStepNamingWhatTheDatabaseLacksIsToldItIsTheStepsNamesInTheDatabasesWords(_ backend: Backend) throws {
        let database = try seeded(backend)
        for sql in [#"UPDATE "Nowhere" SET x = 1"#, #"UPDATE "Crate" SET missing = 1"#] {
            let error = #expect(throws: ModelStoreError.self) {
                try open(database, [MigrationStep("names what is not there") { try $0.execute(sql) }]).close()
            }
            #expect(error?.code == .migrationFailed)
            let place = backend == .sqlite ? "file" : "database"
            #expect(error?.message.contains("names a table or column the \(place) does not have") == true, "\(error?.message ?? "")")
            #expect(error?.message.contains("another program") == false, "\(error?.message ?? "")")
        }
        try open(database, [logging("a")]).close()
        let refused = #expect(throws: ModelStoreError.self) { try open(database, [logging("x")]).close() }
        #expect(refused?.message.contains(backend == .sqlite ? "The file records" : "The database records") == true)
    }
}

/// Crate as Box, its label as title, both former names declared in another case.
private struct CrateRenamedLoosely: StoredModel, Equatable {
    var id: Int64
    var title: String
    static let primaryKey = ["id"]
    static let tableName = "Box"
    static let formerNames: [FormerName<CrateRenamedLoosely>] = [.table(from: "CRATE"), .property(\.title, from: "LABEL")]
}

// A server's table is more than its columns (helper-j's attack): what a rebuild carries
// across, and what it refuses rather than lose.
extension MigrationsOnBothBackendsTests {
    private static let weighed = MigrationStep("weights required") { step in
        try step.rebuild(CrateWeighed.self, values: ["weight": "coalesce(weight, 0)"])
    }

    @Test(arguments: Backend.available.filter { $0 == .postgres })
    func aRebuildOnAServerKeepsTheTablesPrivilegesAndComments(_ backend: Backend) throws {
        let database = try seeded(backend)
        let first = try database.open()
        _ = try first.execute(#"GRANT SELECT ON "Crate" TO PUBLIC"#)
        _ = try first.execute(#"GRANT UPDATE (label) ON "Crate" TO PUBLIC"#)
        _ = try first.execute(#"COMMENT ON TABLE "Crate" IS 'what ships'"#)
        _ = try first.execute(#"COMMENT ON COLUMN "Crate".label IS 'as printed, 50%s'"#)
        try first.close()
        let store = try open(database, [Self.weighed])
        defer { try? store.close() }
        #expect(
            try store.rawRows(
                #"SELECT count(*) FROM information_schema.role_table_grants WHERE table_schema = current_schema() AND table_name = 'Crate' AND grantee = 'PUBLIC' AND privilege_type = 'SELECT'"#
            ) == [[.integer(1)]])
        #expect(
            try store.rawRows(
                #"SELECT count(*) FROM information_schema.column_privileges WHERE table_schema = current_schema() AND table_name = 'Crate' AND grantee = 'PUBLIC' AND column_name = 'label' AND privilege_type = 'UPDATE'"#
            ) == [[.integer(1)]])
        #expect(try store.rawRows(#"SELECT obj_description('"Crate"'::regclass, 'pg_class')"#) == [[.text("what ships")]])
        #expect(try store.rawRows(#"SELECT col_description('"Crate"'::regclass, 2)"#) == [[.text("as printed, 50%s")]])
    }

    @Test(arguments: Backend.available.filter { $0 == .postgres })
    func aRebuildOnAServerRefusesWhatItWouldLoseAndChangesNothing(_ backend: Backend) throws {
        let cases: [(setup: [String], word: String)] = [
            (
                [#"ALTER TABLE "Crate" ENABLE ROW LEVEL SECURITY"#, #"CREATE POLICY crate_lamps ON "Crate" USING (label = 'lamp')"#],
                "policy"
            ),
            ([#"CREATE RULE crate_kept AS ON DELETE TO "Crate" DO INSTEAD NOTHING"#], "rule"),
            ([#"ALTER TABLE "Crate" SET (fillfactor = 70)"#], "storage parameters"),
            ([#"CREATE STATISTICS crate_stats ON id, label FROM "Crate""#], "statistics"),
        ]
        for (setup, word) in cases {
            let database = try seeded(backend)
            let first = try database.open()
            for sql in setup { _ = try first.execute(SQLStatement(stringLiteral: sql)) }
            try first.close()
            let error = #expect(throws: ModelStoreError.self) { try open(database, [Self.weighed]).close() }
            #expect(error?.code == .migrationFailed, "\(word)")
            #expect(error?.message.contains(word) == true, "\(word): \(error?.message ?? "")")
            let store = try database.open()
            #expect(try Crate.findAll(in: store).sorted { $0.id < $1.id } == crates, "\(word)")
            #expect(try store.appliedMigrations().isEmpty)
            try store.close()
        }
    }

    @Test(arguments: Backend.available.filter { $0 == .postgres })
    func aRebuildOnAServerRefusesAPartitionedTableAndChangesNothing(_ backend: Backend) throws {
        let database = try BackendDatabase(backend)
        let first = try database.open()
        _ = try first.execute(
            #"CREATE TABLE "Crate" (id BIGINT NOT NULL, label TEXT COLLATE "C" NOT NULL, weight DOUBLE PRECISION, PRIMARY KEY (id)) PARTITION BY RANGE (id)"#
        )
        _ = try first.execute(#"CREATE TABLE crate_low PARTITION OF "Crate" FOR VALUES FROM (MINVALUE) TO (100)"#)
        // (Written with SQL: a save's upsert cannot tell an insert from an update on a
        // partitioned table, whose xmax it cannot read.)
        _ = try first.execute(#"INSERT INTO "Crate" VALUES (1, 'lamp', 1.25), (2, 'fan', NULL), (3, 'kettle', 0.9)"#)
        try first.close()
        let error = #expect(throws: ModelStoreError.self) { try open(database, [Self.weighed]).close() }
        #expect(error?.code == .migrationFailed)
        #expect(error?.message.contains("partition") == true, "\(error?.message ?? "")")
        let store = try database.open()
        defer { try? store.close() }
        #expect(try store.rawRows(#"SELECT count(*) FROM pg_catalog.pg_inherits WHERE inhparent = '"Crate"'::regclass"#) == [[.integer(1)]])
        #expect(try Crate.count(in: store) == 3)
        // Nor can a save go into it yet: refused by name, nothing written.
        let save = #expect(throws: ModelStoreError.self) { try Crate(id: 4, label: "cup", weight: nil).save(in: store) }
        #expect(save?.code == .unsupported)
        #expect(save?.message.contains("partitioned table") == true, "\(save?.message ?? "")")
        #expect(try Crate.count(in: store) == 3)
    }

    @Test(arguments: Backend.available.filter { $0 == .postgres })
    func aSaveIntoAViewIsRefusedForItsMissingKeyBeforeAnythingIsWritten(_ backend: Backend) throws {
        let database = try seeded(backend)
        let first = try database.open()
        _ = try first.execute(#"CREATE VIEW "CrateView" AS SELECT * FROM "Crate""#)
        try first.close()
        let store = try database.open()
        defer { try? store.close() }
        let save = #expect(throws: ModelStoreError.self) { try CrateOnAView(id: 9, label: "cup", weight: nil).save(in: store) }
        // Refused before anything is written: a view has no primary key to upsert on.
        #expect(save?.code == .schemaMismatch, "\(save?.message ?? "")")
        #expect(save?.message.contains("primary key") == true, "\(save?.message ?? "")")
        #expect(save?.message.contains("xmax") == false, "\(save?.message ?? "")")
        #expect(try Crate.count(in: store) == 3)
    }

    @Test(arguments: Backend.available.filter { $0 == .postgres })
    func aRebuildKeepsTheForeignKeyOfAPartitionedTableThatRefersToIt(_ backend: Backend) throws {
        let database = try seeded(backend)
        let first = try database.open()
        _ = try first.execute(#"CREATE TABLE crate_log (id BIGINT NOT NULL, crate BIGINT REFERENCES "Crate" (id)) PARTITION BY RANGE (id)"#)
        _ = try first.execute(#"CREATE TABLE crate_log_low PARTITION OF crate_log FOR VALUES FROM (MINVALUE) TO (100)"#)
        _ = try first.execute(#"INSERT INTO crate_log VALUES (1, 1), (2, 3)"#)
        try first.close()
        let store = try open(database, [Self.weighed])
        defer { try? store.close() }
        let dangling = #expect(throws: ModelStoreError.self) { try store.rawExecute("INSERT INTO crate_log VALUES (3, 99)") }
        #expect(dangling?.code == .constraintViolation)
    }

    @Test(arguments: Backend.available.filter { $0 == .postgres })
    func aRebuiltTableNeverGivesAnAssignedKeyItGaveBefore(_ backend: Backend) throws {
        let database = try BackendDatabase(backend)
        let first = try database.open()
        for text in ["a", "b", "c"] { try Token(id: nil, text: text).save(in: first) }
        _ = try Token.delete(key: 3, in: first)
        try first.close()
        let store = try open(database, [MigrationStep("rebuilt") { try $0.rebuild(Token.self) }])
        defer { try? store.close() }
        try Token(id: nil, text: "d").save(in: store)
        #expect(try Token.findAll(in: store).first { $0.text == "d" }?.id == 4)
    }
}

extension MigrationsOnBothBackendsTests {
    /// A store that reaches its database at its first call: every call, in every form, is
    /// refused the same way, and none changes the database.
    @Test(arguments: Backend.available)
    func everyCallOfALazilyOpenedStoreOnADatabaseAnotherReleaseMigratedIsRefused(_ backend: Backend) async throws {
        let database = try seeded(backend)
        try open(database, [logging("a")]).close()
        let store = try database.openLazily()
        func expectRefused(_ error: ModelStoreError?, _ form: String) {
            #expect(error?.code == .invalidModel, "\(form): \(error?.message ?? "")")
            #expect(error?.value == "a", "\(form)")
        }
        expectRefused(#expect(throws: ModelStoreError.self) { try Crate.find(key: 1, in: store) }, "sync read")
        expectRefused(#expect(throws: ModelStoreError.self) { try Crate(id: 9, label: "x", weight: nil).save(in: store) }, "sync write")
        let completed = await withCheckedContinuation { continuation in
            Crate.count(in: store) { continuation.resume(returning: $0) }
        }
        expectRefused(#expect(throws: ModelStoreError.self) { try completed.get() }, "completion handler")
        do {
            _ = try await Crate.findAll(in: store)
            Issue.record("an async read of the migrated database succeeded")
        } catch let error as ModelStoreError {
            expectRefused(error, "async read")
        }
        do {
            try await Crate(id: 9, label: "x", weight: nil).save(in: store)
            Issue.record("an async write to the migrated database succeeded")
        } catch let error as ModelStoreError {
            expectRefused(error, "async write")
        }
        try? store.close()
        let next = try open(database, [logging("a")])
        defer { try? next.close() }
        #expect(try await Crate.findAll(in: next).sorted { $0.id < $1.id } == crates)
    }
}

/// `Crate` read and written through a view of its table.
private struct CrateOnAView: StoredModel, Equatable {
    var id: Int64
    var label: String
    var weight: Double?
    static let primaryKey = ["id"]
    static let tableName = "CrateView"
}
