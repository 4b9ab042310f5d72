import Foundation
import ModelStoreCSQLite
import Testing

@testable import ModelStore

// Models for hostile loading cases. Each name is unique to this file: tables are named after
// the type, and other suites declare their own `Team`, `Node` and so on.

/// A one-to-one declared eager on both sides: A eager→B and B eager→A.
private struct AdvHusband: StoredModel, Equatable {
    var id: Int64
    var name: String?
    @Related var wife: AdvWife?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvHusband>] = [.toOne(\.wife, inverse: \AdvWife.husband).loading(.eager)]
}

private struct AdvWife: StoredModel, Equatable {
    var id: Int64
    var name: String?
    @Related var husband: AdvHusband?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvWife>] = [.toOne(\.husband, inverse: \AdvHusband.wife).loading(.eager)]
}

/// A one-to-many declared eager on both sides.
private struct AdvShelf: StoredModel, Equatable {
    var id: Int64
    var label: String?
    var books: [AdvBook]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvShelf>] = [.toMany(\.books, inverse: \AdvBook.shelf).loading(.eager)]
}

private struct AdvBook: StoredModel, Equatable {
    var id: Int64
    var title: String?
    @Related var shelf: AdvShelf?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvBook>] = [.toOne(\.shelf, inverse: \AdvShelf.books).loading(.eager)]
}

/// A self-referential tree whose both directions are eager.
private struct AdvNode: StoredModel, Equatable {
    var id: Int64
    var name: String?
    @Related var parent: AdvNode?
    var children: [AdvNode]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvNode>] = [
        .toOne(\.parent, inverse: \AdvNode.children).loading(.eager),
        .toMany(\.children, inverse: \AdvNode.parent).loading(.eager),
    ]
}

/// A one-way eager to-one, whose target row can go missing behind the store's back.
private struct AdvHolder: StoredModel, Equatable {
    var id: Int64
    var name: String?
    static let primaryKey = ["id"]
}

private struct AdvBadge: StoredModel, Equatable {
    var id: Int64
    var holder: AdvHolder?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvBadge>] = [.toOne(\.holder).loading(.eager)]
}

/// One eager to-one and one on-request to-many.
private struct AdvGig: StoredModel, Equatable {
    var id: Int64
    var venue: AdvVenue?
    var acts: [AdvAct]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvGig>] = [
        .toOne(\.venue, inverse: \AdvVenue.gigs).loading(.eager),
        .toMany(\.acts, inverse: \AdvAct.gig),
    ]
}

private struct AdvVenue: StoredModel, Equatable {
    var id: Int64
    var name: String?
    var gigs: [AdvGig]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvVenue>] = [.toMany(\.gigs, inverse: \AdvGig.venue)]
}

private struct AdvAct: StoredModel, Equatable {
    var id: Int64
    @Related var gig: AdvGig?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvAct>] = [.toOne(\.gig, inverse: \AdvGig.acts)]
}

/// A one-to-many whose child holds its parent as a plain Optional (not `@Related`): the
/// parent arrives through the plain injected value, not the wrapper.
private struct AdvCrate: StoredModel, Equatable {
    var id: Int64
    var items: [AdvItem]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvCrate>] = [.toMany(\.items, inverse: \AdvItem.crate)]
}

private struct AdvItem: StoredModel, Equatable {
    var id: Int64
    var crate: AdvCrate?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvItem>] = [.toOne(\.crate, inverse: \AdvCrate.items)]
}

/// A child whose hand-written init(from:) reads its parent with `decode(Related<…>.self)`
/// and its name under a renamed key.
private struct AdvPage: StoredModel, Equatable {
    var id: Int64
    var text: String?
    @Related var album: AdvAlbum?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvPage>] = [.toOne(\.album, inverse: \AdvAlbum.pages)]

    enum CodingKeys: String, CodingKey {
        case id
        case text = "body"
        case album
    }

    init(id: Int64, text: String? = nil, album: AdvAlbum? = nil) {
        self.id = id
        self.text = text
        self.album = album
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        text = try container.decodeIfPresent(String.self, forKey: .text)
        _album = try container.decode(Related<AdvAlbum>.self, forKey: .album)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encodeIfPresent(text, forKey: .text)
        try container.encode(_album, forKey: .album)
    }
}

/// The parent, whose relationship is decoded under a renamed key by decodeIfPresent.
private struct AdvAlbum: StoredModel, Equatable {
    var id: Int64
    var pages: [AdvPage]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<AdvAlbum>] = [.toMany(\.pages, inverse: \AdvPage.album).loading(.eager)]

    enum CodingKeys: String, CodingKey {
        case id
        case pages = "leaves"
    }
}

