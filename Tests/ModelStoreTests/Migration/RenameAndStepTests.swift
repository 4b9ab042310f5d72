import Foundation
import ModelStoreCSQLite
import Testing
@testable import ModelStore

// One release that both renames (declared `formerNames`) and runs steps on the same table.
// The order: each step sees the file as the previous release left it, and reads a model by
// that model's own names; the current models' renames follow the steps. A transform makes
// `New`'s columns from what `Old` reads, so a rename of one of those is the transform's
// work; the rest of `New`'s renames (its table, link columns, join tables) apply as it
// writes.

/// Release 1: products with a name and a price in francs, on shelves, with tags.
private enum Shop1 {
    struct Shelf: StoredModel, Equatable {
        var shelfId: Int64
        var label: String
        var products: [Product]?
        static let primaryKey = ["shelfId"]
        static let relationships: [Relationship<Shelf>] = [.toMany(\.products, inverse: \Product.shelf)]
    }

    struct Product: StoredModel, Equatable {
        var productId: Int64
        var name: String
        var price: Double?
        @Related var shelf: Shelf?
        var tags: [Tag]?
        static let primaryKey = ["productId"]
        static let relationships: [Relationship<Product>] = [
            .toOne(\.shelf, inverse: \Shelf.products), .toMany(\.tags, inverse: \Tag.products),
        ]
    }

    struct Tag: StoredModel, Equatable {
        var label: String
        var products: [Product]?
        static let primaryKey = ["label"]
        static let relationships: [Relationship<Tag>] = [.toMany(\.products, inverse: \Product.tags)]
    }

    /// (id, name, price, shelf, tags)
    static let rows: [(Int64, String, Double?, Int64?, [String])] = [
        (1, "kettle", 24.5, 1, ["steel"]), (2, "teapot", nil, 1, []), (3, "mug", 0.1, 2, ["steel", "blue"]),
        (4, "spoon", 3.25, nil, ["blue"]),
    ]

    static func seed(_ store: ModelStore) throws {
        try store.transaction {
            for tag in ["steel", "blue", "spare"] { try Tag(label: tag).save(in: store) }
            for shelf in [Shelf(shelfId: 1, label: "top"), Shelf(shelfId: 2, label: "low")] { try shelf.save(in: store) }
            for (id, name, price, shelf, tags) in rows {
                var product = Product(productId: id, name: name, price: price, tags: tags.map { Tag(label: $0) })
                product.shelf = shelf.map { Shelf(shelfId: $0, label: $0 == 1 ? "top" : "low") }
                try product.save(in: store)
            }
        }
    }

    static func cents(_ price: Double?) -> Int64? { price.map { Int64(($0 * 100).rounded()) } }
}

/// Release 2, same table: `name` is now `title` and `shelf` is `rack` (declared renames),
/// and the price is in whole cents (a transform step).
private enum Shop2 {
    struct Shelf: StoredModel, Equatable {
        var shelfId: Int64
        var label: String
        var products: [Product]?
        static let primaryKey = ["shelfId"]
        static let relationships: [Relationship<Shelf>] = [.toMany(\.products, inverse: \Product.rack)]
    }

    struct Product: StoredModel, Equatable {
        var productId: Int64
        var title: String
        var priceCents: Int64?
        @Related var rack: Shelf?
        var tags: [Tag]?
        static let primaryKey = ["productId"]
        static let relationships: [Relationship<Product>] = [
            .toOne(\.rack, inverse: \Shelf.products), .toMany(\.tags, inverse: \Tag.products),
        ]
        static let formerNames: [FormerName<Product>] = [.property(\.title, from: "name"), .property(\.rack, from: "shelf")]
    }

    struct Tag: StoredModel, Equatable {
        var label: String
        var products: [Product]?
        static let primaryKey = ["label"]
        static let relationships: [Relationship<Tag>] = [.toMany(\.products, inverse: \Product.tags)]
    }

    static let toCents = MigrationStep("prices in cents") { step in
        try step.transform(Shop1.Product.self, to: Product.self) { old in
            Product(productId: old.productId, title: old.name, priceCents: Shop1.cents(old.price))
        }
    }
}

