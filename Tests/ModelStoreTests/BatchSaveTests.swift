import Foundation
import Testing
@testable import ModelStore

/// A non-optional name that `encode(to:)` leaves out when empty, so one element of a batch
/// can break a NOT NULL constraint on insert.
private struct Strict: StoredModel, Equatable {
    var id: Int
    var name: String
    var note: String?
    static let primaryKey = ["id"]

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        if !name.isEmpty { try container.encode(name, forKey: .name) }
        try container.encodeIfPresent(note, forKey: .note)
    }
}

/// Identified locally by `localId`, by the server by (accountId, friendId).
private struct Contact: StoredModel, Equatable {
    var localId: String
    var accountId: Int
    var friendId: Int
    var nickname: String?
    var score: Int?
    static let primaryKey = ["localId"]
}

/// Saved into a table made with a CHECK constraint, so a value inside a batch can fail.
private struct Checked: StoredModel, Equatable {
    var id: Int64
    var name: String
    static let primaryKey = ["id"]
}

/// Saved into a table another tool made with column DEFAULTs.
private struct Defaulted: StoredModel, Equatable {
    var id: Int64
    var name: String?
    var label: String?
    static let primaryKey = ["id"]
}

/// A unique index besides the key, so elements of a batch can clash on it.
private struct Coded: StoredModel, Equatable {
    var id: Int64
    var code: String
    var note: String?
    static let primaryKey = ["id"]
    static let indexes: [TableIndex<Coded>] = [.unique(\.code)]
}

@Suite("Batch save")
struct BatchSaveTests {
    @Test(arguments: StoreKind.everywhere)
    func tenThousandWithHalfStoredAndInBatchDuplicatesEndExactlyAsExpected(kind: StoreKind) throws {
        let test = try TestStore(kind)
        // Stored: even keys 0…9998 with a name and a price.
        try Snack.save(stride(from: 0, to: 10_000, by: 2).map { Snack(snackId: Int64($0), name: "old\($0)", price: 1) }, in: test.store)
        // The batch: keys 0…9999 (half stored), carrying a taste; every key divisible by 7
        // appears again later carrying a size and a new taste.
        var batch = (0..<10_000).map { Snack(snackId: Int64($0), taste: "t\($0)") }
        batch += stride(from: 0, to: 10_000, by: 7).map { Snack(snackId: Int64($0), taste: "again\($0)", size: Double($0)) }
        test.resetSQL()
        let result = try Snack.save(batch, in: test.store)

        #expect(result.inserted == 5_000)
        #expect(result.updated == batch.count - 5_000)
        // No lookup per element: every data statement is the shape's upsert.
        #expect(!test.dataSQL.contains { $0.hasPrefix("SELECT") })
        #expect(Set(test.dataSQL).allSatisfy { $0.hasPrefix("INSERT INTO \"Snack\"") })

        let stored = try Snack.findAll(in: test.store)
        #expect(stored.count == 10_000)
        for snack in stored {
            let id = Int(snack.snackId)
            let expected = Snack(
                snackId: snack.snackId, name: id % 2 == 0 ? "old\(id)" : nil, taste: id % 7 == 0 ? "again\(id)" : "t\(id)",
                size: id % 7 == 0 ? Double(id) : nil, price: id % 2 == 0 ? 1 : nil)
            if snack != expected {
                Issue.record("key \(id): \(snack) != \(expected)")
                break
            }
        }
    }

    @Test(arguments: Backend.available) func aBatchThatFailsHalfwayLeavesTheStoreUnchanged(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try Strict.save((0..<100).map { Strict(id: $0, name: "kept\($0)") }, in: test.store)
        var batch = (0..<10_000).map { Strict(id: $0, name: "new\($0)", note: "n") }
        batch[5_000] = Strict(id: 5_000, name: "")  // a new key without its NOT NULL name
        let error = try #require(throws: ModelStoreError.self) { try Strict.save(batch, in: test.store) }
        #expect(error.code == .constraintViolation)
        #expect(error.message.contains("Element 5000 of a batch of 10000"))
        #expect(error.key == "id = 5000")
        #expect(try Strict.findAll(in: test.store) == (0..<100).map { Strict(id: $0, name: "kept\($0)") })
    }

