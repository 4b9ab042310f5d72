// What "Saving and merging" assumes: the composite-key model of Getting started, and the
// arrays a reader's program imports.
import ModelStore

struct Friendship: StoredModel {
    var userId: Int64
    var friendId: Int64
    var nickname: String?
    static let primaryKey = ["userId", "friendId"]
}

struct Contact: StoredModel {
    var id: Int64
    var accountId: Int64
    var friendId: Int64
    var name: String?
    static let primaryKey = ["id"]
}

let snacks: [Snack] = []
let contacts: [Contact] = []
