// Relationships whose inverse key path has the wrong type: the compiler must say what the
// inverse must be, instead of "no exact matches in call to static method 'toMany'".
import ModelStore

struct League: StoredModel {
    var id: Int64
    var clubs: [Club]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<League>] = [.toMany(\.clubs, inverse: \Club.league)]
}

struct Club: StoredModel {
    var id: Int64
    var league: League?
    var players: [Footballer]?
    var coaches: [Coach]
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Club>] = [
        .toOne(\.league, inverse: \League.clubs),
        // The inverse's value is League?, not Club?.
        .toMany(\.players, inverse: \Footballer.league),  // expected-error: is unavailable: inverse: must be a key path of the target model
        // The inverse's root is not the target (Coach).
        .toMany(\.coaches, inverse: \Footballer.club),  // expected-error: is unavailable: inverse: must be a key path of the target model
    ]
}

struct Footballer: StoredModel {
    var id: Int64
    var club: Club?
    var league: League?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Footballer>] = [
        .toOne(\.club, inverse: \Club.players),
        // A to-one whose inverse is the target's to-one of another model.
        .toOne(\.league, inverse: \League.clubs),  // expected-error: is unavailable: inverse: must be a key path of the target model
    ]
}

struct Coach: StoredModel {
    var id: Int64
    var club: Club?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Coach>] = [.toOne(\.club, inverse: \Club.coaches)]
}
