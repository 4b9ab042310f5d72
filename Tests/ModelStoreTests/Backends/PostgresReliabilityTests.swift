import Foundation
import ModelStore
import ModelStorePostgres
import ReliabilityFixtures
import Testing

// The server's own promises: several processes writing one data set lose nothing, and a
// server that goes away mid-write leaves each call whole or absent and the store usable.

/// Runs only where a PostgreSQL server is configured (or required, so CI cannot skip them).
private let serverConfigured = Backend.postgresURL != nil || Backend.postgresRequired

@Suite("PostgreSQL: processes and restarts", .enabled(if: serverConfigured), .serialized)
struct PostgresReliabilityTests {
    @Test func threeProcessesWritingOverlappingKeysLoseNothing() async throws {
        let test = try BackendStore(.postgres)
        // Create the table first, so the workers race on rows, not on DDL.
        _ = try await Tally.save([Tally(id: 0)], in: test.store)
        let argument = [Backend.postgresURL!, test.schemaName!].joined(separator: "|")
        // The waiting happens on a dispatch thread: the concurrency pool's few threads stay
        // free for the tests beside this one.
        let statuses = try await offThePool {
            let workers = try (0..<3).map { try HelperProcess("tally", path: argument + "|\($0)") }
            for worker in workers { try worker.waitFor("ready") }
            for worker in workers { worker.send("go") }
            return try workers.map { worker -> Int32 in
                try worker.waitFor("done")
                return worker.waitForExit()
            }
        }
        #expect(statuses == [0, 0, 0])
        let shared = try await Tally.filter(\.id >= Tally.sharedKeys.lowerBound && \.id <= Tally.sharedKeys.upperBound)
            .order(.ascending(\.id)).findAll(in: test.store)
        #expect(shared.count == Tally.sharedKeys.count)
        let last = Int64(Tally.rounds)
        // Every worker's last round is in every shared record: no merge lost another's column.
        #expect(shared.allSatisfy { $0.first == last && $0.second == last && $0.third == last })
        #expect(try await Tally.count(where: \.id >= 10_000, in: test.store) == 3 * Tally.rounds * 50)
    }

    @Test func aServerRestartMidBatchLeavesTheBatchWholeOrAbsentAndTheStoreUsable() async throws {
        let cluster = try await offThePool { try PrivateCluster(port: 54_341) }
        defer { cluster.stop() }
        let store = try ModelStore(postgres: cluster.url)
        defer { try? store.close() }
        _ = try await BKSnack.save([BKSnack(snackId: 0, name: "before")], in: store)
        let batch = (1...60_000).map { BKSnack(snackId: Int64($0), name: "batch \($0)", price: Double($0)) }
        let outcome = SharedBox<Result<Int, any Error>?>(nil)
        let count: Int? = try await offThePool {
            let started = DispatchSemaphore(value: 0)
            let writer = Thread {
                started.signal()
                outcome.set(Result { try BKSnack.save(batch, in: store).inserted })
            }
            writer.start()
            started.wait()
            Thread.sleep(forTimeInterval: 0.3)
            try cluster.restart()
            while outcome.get() == nil { Thread.sleep(forTimeInterval: 0.05) }
            // Count through the store, which reconnects on its own.
            var count: Int?
            for _ in 0..<50 where count == nil {
                count = try? BKSnack.count(in: store)
                if count == nil { Thread.sleep(forTimeInterval: 0.1) }
            }
            return count
        }
        switch outcome.get()! {
        case .success:
            #expect(count == 60_001)
        case .failure(let error):
            let code = (error as? ModelStoreError)?.code
            #expect(code == .connectionLost, "a restart mid-batch must report a lost connection, not \(error)")
            #expect(count == 1, "the batch must be absent when the call failed")
        }
        // The store goes on working.
        _ = try await BKSnack(snackId: 99_999, name: "after").save(in: store)
        #expect(try await BKSnack.find(key: 99_999, in: store)?.name == "after")
    }

    @Test func aSecondStoreUsesTheTablesAndJoinTablesTheFirstMade() throws {
        let test = try BackendStore(.postgres)
        var team = BKTeam(id: 1, name: "Rockets")
        team.players = [BKPlayer(id: 1, name: "Ann", skills: [BKSkill(id: 1, title: "fast")])]
        team.coach = BKCoach(id: 1, name: "Cy")
        try team.save(in: test.store)
        // Another process's store on the same tables: it checks them (join tables included)
        // and writes and reads through them.
        let second = try test.another()
        defer { try? second.close() }
        var other = BKTeam(id: 2, name: "Comets")
        other.players = [BKPlayer(id: 2, name: "Bo", skills: [BKSkill(id: 1, title: "fast"), BKSkill(id: 2, title: "tall")])]
        try other.save(in: second)
        #expect(try BKPlayer.count(in: second) == 2)
        #expect(try BKSkill.find(key: 1, loading: .direct, in: second)?.players?.count == 2)
        #expect(try BKTeam.find(key: 1, loading: .direct, in: second)?.coach?.name == "Cy")
        #expect(try BKSkill.count(in: test.store) == 2)
    }