    /// A value the database refuses in the middle of a batch (where a server writes hundreds
    /// of rows with one statement) names its own element and key, and nothing of the batch is
    /// saved — also inside a transaction block that goes on after catching the error.
    @Test(arguments: Backend.available) func aValueRefusedMidBatchNamesItsElementAndNothingIsSaved(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try test.rawExecute(#"CREATE TABLE "Checked" ("id" BIGINT PRIMARY KEY, "name" TEXT NOT NULL CHECK ("name" <> 'refused'))"#)
        try Checked(id: 1, name: "kept").save(in: test.store)
        for refused in [0, 1, 250, 499, 500, 599] {
            var batch = (0..<600).map { Checked(id: Int64($0), name: "new\($0)") }
            batch[refused].name = "refused"
            let error = try #require(throws: ModelStoreError.self) { try Checked.save(batch, in: test.store) }
            #expect(error.code == .constraintViolation, "\(error)")
            #expect(error.message.contains("Element \(refused) of a batch of 600"), "\(error.message)")
            #expect(error.key == "id = \(refused)")
            #expect(try Checked.findAll(in: test.store) == [Checked(id: 1, name: "kept")])
        }
        var batch = (0..<600).map { Checked(id: Int64($0), name: "new\($0)") }
        batch[300].name = "refused"
        try test.store.transaction {
            #expect(throws: ModelStoreError.self) { try Checked.save(batch, in: test.store) }
            try Checked(id: 1_000, name: "after").save(in: test.store)
        }
        #expect(try Checked.findAll(in: test.store) == [Checked(id: 1, name: "kept"), Checked(id: 1_000, name: "after")])
    }

    /// An element that leaves an optional property out (nil) is inserted with the column's
    /// DEFAULT, as a single save inserts it — also beside elements that carry it, which a
    /// server writes with one multi-row statement.
    @Test(arguments: Backend.available)
    func aBatchElementLeavingAColumnOutGetsItsDefaultAsASingleSaveDoes(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try test.rawExecute(
            #"CREATE TABLE "Defaulted" ("id" BIGINT PRIMARY KEY, "name" TEXT DEFAULT 'unnamed', "label" TEXT NOT NULL DEFAULT 'none')"#)
        try Defaulted(id: 0).save(in: test.store)
        let batch = [Defaulted(id: 1, name: "a", label: "x"), Defaulted(id: 2), Defaulted(id: 3, name: "c", label: "z")]
        let result = try Defaulted.save(batch, in: test.store)
        #expect(result.inserted == 3)
        #expect(
            try Defaulted.findAll(in: test.store) == [
                Defaulted(id: 0, name: "unnamed", label: "none"), Defaulted(id: 1, name: "a", label: "x"),
                Defaulted(id: 2, name: "unnamed", label: "none"), Defaulted(id: 3, name: "c", label: "z"),
            ])
    }

    /// A batch whose elements clash on a unique index (with each other, and with stored
    /// records), over several of a server's 500-row statements, ends as the same elements
    /// saved one at a time end, with the same counts.
    @Test(arguments: Backend.available) func aBatchClashingOnAUniqueIndexEndsAsSavingItsElementsOneByOne(_ backend: Backend) throws {
        func batch() -> [Coded] {
            (0..<1_200).map { index in
                Coded(id: Int64(index % 1_100), code: "c\((index * 7) % 1_150)", note: index % 3 == 0 ? nil : "n\(index)")
            }
        }
        func stored() -> [Coded] { (0..<50).map { Coded(id: Int64(2_000 + $0), code: "c\($0 * 20)", note: "stored") } }
        let one = try TestStore(backend)
        try Coded.save(stored(), in: one.store)
        var expected = BatchSaveOutcome(inserted: 0, updated: 0)
        var oneByOne: Result<[Coded], ModelStoreError>
        do {
            try one.store.transaction {
                for element in batch() { expected.count(try element.save(in: one.store)) }
            }
            oneByOne = .success(try Coded.findAll(in: one.store))
        } catch let error as ModelStoreError {
            oneByOne = .failure(error)
        }
        let all = try TestStore(backend)
        try Coded.save(stored(), in: all.store)
        do {
            let result = try Coded.save(batch(), in: all.store)
            let records = try Coded.findAll(in: all.store)
            #expect(records == (try? oneByOne.get()), "batch \(records.count) records")
            #expect(result.inserted == expected.inserted && result.updated == expected.updated, "\(result) vs \(expected)")
        } catch let error as ModelStoreError {
            guard case .failure(let single) = oneByOne else {
                Issue.record("the batch failed where one by one succeeded: \(error)")
                return
            }
            #expect(error.code == single.code, "\(error) vs \(single)")
            #expect(try Coded.findAll(in: all.store) == stored().sorted { $0.id < $1.id })
        }
    }

    /// Every batch size from 0 to 20, with keys drawn from a small range so duplicates,
    /// stored keys and new keys mix: the result equals merging in array order.
    @Test(arguments: Backend.available) func everySmallBatchMergesInArrayOrder(_ backend: Backend) throws {
        for size in 0...20 {
            let test = try TestStore(backend)
            var expected: [Int64: Snack] = [:]
            for id in stride(from: 0, to: 12, by: 3) {
                let stored = Snack(snackId: Int64(id), name: "stored", price: Double(id))
                try stored.save(in: test.store)
                expected[stored.snackId] = stored
            }
            var batch: [Snack] = []
            for index in 0..<size {
                let id = Int64((index * 5) % 12)
                batch.append(
                    index % 2 == 0
                        ? Snack(snackId: id, name: "b\(index)") : Snack(snackId: id, taste: "t\(index)", price: nil))
            }
            let before = Set(expected.keys)
            let result = try Snack.save(batch, in: test.store)
            for snack in batch {
                var merged = expected[snack.snackId] ?? Snack(snackId: snack.snackId)
                merged.name = snack.name ?? merged.name
                merged.taste = snack.taste ?? merged.taste
                merged.price = snack.price ?? merged.price
                merged.tags = snack.tags
                expected[snack.snackId] = merged
            }
            #expect(try Snack.findAll(in: test.store) == expected.keys.sorted().map { expected[$0]! }, "size \(size)")
            #expect(result.inserted == Set(batch.map(\.snackId)).subtracting(before).count, "size \(size)")
            #expect(result.inserted + result.updated == size)
        }
    }

    @Test(arguments: Backend.available) func matchKeysUpdateTheRecordWithTheSameSharedAndVaryingValues(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Contact.save(
            [
                Contact(localId: "a", accountId: 1, friendId: 10, nickname: "Ann", score: 1),
                Contact(localId: "b", accountId: 1, friendId: 11, nickname: "Bob"),
                Contact(localId: "c", accountId: 2, friendId: 10, nickname: "Other account's Ann"),
            ], in: test.store)
        test.resetSQL()
        let result = try Contact.save(
            [
                Contact(localId: "x1", accountId: 1, friendId: 10, score: 5),  // updates "a", keeps its key
                Contact(localId: "x2", accountId: 1, friendId: 12, nickname: "Cy"),  // new
                Contact(localId: "x3", accountId: 1, friendId: 12, score: 7),  // merges into the new one
            ], matching: MatchKeys(shared: [\.accountId], varying: [\.friendId]), in: test.store)
        #expect(result == BatchSaveOutcome(inserted: 1, updated: 2))
        #expect(test.dataSQL.filter { $0.hasPrefix("SELECT") }.count == 1)
        let stored = try Contact.order(.ascending(\.localId)).findAll(in: test.store)
        #expect(
            stored == [
                Contact(localId: "a", accountId: 1, friendId: 10, nickname: "Ann", score: 5),
                Contact(localId: "b", accountId: 1, friendId: 11, nickname: "Bob"),
                Contact(localId: "c", accountId: 2, friendId: 10, nickname: "Other account's Ann"),
                Contact(localId: "x2", accountId: 1, friendId: 12, nickname: "Cy", score: 7),
            ])
    }

