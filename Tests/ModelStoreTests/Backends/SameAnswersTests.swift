import Foundation
import Testing

@testable import ModelStore

/// Orderings answer alike on both backends: NULL sorts before every value ascending and after
/// every value descending (SQLite's rule, said explicitly on a server, which sorts NULL last),
/// and text sorts and compares by its bytes (SQLite's BINARY) even where the server's column
/// has a locale's collation.
@Suite struct SameAnswersTests {
    struct Shelf: StoredModel {
        var id: Int64
        var label: String
        var price: Double?
        static let primaryKey = ["id"]
    }

    static let shelves = [
        Shelf(id: 1, label: "apple", price: 2),
        Shelf(id: 2, label: "Banana", price: nil),
        Shelf(id: 3, label: "Éclair", price: 1),
        Shelf(id: 4, label: "apricot", price: nil),
        Shelf(id: 5, label: "Zucchini", price: 3),
    ]

    /// A store with the shelves; on a server the label column compares as a locale's
    /// dictionary would (ICU's root collation), so only an explicit byte order answers as SQLite.
    static func stocked(_ backend: Backend) throws -> BackendStore {
        let owner = try BackendStore(backend)
        _ = try Shelf.save(shelves, in: owner.store)
        if backend == .postgres {
            _ = try owner.store.execute("ALTER TABLE \"Shelf\" ALTER COLUMN label TYPE TEXT COLLATE \"und-x-icu\"")
        }
        return owner
    }

    enum Fruit: String, Codable, Sendable {
        case apple, apricot
    }

    /// A server names no columns of a result without rows; reading one value type from such a
    /// result threw there (found by review).
    @Test(arguments: Backend.available)
    func rawSQLReadsAValueTypeFromAnEmptyResultOnEveryBackend(_ backend: Backend) throws {
        let owner = try Self.stocked(backend)
        let store = owner.store
        #expect(try store.findAll(Fruit.self, sql: "SELECT \"label\" FROM \"Shelf\" WHERE \"id\" > \(100)").isEmpty)
        #expect(try store.findFirst(Fruit.self, sql: "SELECT \"label\" FROM \"Shelf\" WHERE \"id\" > \(100)") == nil)
        #expect(try store.findAll(Fruit.self, sql: "SELECT \"label\" FROM \"Shelf\" WHERE \"id\" = \(1)") == [.apple])
    }

    @Test(arguments: Backend.available)
    func nullSortsFirstAscendingAndLastDescendingOnEveryBackend(_ backend: Backend) throws {
        let owner = try Self.stocked(backend)
        let store = owner.store
        #expect(try Shelf.order(.ascending(\.price)).findAll(in: store).map(\.id) == [2, 4, 3, 1, 5])
        #expect(try Shelf.order(.descending(\.price)).findAll(in: store).map(\.id) == [5, 1, 3, 2, 4])
        // Paging through the NULLs neither skips nor repeats a record.
        var paged: [Int64] = []
        for page in 0..<3 {
            paged += try Shelf.order(.ascending(\.price)).limit(2, offset: page * 2).findAll(in: store).map(\.id)
        }
        #expect(paged == [2, 4, 3, 1, 5])
    }

    @Test(arguments: Backend.available)
    func textSortsAndComparesByItsBytesOnEveryBackend(_ backend: Backend) throws {
        let owner = try Self.stocked(backend)
        let store = owner.store
        // Bytes: upper case before lower case, and "É" (0xC3 0x89) after every ASCII letter.
        #expect(
            try Shelf.order(.ascending(\.label)).findAll(in: store).map(\.label) == ["Banana", "Zucchini", "apple", "apricot", "Éclair"])
        #expect(try Shelf.order(.descending(\.label)).findAll(in: store).map(\.id) == [3, 4, 1, 5, 2])
        #expect(try Shelf.filter(\.label < "a").findAll(in: store).map(\.id).sorted() == [2, 5])
        #expect(try Shelf.filter(\.label > "b").findAll(in: store).map(\.id) == [3])
        #expect(try Shelf.all().distinct(\.label, in: store) == ["Banana", "Zucchini", "apple", "apricot", "Éclair"])
        #expect(try Shelf.all().min(\.label, in: store) == "Banana")
        #expect(try Shelf.all().max(\.label, in: store) == "Éclair")
        // Swift's own order of the same strings, which both backends now give.
        #expect(Self.shelves.map(\.label).sorted() == ["Banana", "Zucchini", "apple", "apricot", "Éclair"])
    }

    @Test(.enabled(if: Backend.available.contains(.postgres)))
    func aServerColumnOfAnotherTypeIsRefusedInTheServersOwnWords() throws {
        let owner = try BackendStore(.postgres)
        try Shelf(id: 1, label: "a", price: 1).save(in: owner.store)
        _ = try owner.store.execute("ALTER TABLE \"Shelf\" ALTER COLUMN price TYPE TEXT")
        let other = try owner.another()
        defer { try? other.close() }
        #expect {
            _ = try Shelf.find(key: 1, in: other)
        } throws: { error in
            guard let error = error as? ModelStoreError else { return false }
            return error.code == .schemaMismatch && error.message.contains("of type text") && !error.message.contains("affinity")
                && error.suggestion?.contains("ALTER COLUMN") == true && error.model == "Shelf" && error.column == "price"
        }
    }

    /// Two stores in different schemas of one server, each preparing a table of the same name:
    /// the lock around table preparation is the schema's own, so the second never waits for
    /// the first's open transaction (it waited, and failed `.busy`, when the lock was keyed by
    /// the table name alone). PostgreSQL only: SQLite has no schemas, and one writer per file.
    @Test(.enabled(if: Backend.available.contains(.postgres)))
    func storesInOtherSchemasPreparingATableOfTheSameNameNeverWaitForEachOther() throws {
        let first = try BackendStore(.postgres)
        let second = try BackendStore(.postgres, configuration: ModelStore.Configuration(busyTimeout: 1))
        let prepared = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = Thread {
            // The first use of Shelf prepares its table inside this transaction, which then
            // stays open (and would hold a name-keyed lock) until released.
            try? first.store.transaction {
                try Shelf(id: 1, label: "held", price: nil).save(in: first.store)
                prepared.signal()
                _ = release.wait(timeout: .now() + 20)
            }
        }
        holder.start()
        defer { release.signal() }
        #expect(prepared.wait(timeout: .now() + 20) == .success)
        let started = Date()
        try Shelf(id: 1, label: "other schema", price: nil).save(in: second.store)
        #expect(Date().timeIntervalSince(started) < 1, "the second schema's first save waited for the first's transaction")
        #expect(try Shelf.find(key: 1, in: second.store)?.label == "other schema")
    }
}
