// What "Relationships" assumes: Snack as the other side of Worker.snacks, and the models of
// its loading examples.
import ModelStore

struct Snack: StoredModel {
    var snackId: Int64
    var name: String?
    var workers: [Worker]?
    static let primaryKey = ["snackId"]
    static let relationships: [Relationship<Snack>] = [.toMany(\.workers, inverse: \Worker.snacks)]
}

struct Ticket: StoredModel {
    var id: Int64
    static let primaryKey = ["id"]
}

struct Package: StoredModel {
    var name: String
    var depends: [Package]?
    static let primaryKey = ["name"]
    static let relationships: [Relationship<Package>] = [.toMany(\.depends)]
}

struct Employee: StoredModel {
    var id: Int64
    @Related var manager: Employee?
    var reports: [Employee]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Employee>] = [
        .toOne(\.manager, inverse: \Employee.reports), .toMany(\.reports, inverse: \Employee.manager),
    ]
}

let packages: [Package] = []
