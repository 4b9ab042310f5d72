import Foundation
import ModelStore

// Three versions of one app's models. Types are nested in enums, so each version's `Team` is
// its own Swift type while its table is still called `Team`.

/// Version 1: teams with players, players with tags, contracts keyed by (athlete, season).
enum V1 {
    struct Team: StoredModel, Equatable {
        var teamId: Int64
        var name: String
        var city: String?
        var players: [Player]?
        static let primaryKey = ["teamId"]
        static let relationships: [Relationship<Team>] = [.toMany(\.players, inverse: \Player.team)]
    }

    struct Player: StoredModel, Equatable {
        var playerId: Int64
        var name: String
        var cost: Double?
        @Related var team: Team?
        var tags: [Tag]?
        static let primaryKey = ["playerId"]
        static let relationships: [Relationship<Player>] = [
            .toOne(\.team, inverse: \Team.players), .toMany(\.tags, inverse: \Tag.players),
        ]
    }

    struct Tag: StoredModel, Equatable {
        var label: String
        var players: [Player]?
        static let primaryKey = ["label"]
        static let relationships: [Relationship<Tag>] = [.toMany(\.players, inverse: \Player.tags)]
    }

    struct Contract: StoredModel, Equatable {
        var athleteId: Int64
        var season: Int64
        var amount: Double
        static let primaryKey = ["athleteId", "season"]
    }
}

/// Version 2, declared renames only: `Player` is now `Athlete` (its key `playerId` now
/// `athleteId`, `cost` now `price`, `team` now `club`), `Team.players` is `roster`,
/// `Tag.players` is `athletes`, and `Team.city` is no longer in the model.
enum V2 {
    struct Team: StoredModel, Equatable {
        var teamId: Int64
        var name: String
        var roster: [Athlete]?
        static let primaryKey = ["teamId"]
        static let relationships: [Relationship<Team>] = [.toMany(\.roster, inverse: \Athlete.club)]
        static let formerNames: [FormerName<Team>] = [.property(\.roster, from: "players")]
    }

    struct Athlete: StoredModel, Equatable {
        var athleteId: Int64
        var name: String
        var price: Double?
        @Related var club: Team?
        var tags: [Tag]?
        static let primaryKey = ["athleteId"]
        static let relationships: [Relationship<Athlete>] = [
            .toOne(\.club, inverse: \Team.roster), .toMany(\.tags, inverse: \Tag.athletes),
        ]
        static let formerNames: [FormerName<Athlete>] = [
            .table(from: "Player"), .property(\.athleteId, from: "playerId"), .property(\.price, from: "cost"),
            .property(\.club, from: "team"),
        ]
    }

    struct Tag: StoredModel, Equatable {
        var label: String
        var athletes: [Athlete]?
        static let primaryKey = ["label"]
        static let relationships: [Relationship<Tag>] = [.toMany(\.athletes, inverse: \Athlete.tags)]
        static let formerNames: [FormerName<Tag>] = [.property(\.athletes, from: "players")]
    }
}

/// Version 3, through migration steps: prices become whole cents (a transform), contracts
/// get a single key (a rebuild), and the unused `Team.city` is dropped explicitly.
enum V3 {
    struct Team: StoredModel, Equatable {
        var teamId: Int64
        var name: String
        var roster: [Athlete]?
        static let primaryKey = ["teamId"]
        static let relationships: [Relationship<Team>] = [.toMany(\.roster, inverse: \Athlete.club)]
        static let formerNames: [FormerName<Team>] = [.property(\.roster, from: "players")]
    }

    struct Athlete: StoredModel, Equatable {
        var athleteId: Int64
        var name: String
        var priceCents: Int64?
        @Related var club: Team?
        var tags: [Tag]?
        static let primaryKey = ["athleteId"]
        static let relationships: [Relationship<Athlete>] = [
            .toOne(\.club, inverse: \Team.roster), .toMany(\.tags, inverse: \Tag.athletes),
        ]
        static let formerNames: [FormerName<Athlete>] = [
            .table(from: "Player"), .property(\.athleteId, from: "playerId"), .property(\.club, from: "team"),
        ]
    }

    struct Tag: StoredModel, Equatable {
        var label: String
        var athletes: [Athlete]?
        static let primaryKey = ["label"]
        static let relationships: [Relationship<Tag>] = [.toMany(\.athletes, inverse: \Athlete.tags)]
        static let formerNames: [FormerName<Tag>] = [.property(\.athletes, from: "players")]
    }

    struct Contract: StoredModel, Equatable {
        var contractId: Int64
        var athleteId: Int64
        var season: Int64
        var amount: Double
        static let primaryKey = ["contractId"]
    }

    /// The athlete as version 2 stored it, without relationships: what the transform reads.
    struct AthleteAsStored: StoredModel {
        var athleteId: Int64
        var name: String
        var price: Double?
        static let primaryKey = ["athleteId"]
        static let tableName = "Athlete"
        static let formerNames: [FormerName<AthleteAsStored>] = [
            .table(from: "Player"), .property(\.athleteId, from: "playerId"), .property(\.price, from: "cost"),
        ]
    }

    static let steps: [MigrationStep] = [
        MigrationStep("prices in cents") { step in
            try step.transform(AthleteAsStored.self, to: Athlete.self) { old in
                Athlete(athleteId: old.athleteId, name: old.name, priceCents: old.price.map { Int64(($0 * 100).rounded()) })
            }
        },
        MigrationStep("contracts keyed by id") { step in
            try step.rebuild(Contract.self, values: ["contractId": "athleteId * 100 + season % 100"])
        },
        MigrationStep("drop city") { step in
            try step.dropColumn("city", from: "Team")
        },
    ]
}

/// The records every version starts from, written through version 1.
enum HistoryData {
    static let teams: [(id: Int64, name: String, city: String?)] = [(1, "Comets", "Bern"), (2, "Herons", nil), (3, "Lynx", "Chur")]
    /// (id, name, cost, team, tags)
    static let players: [(id: Int64, name: String, cost: Double?, team: Int64?, tags: [String])] = [
        (10, "Ada", 12.5, 1, ["fast", "tall"]),
        (11, "Bo", nil, 1, []),
        (12, "Cy", 0.1, 2, ["fast"]),
        (13, "Di", 1_000_000.99, nil, ["calm"]),
        (14, "Ed", -3.25, 3, ["tall", "calm", "fast"]),
    ]
    static let tags = ["fast", "tall", "calm", "spare"]
    /// (athlete, season, amount)
    static let contracts: [(Int64, Int64, Double)] = [(10, 2024, 1.5), (10, 2025, 2.5), (12, 2025, 3.0), (14, 2023, 4.25)]

    static func writeVersion1(to store: ModelStore) throws {
        try store.transaction {
            for tag in tags { try V1.Tag(label: tag).save(in: store) }
            for team in teams { try V1.Team(teamId: team.id, name: team.name, city: team.city).save(in: store) }
            for player in players {
                let team = player.team.map { id in teams.first { $0.id == id }! }.map { V1.Team(teamId: $0.id, name: $0.name) }
                var model = V1.Player(
                    playerId: player.id, name: player.name, cost: player.cost, tags: player.tags.map { V1.Tag(label: $0) })
                model.team = team
                try model.save(in: store)
            }
            for contract in contracts {
                try V1.Contract(athleteId: contract.0, season: contract.1, amount: contract.2).save(in: store)
            }
        }
    }
}
