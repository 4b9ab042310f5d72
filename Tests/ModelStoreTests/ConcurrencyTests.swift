import Foundation
import Testing
@testable import ModelStore

/// One column per writer thread, so the expected end state of overlapping saves is exact.
private struct Tally: StoredModel, Equatable {
    var id: Int
    var w0: Int?
    var w1: Int?
    var w2: Int?
    var w3: Int?
    var w4: Int?
    var w5: Int?
    static let primaryKey = ["id"]

    init(id: Int, writer: Int? = nil, value: Int? = nil) {
        self.id = id
        guard let writer else { return }
        switch writer {
        case 0: w0 = value
        case 1: w1 = value
        case 2: w2 = value
        case 3: w3 = value
        case 4: w4 = value
        default: w5 = value
        }
    }

    func value(of writer: Int) -> Int? {
        [w0, w1, w2, w3, w4, w5][writer]
    }
}

// SQLite-only: many stores and threads on one SQLite file.
@Suite("Concurrency")
struct ConcurrencyTests {
    @Test(arguments: StoreKind.allCases)
    func threadsSavingAndReadingTheSameKeysEndWithExactlyTheExpectedRecords(kind: StoreKind) throws {
        let test = try TestStore(kind)
        let writers = 6
        let keys = 20
        let rounds = 150
        let problems = Locked<[String]>([])
        onThreads(writers + 2) { thread in
            do {
                if thread < writers {
                    for round in 0..<rounds {
                        let key = (round * 7 + thread) % keys
                        let model = Tally(id: key, writer: thread, value: round)
                        if round % 3 == 0 {
                            model.save(in: test.store) { _ in }
                        } else {
                            try model.save(in: test.store)
                            // A thread always reads its own completed write.
                            if try Tally.find(key: key, in: test.store)?.value(of: thread) != round {
                                problems.withLock { $0.append("writer \(thread) lost round \(round)") }
                            }
                        }
                    }
                } else {
                    for round in 0..<rounds {
                        _ = try Tally.find(key: round % keys, in: test.store)
                        _ = try Tally.findAll(in: test.store)
                        _ = try Tally.count(in: test.store)
                    }
                }
            } catch {
                problems.withLock { $0.append("thread \(thread): \(error)") }
            }
        }
        // Drain fire-and-forget saves: a write barrier runs after all of them.
        try test.store.transaction {}
        #expect(problems.current.isEmpty)
        var expected: [Int: Tally] = [:]
        for thread in 0..<writers {
            for round in 0..<rounds {
                let key = (round * 7 + thread) % keys
                var tally = expected[key] ?? Tally(id: key)
                let update = Tally(id: key, writer: thread, value: round)
                tally = Tally(
                    id: key, w0: update.w0 ?? tally.w0, w1: update.w1 ?? tally.w1, w2: update.w2 ?? tally.w2,
                    w3: update.w3 ?? tally.w3, w4: update.w4 ?? tally.w4, w5: update.w5 ?? tally.w5)
                expected[key] = tally
            }
        }
        let stored = try Tally.findAll(in: test.store)
        #expect(stored == expected.keys.sorted().map { expected[$0]! })
    }
}

private extension Tally {
    init(id: Int, w0: Int?, w1: Int?, w2: Int?, w3: Int?, w4: Int?, w5: Int?) {
        self.id = id
        self.w0 = w0
        self.w1 = w1
        self.w2 = w2
        self.w3 = w3
        self.w4 = w4
        self.w5 = w5
    }
}
