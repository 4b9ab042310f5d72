// What every page of the documentation assumes without showing it: a store, and the README's
// `Snack` with the properties the guides use. scripts/doc-snippets.py adds these declarations
// to each page's module, except those the page declares itself. Page-specific context is in
// <Page>.swift beside this file.
import ModelStore

let store = ModelStore.inMemory()

struct Snack: StoredModel {
    var snackId: Int64
    var name: String?
    var price: Double?
    var taste: String?
    var size: Int?
    var tags: [String] = []
    static let primaryKey = ["snackId"]
}