    @Test(arguments: Backend.available) func matchKeysFindStoredRecordsInChunksNotPerElement(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Contact.save((0..<3_000).map { Contact(localId: "s\($0)", accountId: 1, friendId: $0) }, in: test.store)
        test.resetSQL()
        let batch = (0..<5_000).map { Contact(localId: "n\($0)", accountId: 1, friendId: $0, score: $0) }
        let result = try Contact.save(batch, matching: MatchKeys(shared: [\.accountId], varying: [\.friendId]), in: test.store)
        #expect(result == BatchSaveOutcome(inserted: 2_000, updated: 3_000))
        let lookups = test.dataSQL.filter { $0.hasPrefix("SELECT") }.count
        #expect(lookups >= 1 && lookups <= 10)
        #expect(try Contact.count(in: test.store) == 5_000)
        #expect(try Contact.find(key: "s2999", in: test.store)?.score == 2999)
        #expect(try Contact.find(key: "n3000", in: test.store)?.score == 3000)
    }

    @Test(arguments: Backend.available) func severalVaryingPropertiesMatchAsATuple(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Contact(localId: "a", accountId: 1, friendId: 1, nickname: "one-one").save(in: test.store)
        try Contact(localId: "b", accountId: 2, friendId: 1, nickname: "two-one").save(in: test.store)
        let result = try Contact.save(
            [
                Contact(localId: "x", accountId: 2, friendId: 1, score: 9), Contact(localId: "y", accountId: 1, friendId: 2),
            ], matching: MatchKeys(varying: [\.accountId, \.friendId]), in: test.store)
        #expect(result == BatchSaveOutcome(inserted: 1, updated: 1))
        #expect(try Contact.find(key: "b", in: test.store)?.score == 9)
        #expect(try Contact.exists(key: "y", in: test.store))
    }

