// What "Queries" assumes: the models its examples query, and the values a reader's program holds.
import ModelStore

struct Dish: StoredModel {
    var id: Int64
    var tags: [String]
    static let primaryKey = ["id"]
}

struct Venue: Codable, Sendable {
    var city: String
    var capacity: Int
}

struct Gig: StoredModel {
    var id: Int64
    var venue: Venue
    var backup: Venue?
    static let primaryKey = ["id"]
}

struct Team: StoredModel {
    var id: Int64
    var name: String
    var players: [Player]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Team>] = [.toMany(\.players, inverse: \Player.team)]
}

struct Player: StoredModel {
    var id: Int64
    var name: String
    var score: Double?
    var fouls: Int
    var team: Team?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Player>] = [.toOne(\.team, inverse: \Team.players)]
}

struct Package: StoredModel {
    var name: String
    var depends: [Package]?
    static let primaryKey = ["name"]
    static let relationships: [Relationship<Package>] = [.toMany(\.depends)]
}

enum Mood: String, Codable, Sendable {
    case calm, loud
}

struct Gadget: StoredModel {
    var id: Int64
    var name: String
    var price: Double?
    var stock: Int
    var mood: Mood
    static let primaryKey = ["id"]
}

struct Post: StoredModel {
    var id: Int64
    var userId: Int64
    static let primaryKey = ["id"]
}

let userInput = "dark chocolate"
let taste = "sweet"
let limit = 2.0
let ids: [Int64] = [1, 2, 3]