/// Release 2 as a new table: `Product` is now `Article` (its key `productId` now
/// `articleId`, `name` now `title`, `shelf` now `rack`, `Tag.products` now `articles`), with
/// the price in cents.
private enum Shop2Renamed {
    struct Shelf: StoredModel, Equatable {
        var shelfId: Int64
        var label: String
        var articles: [Article]?
        static let primaryKey = ["shelfId"]
        static let relationships: [Relationship<Shelf>] = [.toMany(\.articles, inverse: \Article.rack)]
    }

    struct Article: StoredModel, Equatable {
        var articleId: Int64
        var title: String
        var priceCents: Int64?
        @Related var rack: Shelf?
        var tags: [Tag]?
        static let primaryKey = ["articleId"]
        static let relationships: [Relationship<Article>] = [
            .toOne(\.rack, inverse: \Shelf.articles), .toMany(\.tags, inverse: \Tag.articles),
        ]
        static let formerNames: [FormerName<Article>] = [
            .table(from: "Product"), .property(\.articleId, from: "productId"), .property(\.title, from: "name"),
            .property(\.rack, from: "shelf"),
        ]
    }

    struct Tag: StoredModel, Equatable {
        var label: String
        var articles: [Article]?
        static let primaryKey = ["label"]
        static let relationships: [Relationship<Tag>] = [.toMany(\.articles, inverse: \Article.tags)]
        static let formerNames: [FormerName<Tag>] = [.property(\.articles, from: "products")]
    }

    static let toCents = MigrationStep("articles in cents") { step in
        try step.transform(Shop1.Product.self, to: Article.self) { old in
            Article(articleId: old.productId, title: old.name, priceCents: Shop1.cents(old.price))
        }
    }
}

/// Release 2 through a rebuild: `name` is now `title`, `shelf` is `rack`, and the price is
/// whole cents computed in SQL over the renamed table.
private enum Shop2Rebuilt {
    struct Product: StoredModel, Equatable {
        var productId: Int64
        var title: String
        var priceCents: Int64?
        @Related var rack: Shelf?
        static let primaryKey = ["productId"]
        static let relationships: [Relationship<Product>] = [.toOne(\.rack)]
        static let formerNames: [FormerName<Product>] = [.property(\.title, from: "name"), .property(\.rack, from: "shelf")]
    }

    struct Shelf: StoredModel, Equatable {
        var shelfId: Int64
        var label: String
        static let primaryKey = ["shelfId"]
    }

    static let toCents = MigrationStep("prices in cents by SQL") { step in
        try step.rebuild(Product.self, values: ["priceCents": "CAST(round(price * 100) AS INTEGER)"], dropping: ["price"])
    }
}

/// Release 3: `title` is now `heading` (formerly `title`, and `name` before that), and the
/// cents become a label in a step of its own.
private enum Shop3 {
    struct Product: StoredModel, Equatable {
        var productId: Int64
        var heading: String
        var priceLabel: String?
        @Related var rack: Shelf?
        var tags: [Tag]?
        static let primaryKey = ["productId"]
        static let relationships: [Relationship<Product>] = [
            .toOne(\.rack, inverse: \Shelf.products), .toMany(\.tags, inverse: \Tag.products),
        ]
        static let formerNames: [FormerName<Product>] = [
            .property(\.heading, from: "title"), .property(\.heading, from: "name"), .property(\.rack, from: "shelf"),
        ]
    }

    struct Shelf: StoredModel, Equatable {
        var shelfId: Int64
        var label: String
        var products: [Product]?
        static let primaryKey = ["shelfId"]
        static let relationships: [Relationship<Shelf>] = [.toMany(\.products, inverse: \Product.rack)]
    }

    struct Tag: StoredModel, Equatable {
        var label: String
        var products: [Product]?
        static let primaryKey = ["label"]
        static let relationships: [Relationship<Tag>] = [.toMany(\.products, inverse: \Product.tags)]
    }

    static let toLabels = MigrationStep("price labels") { step in
        try step.transform(Shop2.Product.self, to: Product.self) { old in
            Product(productId: old.productId, heading: old.title, priceLabel: old.priceCents.map { "\($0) ct" })
        }
    }
}

