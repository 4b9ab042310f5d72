import Foundation
import Testing
@testable import ModelStore

private struct RawTicket: StoredModel, Equatable {
    var id: UUID
    var title: String
    var issuedAt: Date
    var labels: [String] = []
    var note: String?
    static let primaryKey = ["id"]
    static let columnStorage: [ColumnStorage<RawTicket>] = [.uuid(\.id, as: .blob), .date(\.issuedAt, as: .sqliteText)]
}

private struct SnackLine: Decodable, Sendable, Equatable {
    var name: String?
    var price: Double?
}

private func seeded(_ kind: StoreKind = .memory) throws -> TestStore {
    let test = try TestStore(kind)
    try Snack.save(
        (1...10).map { Snack(snackId: Int64($0), name: "s\($0)", taste: $0 % 2 == 0 ? "sweet" : "sour", price: Double($0)) },
        in: test.store)
    return test
}

// The tests that run on SQLite only say why (SQLite's pragmas, ATTACH, typeof, observed writes).
// Raw SQL that runs on both quotes the mixed-case names a server would fold ("Snack", "snackId").
@Suite("Raw SQL: bound values, three forms, observed writes")
struct RawSQLTests {
    // MARK: Binding

    @Test(arguments: Backend.available) func interpolatedValuesAreBoundNeverSpliced(_ backend: Backend) throws {
        let test = try seeded(StoreKind.memory.or(backend))
        let store = test.store
        let hostile = "x'); DROP TABLE Snack; --"
        let statement: SQLStatement = #"UPDATE "Snack" SET name = \#(hostile) WHERE "snackId" = \#(Int64(1))"#
        #expect(statement.sql == #"UPDATE "Snack" SET name = ? WHERE "snackId" = ?"#)
        #expect(statement.arguments == [.text(hostile), .integer(1)])
        #expect(try store.execute(statement) == 1)
        // Stored literally, and the table is still there.
        #expect(try Snack.find(key: 1, in: store)?.name == hostile)
        #expect(try Snack.count(in: store) == 10)
        let found = try store.findAll(Snack.self, sql: #"SELECT * FROM "Snack" WHERE name = \#(hostile)"#)
        #expect(found.map(\.snackId) == [1])
        // A value that looks like SQL matches nothing as SQL would: `' OR 1=1` is text.
        #expect(try store.findAll(Snack.self, sql: #"SELECT * FROM "Snack" WHERE name = \#("' OR 1=1 --")"#).isEmpty)
    }

    @Test(arguments: Backend.available) func namesListsNilAndExplicitArguments(_ backend: Backend) throws {
        let test = try seeded(StoreKind.memory.or(backend))
        let store = test.store
        let ids: [Int64] = [2, 4, 99]
        let rows = try store.findAll(
            Int64.self,
            sql: #"SELECT "snackId" FROM \#(table: Snack.self) WHERE "snackId" IN \#(list: ids) ORDER BY "snackId""#)
        #expect(rows == [2, 4])
        if backend == .sqlite {
            // (`IS NOT ?` with a bound NULL is SQLite's syntax; a server takes only IS NOT NULL.)
            let none: String? = nil
            #expect(
                try store.findAll(Int64.self, sql: "SELECT snackId FROM Snack WHERE snackId IN \(list: ids) AND name IS NOT \(none)")
                    == [2, 4])
        }
        let odd: SQLStatement = "SELECT \(identifier: "we\"ird") FROM x"
        #expect(odd.sql == "SELECT \"we\"\"ird\" FROM x")
        // An empty list holds nothing: IN matches no row and NOT IN every row, on both backends.
        let empty = [Int64]()
        #expect(try store.findAll(Int64.self, sql: #"SELECT "snackId" FROM "Snack" WHERE "snackId" IN \#(list: empty)"#).isEmpty)
        #expect(try store.findFirst(Int.self, sql: #"SELECT count(*) FROM "Snack" WHERE "snackId" NOT IN \#(list: empty)"#) == 10)
        let explicit = SQLStatement(#"SELECT "name" FROM "Snack" WHERE "price" > ? AND "taste" = ?"#, arguments: [8.0, "sweet"])
        #expect(try store.findAll(String.self, sql: explicit) == ["s10"])
        let nested: SQLStatement = #"SELECT count(*) FROM "Snack" WHERE \#(SQLStatement(#""price" < ?"#, arguments: [3]))"#
        #expect(try store.findFirst(Int.self, sql: nested) == 2)
    }

    @Test(arguments: Backend.available) func anEmptyListAnswersAsOnSQLiteWhateverTheSpellingAroundIt(_ backend: Backend) throws {
        let test = try seeded(StoreKind.memory.or(backend))
        let none: Int64? = nil
        // (SQL, SQLite's count): comments stand for whitespace between IN, NOT and the list.
        let cases: [(SQLStatement, Int)] = [
            (#"SELECT count(*) FROM "Snack" WHERE "snackId" in()"#, 0),
            ("SELECT count(*) FROM \"Snack\" WHERE \"snackId\"\nNOT\n\tIN\n(\n)", 10),
            (#"SELECT count(*) FROM "Snack" WHERE "snackId" IN /* none */ ()"#, 0),
            (#"SELECT count(*) FROM "Snack" WHERE "snackId" NOT /* none */ IN ()"#, 10),
            (#"SELECT count(*) FROM "Snack" WHERE "snackId" IN ( /* none */ )"#, 0),
            ("SELECT count(*) FROM \"Snack\" WHERE \"snackId\" NOT IN -- none\n()", 10),
            (#"SELECT count(*) FROM "Snack" WHERE name <> 'x IN ()' AND ("snackId", price) NOT IN ()"#, 10),
            (#"SELECT count(*) FROM "Snack" WHERE NULL NOT IN () AND \#(none) IN () IS FALSE"#, 10),
            (#"SELECT count(*) FROM "Snack" WHERE upper(name) NOT IN () AND "snackId" + 1 NOT IN ()"#, 10),
        ]
        for (sql, expected) in cases {
            #expect(try test.store.findFirst(Int.self, sql: sql) == expected, "\(sql.sql)")
        }
    }

    @Test(arguments: Backend.available) func unstorableValuesAndWrongValueCountsAreRefused(_ backend: Backend) throws {
        let test = try seeded(StoreKind.memory.or(backend))
        #expect {
            try test.store.execute(#"UPDATE "Snack" SET price = \#(Double.nan)"#)
        } throws: { ($0 as? ModelStoreError)?.code == .encodingFailed }
        #expect {
            try test.store.findAll(Int.self, sql: SQLStatement("SELECT ? + ?", arguments: [1]))
        } throws: { ($0 as? ModelStoreError)?.code == .invalidQuery }
        #expect(try Snack.find(key: 1, in: test.store)?.price == 1)
    }

    // MARK: Decoding

    @Test(arguments: Backend.available) func modelsDecodeAsFindersDecodeThemDeclaredFormsAndJSONIncluded(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let store = test.store
        let ticket = RawTicket(
            id: UUID(), title: "t", issuedAt: Date(timeIntervalSince1970: 1_700_000_000.5), labels: ["a", "b"], note: nil)
        try ticket.save(in: store)
        // Columns in another order than the table's, and by name.
        let raw = try store.findAll(RawTicket.self, sql: #"SELECT note, labels, "issuedAt", title, id FROM "RawTicket""#)
        #expect(raw == [ticket])
        #expect(raw == (try RawTicket.findAll(in: store)))
        // The blob and the text date are what is stored: SQLite's storage classes, a server's column types.
        if backend == .sqlite {
            #expect(try store.findFirst(String.self, sql: #"SELECT typeof(id) || typeof("issuedAt") FROM "RawTicket""#) == "blobtext")
        } else {
            #expect(
                try store.findFirst(String.self, sql: #"SELECT pg_typeof(id)::text || pg_typeof("issuedAt")::text FROM "RawTicket""#)
                    == "byteatext")
        }
    }

    @Test(arguments: Backend.available) func projectionsAndSingleValuesDecodeByNameAndPosition(_ backend: Backend) throws {
        let test = try seeded(StoreKind.memory.or(backend))
        let store = test.store
        let lines = try store.findAll(SnackLine.self, sql: #"SELECT price, name FROM "Snack" WHERE "snackId" <= \#(2) ORDER BY "snackId""#)
        #expect(lines == [SnackLine(name: "s1", price: 1), SnackLine(name: "s2", price: 2)])
        #expect(try store.findFirst(Double.self, sql: #"SELECT max(price) FROM "Snack""#) == 10)
        #expect(try store.findFirst(Double?.self, sql: #"SELECT max(price) FROM "Snack" WHERE 1 = 0"#) == .some(nil))
        #expect(try store.findFirst(Int.self, sql: "SELECT 1 WHERE 1 = 0") == nil)
        #expect(try store.findAll(Taste.self, sql: "SELECT 'sweet' UNION ALL SELECT 'sour'") == [.sweet, .sour])
    }

    @Test(arguments: Backend.available) func decodeMismatchesNameTheTypeAndColumn(_ backend: Backend) throws {
        let test = try seeded(StoreKind.memory.or(backend))
        let store = test.store
        #expect {
            try store.findAll(SnackLine.self, sql: #"SELECT 'cheap' AS price, name FROM "Snack""#)
        } throws: { error in
            guard let error = error as? ModelStoreError else { return false }
            return error.code == .decodingFailed && error.model == "SnackLine" && error.column == "price"
        }
        #expect {
            try store.findAll(Int.self, sql: #"SELECT name AS label FROM "Snack""#)
        } throws: { error in
            guard let error = error as? ModelStoreError else { return false }
            return error.code == .decodingFailed && error.model == "Int" && error.column == "label"
        }
        #expect {
            try store.findFirst(Double.self, sql: #"SELECT max(price) FROM "Snack" WHERE 1 = 0"#)
        } throws: { ($0 as? ModelStoreError)?.code == .decodingFailed }
        // A non-optional property the row lacks.
        #expect {
            try store.findAll(Snack.self, sql: #"SELECT name FROM "Snack""#)
        } throws: { error in
            guard let error = error as? ModelStoreError else { return false }
            return error.code == .decodingFailed && error.column == "snackId"
        }
    }

    // MARK: Errors

    @Test(arguments: Backend.available) func syntaxErrorsAreInvalidQueriesNamingTheSQL(_ backend: Backend) throws {
        let test = try seeded(StoreKind.memory.or(backend))
        #expect {
            try test.store.findAll(Snack.self, sql: #"SELEC * FROM "Snack""#)
        } throws: { error in
            guard let error = error as? ModelStoreError else { return false }
            return error.code == .invalidQuery && error.sql == #"SELEC * FROM "Snack""# && error.message.contains("syntax error")
        }
        for sql: SQLStatement in [
            "UPDATE Nowhere SET x = 1", #"SELECT "nothing" FROM "Snack""#, #"SELECT no_such_function("price") FROM "Snack""#,
        ] {
            #expect {
                try test.store.execute(sql)
            } throws: { ($0 as? ModelStoreError)?.code == .invalidQuery && ($0 as? ModelStoreError)?.sql == sql.sql }
        }
        #expect(try Snack.count(in: test.store) == 10)

        #expect {
            try test.store.findAll(Int.self, sql: "SELECT 1; SELECT 2")
        } throws: { ($0 as? ModelStoreError)?.code == .invalidQuery }
        #expect {
            try test.store.execute(#"DELETE FROM "Snack" WHERE "snackId" = \#(1); DELETE FROM "Snack""#)
        } throws: { ($0 as? ModelStoreError)?.code == .invalidQuery }
        // Nothing ran.
        #expect(try Snack.count(in: test.store) == 10)
    }

    @Test(arguments: Backend.available) func constraintFailuresKeepTheirCodeAndRollBack(_ backend: Backend) throws {
        let test = try seeded(StoreKind.memory.or(backend))
        #expect {
            try test.store.execute(#"INSERT INTO "Snack" ("snackId", tags) VALUES (\#(1), '[]')"#)
        } throws: { ($0 as? ModelStoreError)?.code == .constraintViolation }
        #expect(try Snack.count(in: test.store) == 10)
    }

    @Test(arguments: Backend.available) func transactionControlAttachAndGuardedPragmasAreRefused(_ backend: Backend) throws {
        let test = try seeded(StoreKind.file.or(backend))
        // ATTACH and PRAGMAs are SQLite's: a server is asked only the transaction control.
        let sqliteOnly = backend == .sqlite ? ["ATTACH ':memory:' AS other", "PRAGMA query_only = 0"] : []
        for sql in ["COMMIT", "BEGIN", "SAVEPOINT x", "ROLLBACK"] + sqliteOnly {
            #expect {
                try test.store.execute(SQLStatement(sql))
            } throws: { ($0 as? ModelStoreError)?.code == .invalidQuery }
        }
        if backend == .sqlite {
            #expect {
                try test.store.findAll(Int.self, sql: "PRAGMA query_only = 0")
            } throws: { ($0 as? ModelStoreError)?.code == .invalidQuery }
        }
        // The store goes on as before: readers still refuse writes, transactions still work.
        _ = try test.store.transaction { try Snack(snackId: 11, name: "after").save(in: test.store) }
        #expect(try Snack.count(in: test.store) == 11)
        if backend == .sqlite { #expect(try test.store.findFirst(Int.self, sql: "PRAGMA query_only") == 1) }
    }

    // MARK: Forms

    @Test(arguments: Backend.available) func everyFormRunsAndWritesAreSeenByLaterReads(_ backend: Backend) async throws {
        let test = try seeded(StoreKind.file.or(backend))
        let store = test.store
        // Synchronous, from a synchronous closure.
        let changed = try { try store.execute(#"UPDATE "Snack" SET price = price + \#(100) WHERE taste = \#("sweet")"#) }()
        #expect(changed == 5)
        // Completion handlers.
        let done = Collected<Int>()
        store.execute(#"DELETE FROM "Snack" WHERE "snackId" = \#(1)"#) { result in done.add((try? result.get()) ?? -1) }
        let found = Collected<[String]>()
        store.findAll(String.self, sql: #"SELECT name FROM "Snack" WHERE "snackId" <= \#(3) ORDER BY "snackId""#) {
            found.add((try? $0.get()) ?? [])
        }
        let first = Collected<Int64?>()
        store.findFirst(Int64.self, sql: #"SELECT min("snackId") FROM "Snack""#) { first.add((try? $0.get()) ?? -1) }
        #expect(await eventually { done.current == [1] && found.current == [["s2", "s3"]] && first.current == [2] })
        // async.
        #expect(try await store.execute(#"UPDATE "Snack" SET name = \#("z") WHERE "snackId" = \#(2)"#) == 1)
        #expect(try await store.findAll(String.self, sql: #"SELECT name FROM "Snack" WHERE "snackId" = \#(2)"#) == ["z"])
        #expect(try await store.findFirst(Double.self, sql: #"SELECT price FROM "Snack" WHERE "snackId" = \#(2)"#) == 102)
    }

    @Test(arguments: Backend.available) func aQueryThatWritesRunsOnTheWriter(_ backend: Backend) throws {
        let test = try seeded(StoreKind.file.or(backend))
        let deleted = try test.store.findAll(Int64.self, sql: #"DELETE FROM "Snack" WHERE price > \#(8) RETURNING "snackId""#)
        #expect(Set(deleted) == [9, 10])
        #expect(try Snack.count(in: test.store) == 8)
    }

    // MARK: Blocks

    @Test(arguments: Backend.available) func insideATransactionEveryFormJoinsItAndRollsBackWithIt(_ backend: Backend) async throws {
        let test = try seeded(StoreKind.file.or(backend))
        let store = test.store
        struct Abort: Error {}
        let handled = Collected<Int>()
        #expect(throws: Abort.self) {
            try store.transaction {
                #expect(try store.execute(#"DELETE FROM "Snack" WHERE "snackId" = \#(1)"#) == 1)
                // The block's uncommitted write is seen by raw reads inside it.
                #expect(try store.findFirst(Int.self, sql: #"SELECT count(*) FROM "Snack""#) == 9)
                #expect(try store.findAll(Snack.self, sql: #"SELECT * FROM "Snack" WHERE "snackId" = \#(1)"#).isEmpty)
                store.execute(#"DELETE FROM "Snack" WHERE "snackId" = \#(2)"#) { handled.add((try? $0.get()) ?? -1) }
                store.findFirst(Int.self, sql: #"SELECT count(*) FROM "Snack""#) { handled.add((try? $0.get()) ?? -1) }
                var streamed = 0
                try Snack.all().forEach(in: store) { _ in streamed += 1 }
                #expect(streamed == 8)
                try store.forEach(Int64.self, sql: #"SELECT "snackId" FROM "Snack""#) { _ in streamed += 1 }
                #expect(streamed == 16)
                throw Abort()
            }
        }
        #expect(await eventually { handled.current == [1, 8] })
        // Rolled back with the block.
        #expect(try await Snack.count(in: store) == 10)
        // An async call from a task started inside a block is refused rather than wait for it.
        let refused = Collected<ModelStoreError.Code>()
        try await store.transaction {
            let done = DispatchSemaphore(value: 0)
            Task(priority: .high) {
                do { _ = try await store.execute(#"DELETE FROM "Snack""#) } catch let error as ModelStoreError { refused.add(error.code) }
                done.signal()
            }
            done.wait()
        }
        #expect(refused.current == [.reentrancy])
        #expect(try await Snack.count(in: store) == 10)
    }

    @Test(arguments: Backend.available) func aWriteInsideAReadBlockIsRefusedAndReadsJoinIt(_ backend: Backend) throws {
        let test = try seeded(StoreKind.file.or(backend))
        let store = test.store
        let handled = Collected<ModelStoreError.Code?>()
        try store.read { () throws -> Void in
            #expect(try store.findFirst(Int.self, sql: #"SELECT count(*) FROM "Snack""#) == 10)
            #expect {
                try store.execute(#"DELETE FROM "Snack""#)
            } throws: { ($0 as? ModelStoreError)?.code == .reentrancy }
            #expect {
                try store.findAll(Int64.self, sql: #"DELETE FROM "Snack" RETURNING "snackId""#)
            } throws: { ($0 as? ModelStoreError)?.code == .reentrancy }
            store.execute(#"DELETE FROM "Snack""#) { result in
                if case .failure(let error) = result { handled.add(error.code) } else { handled.add(nil) }
            }
        }
        #expect(eventually { handled.current == [.reentrancy] })
        #expect(try Snack.count(in: store) == 10)
    }

    // MARK: Observation and schema

    @Test(arguments: Backend.available)
    func rawWritesAreObservedByChangeStreamsAndLiveQueries(_ backend: Backend) async throws {
        let test = try seeded(StoreKind.file.or(backend))
        let store = test.store
        var changes = store.changes(of: Snack.self).makeAsyncIterator()
        var live = Snack.filter(\.price > 5).observe(in: store).makeAsyncIterator()
        #expect(try await live.next()?.count == 5)
        try await store.execute("UPDATE \"Snack\" SET price = \(0) WHERE \"snackId\" = \(10)")
        let change = try #require(await changes.next())
        #expect(try change.keys(\.updated, as: Int64.self) == [10])
        #expect(try await live.next()?.count == 4)
        try await store.execute("INSERT INTO \"Snack\" (\"snackId\", name, tags) VALUES (\(50), \("new"), '[]')")
        let inserted = try #require(await changes.next())
        #expect(try inserted.keys(\.inserted, as: Int64.self) == [50])
    }

    @Test(arguments: Backend.available)
    func aLiveQueryOverRawSQLRerunsWhenATableItReadsChanges(_ backend: Backend) async throws {
        let test = try seeded(StoreKind.file.or(backend))
        let store = test.store
        var counts = store.observe({ try store.findFirst(Int.self, sql: "SELECT count(*) FROM \"Snack\"") }).makeAsyncIterator()
        #expect(try await counts.next() == .some(10))
        try await Snack(snackId: 20, name: "more").save(in: store)
        #expect(try await counts.next() == .some(11))
    }

    // SQLite only: dropping a column is checked with SQLite's messages below; the server's
    // change feed noticing a dropped table is PostgresObservationTests'.
    @Test func rawDDLOnAModelTableIsNoticedByTheStore() async throws {
        let test = try seeded(.file)
        let store = test.store
        var changes = store.changes(of: Snack.self).makeAsyncIterator()
        // Dropped by the store's own raw SQL: the model's next write makes the table anew.
        try await store.execute("DROP TABLE Snack")
        let dropped = try #require(await changes.next())
        #expect(!dropped.keysAreKnown)
        #expect(try await Snack.findAll(in: store).isEmpty)
        try await Snack(snackId: 1, name: "again").save(in: store)
        #expect(try await Snack.findAll(in: store).map(\.name) == ["again"])
        // Dropped and written again in one transaction: the triggers are made again too.
        try await store.transaction {
            try store.execute("DROP TABLE Snack")
            try Snack(snackId: 2, name: "fresh").save(in: store)
        }
        _ = try #require(await changes.next())
        try await Snack(snackId: 3, name: "watched").save(in: store)
        var last = try #require(await changes.next())
        while (try? last.keys(\.inserted, as: Int64.self)) != [3] { last = try #require(await changes.next()) }
        #expect(try await Snack.findAll(in: store).map(\.snackId) == [2, 3])
        // A column dropped behind the model's back is a schema mismatch, not silently empty.
        try await store.execute("ALTER TABLE Snack DROP COLUMN taste")
        #expect {
            try Snack(snackId: 4, name: "x").save(in: store)
        } throws: { ($0 as? ModelStoreError)?.code == .schemaMismatch }
    }
}