    @Test(arguments: Backend.available) func sharedMatchValuesThatDifferAcrossTheBatchAreRefused(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let error = try #require(throws: ModelStoreError.self) {
            try Contact.save(
                [
                    Contact(localId: "a", accountId: 1, friendId: 1), Contact(localId: "b", accountId: 2, friendId: 2),
                ], matching: MatchKeys(shared: [\.accountId], varying: [\.friendId]), in: test.store)
        }
        #expect(error.code == .invalidQuery)
        #expect(error.column == "accountId")
        #expect(error.message.contains("Element 1"))
        #expect(try Contact.count(in: test.store) == 0)
    }

    @Test(arguments: Backend.available) func matchKeysThatFitSeveralStoredRecordsAreAmbiguous(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Contact.save(
            [Contact(localId: "a", accountId: 1, friendId: 1), Contact(localId: "b", accountId: 1, friendId: 1)], in: test.store)
        let error = try #require(throws: ModelStoreError.self) {
            try Contact.save(
                [Contact(localId: "z", accountId: 1, friendId: 1, score: 1)],
                matching: MatchKeys(varying: [\.friendId]), in: test.store)
        }
        #expect(error.code == .ambiguousMatch)
    }

    @Test(arguments: Backend.available) func anEmptyBatchDoesNothing(_ backend: Backend) throws {
        let test = try TestStore(backend)
        #expect(try Snack.save([], in: test.store) == BatchSaveOutcome(inserted: 0, updated: 0))
        #expect(
            try Contact.save([], matching: MatchKeys(varying: [\.friendId]), in: test.store) == BatchSaveOutcome(inserted: 0, updated: 0))
    }

    @Test(arguments: Backend.available) func threeFormsOfBatchSave(_ backend: Backend) async throws {
        let test = try TestStore(backend)
        #expect(try await Snack.save([Snack(snackId: 1), Snack(snackId: 2)], in: test.store).inserted == 2)
        let result: Result<BatchSaveOutcome, ModelStoreError> = await withCheckedContinuation { continuation in
            Snack.save([Snack(snackId: 2, name: "b"), Snack(snackId: 3)], in: test.store) { continuation.resume(returning: $0) }
        }
        #expect(try result.get() == BatchSaveOutcome(inserted: 1, updated: 1))
        let matched = try await Contact.save(
            [Contact(localId: "a", accountId: 1, friendId: 1)], matching: MatchKeys(varying: [\.friendId]), in: test.store)
        #expect(matched.inserted == 1)
        #expect(try await Snack.count(in: test.store) == 3)
    }
}
