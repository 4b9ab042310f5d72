import ModelStore

/// One record of a crash-test batch. Batch `n` always holds exactly `Parcel.count(inBatch: n)`
/// parcels with keys `n * 1000 ..< n * 1000 + count`, so a checker can tell a whole batch from
/// a torn one without knowing what the killed writer was doing.
public struct Parcel: StoredModel, Equatable {
    public var id: Int64
    public var batch: Int64
    public var payload: String
    public static let primaryKey = ["id"]

    public init(id: Int64, batch: Int64, payload: String) {
        self.id = id
        self.batch = batch
        self.payload = payload
    }

    /// How many parcels batch `batch` holds: varied, so batches span different page counts.
    public static func count(inBatch batch: Int64) -> Int {
        40 + Int(batch * 37 % 160)
    }

    /// The parcels of batch `batch`; payloads are long enough that a batch spans many pages,
    /// so a kill lands mid-write most of the time.
    public static func batch(_ batch: Int64) -> [Parcel] {
        (0..<count(inBatch: batch)).map { index in
            Parcel(
                id: batch * 1000 + Int64(index), batch: batch,
                payload: String(repeating: "parcel \(batch)/\(index) ", count: 20 + index % 30))
        }
    }
}

/// The last even batch, saved in the same transaction as that batch's parcels: it proves that a
/// transaction spanning two tables is all or nothing too.
public struct Ledger: StoredModel, Equatable {
    public var id: Int64
    public var lastBatch: Int64
    public static let primaryKey = ["id"]

    public init(lastBatch: Int64) {
        self.id = 1
        self.lastBatch = lastBatch
    }
}

/// A record whose changes the store keeps in its durable history: the helper process writes
/// transactions of `HistoryParcel.perTransaction` until it is killed, so a checker can tell the
/// history of whole transactions from a torn one.
public struct HistoryParcel: StoredModel, Equatable {
    public var id: Int64
    public var round: Int64
    public static let primaryKey = ["id"]
    public static let keepsHistory = true
    /// How many records each of the helper's transactions saves.
    public static let perTransaction: Int64 = 5

    public init(id: Int64, round: Int64) {
        self.id = id
        self.round = round
    }

    /// The records of round `round`: keys `round * 5 + 1 … round * 5 + 5`.
    public static func round(_ round: Int64) -> [HistoryParcel] {
        (1...perTransaction).map { HistoryParcel(id: round * perTransaction + $0, round: round) }
    }
}
