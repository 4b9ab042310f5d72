import ModelStore

/// A record several processes write at once through one PostgreSQL server: each process sets
/// only its own column (the others nil, which the merge keeps), so after they all finish every
/// record must hold every process's last value — an update lost to a race would show as a
/// stale or missing column.
public struct Tally: StoredModel, Equatable {
    public var id: Int64
    public var first: Int64?
    public var second: Int64?
    public var third: Int64?
    /// Which process wrote the record last (any of them).
    public var writer: String?
    public static let primaryKey = ["id"]

    public init(id: Int64, first: Int64? = nil, second: Int64? = nil, third: Int64? = nil, writer: String? = nil) {
        self.id = id
        self.first = first
        self.second = second
        self.third = third
        self.writer = writer
    }

    /// The keys every process writes.
    public static let sharedKeys: ClosedRange<Int64> = 1...300
    /// Rounds each process runs; the value it writes in round `r` is `r`.
    public static let rounds = 12

    /// Process `worker`'s (0, 1 or 2) version of the shared records in `round`.
    public static func shared(worker: Int, round: Int) -> [Tally] {
        sharedKeys.map { id in
            var tally = Tally(id: id, writer: "w\(worker)")
            switch worker {
            case 0: tally.first = Int64(round)
            case 1: tally.second = Int64(round)
            default: tally.third = Int64(round)
            }
            return tally
        }
    }

    /// Records only process `worker` writes, in `round`.
    public static func own(worker: Int, round: Int) -> [Tally] {
        (0..<50).map { Tally(id: 10_000 * Int64(worker + 1) + Int64(round * 50 + $0), writer: "w\(worker)") }
    }
}

/// An account the transfer test moves money between: the total over all accounts never
/// changes, so a lost update shows as a different total.
public struct Account: StoredModel, Equatable {
    public var id: Int64
    public var balance: Int64
    public static let primaryKey = ["id"]

    public init(id: Int64, balance: Int64) {
        self.id = id
        self.balance = balance
    }

    /// The accounts, each starting with `startingBalance`.
    public static let keys: ClosedRange<Int64> = 1...4
    public static let startingBalance: Int64 = 5_000
}

/// One acknowledged transfer, saved in the transfer's own transaction: the ledger must hold
/// exactly the transfers whose calls returned, and explain every balance.
public struct Transfer: StoredModel, Equatable {
    public var id: String
    public var from: Int64
    public var to: Int64
    public var amount: Int64
    public static let primaryKey = ["id"]

    public init(id: String, from: Int64, to: Int64, amount: Int64) {
        self.id = id
        self.from = from
        self.to = to
        self.amount = amount
    }
}
