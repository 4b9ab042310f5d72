#if PostgreSQL
    import Foundation
    import ModelStore
    import ModelStorePostgres
    import ReliabilityFixtures

    /// `terminations <url|schema|phase|seconds>`: on a PostgreSQL server whose connections the
    /// test terminates (`pg_terminate_backend`) and restarts at random moments, runs one phase of
    /// calls in a loop for `seconds` — `batch`, `transaction`, `read-block`, `stream`, `single`,
    /// `connect` — prints "looped", and once the test has stopped and sent a line, checks what
    /// the store holds. Prints
    /// `ok <n>`, `lost <n>` (calls that threw `.connectionLost`, or `.cannotOpen` while a new
    /// store was opening), `unexpected <code> <message>` for anything else, `torn <n>` (groups
    /// written in part), `missing <n>` (acknowledged groups absent), `after <ok|error>` (the
    /// store serves the next call) and "done". The test gives it a time limit: nothing may hang.
    func terminations(_ argument: String) async throws {
        let parts = argument.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        var server = try PostgresConfiguration(url: parts[0])
        server.schema = parts[1]
        server.applicationName = "modelstore-sweep"
        let phase = parts[2]
        let seconds = Double(parts[3])!
        let store = try ModelStore(postgres: server)
        // Rows for the reads to read, and the table, before the terminations start.
        _ = try await Parcel.save((0..<500).map { Parcel(id: Int64($0), batch: 0, payload: "seed \($0)") }, in: store)
        say("ready")
        var ok = 0
        var lost = 0
        var unexpected: [String] = []
        var acknowledged: [Int64] = []
        let size = 40
        func group(_ number: Int64) -> [Parcel] {
            (0..<size).map { Parcel(id: number * 1000 + Int64($0), batch: number, payload: "group \(number)") }
        }
        let deadline = Date().addingTimeInterval(seconds)
        var number: Int64 = 0
        while Date() < deadline {
            number += 1
            do {
                switch phase {
                case "batch":
                    _ = try await Parcel.save(group(number), in: store)
                    acknowledged.append(number)
                case "transaction":
                    // Several statements, so terminations land between them too.
                    let parcels = group(number)
                    try await store.transaction {
                        for parcel in parcels.prefix(5) { try parcel.save(in: store) }
                        _ = try Parcel.save(Array(parcels.dropFirst(5)), in: store)
                    }
                    acknowledged.append(number)
                case "read-block":
                    let (all, count) = try await store.read { (try Parcel.findAll(in: store), try Parcel.count(in: store)) }
                    if all.count != count { unexpected.append("snapshot \(all.count) != \(count)") }
                case "stream":
                    var streamed = 0
                    for try await _ in Parcel.all().stream(in: store) { streamed += 1 }
                    if streamed < 500 { unexpected.append("stream ended early after \(streamed)") }
                case "single":
                    let parcel = Parcel(id: number * 1000, batch: number, payload: "single")
                    try await parcel.save(in: store)
                    guard try await Parcel.find(key: parcel.id, in: store) == parcel else {
                        unexpected.append("single \(number) not read back")
                        continue
                    }
                default:
                    let another = try ModelStore(postgres: server)
                    _ = try await Parcel.count(in: another)
                    try another.close()
                }
                ok += 1
            } catch let error as ModelStoreError where error.code == .connectionLost || (phase == "connect" && error.code == .cannotOpen) {
                lost += 1
            } catch {
                unexpected.append("\((error as? ModelStoreError)?.code.rawValue ?? "other") \(error)")
            }
        }
        // The test stops terminating (and has the server up) before it sends a line: then the
        // store serves the next call.
        say("looped")
        _ = readLine()
        do {
            let stored = try await Parcel.filter(\.batch > 0).findAll(in: store)
            let counts = Dictionary(grouping: stored, by: \.batch).mapValues(\.count)
            let whole = phase == "single" ? 1 : size
            say("torn \(counts.values.filter { $0 != whole }.count)")
            say("missing \(acknowledged.filter { counts[$0] != whole }.count)")
            say("after ok")
        } catch {
            say("after \(error)")
        }
        say("ok \(ok)")
        say("lost \(lost)")
        for line in unexpected.prefix(20) { say("unexpected \(line.replacingOccurrences(of: "\n", with: " "))") }
        try store.close()
        say("done")
    }
#endif
