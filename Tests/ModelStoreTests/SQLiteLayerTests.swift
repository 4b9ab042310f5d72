import ModelStoreCSQLite
import Foundation
import Testing
@testable import ModelStore

// SQLite-only: the SQLite connection layer itself.
@Suite("SQLite layer")
struct SQLiteLayerTests {
    private func memoryConnection() throws -> Connection {
        try Connection(location: ":memory:", flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, busyTimeout: 1)
    }

    @Test func fileStoreUsesWALNormalSyncForeignKeysAndABusyTimeout() throws {
        let test = try TestStore(.file)
        let settings = try test.rawRows("SELECT * FROM pragma_journal_mode, pragma_synchronous, pragma_foreign_keys")
        // The reader sees the file's journal mode; synchronous and foreign_keys are per
        // connection, so check those on the writer.
        #expect(settings.first?.first == .text("wal"))
        let writer = try test.store.write { session in
            [
                try session.connection.scalar("PRAGMA synchronous"), try session.connection.scalar("PRAGMA foreign_keys"),
                try session.connection.scalar("PRAGMA busy_timeout"),
            ]
        }
        #expect(writer == [.integer(1), .integer(1), .integer(5000)])
    }

    @Test func everyStorageClassBindsAndReadsBack() throws {
        let connection = try memoryConnection()
        let values: [SQLValue] = [
            .null, .integer(Int64.min), .integer(Int64.max), .real(-0.5), .real(.infinity),
            .text(""), .text("a\u{0}b"), .text("🍫 'quoted' %_"), .blob(Data()), .blob(Data([0, 0, 7])),
        ]
        let statement = try connection.makeStatement("SELECT " + values.map { _ in "?" }.joined(separator: ", "))
        try statement.bind(values)
        #expect(try statement.step())
        let read = (0..<Int32(values.count)).map { statement.value(at: $0) }
        #expect(read == values)
        // An empty blob stays a blob and an empty string stays text: neither becomes NULL.
        #expect(statement.storageClass(at: 5) == SQLITE_TEXT)
        #expect(statement.storageClass(at: 8) == SQLITE_BLOB)
    }

    @Test func bindingTheWrongNumberOfValuesFailsClearly() throws {
        let connection = try memoryConnection()
        let statement = try connection.makeStatement("SELECT ?, ?")
        #expect(throws: ModelStoreError.self) { try statement.bind([.integer(1)]) }
    }

    @Test func cachedStatementsAreReused() throws {
        let connection = try memoryConnection()
        let first = try connection.cachedStatement("SELECT 1")
        let second = try connection.cachedStatement("SELECT 1")
        #expect(first === second)
        let keyed = try connection.cachedStatement(StatementKey(owner: ObjectIdentifier(Snack.self), operation: 1)) { "SELECT 2" }
        let again = try connection.cachedStatement(StatementKey(owner: ObjectIdentifier(Snack.self), operation: 1)) {
            Issue.record("SQL built twice for one key")
            return "SELECT 3"
        }
        #expect(keyed === again)
    }

    @Test func aThrowingTransactionRollsBackEverything() throws {
        let connection = try memoryConnection()
        try connection.execute("CREATE TABLE t (x INTEGER)")
        struct Failure: Error {}
        #expect(throws: Failure.self) {
            try connection.inTransaction {
                try connection.execute("INSERT INTO t VALUES (1)")
                throw Failure()
            }
        }
        #expect(try connection.scalar("SELECT count(*) FROM t") == .integer(0))
        #expect(!connection.isInTransaction)
    }

    @Test func nestedTransactionsAreSavepointsThatRollBackAlone() throws {
        let connection = try memoryConnection()
        try connection.execute("CREATE TABLE t (x INTEGER)")
        struct Failure: Error {}
        try connection.inTransaction {
            try connection.execute("INSERT INTO t VALUES (1)")
            #expect(throws: Failure.self) {
                try connection.inTransaction {
                    try connection.execute("INSERT INTO t VALUES (2)")
                    throw Failure()
                }
            }
            try connection.inTransaction { try connection.execute("INSERT INTO t VALUES (3)") }
        }
        let statement = try connection.makeStatement("SELECT x FROM t ORDER BY x")
        var rows: [Int64] = []
        try statement.forEachRow { rows.append(statement.int64(at: 0)) }
        #expect(rows == [1, 3])
    }

    @Test func sqliteErrorsCarryCodeMessageAndSQLAndPrintThemAll() throws {
        let connection = try memoryConnection()
        try connection.execute("CREATE TABLE t (x INTEGER NOT NULL)")
        let error = try #require(throws: ModelStoreError.self) {
            try connection.cachedStatement("INSERT INTO t (x) VALUES (?)").execute([.null])
        }
        #expect(error.code == .constraintViolation)
        #expect(error.sqliteCode == 1299)  // SQLITE_CONSTRAINT_NOTNULL
        #expect(error.sqlitePrimaryCode == SQLITE_CONSTRAINT)
        #expect(error.sqliteMessage == "NOT NULL constraint failed: t.x")
        #expect(error.sql == "INSERT INTO t (x) VALUES (?)")
        let printed = String(describing: error)
        #expect(printed.contains("constraintViolation"))
        #expect(printed.contains("NOT NULL constraint failed: t.x"))
        #expect(printed.contains("INSERT INTO t (x) VALUES (?)"))
        #expect(printed.contains("1299"))
    }

    @Test func prepareErrorsNameTheSQL() throws {
        let connection = try memoryConnection()
        let error = try #require(throws: ModelStoreError.self) { try connection.makeStatement("SELEKT 1") }
        #expect(error.code == .sqlite)
        #expect(error.sql == "SELEKT 1")
        #expect(error.sqliteMessage?.contains("syntax error") == true)
    }

    @Test func errorCodesMatchInCatchClauses() {
        func fail() throws { throw ModelStoreError(.notFound, "gone") }
        var matched = false
        do { try fail() } catch ModelStoreError.Code.alreadyExists {
            Issue.record("matched the wrong code")
        } catch ModelStoreError.Code.notFound {
            matched = true
        } catch {
            Issue.record("did not match: \(error)")
        }
        #expect(matched)
    }

    @Test func traceReceivesEachStatementsSQLWithoutValues() throws {
        let test = try TestStore()
        try Snack(snackId: 1, name: "secret").save(in: test.store)
        #expect(test.sql.contains { $0.hasPrefix(#"INSERT INTO "Snack" ("snackId", "name", "tags") VALUES (?, ?, ?)"#) })
        #expect(!test.sql.joined().contains("secret"))
        test.store.setTrace(nil)
        test.resetSQL()
        _ = try Snack.find(key: 1, in: test.store)
        #expect(test.sql.isEmpty)
    }
}
