#if PostgreSQL
    import Foundation
    @testable import ModelStore
    import ModelStorePostgres
    import Testing

    private struct POEvent: StoredModel, Equatable {
        var id: Int64
        var note: String
        static let primaryKey = ["id"]
    }

    private struct Done: Decodable, Sendable { var done: Bool }

    private struct POLater: StoredModel, Equatable {
        var id: Int64
        static let primaryKey = ["id"]
    }

    private struct PODoc: StoredModel, Equatable {
        var id: Int64
        var body: String
        static let primaryKey = ["id"]
    }

    /// A role of its own for one test, with the rights to connect and make its schema; dropped
    /// with what it owns.
    private final class TestRole: Sendable {
        let name: String
        let admin: ModelStore

        init(_ prefix: String, schema: String, admin: ModelStore) throws {
            name = prefix + schema
            self.admin = admin
            try admin.rawExecute("CREATE ROLE \"\(name)\" LOGIN")
            // (A store's connection makes its schema if missing, which needs CREATE on the database.)
            try admin.rawExecute("DO $$ BEGIN EXECUTE format('GRANT CREATE ON DATABASE %I TO %I', current_database(), '\(name)'); END $$")
            try admin.rawExecute("GRANT USAGE ON SCHEMA \"\(schema)\" TO \"\(name)\"")
        }

        func store(schema: String) throws -> ModelStore {
            let url = try #require(Backend.postgresURL)
            let roleURL = url.replacingOccurrences(of: "://modelstore@", with: "://\(name)@")
            try #require(roleURL != url, "the test server's URL names no user modelstore: \(url)")
            var server = try PostgresConfiguration(url: roleURL)
            server.schema = schema
            return try ModelStore(postgres: server)
        }

        deinit {
            try? admin.rawExecute("DROP OWNED BY \"\(name)\"")
            try? admin.rawExecute("DROP ROLE \"\(name)\"")
        }
    }

    private struct POAccented: StoredModel, Equatable {
        var prénom: String
        var note: String
        static let primaryKey = ["prénom"]
    }

    private struct POTagged: StoredModel, Equatable {
        var label: String
        var blob: Data
        var weight: Double
        var note: String?
        static let primaryKey = ["label", "blob", "weight"]
    }

    private let observationServerConfigured = Backend.postgresURL != nil || Backend.postgresRequired

    private func inserted(_ changes: [ModelChanges<POEvent>]) -> [Int64] {
        changes.flatMap { (try? $0.keys(\.inserted, as: Int64.self)) ?? [] }
    }

    /// A store on a schema of its own, one event stored, and a change stream of events
    /// collecting what it hears.
    private func streamingEvents() async throws -> (BackendStore, ModelStore, Collected<ModelChanges<POEvent>>, ObservationToken) {
        let test = try BackendStore(.postgres)
        try await POEvent(id: 0, note: "seed").save(in: test.store)
        let changes = Collected<ModelChanges<POEvent>>()
        let stream = try test.store.changes(of: POEvent.self) { changes.add($0) }
        return (test, test.store, changes, stream)
    }

    /// What only a server's change feed promises: its record survives a lost listener, commits
    /// in another order than their writes, other tools' TRUNCATE, and writers without rights
    /// on the log. (Observation itself runs on both backends: ObservationTests,
    /// ObservationAttackTests, and a helper process writing in anotherProcessesCommitIsNoticed.)
    @Suite("PostgreSQL: observing through the server's change log", .enabled(if: observationServerConfigured), .serialized)
    struct PostgresObservationTests {
        /// The server ends the feed's listening connection; what another store commits while
        /// the feed has no connection arrives once it has one again, with keys, each once.
        @Test func aListenerWhoseConnectionTheServerEndsMissesNothing() async throws {
            let (test, _, changes, stream) = try await streamingEvents()
            let other = try test.another()
            defer { try? other.close() }
            try await POEvent(id: 1, note: "before").save(in: other)
            #expect(await eventually { inserted(changes.current) == [1] })
            // The feed's connection: the one whose last statement read this schema's log. Before
            // each read the feed also looks at the tables' triggers, a statement that names no
            // log: a look landing then finds no connection, so look again (the feed reads every
            // half second). It stops at the first, never ending the feed's next connection.
            let schema = try #require(test.schemaName)
            let sql = """
                SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE pid <> pg_backend_pid()
                    AND query LIKE '%"\(schema)".\(ChangeLogNames.table)%' AND query NOT LIKE '%pg_terminate_backend%'
                """
            var ended = false
            for _ in 0..<400 where !ended {
                ended = try await other.findAll(Done.self, sql: SQLStatement(stringLiteral: sql)).contains { $0.done }
                if !ended { try await Task.sleep(nanoseconds: 25_000_000) }
            }
            #expect(ended, "no feed connection found to end")
            for id in Int64(2)...4 { try await POEvent(id: id, note: "while it reconnects").save(in: other) }
            #expect(await eventually(10) { inserted(changes.current).count >= 4 }, "\(inserted(changes.current))")
            try await Task.sleep(nanoseconds: 300_000_000)
            #expect(inserted(changes.current) == [1, 2, 3, 4])
            #expect(changes.current.allSatisfy { $0.keysAreKnown })
            stream.cancel()
        }

        /// A transaction that wrote first but commits last: its log rows have the smaller
        /// positions, behind rows the feed has read already. It is still delivered, once.
        @Test func aTransactionThatCommitsAfterALaterOneIsStillDelivered() async throws {
            let (test, _, changes, stream) = try await streamingEvents()
            let slow = try test.another()
            let fast = try test.another()
            defer {
                try? slow.close()
                try? fast.close()
            }
            // Each store has made its statements ready (a store's first write checks the table,
            // which would wait for the held transaction).
            try await POEvent(id: 1, note: "slow's first").save(in: slow)
            try await POEvent(id: 2, note: "fast's first").save(in: fast)
            #expect(await eventually { inserted(changes.current) == [1, 2] })
            let wrote = Locked(false)
            let release = Locked(false)
            defer { release.withLock { $0 = true } }
            let finished = Task.detached {
                try await offThePool {
                    try slow.transaction {
                        try POEvent(id: 10, note: "written first, committed last").save(in: slow)
                        wrote.withLock { $0 = true }
                        while !release.current { Thread.sleep(forTimeInterval: 0.01) }
                    }
                }
            }
            #expect(await eventually { wrote.current })
            try await POEvent(id: 11, note: "written second, committed first").save(in: fast)
            #expect(await eventually { inserted(changes.current) == [1, 2, 11] })
            release.withLock { $0 = true }
            try await finished.value
            #expect(await eventually { inserted(changes.current) == [1, 2, 11, 10] }, "\(inserted(changes.current))")
            try await Task.sleep(nanoseconds: 300_000_000)
            #expect(inserted(changes.current) == [1, 2, 11, 10])
            stream.cancel()
        }

        /// Keys travel through the log as the columns' text inside JSON: every character a text
        /// key may hold (quotes, backslashes, control characters, non-BMP), bytes, and doubles
        /// arrive exactly as the store reads them back.
        @Test func keysOfEveryCharacterBytesAndDoublesArriveAsStored() async throws {
            let test = try BackendStore(.postgres)
            let store = test.store
            try await POTagged(label: "seed", blob: Data(), weight: 0).save(in: store)
            let changes = Collected<ModelChanges<POTagged>>()
            let stream = try store.changes(of: POTagged.self) { changes.add($0) }
            let records = [
                POTagged(label: "quote \" backslash \\ slash / tab \t newline \n", blob: Data([0, 1, 0xFE, 0xFF]), weight: 1.5),
                POTagged(label: "ünïcødé 🦊 \u{1}\u{1F}", blob: Data("\\x00".utf8), weight: -0.000_001),
                POTagged(label: "big", blob: Data(repeating: 7, count: 300), weight: 1e300),
            ]
            _ = try await POTagged.save(records, in: store)
            #expect(await eventually { changes.current.count == 1 })
            for record in records {
                let key: [String: any SQLValueConvertible] = ["label": record.label, "blob": record.blob, "weight": record.weight]
                #expect(try await POTagged.find(key: key, in: store) == record)
            }
            let expected: [[SQLValue]] = records.map { [.text($0.label), .blob($0.blob), .real($0.weight)] }
            // (In key order: a server writes a batch in key order.)
            #expect(Set(changes.current.first?.inserted ?? []) == Set(expected))
            #expect(changes.current.first?.inserted.count == expected.count)
            stream.cancel()
        }

        /// A key column named past ASCII: its triggers are found current (not made again and
        /// reported unknown on every tick), and its keys arrive.
        @Test func aKeyColumnNamedPastASCIIIsRecordedOnceWithItsKeys() async throws {
            let test = try BackendStore(.postgres)
            let store = test.store
            try await POAccented(prénom: "Zoë", note: "seed").save(in: store)
            let changes = Collected<ModelChanges<POAccented>>()
            let stream = try store.changes(of: POAccented.self) { changes.add($0) }
            try await POAccented(prénom: "Chloé", note: "a").save(in: store)
            #expect(await eventually { changes.current.count == 1 })
            try await Task.sleep(nanoseconds: 1_500_000_000)  // the feed's timer runs a few times
            #expect(changes.current.count == 1, "\(changes.current.map(\.keysAreKnown))")
            #expect(changes.current.first?.inserted == [[.text("Chloé")]])
            stream.cancel()
        }

        /// A schema whose name holds a % and a quote: writes to its observed tables and their
        /// observation both work (the name is text inside the triggers' format strings).
        @Test func aSchemaNamedWithAPercentAndAQuoteIsObservedAndWritten() async throws {
            var server = try PostgresConfiguration(url: try #require(Backend.postgresURL))
            let schema = "t_%'s_" + UUID().uuidString.prefix(8).lowercased()
            server.schema = schema
            let store = try ModelStore(postgres: server)
            defer {
                try? store.rawExecute("DROP SCHEMA \"\(schema)\" CASCADE")
                try? store.close()
            }
            try await POEvent(id: 0, note: "seed").save(in: store)
            let changes = Collected<ModelChanges<POEvent>>()
            let stream = try store.changes(of: POEvent.self) { changes.add($0) }
            try await POEvent(id: 1, note: "written").save(in: store)
            _ = try await POEvent.delete(key: 0, in: store)
            #expect(await eventually { changes.current.count == 2 })
            #expect(inserted(changes.current) == [1])
            stream.cancel()
        }

        /// TRUNCATE fires no row trigger: another tool's TRUNCATE reaches live queries and
        /// streams as a change whose keys are unknown, never as nothing.
        @Test func aTruncateReachesObserversAsAChangeOfUnknownRecords() async throws {
            let test = try BackendStore(.postgres)
            let store = test.store
            _ = try await POEvent.save((1...5).map { POEvent(id: $0, note: "n") }, in: store)
            let counts = Collected<Int>()
            let token = store.observe({ try POEvent.count(in: store) }) { result in
                if case .success(let count) = result { counts.add(count) }
            }
            let changes = Collected<ModelChanges<POEvent>>()
            let stream = try store.changes(of: POEvent.self) { changes.add($0) }
            #expect(await eventually { counts.current.last == 5 })
            let other = try test.another()
            defer { try? other.close() }
            try await POLater(id: 1).save(in: store)
            let laterChanges = Collected<ModelChanges<POLater>>()
            let laterStream = try store.changes(of: POLater.self) { laterChanges.add($0) }
            try other.rawExecute("TRUNCATE \"POEvent\"")
            #expect(await eventually { counts.current.last == 0 }, "\(counts.current)")
            #expect(await eventually { changes.current.contains { !$0.keysAreKnown } })
            // Another table's stream hears nothing of it.
            try await Task.sleep(nanoseconds: 300_000_000)
            #expect(laterChanges.current.isEmpty)
            laterStream.cancel()
            stream.cancel()
            token.cancel()
        }

        /// A role that may write a model's table but not the change log (another service's, a
        /// tool's): its writes are recorded (the trigger's function runs with its owner's
        /// rights), never refused for want of rights on the log.
        @Test func aRoleWithoutRightsOnTheLogStillWritesAndIsRecorded() async throws {
            let test = try BackendStore(.postgres)
            let store = test.store
            let schema = try #require(test.schemaName)
            try await POEvent(id: 0, note: "seed").save(in: store)
            let changes = Collected<ModelChanges<POEvent>>()
            let stream = try store.changes(of: POEvent.self) { changes.add($0) }
            let role = try TestRole("r_", schema: schema, admin: store)
            try store.rawExecute("GRANT SELECT, INSERT, UPDATE ON \"\(schema)\".\"POEvent\" TO \"\(role.name)\"")
            let writer = try role.store(schema: schema)
            defer { try? writer.close() }
            try await POEvent(id: 7, note: "by another role").save(in: writer)
            #expect(await eventually { inserted(changes.current) == [7] }, "\(inserted(changes.current))")
            // …and it cannot attach the log's function to a table of its own to write changes
            // of its choosing into the log.
            try store.rawExecute("GRANT CREATE ON SCHEMA \"\(schema)\" TO \"\(role.name)\"")
            try writer.rawExecute("CREATE TABLE \"Spoof\" (id bigint PRIMARY KEY)")
            #expect(throws: ModelStoreError.self) {
                try writer.rawExecute(
                    "CREATE TRIGGER spoof AFTER INSERT ON \"Spoof\" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION modelstore_record_change('id')"
                )
            }
            stream.cancel()
        }

        /// A table the feed may not give triggers (another role owns it) never holds up the
        /// others: their changes still arrive, and observing that table says why it cannot.
        @Test func aTableTheFeedCannotRecordDoesNotSilenceTheOthers() async throws {
            let test = try BackendStore(.postgres)
            let schema = try #require(test.schemaName)
            let role = try TestRole("o_", schema: schema, admin: test.store)
            try test.store.rawExecute("GRANT CREATE ON SCHEMA \"\(schema)\" TO \"\(role.name)\"")
            let observer = try role.store(schema: schema)  // makes (and owns) the log and POEvent's table
            defer { try? observer.close() }
            try await POEvent(id: 0, note: "seed").save(in: observer)
            let changes = Collected<ModelChanges<POEvent>>()
            let stream = try observer.changes(of: POEvent.self) { changes.add($0) }
            let counts = Collected<Int>()
            let later = observer.observe({ try POLater.count(in: observer) }) { result in
                if case .success(let count) = result { counts.add(count) }
            }
            #expect(await eventually { counts.current == [0] })
            try await POLater(id: 1).save(in: test.store)  // made, and owned, by another role
            try test.store.rawExecute("GRANT SELECT ON \"\(schema)\".\"POLater\" TO \"\(role.name)\"")
            try await Task.sleep(nanoseconds: 1_500_000_000)  // the feed's timer runs a few times
            try await POEvent(id: 1, note: "after").save(in: observer)
            #expect(await eventually(5) { inserted(changes.current) == [1] }, "\(inserted(changes.current))")
            #expect {
                _ = try observer.changes(of: POLater.self) { _ in }
            } throws: { error in
                let message = (error as? ModelStoreError)?.message ?? ""
                return message.contains("POLater") && message.contains("triggers")
            }
            stream.cancel()
            later.cancel()
        }

        /// A live query's first fetch runs before the feed opens; a commit between the two is in
        /// no record the feed reads, so the feed's opening makes the query fetch again.
        @Test func aCommitBetweenTheFirstFetchAndTheFeedsOpeningIsNotMissed() async throws {
            let test = try BackendStore(.postgres)
            let store = test.store
            try await POEvent(id: 0, note: "seed").save(in: store)
            try store.changes(of: POEvent.self) { _ in }.cancel()  // the table's triggers made; the feed closes
            #expect(await eventually { store.changeTracker.activeFeed == nil })
            let other = try test.another()
            defer { try? other.close() }
            let once = Locked(false)
            let counts = Collected<Int>()
            let token = store.observe({ () throws -> Int in
                let count = try POEvent.count(in: store)
                if !once.current {
                    once.withLock { $0 = true }
                    try POEvent(id: 1, note: "between the fetch and the feed").save(in: other)
                }
                return count
            }) { result in if case .success(let count) = result { counts.add(count) } }
            #expect(await eventually { counts.current.last == 2 }, "\(counts.current)")
            token.cancel()
        }

        /// Other writers of an observed table are never refused because of its triggers: a
        /// JSON value PostgreSQL's jsonb refuses (a NUL escape), a key column renamed behind the
        /// triggers' back, a role that may not make triggers saving while it observes.
        @Test func theTriggersNeverFailAnotherWritersStatement() async throws {
            let test = try BackendStore(.postgres)
            let store = test.store
            let schema = try #require(test.schemaName)
            try store.rawExecute("CREATE TABLE \"PODoc\" (id bigint PRIMARY KEY, body json NOT NULL)")
            try store.rawExecute(#"INSERT INTO "PODoc" VALUES (1, '{"s": "a\u0000b"}')"#)
            let changes = Collected<ModelChanges<PODoc>>()
            let stream = try store.changes(of: PODoc.self) { changes.add($0) }
            let other = try test.another()
            defer { try? other.close() }
            try other.rawExecute(#"INSERT INTO "PODoc" VALUES (2, '{"s": "c\u0000d"}')"#)
            try other.rawExecute(#"UPDATE "PODoc" SET id = 3 WHERE id = 1"#)
            try other.rawExecute(#"DELETE FROM "PODoc" WHERE id = 2"#)
            #expect(await eventually { changes.current.count == 3 }, "\(changes.current.count)")
            // A key column renamed: the write goes through, reported as a change of unknown rows.
            try other.rawExecute(#"ALTER TABLE "PODoc" RENAME COLUMN id TO ident"#)
            try other.rawExecute(#"INSERT INTO "PODoc" VALUES (4, '{}')"#)
            #expect(await eventually { changes.current.contains { !$0.keysAreKnown } })
            stream.cancel()
            // A role that may write POEvent but not make triggers on it saves while it observes.
            try await POEvent(id: 0, note: "seed").save(in: store)
            let role = try TestRole("w_", schema: schema, admin: store)
            try store.rawExecute("GRANT SELECT, INSERT, UPDATE ON \"\(schema)\".\"POEvent\" TO \"\(role.name)\"")
            let writer = try role.store(schema: schema)
            defer { try? writer.close() }
            let refused = Collected<Bool>()
            let token = writer.observe({ try POEvent.count(in: writer) }) { result in
                if case .failure = result { refused.add(true) }
            }
            #expect(await eventually { !refused.current.isEmpty })
            try await POEvent(id: 1, note: "saved while observing").save(in: writer)
            #expect(try await POEvent.count(in: store) == 2)
            token.cancel()
        }

        /// Starting to observe inside a transaction that already wrote an observed table does
        /// not wait for that very transaction (the feed looks for its log before it locks it).
        @Test func observingInsideATransactionThatWroteTheTableDoesNotWaitForItself() async throws {
            let test = try BackendStore(.postgres)
            let store = test.store
            try await POEvent(id: 0, note: "seed").save(in: store)
            try store.changes(of: POEvent.self) { _ in }.cancel()  // the log and triggers made; the feed closes
            #expect(await eventually { store.changeTracker.activeFeed == nil })
            let started = Date()
            let changes = Collected<ModelChanges<POEvent>>()
            let stream = try await offThePool {
                try store.transaction { () throws -> ObservationToken in
                    try POEvent(id: 1, note: "in the block").save(in: store)
                    return try store.changes(of: POEvent.self) { changes.add($0) }
                }
            }
            // A transaction waiting for itself ends only at the lock timeout (the busy timeout,
            // 5 s), with an error; beside the rest of the suite an opening takes up to ~3 s.
            #expect(Date().timeIntervalSince(started) < 4.9, "took \(Date().timeIntervalSince(started)) s")
            try await POEvent(id: 2, note: "after").save(in: store)
            #expect(await eventually { inserted(changes.current).contains(2) })
            stream.cancel()
        }

        /// A table dropped and made again behind the store's back, and given its triggers again
        /// by another process's feed before this one looked: still noticed (by the table's
        /// identity, not its name), so what was written in between reaches live queries.
        @Test func aTableMadeAgainAndRecordedByAnotherFeedIsStillNoticed() async throws {
            let test = try BackendStore(.postgres)
            let store = test.store
            try await POEvent(id: 0, note: "seed").save(in: store)
            let counts = Collected<Int>()
            let token = store.observe({ try POEvent.count(in: store) }) { result in
                if case .success(let count) = result { counts.add(count) }
            }
            #expect(await eventually { counts.current.last == 1 })
            let other = try test.another()
            defer { try? other.close() }
            // In one transaction, as another process's feed would leave it: the table made again,
            // rows written before its triggers, and the triggers made again.
            let names = ChangeLogNames.triggers
            try await other.transaction {
                try other.rawExecute("DROP TABLE \"POEvent\"")
                try other.rawExecute("CREATE TABLE \"POEvent\" (id bigint PRIMARY KEY, note text NOT NULL)")
                try other.rawExecute("INSERT INTO \"POEvent\" VALUES (5, 'in the gap'), (6, 'in the gap')")
                let function = "EXECUTE FUNCTION \(ChangeLogNames.function)('id')"
                try other.rawExecute(
                    "CREATE TRIGGER \(names[0]) AFTER INSERT ON \"POEvent\" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT \(function)"
                )
                try other.rawExecute(
                    "CREATE TRIGGER \(names[2]) AFTER DELETE ON \"POEvent\" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT \(function)"
                )
            }
            #expect(await eventually { counts.current.last == 2 }, "\(counts.current)")
            token.cancel()
        }

        /// Changes a replication apply (or any session in replica mode) makes are recorded:
        /// the triggers are enabled always.
        @Test func changesInReplicaModeAreRecorded() async throws {
            let (test, _, changes, stream) = try await streamingEvents()
            let other = try test.another()
            defer { try? other.close() }
            try await other.transaction {
                try other.rawExecute("SET LOCAL session_replication_role = replica")
                try other.rawExecute("INSERT INTO \"POEvent\" VALUES (8, 'replicated')")
            }
            #expect(await eventually { inserted(changes.current) == [8] }, "\(inserted(changes.current))")
            stream.cancel()
        }
    }
#endif
