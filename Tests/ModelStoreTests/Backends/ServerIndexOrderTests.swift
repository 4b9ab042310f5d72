#if PostgreSQL
    import Foundation
    import Testing

    @testable import ModelStore

    /// On a server, the orders ModelStore asks for (NULL first ascending, text by its bytes) are
    /// the orders of the indexes it creates, so an ordered page reads through an index instead
    /// of sorting every matching row. Before, `ORDER BY "price" NULLS FIRST` met an index in
    /// NULL-last order and 1,000 pages took 5.9 times as long as postgres-nio's.
    @Suite struct ServerIndexOrderTests {
        struct Stocked: StoredModel {
            var id: Int64
            var name: String
            var price: Double
            var rank: Int64?
            static let primaryKey = ["id"]
            static let indexes: [TableIndex<Stocked>] = [.on(\.price), .on(\.name), .on(\.rank)]
        }

        /// The server's plan for `sql` (a statement the store sent, `$n` parameters) run with
        /// `values`, one node per line.
        func plan(_ sql: String, _ values: [String], schema: String?) throws -> String {
            try runPsql(
                url: Backend.postgresURL!, schema: schema,
                "PREPARE ordered AS \(sql); EXPLAIN EXECUTE ordered(\(values.joined(separator: ", ")))")
        }

        /// The server SQL of the statement the store last ran that returned rows and contains
        /// every piece of `pieces`.
        func sentSQL(_ pieces: String...) throws -> String {
            let found = RemoteStatement.largestHeld.withLock { held in
                held.keys.filter { sql in pieces.allSatisfy { sql.contains($0) } }
            }
            return try #require(found.first, "no statement containing \(pieces) was sent")
        }

        @Test func orderedPagesOnIndexedColumnsReadThroughTheirIndexesWithoutSorting() throws {
            guard Backend.available.contains(.postgres) else { return }
            let owner = try BackendStore(.postgres)
            let store = owner.store
            var items: [Stocked] = []
            for id in 1...5_000 {
                let rank: Int64? = id % 10 == 0 ? nil : Int64(id % 977)
                items.append(Stocked(id: Int64(id), name: "item \(id * 7919 % 5_000)", price: Double(id * 31 % 5_000), rank: rank))
            }
            _ = try Stocked.save(items, in: store)
            try runPsql(url: Backend.postgresURL!, schema: owner.schemaName, "ANALYZE \"Stocked\"")

            let prices: [Double] = items.map(\.price).filter { $0 > 10 }.sorted()
            let names: [String] = items.map(\.name).sorted()
            let ranks: [Int64] = items.compactMap(\.rank).sorted(by: >)
            let byPrice = try Stocked.filter(\.price > 10).order(.ascending(\.price)).limit(50, offset: 100).findAll(in: store)
            #expect(byPrice.map(\.price) == Array(prices[100..<150]))
            let byName = try Stocked.all().order(.ascending(\.name)).limit(20).findAll(in: store)
            #expect(byName.map(\.name) == Array(names[0..<20]))
            let byRank = try Stocked.all().order(.descending(\.rank)).limit(20).findAll(in: store)
            #expect(byRank.map(\.rank) == ranks[0..<20].map { Optional($0) })
            let byKey = try Stocked.all().order(.descending(\.id)).limit(20).findAll(in: store)
            #expect(byKey.map(\.id) == Array((Int64(4_981)...5_000).reversed()))

            let plans = [
                try plan(try sentSQL("\"Stocked\"", "ORDER BY \"price\""), ["10", "50", "100"], schema: owner.schemaName),
                try plan(try sentSQL("\"Stocked\"", "ORDER BY \"name\""), ["20", "0"], schema: owner.schemaName),
                try plan(try sentSQL("\"Stocked\"", "ORDER BY \"rank\" DESC"), ["20", "0"], schema: owner.schemaName),
                try plan(try sentSQL("\"Stocked\"", "ORDER BY \"id\" DESC"), ["20", "0"], schema: owner.schemaName),
            ]
            for plan in plans {
                #expect(plan.contains("Index Scan"), "\(plan)")
                // An incremental sort of the key tie-breaker within equal prices is fine; a sort of
                // every matching row is what the index should save.
                let nodes = plan.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                let sorts = nodes.filter { $0.hasPrefix("Sort  (") || $0.hasPrefix("->  Sort  (") }
                #expect(sorts.isEmpty, "\(plan)")
            }
        }
    }
#endif
