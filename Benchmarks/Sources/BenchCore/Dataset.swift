/// One row of the item table, as every contender stores it.
public struct ItemData: Sendable {
    public var id: Int64
    public var name: String
    public var price: Double
    public var quantity: Int64
    public var createdAt: Double
    public var note: String?
}

/// The data every workload uses, generated once per run from a fixed seed so all three
/// contenders see exactly the same values.
public struct Dataset: Sendable {
    public let rows: Int
    /// W1, W3–W5, W8, W10: items 1…rows.
    public let items: [ItemData]
    /// W2: items 1…rows with new prices, of which the first half is stored beforehand.
    public let upserts: [ItemData]
    /// W4: keys to fetch one by one.
    public let lookupKeys: [Int64]
    /// W5: price thresholds, one query each.
    public let thresholds: [Double]
    /// W8: the median price.
    public let medianPrice: Double
    /// W6, W9: teams with their players (`players[team]`).
    public let teams: [(id: Int64, name: String)]
    public let players: [[(id: Int64, name: String)]]
    /// W7: workers, snacks, and each worker's snack ids.
    public let workers: [(id: Int64, name: String)]
    public let snacks: [(id: Int64, name: String)]
    public let workerSnacks: [[Int64]]
    /// W10: new items the writer saves while readers fetch.
    public let concurrentBatch: [ItemData]

    public static let lookupCount = 10_000
    public static let queryCount = 1_000
    public static let playersPerTeam = 20
    public static let snacksPerWorker = 10

    public init(rows: Int) {
        var random = SplitMix64(seed: 0x5EED)
        self.rows = rows
        func item(_ id: Int64, _ random: inout SplitMix64) -> ItemData {
            ItemData(
                id: id, name: "item-\(id)", price: Double(random.next() % 100_000) / 100,
                quantity: Int64(random.next() % 1_000), createdAt: 700_000_000 + Double(random.next() % 10_000_000),
                note: id % 3 == 0 ? nil : "note \(random.next() % 10_000)")
        }
        items = (1...Int64(rows)).map { item($0, &random) }
        upserts = (1...Int64(rows)).map { item($0, &random) }
        lookupKeys = (0..<Self.lookupCount).map { _ in Int64(random.next() % UInt64(rows)) + 1 }
        thresholds = (0..<Self.queryCount).map { _ in Double(random.next() % 90_000) / 100 }
        let sortedPrices = items.map(\.price).sorted()
        medianPrice = sortedPrices[sortedPrices.count / 2]
        let teamCount = max(10, min(1_000, rows / 100))
        teams = (1...Int64(teamCount)).map { ($0, "team-\($0)") }
        players = teams.map { team in
            (0..<Int64(Self.playersPerTeam)).map { offset in
                let id = (team.id - 1) * Int64(Self.playersPerTeam) + offset + 1
                return (id, "player-\(id)")
            }
        }
        workers = (1...Int64(teamCount)).map { ($0, "worker-\($0)") }
        snacks = (1...Int64(teamCount * 2)).map { ($0, "snack-\($0)") }
        let snackCount = UInt64(teamCount * 2)
        workerSnacks = workers.map { _ in
            var chosen: Set<Int64> = []
            while chosen.count < Self.snacksPerWorker { chosen.insert(Int64(random.next() % snackCount) + 1) }
            return chosen.sorted()
        }
        concurrentBatch = (Int64(rows + 1)...Int64(rows + max(1, rows / 2))).map { item($0, &random) }
    }
}

/// A small, fast, seedable generator: the same data on every machine and run.
public struct SplitMix64: Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
