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
