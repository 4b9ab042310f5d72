// What "Running on PostgreSQL" assumes: the accounts its transfer block moves money between.
import ModelStore

struct Account: StoredModel {
    var id: Int64
    var balance: Int
    static let primaryKey = ["id"]
}
