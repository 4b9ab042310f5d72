import Foundation
import Testing
@testable import ModelStore

/// Shared keys are 0..<64; each thread's ordering checks use keys of its own from 10,000 up.
private struct Stock: StoredModel, Equatable {
    var id: Int64
    var name: String?
    var quantity: Int?
    static let primaryKey = ["id"]
}

/// One write of the soak, applied to the store and, in commit order, to the reference.
private enum Operation: Sendable {
    case saveStock(Stock)
    case saveStocks([Stock])
    case deleteStock(Int64)
    case deleteStocksBelow(Int)
    case saveTeam(id: Int64, name: String?, players: [Player]?)
    case savePlayer(id: Int64, name: String?, team: Int64?)
    case deleteTeam(Int64)
    case deletePlayer(Int64)

    func run(in store: ModelStore) throws {
        switch self {
        case .saveStock(let stock): try stock.save(in: store)
        case .saveStocks(let stocks): _ = try Stock.save(stocks, in: store)
        case .deleteStock(let id): _ = try Stock.delete(key: id, in: store)
        case .deleteStocksBelow(let quantity):
            _ = try Stock.filter(\.id < 1000 && \.quantity < quantity).deleteAll(in: store)
        case .saveTeam(let id, let name, let players): try Team(id: id, name: name, players: players).save(in: store)
        case .savePlayer(let id, let name, let team):
            var player = Player(id: id, name: name)
            player.team = team.map { Team(id: $0) }
            try player.save(in: store)
        case .deleteTeam(let id): _ = try Team.delete(key: id, in: store)
        case .deletePlayer(let id): _ = try Player.delete(key: id, in: store)
        }
    }
}

/// What the store must hold: the documented semantics (merge, batch order, links, nullify on
/// delete), written out plainly.
private struct Reference {
    var stocks: [Int64: Stock] = [:]
    var teams: [Int64: String?] = [:]
    var players: [Int64: (name: String?, team: Int64?)] = [:]

    mutating func apply(_ operation: Operation) {
        switch operation {
        case .saveStock(let stock): merge(stock)
        case .saveStocks(let stocks): stocks.forEach { merge($0) }
        case .deleteStock(let id): stocks[id] = nil
        case .deleteStocksBelow(let quantity):
            stocks = stocks.filter { !($0.key < 1000 && ($0.value.quantity.map { $0 < quantity } ?? false)) }
        case .saveTeam(let id, let name, let members):
            let storedName: String? = teams[id] ?? nil
            teams.updateValue(name ?? storedName, forKey: id)
            guard let members else { return }
            let kept = Set(members.map(\.id))
            for (playerId, player) in players where player.team == id && !kept.contains(playerId) {
                players[playerId]?.team = nil
            }
            for member in members {
                players[member.id] = (member.name ?? players[member.id]?.name, id)
            }
        case .savePlayer(let id, let name, let team):
            if let team, teams[team] == nil { teams.updateValue(nil, forKey: team) }
            players[id] = (name ?? players[id]?.name, team ?? players[id]?.team)
        case .deleteTeam(let id):
            teams[id] = nil
            for (playerId, player) in players where player.team == id { players[playerId]?.team = nil }
        case .deletePlayer(let id): players[id] = nil
        }
    }

    private mutating func merge(_ stock: Stock) {
        let stored = stocks[stock.id]
        stocks[stock.id] = Stock(id: stock.id, name: stock.name ?? stored?.name, quantity: stock.quantity ?? stored?.quantity)
    }
}

