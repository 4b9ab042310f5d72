// What "Validation, hooks and timestamps" assumes: the audit log its callback writes to.
import ModelStore

struct AuditEntry: StoredModel {
    var id: Int64?
    var what: String
    static let primaryKey = ["id"]
}
