// A tour of ModelStore. It never sets `ModelStore.default`, so it uses the default store:
// a file under ~/.local/share/demo/ (Linux) or Application Support (Apple platforms),
// created on first use. Run it as often as you like: every run starts by clearing its models.
import Foundation
import ModelStore

struct Snack: StoredModel {
    var snackId: Int64
    var name: String?
    var taste: String?
    var size: Double?
    var price: Double?
    var tags: [String] = []
    var createdAt: Date?
    static let primaryKey = ["snackId"]
}

/// A composite primary key.
struct Friendship: StoredModel {
    var userId: Int64
    var friendId: Int64
    var nickname: String?
    static let primaryKey = ["userId", "friendId"]
}

// Relationships: one-to-one (Team–Coach), one-to-many (Team–Players), many-to-many
// (Worker–Food), and a one-way to-one (Worker–Ticket).
struct Team: StoredModel {
    var id: Int64
    var name: String?
    @Related var coach: Coach?
    var players: [Player]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Team>] = [
        .toOne(\.coach, inverse: \Coach.team),
        .toMany(\.players, inverse: \Player.team, deleteRule: .cascade),
    ]
}

struct Player: StoredModel {
    var id: Int64
    var name: String?
    @Related var team: Team?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Player>] = [.toOne(\.team, inverse: \Team.players)]
}

struct Coach: StoredModel {
    var id: Int64
    var name: String?
    @Related var team: Team?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Coach>] = [.toOne(\.team, inverse: \Team.coach)]
}

struct Ticket: StoredModel {
    var id: Int64
    var seat: String?
    static let primaryKey = ["id"]
}

struct Worker: StoredModel {
    var id: Int64
    var name: String?
    var snacks: [Food]?
    var ticket: Ticket?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Worker>] = [.toMany(\.snacks, inverse: \Food.workers), .toOne(\.ticket)]
}

struct Food: StoredModel {
    var id: Int64
    var name: String?
    var workers: [Worker]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Food>] = [.toMany(\.workers, inverse: \Worker.snacks)]
}

func show(_ title: String, _ value: Any) {
    print("• \(title): \(value)")
}

/// In an async context the `async` forms are chosen; they never block the calling task.
func asyncTour() async throws {
    try await Snack(snackId: 125, name: "Oreo", taste: "cocoa").save()
    show("count (async)", try await Snack.count())
    show("found (async)", try await Snack.find(key: 125)?.name ?? "-")
}

/// Observing: a live count, and each transaction's keys, while three transactions commit.
func observationTour() async throws {
    let store = ModelStore.default
    var counts = store.observe { try Snack.filter(\.taste == "sour").count() }.makeAsyncIterator()
    var changes = store.changes(of: Snack.self).makeAsyncIterator()
    show("sour snacks now", try await counts.next() ?? -1)
    try await Snack(snackId: 301, name: "Lemon drop", taste: "sour").save()
    show("after a save", try await counts.next() ?? -1)
    _ = try await Snack.save([Snack(snackId: 302, name: "Tamarind", taste: "sour"), Snack(snackId: 303, name: "Yuzu", taste: "sour")])
    show("after a batch", try await counts.next() ?? -1)
    _ = try await Snack.deleteAll(where: \.taste == "sour")
    show("after deleting them", try await counts.next() ?? -1)
    for _ in 0..<3 {
        guard let change = await changes.next() else { break }
        show(
            "a transaction changed",
            "inserted \(try change.keys(\.inserted, as: Int64.self)), deleted \(try change.keys(\.deleted, as: Int64.self))")
    }
}

// `swift run demo watch` prints the live count of snacks until stopped, while
// `swift run demo import` (in another terminal, another process) imports some.
switch CommandLine.arguments.dropFirst().first {
case "watch":
    FileHandle.standardOutput.write(
        Data("Watching \(ModelStore.defaultLocation.path) — run `swift run demo import` in another terminal; Ctrl-C stops.\n".utf8))
    for try await count in ModelStore.default.observe({ try Snack.count() }) {
        // Straight to the file descriptor: piped output would otherwise wait in a buffer.
        FileHandle.standardOutput.write(Data("snacks: \(count)\n".utf8))
    }
    exit(0)
case "import":
    for batch in Int64(0)..<10 {
        let snacks = (0..<500).map { Snack(snackId: 10_000 + batch * 500 + $0, name: "imported \(batch)-\($0)") }
        let outcome = try Snack.save(snacks)
        print("batch \(batch): \(outcome.inserted) inserted")
        try await Task.sleep(nanoseconds: 300_000_000)
    }
    exit(0)
default:
    break
}