// SQLite-only: a 20,000-operation soak on a file; too slow for the PostgreSQL half.
/// Promise 1: 8 threads, 20,000 mixed operations on overlapping keys, through all three call
/// forms; the store ends exactly as the operations say, and every read sees a consistent state.
@Suite("Reliability: concurrency soak")
struct SoakTests {
    @Test(arguments: StoreKind.allCases)
    func eightThreadsOfMixedOperationsEndExactlyAsTheCommittedOperationsSay(kind: StoreKind) async throws {
        let threads = 8
        let operations = SeededGenerator.count(from: "MODELSTORE_SOAK_OPERATIONS", default: 20_000)
        let seed = SeededGenerator.seed(from: "MODELSTORE_SOAK_SEED")
        let test = try TestStore(kind)
        let store = test.store
        let committed = Locked<[Operation]>([])
        let problems = Locked<[String]>([])
        let privateWrites = Locked<[Int64: Int]>([:])
        let pending = DispatchGroup()

        @Sendable func report(_ problem: String) {
            problems.withLock { $0.append("seed \(seed): \(problem)") }
        }

        /// Runs a write as a transaction that logs it on commit: transactions are exclusive, so
        /// the log's order is the commit order.
        @Sendable func write(_ operation: Operation, form: Int) {
            switch form {
            case 0:
                do {
                    try store.transaction {
                        try operation.run(in: store)
                        committed.withLock { $0.append(operation) }
                    }
                } catch { report("sync \(operation): \(error)") }
            case 1:
                pending.enter()
                store.transaction(
                    {
                        try operation.run(in: store)
                        committed.withLock { $0.append(operation) }
                    },
                    completion: { result in
                        if case .failure(let error) = result { report("completion \(operation): \(error)") }
                        pending.leave()
                    })
            default:
                pending.enter()
                Task(priority: .high) {
                    do {
                        try await store.transaction {
                            try operation.run(in: store)
                            committed.withLock { $0.append(operation) }
                        }
                    } catch { report("async \(operation): \(error)") }
                    pending.leave()
                }
            }
        }

        /// A write then a read of a key only this thread uses: the read must see the write,
        /// in the completion form and in the async form alike.
        @Sendable func checkOrdering(key: Int64, quantity: Int, async: Bool) {
            privateWrites.withLock { $0[key] = quantity }
            pending.enter()
            if async {
                Task(priority: .high) {
                    do {
                        try await Stock(id: key, quantity: quantity).save(in: store)
                        let found = try await Stock.find(key: key, in: store)
                        if found?.quantity != quantity { report("async read of \(key) saw \(String(describing: found))") }
                    } catch { report("async ordering \(key): \(error)") }
                    pending.leave()
                }
            } else {
                Stock(id: key, quantity: quantity).save(in: store) { _ in }
                Stock.find(key: key, in: store) { result in
                    if (try? result.get())??.quantity != quantity { report("completion read of \(key) saw \(result)") }
                    pending.leave()
                }
            }
        }

        /// Inside one read block the graph is consistent from both sides.
        @Sendable func checkSnapshot() throws {
            try store.read {
                let teams = try Team.findAll(in: store)
                let players = try Player.findAll(in: store)
                let teamOf = Dictionary(uniqueKeysWithValues: players.map { ($0.id, $0.team?.id) })
                for team in teams {
                    for player in team.players ?? [] where teamOf[player.id] != team.id {
                        report("team \(team.id) lists player \(player.id), whose team is \(String(describing: teamOf[player.id]))")
                    }
                }
                let listed = Set(teams.flatMap { team in (team.players ?? []).map { "\(team.id)/\($0.id)" } })
                for player in players {
                    if let team = player.team?.id, !listed.contains("\(team)/\(player.id)") {
                        report("player \(player.id) links team \(team), which does not list it")
                    }
                }
            }
        }

        @Sendable func randomStock(_ random: inout SeededGenerator) -> Stock {
            Stock(
                id: Int64.random(in: 0..<64, using: &random),
                name: Bool.random(using: &random) ? "s\(Int.random(in: 0..<100, using: &random))" : nil,
                quantity: Int.random(in: 0..<4, using: &random) == 0 ? nil : Int.random(in: 0..<100, using: &random))
        }

        @Sendable func body(thread: Int) {
            var random = SeededGenerator(seed: seed &+ UInt64(thread) &* 7919)
            var privateKey = Int64(10_000 + thread * 10_000)
            for _ in 0..<(operations / threads) {
                let form = Int.random(in: 0..<3, using: &random)
                let roll = Int.random(in: 0..<100, using: &random)
                do {
                    switch roll {
                    case 0..<20: write(.saveStock(randomStock(&random)), form: form)
                    case 20..<28:
                        let stocks = (0..<Int.random(in: 1...16, using: &random)).map { _ in randomStock(&random) }
                        write(.saveStocks(stocks), form: form)
                    case 28..<32: write(.deleteStock(Int64.random(in: 0..<64, using: &random)), form: form)
                    case 32..<34: write(.deleteStocksBelow(Int.random(in: 0..<30, using: &random)), form: form)
                    case 34..<42:
                        var members: [Player]?
                        if Int.random(in: 0..<4, using: &random) > 0 {
                            let ids = Set((0..<Int.random(in: 0...5, using: &random)).map { _ in Int64.random(in: 0..<40, using: &random) })
                            members = ids.sorted().map { Player(id: $0, name: Bool.random(using: &random) ? "p\($0)" : nil) }
                        }
                        let name = Bool.random(using: &random) ? "team \(thread)" : nil
                        write(.saveTeam(id: Int64.random(in: 0..<8, using: &random), name: name, players: members), form: form)
                    case 42..<48:
                        let team = Bool.random(using: &random) ? Int64.random(in: 0..<8, using: &random) : nil
                        write(.savePlayer(id: Int64.random(in: 0..<40, using: &random), name: "q\(thread)", team: team), form: form)
                    case 48..<50: write(.deleteTeam(Int64.random(in: 0..<8, using: &random)), form: form)
                    case 50..<52: write(.deletePlayer(Int64.random(in: 0..<40, using: &random)), form: form)
                    case 52..<62:
                        privateKey += 1
                        checkOrdering(key: privateKey, quantity: roll, async: form == 2)
                    case 62..<72:
                        _ = try Stock.find(key: Int64.random(in: 0..<64, using: &random), in: store)
                        _ = try Stock.count(in: store)
                    case 72..<82:
                        let found = try Stock.findAll(where: \.quantity > 50, orderBy: [.ascending(\.quantity)], in: store)
                        if found.contains(where: { ($0.quantity ?? 0) <= 50 })
                            || found.map(\.quantity) != found.map(\.quantity).sorted(by: { ($0 ?? 0) < ($1 ?? 0) })
                        {
                            report("a filtered, sorted read returned \(found)")
                        }
                    case 82..<90:
                        pending.enter()
                        Team.findAll(in: store) { result in
                            if case .failure(let error) = result { report("completion read: \(error)") }
                            pending.leave()
                        }
                    default: try checkSnapshot()
                    }
                } catch {
                    report("thread \(thread): \(error)")
                }
            }
        }

        // A model's first use creates its table, which a read block cannot do.
        _ = try await (Stock.count(in: store), Team.count(in: store), Player.count(in: store))
        let finished = DispatchGroup()
        for thread in 0..<threads {
            finished.enter()
            Thread {
                body(thread: thread)
                finished.leave()
            }.start()
        }
        // Waiting without blocking: the async operations need the cooperative threads this
        // test would otherwise sit on.
        await Self.waitUntilDone(finished)
        await Self.waitUntilDone(pending)

        #expect(problems.current.isEmpty, "\(problems.current.prefix(10))")
        var reference = Reference()
        for operation in committed.current { reference.apply(operation) }
        let writes = committed.current.count
        #expect(writes > operations / 3, "only \(writes) writes committed")

        let shared = try await Stock.findAll(where: \.id < 1000, in: store)
        #expect(shared == reference.stocks.keys.sorted().map { reference.stocks[$0]! }, "seed \(seed)")
        let privates = try await Stock.findAll(where: \.id >= 10_000, in: store)
        #expect(Dictionary(uniqueKeysWithValues: privates.map { ($0.id, $0.quantity ?? -1) }) == privateWrites.current, "seed \(seed)")
        let teams = try await Team.findAll(loading: .none, in: store)
        #expect(teams.map(\.id) == reference.teams.keys.sorted(), "seed \(seed)")
        #expect(teams.map(\.name) == reference.teams.keys.sorted().map { reference.teams[$0]! }, "seed \(seed)")
        let players = try await Player.findAll(in: store)
        #expect(players.map(\.id) == reference.players.keys.sorted(), "seed \(seed)")
        #expect(players.map(\.name) == reference.players.keys.sorted().map { reference.players[$0]!.name }, "seed \(seed)")
        #expect(players.map(\.team?.id) == reference.players.keys.sorted().map { reference.players[$0]!.team }, "seed \(seed)")
        #expect(try store.integrityCheck() == "ok")
    }

    private static func waitUntilDone(_ group: DispatchGroup) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            group.notify(queue: .global()) { continuation.resume() }
        }
    }
}
