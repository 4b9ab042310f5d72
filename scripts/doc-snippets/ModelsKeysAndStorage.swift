// What "Models, keys and storage" assumes: the other sides of Book's relationships.
import Foundation
import ModelStore

struct Author: StoredModel {
    var id: UUID
    var books: [Book]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Author>] = [.toMany(\.books, inverse: \Book.author)]
}

struct Tag: StoredModel {
    var id: UUID
    var books: [Book]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Tag>] = [.toMany(\.books, inverse: \Book.tags)]
}
