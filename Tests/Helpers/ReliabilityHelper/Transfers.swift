#if PostgreSQL
    import Foundation
    import ModelStore
    import ModelStorePostgres
    import ReliabilityFixtures

    /// `transfers <url|schema|worker|form|seconds>`: on a PostgreSQL server, prints "ready", waits
    /// for a line, then for `seconds` moves 5 between two random accounts in the read-modify-write
    /// block the docs teach, through one call form (`sync`, `completion` or `async`), with a ledger
    /// record in the same transaction. Prints `acknowledged <n>` (calls that returned),
    /// `failed <code> <n>` for each error code, and "done".
    func transfers(_ argument: String) throws {
        let parts = argument.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        var server = try PostgresConfiguration(url: parts[0])
        server.schema = parts[1]
        let worker = Int(parts[2])!
        let form = parts[3]
        let seconds = Double(parts[4])!
        let store = try ModelStore(postgres: server)
        say("ready")
        _ = readLine()
        let deadline = Date().addingTimeInterval(seconds)
        var acknowledged = 0
        var failures: [String: Int] = [:]
        var serial = 0
        while Date() < deadline {
            serial += 1
            let from = Int64.random(in: Account.keys)
            var other = Int64.random(in: Account.keys)
            while other == from { other = Int64.random(in: Account.keys) }
            let to = other
            let ledger = Transfer(id: "w\(worker)-\(serial)", from: from, to: to, amount: 5)
            let block: @Sendable () throws -> Void = {
                var a = try Account.find(key: from, in: store)!
                var b = try Account.find(key: to, in: store)!
                a.balance -= 5
                b.balance += 5
                try a.save(in: store)
                try b.save(in: store)
                try ledger.save(in: store)
            }
            let result: Result<Void, any Error>
            switch form {
            case "completion":
                let done = DispatchSemaphore(value: 0)
                let box = ResultBox()
                store.transaction(block) { outcome in
                    box.result = outcome
                    done.signal()
                }
                done.wait()
                result = box.result!
            case "async":
                let done = DispatchSemaphore(value: 0)
                let box = ResultBox()
                Task {
                    do {
                        try await store.transaction(block)
                        box.result = .success(())
                    } catch {
                        box.result = .failure(error)
                    }
                    done.signal()
                }
                done.wait()
                result = box.result!
            default:
                result = Result { try store.transaction(block) }
            }
            switch result {
            case .success: acknowledged += 1
            case .failure(let error):
                failures[(error as? ModelStoreError)?.code.rawValue ?? "\(error)", default: 0] += 1
            }
        }
        say("acknowledged \(acknowledged)")
        for (code, count) in failures { say("failed \(code) \(count)") }
        try store.close()
        say("done")
    }

    /// A result handed from a completion handler or task to the waiting thread (which reads it
    /// only after the semaphore says it was written).
    final class ResultBox: @unchecked Sendable {
        var result: Result<Void, any Error>?
    }
#endif
