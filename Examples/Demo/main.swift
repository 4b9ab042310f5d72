import Foundation
import ModelStore

struct Snack: StoredModel {
    var snackId: Int64
    var name: String?
    var taste: String?
    var size: Double?
    var price: Double?
    var tags: [String] = []
    var createdAt: Date?
    static let primaryKey = ["snackId"]
}

let store = ModelStore.inMemory()
store.setTrace { print("  SQL:", $0) }
do {
    print(try Snack(snackId: 123, name: "Pocky", price: 1.1).save(in: store))
    print(try Snack(snackId: 123, size: 999).save(in: store))
    print(try Snack.find(key: 123, in: store) as Any)
    print(try Snack.count(in: store))
    try Snack(snackId: 123).save(clearing: [\.price], in: store)
    print(try Snack.find(key: 123, in: store) as Any)
    print(try Snack.delete(key: 123, in: store))
    print(try Snack.findAll(in: store))
} catch {
    print(error)
}