/// A model without relationships.
private struct AdvPlain: StoredModel, Equatable {
    var id: Int64
    var name: String?
    static let primaryKey = ["id"]
}

/// Hostile cases for loading related records on request, eagerly, and by option.
@Suite("Adversarial: loading related records")
struct EagerLoadingAttackTests {
    @Test(arguments: Backend.available) func aOneToOneEagerOnBothSidesLoadsOneLevelFromEitherSide(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try AdvHusband(id: 1, name: "h", wife: Related(wrappedValue: AdvWife(id: 10, name: "w"))).save(in: test.store)
        let husband = try #require(try AdvHusband.find(key: 1, in: test.store))
        #expect(husband.wife?.id == 10)
        #expect(husband.wife?.name == "w")
        // The inverse holds the record it was reached from, its stored values only.
        #expect(husband.wife?.husband?.id == 1)
        #expect(husband.wife?.husband?.wife == nil)
        let wife = try #require(try AdvWife.find(key: 10, in: test.store))
        #expect(wife.husband?.id == 1)
        #expect(wife.husband?.wife?.id == 10)
        #expect(wife.husband?.wife?.husband == nil)
        #expect(try AdvWife.findAll(in: test.store).map { $0.husband?.id } == [1])
        #expect(try AdvHusband.findAll(in: test.store).map { $0.wife?.id } == [10])
        // .all walks the cycle and stops.
        let all = try #require(try AdvHusband.find(key: 1, loading: .all, in: test.store))
        #expect(all.wife?.husband?.id == 1 && all.wife?.husband?.wife == nil)
        // .none reads neither side.
        #expect(try AdvHusband.find(key: 1, loading: .none, in: test.store)?.wife == nil)
        #expect(try AdvWife.find(key: 10, loading: .none, in: test.store)?.husband == nil)
    }

    @Test(arguments: Backend.available) func aOneToManyEagerOnBothSidesGivesChildrenTheirParentAndStopsThere(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try AdvShelf(id: 1, label: "s", books: [AdvBook(id: 1, title: "a"), AdvBook(id: 2, title: "b")]).save(in: test.store)
        try AdvShelf(id: 2, label: "empty", books: []).save(in: test.store)
        let shelf = try #require(try AdvShelf.find(key: 1, in: test.store))
        #expect(shelf.books?.map(\.id) == [1, 2])
        #expect(shelf.books?.allSatisfy { $0.shelf?.id == 1 && $0.shelf?.label == "s" && $0.shelf?.books == nil } == true)
        #expect(try AdvShelf.find(key: 2, in: test.store)?.books == [])
        let book = try #require(try AdvBook.find(key: 2, in: test.store))
        #expect(book.shelf?.id == 1)
        // A to-many inverse reached from a child is left as decoded.
        #expect(book.shelf?.books == nil)
        let books = try AdvBook.findAll(in: test.store)
        #expect(books.map { $0.shelf?.id } == [1, 1])
        let shelves = try AdvShelf.findAll(in: test.store)
        #expect(shelves.map { $0.books?.map(\.id) } == [[1, 2], []])
    }

    @Test(arguments: Backend.available) func aSelfReferentialEagerTreeLoadsOneLevelEachWay(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try AdvNode(
            id: 1, name: "root",
            children: [AdvNode(id: 2, name: "a", children: [AdvNode(id: 4, name: "a1")]), AdvNode(id: 3, name: "b")]
        ).save(in: test.store)
        let middle = try #require(try AdvNode.find(key: 2, in: test.store))
        #expect(middle.parent?.id == 1)
        #expect(middle.parent?.parent == nil && middle.parent?.children == nil)
        #expect(middle.children?.map(\.id) == [4])
        #expect(middle.children?.first?.parent?.id == 2)
        #expect(middle.children?.first?.children == nil)
        let root = try #require(try AdvNode.find(key: 1, in: test.store))
        #expect(root.parent == nil)
        #expect(root.children?.map(\.id) == [2, 3])
        #expect(root.children?.allSatisfy { $0.children == nil } == true)
        let leaf = try #require(try AdvNode.find(key: 4, in: test.store))
        #expect(leaf.parent?.id == 2 && leaf.children == [])
        let all = try AdvNode.findAll(in: test.store)
        #expect(all.map(\.id) == [1, 2, 3, 4])
        #expect(all.map { $0.parent?.id } == [nil, 1, 1, 2])
        #expect(all.map { $0.children?.map(\.id) } == [[2, 3], [4], [], []])
        // Deep loading follows the tree further.
        #expect(try AdvNode.find(key: 1, loading: .all, in: test.store)?.children?.first?.children?.map(\.id) == [4])
    }

