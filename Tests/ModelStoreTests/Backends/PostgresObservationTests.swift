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

    private let observationServerConfigured = Backend.postgresURL != nil || Backend.postgresRequired

    private func inserted(_ changes: [ModelChanges<POEvent>]) -> [Int64] {
        changes.flatMap { (try? $0.keys(\.inserted, as: Int64.self)) ?? [] }
    }

    /// What only a server's change feed promises: its record survives a lost listener, commits
    /// in another order than their writes, other tools' TRUNCATE, and writers without rights
    /// on the log. (Observation itself runs on both backends: ObservationTests,
    /// ObservationAttackTests, and a helper process writing in anotherProcessesCommitIsNoticed.)
    @Suite("PostgreSQL: observing through the server's change log", .enabled(if: observationServerConfigured))
    struct PostgresObservationTests {
        /// The server ends the feed's listening connection; what another store commits while
        /// the feed has no connection arrives once it has one again, with keys, each once.
        @Test func aListenerWhoseConnectionTheServerEndsMissesNothing() async throws {
            let test = try BackendStore(.postgres)
            let store = test.store
            try await POEvent(id: 0, note: "seed").save(in: store)
            let changes = Collected<ModelChanges<POEvent>>()
            let stream = try store.changes(of: POEvent.self) { changes.add($0) }
            let other = try test.another()
            defer { try? other.close() }
            try await POEvent(id: 1, note: "before").save(in: other)
            #expect(await eventually { inserted(changes.current) == [1] })
            // The feed's connection: the one whose last statement read this schema's log.
            let schema = try #require(test.schemaName)
            let sql = """
                SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE pid <> pg_backend_pid()
                    AND query LIKE '%"\(schema)".\(ChangeLogNames.table)%' AND query NOT LIKE '%pg_terminate_backend%'
                """
            let ended = try await other.findAll(Done.self, sql: SQLStatement(stringLiteral: sql))
            #expect(ended.contains { $0.done }, "no feed connection found to end")
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
            let test = try BackendStore(.postgres)
            let store = test.store
            try await POEvent(id: 0, note: "seed").save(in: store)
            let changes = Collected<ModelChanges<POEvent>>()
            let stream = try store.changes(of: POEvent.self) { changes.add($0) }
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
            try other.rawExecute("TRUNCATE \"POEvent\"")
            #expect(await eventually { counts.current.last == 0 }, "\(counts.current)")
            #expect(await eventually { changes.current.contains { !$0.keysAreKnown } })
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
            let role = "r_" + schema
            try store.rawExecute("CREATE ROLE \"\(role)\" LOGIN")
            defer {
                try? store.rawExecute("DROP OWNED BY \"\(role)\"")
                try? store.rawExecute("DROP ROLE \"\(role)\"")
            }
            // (A store's connection makes its schema if missing, which needs CREATE on the database.)
            try store.rawExecute("DO $$ BEGIN EXECUTE format('GRANT CREATE ON DATABASE %I TO %I', current_database(), '\(role)'); END $$")
            try store.rawExecute("GRANT USAGE ON SCHEMA \"\(schema)\" TO \"\(role)\"")
            try store.rawExecute("GRANT SELECT, INSERT, UPDATE ON \"\(schema)\".\"POEvent\" TO \"\(role)\"")
            let url = try #require(Backend.postgresURL)
            let roleURL = url.replacingOccurrences(of: "://modelstore@", with: "://\(role)@")
            try #require(roleURL != url, "the test server's URL names no user modelstore: \(url)")
            var server = try PostgresConfiguration(url: roleURL)
            server.schema = schema
            let writer = try ModelStore(postgres: server)
            defer { try? writer.close() }
            try await POEvent(id: 7, note: "by another role").save(in: writer)
            #expect(await eventually { inserted(changes.current) == [7] }, "\(inserted(changes.current))")
            stream.cancel()
        }
    }
#endif
