#if PostgreSQL
    import Foundation
    import Testing

    @testable import ModelStore

    /// Full-text search where the server differs from SQLite by name: what it refuses, and
    /// that its index serves a search (the shared suites check the answers on both backends).
    @Suite struct ServerSearchTests {
        struct Wide: StoredModel {
            var id: Int64
            var a: String
            var b: String
            var c: String
            var d: String
            var e: String
            static let primaryKey = ["id"]
            static let searchable: [SearchableText<Wide>] = [.text(\.a), .text(\.b), .text(\.c), .text(\.d), .text(\.e)]
        }

        struct Leaflet: StoredModel {
            var id: Int64
            var title: String
            var body: String?
            static let primaryKey = ["id"]
            static let searchable: [SearchableText<Leaflet>] = [.text(\.title, weight: 3), .text(\.body)]
        }

        @Test func fiveSearchablePropertiesAreRefusedByNameAndNothingIsWritten() throws {
            guard Backend.available.contains(.postgres) else { return }
            let test = try TestStore(Backend.postgres)
            let error = try #require(throws: ModelStoreError.self) {
                try Wide(id: 1, a: "a", b: "b", c: "c", d: "d", e: "e").save(in: test.store)
            }
            #expect(error.code == .unsupported)
            #expect(error.model == "Wide")
            #expect(error.message.contains("4"))
            #expect(try !test.tableNames().contains("Wide"))
            // SQLite indexes all five.
            let local = try TestStore(StoreKind.memory)
            try Wide(id: 1, a: "a", b: "b", c: "c", d: "d", e: "echo").save(in: local.store)
            #expect(try Wide.search("echo", in: local.store).map(\.model.id) == [1])
        }

        @Test func nearAndCaretAnswerOnSQLiteAndAreRefusedByNameOnTheServer() throws {
            guard Backend.available.contains(.postgres) else { return }
            for backend in [Backend.sqlite, .postgres] {
                let test = try TestStore(backend)
                try Leaflet.save(
                    [Leaflet(id: 1, title: "lemon tart", body: "sugar"), Leaflet(id: 2, title: "tart", body: "a lemon")], in: test.store)
                for query in ["NEAR(lemon tart)", "^lemon", "title: ^tart", "sugar NEAR(lemon tart, 2)"] {
                    if backend == .sqlite {
                        #expect(throws: Never.self) { _ = try Leaflet.search(.query(query), in: test.store) }
                    } else {
                        let error = try #require(throws: ModelStoreError.self) { try Leaflet.search(.query(query), in: test.store) }
                        #expect(error.code == .invalidQuery)
                        #expect(error.value == query)
                        #expect(error.message.contains(query.contains("NEAR") ? "NEAR" : "^"))
                    }
                }
            }
        }

        @Test func aSearchReadsThroughTheServersIndex() throws {
            guard Backend.available.contains(.postgres) else { return }
            let owner = try BackendStore(.postgres)
            let store = owner.store
            let leaflets = (1...4_000).map {
                Leaflet(id: Int64($0), title: "leaflet \($0)", body: $0 == 1_234 ? "the needle" : "common words only")
            }
            _ = try Leaflet.save(leaflets, in: store)
            try runPsql(url: Backend.postgresURL!, schema: owner.schemaName, "ANALYZE \"Leaflet\"")
            #expect(try Leaflet.count(where: .matches("needle"), in: store) == 1)
            let sql = try #require(
                RemoteStatement.largestHeld.withLock { held in
                    held.keys.first { $0.contains("@@") && $0.contains("count(") && $0.contains("\"Leaflet\"") }
                })
            let plan = try runPsql(
                url: Backend.postgresURL!, schema: owner.schemaName, "PREPARE searched AS \(sql); EXPLAIN EXECUTE searched('needle')")
            #expect(plan.contains("Bitmap Index Scan"), "\(plan)")
            let hits = try Leaflet.search("needle", in: store)
            #expect(hits.map(\.model.id) == [1_234])
            #expect(hits.first?.snippet(\.body) == "the [needle]")
        }

        @Test func aTextTooLongForTheServersIndexIsRefusedByNameAndNothingIsWritten() throws {
            guard Backend.available.contains(.postgres) else { return }
            let test = try TestStore(Backend.postgres)
            try Leaflet(id: 1, title: "kept").save(in: test.store)
            // 40,000 distinct words of 32 letters: 1.4 MB in a tsvector, past the server's 1 MB.
            let pad = String(repeating: "q", count: 26)
            let long = (1...40_000).map { "w\($0)" + pad }.joined(separator: " ")
            let error = try #require(throws: ModelStoreError.self) {
                try Leaflet.save([Leaflet(id: 2, title: "new"), Leaflet(id: 3, title: "long", body: long)], in: test.store)
            }
            #expect(error.code == .unsupported)
            #expect(error.message.contains("1 MB"))
            #expect(error.message.contains("Leaflet"))
            #expect(try Leaflet.count(in: test.store) == 1)
        }

        struct EvenLeaflet: StoredModel {
            var id: Int64
            var title: String
            var body: String?
            static let primaryKey = ["id"]
            static let tableName = "Leaflet"
            static let searchable: [SearchableText<EvenLeaflet>] = [.text(\.title), .text(\.body)]
        }

        /// The server's index of `Leaflet` and what its comment says it indexes.
        func leafletIndexes(_ store: ModelStore) throws -> [[SQLValue]] {
            try store.rawRows(
                """
                SELECT c.oid::bigint, obj_description(c.oid, 'pg_class') FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                WHERE i.indrelid = to_regclass('"Leaflet"') AND strpos(pg_get_indexdef(c.oid), '-modelstore-') > 0
                """)
        }

        @Test func storesPreparingATableAtOnceMakeOneIndexAndAWeightChangeKeepsIt() async throws {
            guard Backend.available.contains(.postgres) else { return }
            let test = try TestStore(Backend.postgres)
            let stores = try (0..<4).map { _ in try test.another() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (offset, store) in stores.enumerated() {
                    group.addTask { try await Leaflet(id: Int64(offset), title: "racer \(offset)").save(in: store) }
                }
                try await group.waitForAll()
            }
            let made = try leafletIndexes(test.store)
            #expect(made.count == 1, "\(made)")
            #expect(try await Leaflet.count(where: .matches("racer"), in: test.store) == 4)
            // Another version weighs the title as the body: the same index serves it.
            let even = try test.later()
            #expect(try await EvenLeaflet.search("racer", in: even).count == 4)
            #expect(try leafletIndexes(even).first?.first == made.first?.first)
        }

        @Test func wordsAreSplitAndFoldedAsTheServerDocumentsIt() throws {
            guard Backend.available.contains(.postgres) else { return }
            let test = try TestStore(Backend.postgres)
            try Leaflet.save(
                [
                    Leaflet(id: 1, title: "Ωμέγα", body: "Straße"),
                    Leaflet(id: 2, title: "x²", body: "user@example.com foo-bar"),
                ], in: test.store)
            // Every combining accent goes on the server (SQLite keeps Greek ones).
            #expect(try Leaflet.search("ωμεγα", in: test.store).map(\.model.id) == [1])
            #expect(try Leaflet.search("straße", in: test.store).map(\.model.id) == [1])
            // Symbols separate words; punctuation does, as in SQLite.
            #expect(try Leaflet.search("x", in: test.store).map(\.model.id) == [2])
            #expect(try Leaflet.search("example AND bar", in: test.store).map(\.model.id) == [2])
            #expect(try Leaflet.search(.phrase("user example com"), in: test.store).map(\.model.id) == [2])
        }
    }
#endif
