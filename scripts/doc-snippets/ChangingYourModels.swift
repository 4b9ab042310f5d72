// What "Changing your models" assumes: the other side of Athlete.club, the model its rebuild
// step names, and where the reader's file is.
import ModelStore

struct Team: StoredModel {
    var id: Int64
    var roster: [Athlete]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Team>] = [.toMany(\.roster, inverse: \Athlete.club)]
}

struct Contract: StoredModel {
    var contractId: Int64
    static let primaryKey = ["contractId"]
}

let path = "league.sqlite"