    @Test func aModelDeclaringFormerNamesIsRefusedOnAServer() throws {
        let test = try BackendStore(.postgres)
        #expect {
            try BKRenamed(id: 1, title: "x").save(in: test.store)
        } throws: { ($0 as? ModelStoreError)?.code == .unsupported }
    }

    @Test func whatIsSQLitesAloneIsRefusedByNameOnAServerAndChangesNothing() throws {
        let test = try BackendStore(.postgres)
        let store = test.store
        func refused(_ body: () throws -> Void) -> Bool {
            do {
                try body()
                return false
            } catch let error as ModelStoreError {
                return error.code == .unsupported && !error.message.isEmpty
            } catch {
                return false
            }
        }
        #expect(refused { try BKSearchable(id: 1, title: "x").save(in: store) })
        #expect(refused { try BKCollated(id: 1, email: "A@x.org").save(in: store) })
        #expect(refused { try store.backup(to: NSTemporaryDirectory() + "never-\(UUID().uuidString).sqlite") })
        #expect(refused { _ = try BKSnack.count(where: .contains(\.tags, "a"), in: store) })
        #expect(refused { _ = try BKSnack.findAll(where: #Predicate { $0.snackId > 1 }, in: store) })
        #expect(
            refused {
                _ = try ModelStore(
                    postgres: Backend.postgresURL!,
                    configuration: .init(migrations: [MigrationStep("never") { step in try step.execute("SELECT 1") }]))
            })
        // None of it left anything behind, and the store works.
        try BKSnack(snackId: 1, name: "after").save(in: store)
        #expect(try BKSnack.count(in: store) == 1)
    }

    @Test func aWrongAddressFailsAtOpeningWithAClearError() throws {
        #expect {
            _ = try ModelStore(postgres: "postgres://nobody@localhost:1/none")
        } throws: { error in
            guard let error = error as? ModelStoreError else { return false }
            return error.code == .cannotOpen && error.message.contains("localhost")
        }
        #expect {
            _ = try ModelStore(postgres: "http://example.com/db")
        } throws: { ($0 as? ModelStoreError)?.code == .cannotOpen }
    }
}

/// Models with what is SQLite's alone: full-text search, a SQLite collation.
struct BKSearchable: StoredModel {
    var id: Int64
    var title: String
    static let primaryKey = ["id"]
    static let searchable: [SearchableText<BKSearchable>] = [.text(\.title)]
}

struct BKCollated: StoredModel {
    var id: Int64
    var email: String
    static let primaryKey = ["id"]
    static let columnStorage: [ColumnStorage<BKCollated>] = [.text(\.email, collation: .caseInsensitive)]
}

/// A model that declares a rename, which a server store refuses.
struct BKRenamed: StoredModel {
    var id: Int64
    var title: String
    static let primaryKey = ["id"]
    static let formerNames: [FormerName<BKRenamed>] = [.property(\.title, from: "name")]
}

/// Runs blocking work (waiting for processes or a restarting server) on a dispatch thread,
/// so the tests running beside it keep the concurrency pool's few threads. Expectations stay
/// with the caller, in the test's own task.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}

/// A value shared between threads in a test.
final class SharedBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.withLock { value } }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
}

/// A PostgreSQL cluster of the test's own, which it may restart without disturbing the
/// server the other tests share (`scripts/postgres-cluster.sh`).
final class PrivateCluster: Sendable {
    let directory: String
    let port: Int
    let url: String

    init(port: Int) throws {
        self.port = port
        directory = NSTemporaryDirectory() + "modelstore-pg-\(UUID().uuidString.prefix(8))"
        url = try Self.script(["start", directory], port: port).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func restart() throws {
        _ = try Self.script(["restart", directory], port: port)
    }

    func stop() {
        _ = try? Self.script(["stop", directory], port: port)
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func script(_ arguments: [String], port: Int) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let output = NSTemporaryDirectory() + "cluster-\(UUID().uuidString).out"
        let errors = output + ".err"
        defer {
            try? FileManager.default.removeItem(atPath: output)
            try? FileManager.default.removeItem(atPath: errors)
        }
        // posix_spawn and waitpid of our own, not Foundation's Process: its wait for a child
        // missed the exit of a script whose server lives on (two tests at once hung in it).
        // Output goes to files, which the server the script starts may keep open.
        let command =
            "MODELSTORE_POSTGRES_PORT=\(port) '\(root.path)/scripts/postgres-cluster.sh' "
            + arguments.map { "'\($0)'" }.joined(separator: " ") + " > '\(output)' 2> '\(errors)' < /dev/null"
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(command), nil]
        defer { for pointer in argv { free(pointer) } }
        let spawned = posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ)
        guard spawned == 0 else { throw ModelStoreError(.cannotOpen, "cannot start postgres-cluster.sh (\(spawned))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let printed = FileManager.default.contents(atPath: output) ?? Data()
        let complaints = FileManager.default.contents(atPath: errors) ?? Data()
        guard status == 0 else {
            throw ModelStoreError(
                .cannotOpen,
                "postgres-cluster.sh \(arguments.joined(separator: " ")) failed: "
                    + String(decoding: complaints, as: UTF8.self))
        }
        return String(decoding: printed, as: UTF8.self)
    }
}