do {
    print("Store file: \(ModelStore.defaultLocation.path)\n")
    try Snack.deleteAll()
    try Friendship.deleteAll()
    for model in [Team.self, Player.self, Coach.self, Worker.self, Food.self, Ticket.self] as [any StoredModel.Type] {
        _ = try model.deleteAll()
    }

    // Save is an upsert: insert when the key is new…
    show("save Pocky", try Snack(snackId: 123, name: "Pocky", price: 1.1, tags: ["chocolate"], createdAt: Date()).save())
    // …and a merge when it exists: nil properties keep what is stored.
    show("save size only", try Snack(snackId: 123, size: 999, tags: ["chocolate", "big"]).save())
    let pocky = try Snack.find(key: 123)!
    show("found", "\(pocky.name!) price \(pocky.price!) size \(pocky.size!) tags \(pocky.tags)")

    // Clearing a value is explicit.
    try Snack(snackId: 123).save(clearing: [\.price])
    show("price after clearing", String(describing: try Snack.find(key: 123)!.price))

    // Insert-only and update-only report what did not happen.
    do {
        try Snack(snackId: 123, name: "Duplicate").insert()
    } catch ModelStoreError.Code.alreadyExists {
        show("insert of a taken key", "refused (alreadyExists)")
    }
    do {
        try Snack(snackId: 999, name: "Ghost").update()
    } catch let error as ModelStoreError {
        show("update of a missing key", error.code)
    }

    // Composite keys are passed by component name.
    try Friendship(userId: 1, friendId: 2, nickname: "Bob").save()
    show("friendship", try Friendship.find(key: ["userId": 1, "friendId": 2])!.nickname!)

    // Batches: one transaction, one upsert per element, duplicates merged in order.
    let batch = (1...10).map {
        Snack(snackId: 200 + Int64($0), name: "Batch \($0)", taste: $0 % 2 == 0 ? "sweet" : "salty", price: Double($0) / 2)
    }
    show("batch save", try Snack.save(batch + [Snack(snackId: 201, size: 5)]))

    // Typed conditions, sorting, paging, aggregates.
    let sweet = try Snack.filter(\.taste == "sweet" && \.price > 1).order(.descending(\.price)).page(0, rows: 3).findAll()
    show("sweet over 1, dearest first", sweet.map { $0.name ?? "-" })
    show("sum of prices", try Snack.filter(\.snackId > 200).sum(\.price))
    show("counts by taste", try Snack.filter(\.snackId > 200).countsGrouped(by: \.taste).map { "\($0.key ?? "-"): \($0.value)" }.sorted())
    show("repriced", try Snack.updateAll(where: \.taste == "salty", set: [.set(\.price, to: 0.99)]))
    show("deleted cheap ones", try Snack.deleteAll(where: \.price < 1))

    // A graph saved in one go: the team, its coach and players, and the links.
    var rockets = Team(id: 1, name: "Rockets")
    rockets.coach = Coach(id: 1, name: "Dee")
    rockets.players = [Player(id: 1, name: "Ann"), Player(id: 2, name: "Bo"), Player(id: 3, name: "Cy")]
    try rockets.save()
    show("a plain read loads no relationship", try Team.find(key: 1)!.players == nil)
    let team = try Team.find(key: 1, loading: .direct)!
    show("team", "\(team.name!) coached by \(team.coach!.name!), players \(team.players!.map { $0.name! })")
    show("a player's team (not walked back further)", team.players![0].team!.name!)

    var worker = Worker(id: 1, name: "Wu", ticket: Ticket(id: 9, seat: "A1"))
    worker.snacks = [Food(id: 1, name: "Pocky"), Food(id: 2, name: "Kitkat")]
    try worker.save()
    show("worker's snacks", try Worker.find(key: 1, loading: .direct)!.snacks!.map { $0.name! })
    show("who eats Kitkat", try Food.find(key: 2, loading: .only("workers"))!.workers!.map { $0.name! })
    show("worker's ticket", try Worker.find(key: 1, loading: .only("ticket"))!.ticket!.seat!)
    show("deleting the team cascades to its players", try Team.delete(key: 1))
    show("players left", try Player.count())

    // Completion handlers and async/await.
    let done = DispatchSemaphore(value: 0)
    Snack(snackId: 124, name: "Kitkat").save { result in
        show("saved with a completion handler", (try? result.get()).map { "\($0)" } ?? "failed")
        done.signal()
    }
    done.wait()
    try await asyncTour()
    try await observationTour()

    show("all", try Snack.findAll().map { "\($0.snackId) \($0.name ?? "-")" })
    show("deleted", try Snack.delete(key: 124))
} catch {
    print("Demo failed: \(error)")
    exit(1)
}
