import Foundation
import ModelStore

// Every relationship here is declared `.loading(.eager)`, so plain reads fill them one level
// deep, as the graph tests expect. The default, loading on request, is covered by PathTests.

struct Team: StoredModel, Equatable {
    var id: Int64
    var name: String?
    @Related var coach: Coach?
    var players: [Player]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Team>] = [
        .toOne(\.coach, inverse: \Coach.team).loading(.eager),
        .toMany(\.players, inverse: \Player.team).loading(.eager),
    ]
}

struct Player: StoredModel, Equatable {
    var id: Int64
    var name: String?
    @Related var team: Team?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Player>] = [.toOne(\.team, inverse: \Team.players).loading(.eager)]
}

struct Coach: StoredModel, Equatable {
    var id: Int64
    var name: String?
    @Related var team: Team?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Coach>] = [.toOne(\.team, inverse: \Team.coach).loading(.eager)]
}

struct Ticket: StoredModel, Equatable {
    var id: Int64
    var seat: String?
    static let primaryKey = ["id"]
}

/// Many-to-many with Food, and a one-way to-one to Ticket (held as a plain Optional).
struct Worker: StoredModel, Equatable {
    var id: Int64
    var name: String?
    var snacks: [Food]?
    var ticket: Ticket?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Worker>] = [
        .toMany(\.snacks, inverse: \Food.workers).loading(.eager),
        .toOne(\.ticket).loading(.eager),
    ]
}

struct Food: StoredModel, Equatable {
    var id: Int64
    var name: String?
    var workers: [Worker]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Food>] = [.toMany(\.workers, inverse: \Worker.snacks).loading(.eager)]
}

/// A self-referential hierarchy.
struct Employee: StoredModel, Equatable {
    var id: Int
    var name: String
    @Related var manager: Employee?
    var reports: [Employee]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Employee>] = [
        .toOne(\.manager, inverse: \Employee.reports).loading(.eager),
        .toMany(\.reports, inverse: \Employee.manager).loading(.eager),
    ]
}

/// Composite keys on both ends of a relationship.
struct Project: StoredModel, Equatable {
    var tenant: String
    var code: Int
    var title: String?
    var tasks: [Chore]?
    static let primaryKey = ["tenant", "code"]
    static let relationships: [Relationship<Project>] = [.toMany(\.tasks, inverse: \Chore.project).loading(.eager)]
}

struct Chore: StoredModel, Equatable {
    var tenant: String
    var number: Int
    var summary: String?
    @Related var project: Project?
    static let primaryKey = ["tenant", "number"]
    static let relationships: [Relationship<Chore>] = [.toOne(\.project, inverse: \Project.tasks).loading(.eager)]
}

/// A three-model cycle of one-way to-ones: A → B → C → A.
struct NodeA: StoredModel, Equatable {
    var id: Int
    @Related var b: NodeB?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<NodeA>] = [.toOne(\.b).loading(.eager)]
}

struct NodeB: StoredModel, Equatable {
    var id: Int
    @Related var c: NodeC?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<NodeB>] = [.toOne(\.c).loading(.eager)]
}

struct NodeC: StoredModel, Equatable {
    var id: Int
    @Related var a: NodeA?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<NodeC>] = [.toOne(\.a).loading(.eager)]
}