    @Test(arguments: Backend.available) func aNodeThatIsItsOwnParentLoadsEagerlyAndTerminates(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try AdvNode(id: 5, name: "loop").save(in: test.store)
        try test.rawExecute(#"UPDATE "AdvNode" SET "parent_id" = 5 WHERE "id" = 5"#)
        for options in [LoadOptions.declared, .direct, .all, .depth(5)] {
            let node = try #require(try AdvNode.find(key: 5, loading: options, in: test.store))
            #expect(node.parent?.id == 5)
            #expect(node.children?.map(\.id) == [5])
            let all = try AdvNode.findAll(loading: options, in: test.store)
            #expect(all.count == 1 && all.first?.parent?.id == 5)
        }
    }

    @Test(arguments: Backend.available) func anEagerToOneWhoseTargetRowIsMissingReadsAsNilAndKeepsItsLink(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        try AdvBadge(id: 1, holder: AdvHolder(id: 7, name: "gone")).save(in: test.store)
        try AdvBadge(id: 2, holder: AdvHolder(id: 8, name: "kept")).save(in: test.store)
        // Another tool, without foreign keys enforced, deletes the target behind the store's back
        // (on a server: a session that skips its foreign-key triggers).
        if backend == .sqlite {
            let raw = try Connection(location: test.store.path!, flags: SQLITE_OPEN_READWRITE, busyTimeout: 5)
            try raw.execute(#"DELETE FROM "AdvHolder" WHERE "id" = 7"#)
        } else {
            let other = try test.later()
            try other.transaction {
                try other.rawExecute("SET LOCAL session_replication_role = replica")
                try other.rawExecute(#"DELETE FROM "AdvHolder" WHERE "id" = 7"#)
            }
            try other.close()
        }
        for options in [LoadOptions.declared, .direct, .all, .only("holder")] {
            let badge = try #require(try AdvBadge.find(key: 1, loading: options, in: test.store))
            #expect(badge.holder == nil)
            let all = try AdvBadge.findAll(loading: options, in: test.store)
            #expect(all.map { $0.holder?.id } == [nil, 8])
            #expect(try AdvBadge.filter(Column("id") >= 1).loading(options).findAll(in: test.store).map { $0.holder?.id } == [nil, 8])
            #expect(try AdvBadge(id: 1).loadingRelationships(options, in: test.store).holder == nil)
        }
        // Saving what was read (holder nil) leaves the stored link alone.
        let read = try #require(try AdvBadge.find(key: 1, in: test.store))
        try read.save(in: test.store)
        #expect(try test.rawRows(#"SELECT "holder_id" FROM "AdvBadge" ORDER BY "id""#) == [[.integer(7)], [.integer(8)]])
    }

    @Test(arguments: Backend.available) func eagerDeclarationsCombineWithEveryLoadOption(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let venue = AdvVenue(id: 1, name: "hall")
        try AdvGig(id: 1, venue: venue, acts: [AdvAct(id: 1), AdvAct(id: 2)]).save(in: test.store)
        func read(_ options: LoadOptions) throws -> AdvGig { try #require(try AdvGig.find(key: 1, loading: options, in: test.store)) }
        #expect(try read(.declared).venue?.id == 1)
        #expect(try read(.declared).acts == nil)
        #expect(try read(.none).venue == nil && read(.none).acts == nil)
        #expect(try read(.depth(0)).venue == nil && read(.depth(0)).acts == nil)
        #expect(try read(.only([])).venue == nil && read(.only([])).acts == nil)
        // `.only` names exactly what loads: an eager relationship it does not name stays empty.
        #expect(try read(.only("acts")).venue == nil)
        #expect(try read(.only("acts")).acts?.map(\.id) == [1, 2])
        #expect(try read(.only("venue")).venue?.id == 1 && read(.only("venue")).acts == nil)
        #expect(try read(.only("venue", "acts")).venue?.id == 1 && read(.only("venue", "acts")).acts?.count == 2)
        #expect(try read(.direct).venue?.id == 1 && read(.direct).acts?.count == 2)
        let all = try read(.all)
        #expect(all.venue?.id == 1 && all.acts?.map { $0.gig?.id } == [1, 1])
        #expect(all.venue?.gigs == nil)  // the inverse is not walked back
        // From the other side nothing is eager: .declared reads the venue alone.
        #expect(try AdvVenue.find(key: 1, in: test.store)?.gigs == nil)
        #expect(try AdvVenue.find(key: 1, loading: .only("gigs"), in: test.store)?.gigs?.first?.venue?.id == 1)
        // A path through a relationship that is eager at the first level only.
        let deep = try #require(try AdvVenue.find(key: 1, loading: .only("gigs.acts"), in: test.store))
        #expect(deep.gigs?.first?.acts?.map(\.id) == [1, 2])
        // Held values: loadingRelationships defaults to .direct, and takes .declared too.
        #expect(try AdvGig(id: 1).loadingRelationships(in: test.store).acts?.count == 2)
        #expect(try AdvGig(id: 1).loadingRelationships(.declared, in: test.store).acts == nil)
        #expect(try AdvGig(id: 1).loadingRelationships(.declared, in: test.store).venue?.id == 1)
        #expect(
            try AdvGig.loadingRelationships(of: [AdvGig(id: 1), AdvGig(id: 1)], .none, in: test.store) == [AdvGig(id: 1), AdvGig(id: 1)])
        // Unknown names throw, whichever path the read would take.
        #expect(errorCode { _ = try read(.only("nope")) } == .invalidQuery)
        #expect(errorCode { _ = try read(.only("venue.nope")) } == .invalidQuery)
    }

    @Test(arguments: Backend.available) func childrenGetTheirParentWhicheverWayTheParentsRelationshipLoads(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try AdvCrate(id: 1, items: [AdvItem(id: 1), AdvItem(id: 2)]).save(in: test.store)
        try AdvCrate(id: 2, items: [AdvItem(id: 3)]).save(in: test.store)
        // On request: nothing by default, the parent injected into each child when asked.
        #expect(try AdvCrate.find(key: 1, in: test.store)?.items == nil)
        for options in [LoadOptions.direct, .only("items"), .all] {
            let crates = try AdvCrate.findAll(loading: options, in: test.store)
            #expect(crates.map { $0.items?.map(\.id) } == [[1, 2], [3]])
            #expect(crates.map { $0.items?.map { $0.crate?.id } } == [[1, 1], [2]])
            #expect(crates.allSatisfy { $0.items?.allSatisfy { $0.crate?.items == nil } == true })
            let one = try AdvCrate.findAll(where: Column("id") == 2, loading: options, in: test.store)
            #expect(one.first?.items?.first?.crate?.id == 2)
        }
        // A child read on its own: its to-one loads on request, and a plain read leaves it nil.
        #expect(try AdvItem.find(key: 3, in: test.store)?.crate == nil)
        #expect(try AdvItem.find(key: 3, loading: .direct, in: test.store)?.crate?.id == 2)
        // A hand-written child init(from:) that decodes the wrapper with decode(_:forKey:), and
        // a parent whose relationship is coded under a renamed key and declared eager.
        try AdvAlbum(id: 1, pages: [AdvPage(id: 1, text: "x"), AdvPage(id: 2, text: "y")]).save(in: test.store)
        let album = try #require(try AdvAlbum.find(key: 1, in: test.store))
        #expect(album.pages?.map(\.id) == [1, 2])
        #expect(album.pages?.map(\.text) == ["x", "y"])
        #expect(album.pages?.map { $0.album?.id } == [1, 1])
        #expect(try AdvAlbum.find(key: 1, loading: .none, in: test.store)?.pages == nil)
        #expect(try AdvPage.find(key: 2, in: test.store)?.album == nil)
        #expect(try AdvPage.find(key: 2, loading: .direct, in: test.store)?.album?.id == 1)
        #expect(try AdvPage.find(key: 2, loading: .direct, in: test.store)?.album?.pages == nil)
    }

    @Test(arguments: Backend.available) func everyCallFormAndBlockLoadsWhatItIsAsked(_ backend: Backend) async throws {
        let test = try TestStore(.file, or: backend)
        let store = test.store
        try synchronously {
            try AdvGig(id: 1, venue: AdvVenue(id: 1), acts: [AdvAct(id: 1)]).save(in: store)
            try AdvGig(id: 2, venue: AdvVenue(id: 2), acts: [AdvAct(id: 2), AdvAct(id: 3)]).save(in: store)
            try AdvGig(id: 3, acts: []).save(in: store)
        }
        func shape(_ gig: AdvGig?) -> String {
            guard let gig else { return "missing" }
            return "\(gig.id) venue \(gig.venue?.id.description ?? "-") acts \(gig.acts?.map(\.id).description ?? "-")"
        }
        // Sync, completion and async forms.
        #expect(shape(try synchronously { try AdvGig.find(key: 2, in: store) }) == "2 venue 2 acts -")
        #expect(shape(try await AdvGig.find(key: 2, loading: .direct, in: store)) == "2 venue 2 acts [2, 3]")
        let delivered = await withCheckedContinuation { continuation in
            AdvGig.find(key: 2, loading: .none, in: store) { continuation.resume(returning: $0) }
        }
        #expect(shape(try delivered.get()) == "2 venue - acts -")
        let deliveredAll = await withCheckedContinuation { continuation in
            AdvGig.findAll(where: Column("id") >= 2, loading: .only("acts"), in: store) { continuation.resume(returning: $0) }
        }
        #expect(try deliveredAll.get().map(shape) == ["2 venue - acts [2, 3]", "3 venue - acts []"])
        #expect(try await AdvGig.findAll(in: store).map(shape) == ["1 venue 1 acts -", "2 venue 2 acts -", "3 venue - acts -"])
        #expect(
            shape(try await AdvGig.findFirst(by: \.id, equals: 3, loading: .direct, in: store)) == "3 venue - acts []")
        // Inside read and transaction blocks.
        let inReadBlock: [String] = try synchronously {
            try store.read { () throws -> [String] in
                [
                    shape(try AdvGig.find(key: 1, in: store)),
                    shape(try AdvGig.find(key: 1, loading: .direct, in: store)),
                ] + (try AdvGig.findAll(by: \.id, equals: 1, loading: .none, in: store).map(shape))
            }
        }
        #expect(inReadBlock == ["1 venue 1 acts -", "1 venue 1 acts [1]", "1 venue - acts -"])
        let inTransaction: [String] = try synchronously {
            try store.transaction { () throws -> [String] in
                try AdvAct(id: 4, gig: Related(wrappedValue: AdvGig(id: 1))).save(in: store)
                return [
                    shape(try AdvGig.find(key: 1, loading: .direct, in: store)),
                    shape(try AdvGig.findFirst(where: Column("id") == 1, in: store)),
                ] + (try AdvGig.loadingRelationships(of: [AdvGig(id: 1)], in: store).map(shape))
            }
        }
        #expect(inTransaction == ["1 venue 1 acts [1, 4]", "1 venue 1 acts -", "1 venue 1 acts [1, 4]"])
        let inRead = try await store.read { try AdvGig.find(key: 2, loading: .only("acts"), in: store) }
        #expect(shape(inRead) == "2 venue - acts [2, 3]")
    }

    @Test(arguments: Backend.available) func findFirstOnAPagedQueryLoadsTheRecordThePageStartsWith(_ backend: Backend) throws {
        let test = try TestStore(backend)
        for id in 1...6 {
            try AdvGig(id: Int64(id), venue: AdvVenue(id: Int64(id % 2 + 1)), acts: [AdvAct(id: Int64(id * 10))]).save(in: test.store)
        }
        let descending = AdvGig.all().order(.descending(\.id))
        let first = try #require(try descending.page(1, rows: 2).loading(.direct).findFirst(in: test.store))
        #expect(first.id == 4 && first.venue?.id == 1 && first.acts?.map(\.id) == [40])
        let plain = try #require(try descending.limit(3, offset: 4).findFirst(in: test.store))
        #expect(plain.id == 2 && plain.venue?.id == 1 && plain.acts == nil)
        #expect(try descending.limit(0, offset: 1).loading(.direct).findFirst(in: test.store) == nil)
        #expect(try descending.limit(5, offset: 6).loading(.direct).findFirst(in: test.store) == nil)
        #expect(
            try AdvGig.findFirst(where: Column("id") > 2, orderBy: [.ascending(\.id)], loading: .only("acts"), in: test.store)?.acts?
                .map(\.id) == [30])
        // The page of a query that filters keeps its filter.
        let filtered = try #require(try AdvGig.filter(Column("id") > 3).order(.ascending(\.id)).page(1, rows: 1).findFirst(in: test.store))
        #expect(filtered.id == 5 && filtered.venue?.id == 2)
        #expect(errorCode { _ = try descending.page(-1, rows: 2).findFirst(in: test.store) } == .invalidQuery)
    }

    @Test(arguments: Backend.available) func loadOptionsOnAModelWithoutRelationshipsReadItsStoredValues(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try AdvPlain(id: 1, name: "p").save(in: test.store)
        for options in [LoadOptions.declared, .none, .direct, .all, .depth(3)] {
            #expect(try AdvPlain.find(key: 1, loading: options, in: test.store)?.name == "p")
            #expect(try AdvPlain.findAll(where: Column("id") == 1, loading: options, in: test.store).map(\.name) == ["p"])
            #expect(try AdvPlain(id: 1).loadingRelationships(options, in: test.store) == AdvPlain(id: 1))
        }
    }
}