/// Release 1.5: declared the rename alone (no step), so a file it opened is already renamed
/// when release 2's step runs.
private enum Shop15 {
    struct Product: StoredModel, Equatable {
        var productId: Int64
        var title: String
        var price: Double?
        @Related var shelf: Shop2Rebuilt.Shelf?
        static let primaryKey = ["productId"]
        static let relationships: [Relationship<Product>] = [.toOne(\.shelf)]
        static let formerNames: [FormerName<Product>] = [.property(\.title, from: "name")]
    }
}

// SQLite-only: written on SQLite files (raw checks through SQLite's catalog, backups, process
// kills); what they promise for a server runs in MigrationsOnBothBackendsTests.
@Suite("Migrations: a rename and a step in one release")
struct RenameAndStepTests {
    private let directory: URL
    private let path: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rename-step-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("store.sqlite").path
    }

    private func cleanUp() { try? FileManager.default.removeItem(at: directory) }

    private func open(_ steps: [MigrationStep] = [], readOnly: Bool = false) throws -> ModelStore {
        try ModelStore(path: path, configuration: .init(readOnly: readOnly, migrations: steps))
    }

    private func seed() throws {
        let store = try open()
        try Shop1.seed(store)
        try store.close()
    }

    /// The file read with SQL alone, through a bare connection (nothing of ModelStore's runs).
    private func rows(_ sql: String) throws -> [[SQLValue]] {
        let connection = try Connection(location: path, flags: SQLITE_OPEN_READONLY, busyTimeout: 5)
        defer { connection.close() }
        let statement = try connection.makeStatement(sql)
        var result: [[SQLValue]] = []
        try statement.forEachRow { result.append((0..<statement.columnCount).map { statement.value(at: $0) }) }
        return result
    }

    private func columns(_ table: String) throws -> [String] {
        try rows("SELECT name FROM pragma_table_info('\(table)') ORDER BY cid").map {
            if case .text(let name) = $0[0] { return name }
            return ""
        }
    }

    /// Every release-1 value and link, read through release 2's same-table models.
    private func expectRelease2(_ store: ModelStore, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let products = try Shop2.Product.findAll(loading: .direct, in: store).sorted { $0.productId < $1.productId }
        #expect(products.map(\.productId) == Shop1.rows.map(\.0), sourceLocation: sourceLocation)
        for (product, row) in zip(products, Shop1.rows) {
            #expect(product.title == row.1, sourceLocation: sourceLocation)
            #expect(product.priceCents == Shop1.cents(row.2), "\(row.1)'s price", sourceLocation: sourceLocation)
            #expect(product.rack?.shelfId == row.3, "\(row.1)'s shelf", sourceLocation: sourceLocation)
            #expect(Set((product.tags ?? []).map(\.label)) == Set(row.4), "\(row.1)'s tags", sourceLocation: sourceLocation)
        }
        let shelf = try Shop2.Shelf.find(key: 1, loading: .direct, in: store)
        #expect(shelf?.products?.map(\.productId).sorted() == [1, 2], sourceLocation: sourceLocation)
    }

    private func expectRelease2OnDisk(sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try columns("Product") == ["productId", "title", "priceCents", "rack_shelfId"], sourceLocation: sourceLocation)
        #expect(
            try rows("SELECT productId, title, priceCents, rack_shelfId FROM Product ORDER BY productId")
                == Shop1.rows.map { row in
                    [
                        .integer(row.0), .text(row.1), Shop1.cents(row.2).map(SQLValue.integer) ?? .null,
                        row.3.map(SQLValue.integer) ?? .null,
                    ]
                }, sourceLocation: sourceLocation)
        #expect(try rows("PRAGMA foreign_key_check").isEmpty, sourceLocation: sourceLocation)
        #expect(try rows("PRAGMA integrity_check") == [[.text("ok")]], sourceLocation: sourceLocation)
    }

    // MARK: Rename + transform

    /// The example of *Changing your models*: the step reads release 1's `name`, which the
    /// same release renames to `title`. The store must not rename it away from under the
    /// step, nor blame another program.
    @Test func aRenameAndATransformOfTheSameTableInOneReleaseKeepEveryValueAndLink() throws {
        defer { cleanUp() }
        try seed()
        let store = try open([Shop2.toCents])
        try expectRelease2(store)
        #expect(try store.appliedMigrations() == ["prices in cents"])
        try store.close()
        try expectRelease2OnDisk()
        // Opening again runs nothing and changes nothing.
        let again = try open([Shop2.toCents])
        defer { try? again.close() }
        try expectRelease2(again)
        #expect(try again.migrationPlan(for: [Shop2.Product.self, Shop2.Shelf.self, Shop2.Tag.self]).changesNothing)
    }

    /// The table, its key, a property, a link and a join table renamed, and a transform, in
    /// one release.
    @Test func aTableRenameWithPropertyRenamesAndATransformKeepEveryValueAndLink() throws {
        defer { cleanUp() }
        try seed()
        let store = try open([Shop2Renamed.toCents])
        defer { try? store.close() }
        let articles = try Shop2Renamed.Article.findAll(loading: .direct, in: store).sorted { $0.articleId < $1.articleId }
        #expect(articles.map(\.articleId) == Shop1.rows.map(\.0))
        for (article, row) in zip(articles, Shop1.rows) {
            #expect(article.title == row.1)
            #expect(article.priceCents == Shop1.cents(row.2), "\(row.1)'s price")
            #expect(article.rack?.shelfId == row.3, "\(row.1)'s shelf")
            #expect(Set((article.tags ?? []).map(\.label)) == Set(row.4), "\(row.1)'s tags")
        }
        #expect(try Shop2Renamed.Shelf.find(key: 2, loading: .direct, in: store)?.articles?.map(\.articleId) == [3])
        #expect(try Shop2Renamed.Tag.find(key: "blue", loading: .direct, in: store)?.articles?.map(\.articleId).sorted() == [3, 4])
        #expect(try columns("Article") == ["articleId", "title", "priceCents", "rack_shelfId"])
        let tables = try rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").map(\.[0])
        #expect(!tables.contains(.text("Product")) && !tables.contains(.text("Product_tags__Tag_products")), "\(tables)")
        #expect(try rows("PRAGMA foreign_key_check").isEmpty)
    }

    /// A rebuild whose model renames: its `values` name the model's columns (the rebuild
    /// brings the table up to its model first), and its links follow the rename.
    @Test func aRenameAndARebuildInOneReleaseKeepEveryValueAndLink() throws {
        defer { cleanUp() }
        try seed()
        let store = try open([Shop2Rebuilt.toCents])
        defer { try? store.close() }
        let products = try Shop2Rebuilt.Product.findAll(loading: .direct, in: store).sorted { $0.productId < $1.productId }
        #expect(products.map(\.title) == Shop1.rows.map(\.1))
        #expect(products.map(\.priceCents) == Shop1.rows.map { Shop1.cents($0.2) })
        #expect(products.map { $0.rack?.shelfId } == Shop1.rows.map(\.3))
        #expect(try columns("Product") == ["productId", "title", "priceCents", "rack_shelfId"])
        #expect(try rows("PRAGMA foreign_key_check").isEmpty)
    }

    /// SQL in a step runs before the release's renames: it names the columns as the file
    /// has them. Naming the new name fails as the step's mistake — never another program's.
    @Test func anSQLStepSeesTheOldNamesAndIsToldSoWhenItUsesTheNewOnes() throws {
        defer { cleanUp() }
        try seed()
        let early = MigrationStep("shout titles") { step in try step.execute("UPDATE Product SET title = upper(title)") }
        let error = #expect(throws: ModelStoreError.self) { try open([early]) }
        #expect(error?.code == .migrationFailed)
        #expect(error?.message.contains("shout titles") == true)
        #expect(error?.message.contains("another program") == false, "\(error?.message ?? "")")
        #expect(error?.suggestion?.contains("before the models' renames") == true, "\(error?.suggestion ?? "")")
        let store = try open([.sql("shout titles", "UPDATE Product SET name = upper(name)")])
        defer { try? store.close() }
        #expect(try Shop2Rebuilt.Product.find(key: 1, in: store)?.title == "KETTLE")
    }

    // MARK: Several releases

    /// Release 1 opened by release 3: two transforms, each reading the release before by its
    /// names, and a property renamed twice.
    @Test func twoReleasesOfRenamesAndTransformsRunFromTheOldestFile() throws {
        defer { cleanUp() }
        try seed()
        let store = try open([Shop2.toCents, Shop3.toLabels])
        defer { try? store.close() }
        let products = try Shop3.Product.findAll(loading: .direct, in: store).sorted { $0.productId < $1.productId }
        #expect(products.map(\.heading) == Shop1.rows.map(\.1))
        #expect(products.map(\.priceLabel) == Shop1.rows.map { Shop1.cents($0.2).map { "\($0) ct" } })
        #expect(products.map { $0.rack?.shelfId } == Shop1.rows.map(\.3))
        #expect(products.map { Set(($0.tags ?? []).map(\.label)) } == Shop1.rows.map { Set($0.4) })
        #expect(try columns("Product") == ["productId", "heading", "priceLabel", "rack_shelfId"])
    }

    /// The same history one release at a time, each release's models used in between (so
    /// its renames ran before the next release's step).
    @Test func twoReleasesOfRenamesAndTransformsRunOneAtATime() throws {
        defer { cleanUp() }
        try seed()
        let release2 = try open([Shop2.toCents])
        try expectRelease2(release2)
        try release2.close()
        let release3 = try open([Shop2.toCents, Shop3.toLabels])
        defer { try? release3.close() }
        #expect(try Shop3.Product.find(key: 3, loading: .direct, in: release3)?.heading == "mug")
        #expect(try Shop3.Product.find(key: 3, in: release3)?.priceLabel == "10 ct")
        #expect(try release3.appliedMigrations() == ["prices in cents", "price labels"])
    }

    /// A release between declared the rename alone and renamed the file on first use; the
    /// step added later still reads release 1's `name`, now under `title`.
    @Test func aTransformFindsAColumnAnEarlierReleaseAlreadyRenamed() throws {
        defer { cleanUp() }
        try seed()
        let between = try open()
        #expect(try Shop15.Product.find(key: 1, in: between)?.title == "kettle")
        try between.close()
        #expect(try columns("Product").contains("title"))
        let store = try open([Shop2.toCents])
        defer { try? store.close() }
        try expectRelease2(store)
    }

    // MARK: Failures, planning, reading only

    /// Each step commits on its own: a failing second step leaves the first done and
    /// recorded, the renames not yet run; the next open runs only the second.
    @Test func aFailureAfterTheTransformLeavesItRecordedAndTheNextOpenFinishes() throws {
        defer { cleanUp() }
        try seed()
        let failing = MigrationStep("then fail") { step in try step.execute("UPDATE nowhere SET x = 1") }
        let error = #expect(throws: ModelStoreError.self) { try open([Shop2.toCents, failing]) }
        #expect(error?.code == .migrationFailed)
        #expect(error?.message.contains("then fail") == true)
        #expect(error?.message.contains("another program") == false, "\(error?.message ?? "")")
        #expect(try rows("SELECT name FROM modelstore_migrations") == [[.text("prices in cents")]])
        let store = try open([Shop2.toCents, .sql("then fail", "UPDATE Product SET title = title")])
        defer { try? store.close() }
        try expectRelease2(store)
    }

    /// The plan runs what opening runs, in the same order: the step, then the models'
    /// renames. It succeeds, names the step, and leaves the file as it was.
    @Test func thePlanOfARenameAndATransformListsTheStepAndChangesNothing() throws {
        defer { cleanUp() }
        try seed()
        let plan = try ModelStore.migrationPlan(
            at: path, configuration: .init(migrations: [Shop2Renamed.toCents]),
            for: [Shop2Renamed.Article.self, Shop2Renamed.Shelf.self, Shop2Renamed.Tag.self])
        #expect(plan.pendingSteps == ["articles in cents"])
        #expect(plan.statements.contains { $0.contains("RENAME TO \"Article\"") }, "\(plan)")
        #expect(plan.unusedColumns.isEmpty, "\(plan)")
        #expect(try columns("Product") == ["productId", "name", "price", "shelf_shelfId"], "the plan changed the file")
        let store = try open([Shop2Renamed.toCents])
        defer { try? store.close() }
        #expect(try store.migrationPlan(for: [Shop2Renamed.Article.self]).changesNothing)
    }

    /// A store opened only to migrate leaves the file in the new release's shape: a
    /// read-only store of that release reads every value and link at once.
    @Test func aReadOnlyStoreReadsWhatTheStepLeftWithoutRenamingAnything() throws {
        defer { cleanUp() }
        try seed()
        try open([Shop2.toCents]).close()
        let reader = try open([Shop2.toCents], readOnly: true)
        defer { try? reader.close() }
        try expectRelease2(reader)
    }
}
