import Foundation
import Testing
@testable import ModelStore

private struct SequencedNote: StoredModel {
    var id: Int64?
    var text: String
    static let primaryKey = ["id"]
}

/// A key the server assigns comes from the table's sequence, which a store moves past keys
/// saved with values of their own. Moving it must never set it back under another writer.
@Suite("Server: assigned keys beside other writers")
struct ServerKeySequenceTests {
    @Test func keylessSavesNeverMakeAnotherWritersDefaultKeyClash() throws {
        guard Backend.available.contains(.postgres) else { return }
        let test = try TestStore(Backend.postgres)
        try SequencedNote(id: nil, text: "first").save(in: test.store)
        let other = try test.another()
        defer { try? other.close() }
        let failures = Collected<String>()
        let rounds = 300
        DispatchQueue.concurrentPerform(iterations: 2) { writer in
            for round in 0..<rounds {
                do {
                    if writer == 0 {
                        try SequencedNote(id: nil, text: "store \(round)").save(in: test.store)
                    } else {
                        // Another program's plain insert, taking its key from the column's default.
                        _ = try other.execute(#"INSERT INTO "SequencedNote" ("text") VALUES ('other')"#)
                    }
                } catch {
                    failures.add("writer \(writer), round \(round): \(error)")
                }
            }
        }
        #expect(failures.current.isEmpty, "\(failures.current.prefix(3))")
        #expect(try SequencedNote.count(in: test.store) == 1 + 2 * rounds - failures.current.count)
        // A key saved ahead of the sequence moves it on, so the next assigned key is past it.
        try SequencedNote(id: 1_000_000, text: "ahead").save(in: test.store)
        let next = try SequencedNote(id: nil, text: "after").saved(in: test.store)
        #expect(next.id == 1_000_001)
    }
}
