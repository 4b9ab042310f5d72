// The async API end to end: saves and batches awaited, reads side by side with `async let`,
// a transaction, a live query that follows changes, and a stream over every record.
//
//   swift run async-tour
import Foundation
import ModelStore

struct Note: StoredModel, Equatable {
    var id: Int64
    var text: String
    var done: Bool
    var updatedAt: Date?
    static let primaryKey = ["id"]
    static let timestamps = Timestamps<Note>(updated: \.updatedAt)
}

@main
struct AsyncTour {
    // An async function, not top-level code: there, Swift picks each call's async form.
    static func main() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("async-tour-\(UUID().uuidString).sqlite").path
        let store = try ModelStore(path: path)

        // Writes, awaited: a save and a batch of 1,000.
        try await Note(id: 1, text: "buy milk", done: false).save(in: store)
        let batch = try await Note.save((2...1_001).map { Note(id: Int64($0), text: "note \($0)", done: $0 % 3 == 0) }, in: store)
        print("saved 1 note and a batch: \(batch.inserted) inserted")

        // Reads side by side: they run in parallel on pooled read connections.
        async let open = Note.count(where: \.done == false, in: store)
        async let finished = Note.count(where: \.done == true, in: store)
        async let first = Note.find(key: 1, in: store)
        print("open \(try await open), done \(try await finished), first: \(try await first?.text ?? "-")")

        // A live query: its first value now, and a new one after each change that matters.
        let liveOpen = Note.filter(\.done == false).filter(\.id <= 3).observe(in: store)
        var updates = liveOpen.makeAsyncIterator()
        print("open among the first three: \(try await updates.next()?.map(\.id) ?? [])")
        try await Note(id: 1, text: "buy milk", done: true).save(in: store)
        print("after finishing note 1:      \(try await updates.next()?.map(\.id) ?? [])")

        // A transaction: all or nothing.
        do {
            try await store.transaction {
                try Note(id: 2, text: "changed", done: true).save(in: store)
                throw CancellationError()
            }
        } catch is CancellationError {
            print("the transaction threw, so note 2 is still: \(try await Note.find(key: 2, in: store)?.text ?? "-")")
        }

        // A stream over every record, in chunks, without holding them all.
        var words = 0
        for try await note in Note.all().stream(in: store) { words += note.text.split(separator: " ").count }
        print("streamed every note: \(words) words")

        try store.close()
        try? FileManager.default.removeItem(atPath: path)
    }
}
