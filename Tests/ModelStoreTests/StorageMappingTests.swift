import Foundation
import Testing
@testable import ModelStore

// A GRDB database: blob UUIDs (GRDB's default for UUID), dates as "YYYY-MM-DD HH:MM:SS.SSS"
// UTC text (GRDB's default for Date), booleans as 0/1, a to-one column `authorId` and a join
// table `bookTag` with names of its own.

private struct GRAuthor: StoredModel, Equatable {
    var id: UUID
    var name: String
    var joinedAt: Date
    var books: [GRBook]?
    static let tableName = "author"
    static let primaryKey = ["id"]
    static let columnStorage: [ColumnStorage<GRAuthor>] = [.uuid(\.id, as: .blob), .date(\.joinedAt, as: .sqliteText)]
    static let relationships: [Relationship<GRAuthor>] = [.toMany(\.books, inverse: \GRBook.author)]
}

private struct GRBook: StoredModel, Equatable {
    var id: UUID
    var title: String
    var publishedAt: Date?
    var isDraft: Bool
    @Related var author: GRAuthor?
    var tags: [GRTag]?
    static let tableName = "book"
    static let primaryKey = ["id"]
    static let columnStorage: [ColumnStorage<GRBook>] = [.uuid(\.id, as: .blob), .date(\.publishedAt, as: .sqliteText)]
    static let relationships: [Relationship<GRBook>] = [
        .toOne(\.author, inverse: \GRAuthor.books).columns(["authorId"]),
        .toMany(\.tags, inverse: \GRTag.books).joinTable("bookTag", columns: ["bookId"], targetColumns: ["tagId"]),
    ]
}

private struct GRTag: StoredModel, Equatable {
    var id: UUID
    var label: String
    var books: [GRBook]?
    static let tableName = "tag"
    static let primaryKey = ["id"]
    static let columnStorage: [ColumnStorage<GRTag>] = [.uuid(\.id, as: .blob)]
    static let relationships: [Relationship<GRTag>] = [.toMany(\.books, inverse: \GRBook.tags)]
}

/// The projection of a book a list shows.
private struct BookLine: Decodable, Sendable {
    var title: String
    var publishedAt: Date?
}

/// The date `unixMilliseconds` after 1970, as ModelStore reads it from any millisecond form.
private func ms(_ unixMilliseconds: Int64) -> Date {
    Date(timeIntervalSinceReferenceDate: Double(unixMilliseconds - 978_307_200_000) / 1000)
}

/// The hex digits SQLite's hex() prints for a UUID's 16 bytes.
private func hex(_ uuid: UUID) -> String {
    uuid.uuidString.replacingOccurrences(of: "-", with: "")
}

private let a1 = UUID(uuidString: "6A2F41A3-C4B5-4C6B-9E3E-2C1D0F9A8B71")!
private let a2 = UUID(uuidString: "0B1C2D3E-4F50-4172-8394-A5B6C7D8E9F0")!
private let a3 = UUID(uuidString: "FFEEDDCC-BBAA-4998-8776-655443322110")!
private let b1 = UUID(uuidString: "11111111-2222-4333-8444-555555555555")!
private let b2 = UUID(uuidString: "22222222-3333-4444-8555-666666666666")!
private let b3 = UUID(uuidString: "33333333-4444-4555-8666-777777777777")!
private let b4 = UUID(uuidString: "44444444-5555-4666-8777-888888888888")!
private let t1 = UUID(uuidString: "A0000000-0000-4000-8000-000000000001")!
private let t2 = UUID(uuidString: "A0000000-0000-4000-8000-000000000002")!
private let t3 = UUID(uuidString: "A0000000-0000-4000-8000-000000000003")!

/// Tables as GRDB's `create(table:)` declares them (`t.primaryKey("id", .blob)`,
/// `t.column("joinedAt", .datetime)`, `t.belongsTo("author")` named `authorId`, a join table
/// with a primary key over both columns), and rows with the exact values GRDB writes.
private let grdbDatabase = [
    #"CREATE TABLE "author" ("id" BLOB PRIMARY KEY NOT NULL, "name" TEXT NOT NULL, "joinedAt" DATETIME NOT NULL)"#,
    #"CREATE TABLE "book" ("id" BLOB PRIMARY KEY NOT NULL, "title" TEXT NOT NULL, "publishedAt" DATETIME, "isDraft" BOOLEAN NOT NULL DEFAULT 0, "authorId" BLOB REFERENCES "author"("id") ON DELETE CASCADE)"#,
    #"CREATE INDEX "book_on_authorId" ON "book"("authorId")"#,
    #"CREATE TABLE "tag" ("id" BLOB PRIMARY KEY NOT NULL, "label" TEXT NOT NULL)"#,
    #"CREATE TABLE "bookTag" ("bookId" BLOB NOT NULL REFERENCES "book"("id") ON DELETE CASCADE, "tagId" BLOB NOT NULL REFERENCES "tag"("id") ON DELETE CASCADE, PRIMARY KEY ("bookId", "tagId"))"#,
    "INSERT INTO author VALUES (X'\(hex(a1))', 'Ada', '2023-11-14 22:13:20.000')",
    "INSERT INTO author VALUES (X'\(hex(a2))', 'Brontë', '1999-12-31 23:59:59.999')",
    "INSERT INTO tag VALUES (X'\(hex(t1))', 'classic'), (X'\(hex(t2))', 'poetry')",
    "INSERT INTO book VALUES (X'\(hex(b1))', 'Notes', '2024-05-01 12:00:00.123', 0, X'\(hex(a1))')",
    "INSERT INTO book VALUES (X'\(hex(b2))', 'Drafts', NULL, 1, X'\(hex(a1))')",
    "INSERT INTO book VALUES (X'\(hex(b3))', 'Verse', '1969-07-20 20:17:40.000', 0, X'\(hex(a2))')",
    "INSERT INTO bookTag VALUES (X'\(hex(b1))', X'\(hex(t1))'), (X'\(hex(b3))', X'\(hex(t1))'), (X'\(hex(b3))', X'\(hex(t2))')",
]

@Suite("Storage mappings: a database another tool made, used as it is")
struct StorageMappingTests {
    private func grdbStore(_ backend: Backend) throws -> TestStore {
        let test = try TestStore(.file, or: backend)
        for sql in grdbDatabase { try test.rawExecute(sql) }
        return test
    }

    // SQLite-only: GRDB's database is a SQLite file (BLOB keys, DATETIME text), read as GRDB wrote it.
    @Test func aGRDBDatabaseIsReadThroughDeclaredMappings() throws {
        let test = try grdbStore(.sqlite)
        let store = test.store
        let authors = try GRAuthor.findAll(in: store).sorted { $0.name < $1.name }
        #expect(authors.map(\.id) == [a1, a2])
        #expect(authors.map(\.joinedAt) == [ms(1_700_000_000_000), ms(946_684_799_999)])
        #expect(authors.map(\.name) == ["Ada", "Brontë"])

        // By a 16-byte key, with its author (the authorId column) and tags (the bookTag table).
        let notes = try #require(try GRBook.find(key: b1, loading: .direct, in: store))
        #expect(notes.title == "Notes")
        #expect(notes.publishedAt == ms(1_714_564_800_123))
        #expect(notes.isDraft == false)
        #expect(notes.author?.id == a1)
        #expect(notes.tags?.map(\.id) == [t1])
        #expect(try GRBook.find(key: b2, in: store)?.publishedAt == nil)
        #expect(try GRBook.find(key: b2, in: store)?.isDraft == true)
        #expect(try GRBook.exists(key: b3, in: store))
        #expect(try GRBook.find(key: b4, in: store) == nil)

        // The inverse sides find the same links.
        let ada = try #require(try GRAuthor.find(key: a1, loading: .direct, in: store))
        #expect(Set(ada.books?.map(\.id) ?? []) == [b1, b2])
        let classic = try #require(try GRTag.find(key: t1, loading: .direct, in: store))
        #expect(Set(classic.books?.map(\.id) ?? []) == [b1, b3])

        // Conditions, ranges and orderings compare the stored text.
        let may = try GRBook.findAll(where: \.publishedAt >= ms(1_714_521_600_000) && \.publishedAt < ms(1_717_200_000_000), in: store)
        #expect(may.map(\.id) == [b1])
        #expect(try GRBook.findAll(where: .between(\.publishedAt, ms(-1), ms(1_714_564_800_123)), in: store).map(\.id) == [b1])
        #expect(try GRBook.findAll(where: \.publishedAt == ms(-14_182_940_000), in: store).map(\.id) == [b3])
        #expect(try GRBook.findAll(where: .in(\.id, [b3, b4]), in: store).map(\.id) == [b3])
        #expect(try GRBook.findAll(where: Column("authorId") == a2, in: store).map(\.id) == [b3])
        let dated = try GRBook.findAll(where: .isNotNull(\.publishedAt), orderBy: [.descending(\.publishedAt)], in: store)
        #expect(dated.map(\.id) == [b1, b3])
        #expect(try GRBook.count(where: \.isDraft == true, in: store) == 1)

        // Aggregates and projections read the declared form too.
        #expect(try GRBook.all().max(\.publishedAt, in: store) == ms(1_714_564_800_123))
        #expect(try GRBook.all().min(\.publishedAt, in: store) == ms(-14_182_940_000))
        #expect(try GRAuthor.all().distinct(\.joinedAt, in: store) == [ms(946_684_799_999), ms(1_700_000_000_000)])
        #expect(try GRBook.order(.ascending(\.publishedAt)).values(of: \.id, in: store) == [b2, b3, b1])
        #expect(try GRBook.all().countsGrouped(by: \.publishedAt, in: store) == [nil: 1, ms(-14_182_940_000): 1, ms(1_714_564_800_123): 1])
        let lines = try GRBook.filter(\.title == "Notes").findAll(as: BookLine.self, in: store)
        #expect(lines.map(\.publishedAt) == [ms(1_714_564_800_123)])
        let average = try #require(throws: ModelStoreError.self) { try GRBook.all().average(\.publishedAt, in: store) }
        #expect(average.code == .invalidQuery)
        #expect(average.column == "publishedAt")

        // Saving every record back as it was read writes nothing: its values are the stored bytes.
        for book in try GRBook.findAll(in: store) {
            #expect(try book.save(in: store) == .unchanged)
        }
        for author in try GRAuthor.findAll(in: store) {
            #expect(try author.save(in: store) == .unchanged)
        }
        // Nothing was added to GRDB's tables, nothing was converted.
        #expect(
            try test.rawRows("SELECT typeof(joinedAt), joinedAt FROM author ORDER BY name") == [
                [.text("text"), .text("2023-11-14 22:13:20.000")], [.text("text"), .text("1999-12-31 23:59:59.999")],
            ])
        #expect(try test.rawRows("SELECT count(*) FROM bookTag") == [[.integer(3)]])
    }

    // SQLite-only: GRDB's database is a SQLite file; the test compares SQLite's storage classes and bytes.
    @Test func writesToAGRDBDatabaseAreTheBytesGRDBWrites() throws {
        let test = try grdbStore(.sqlite)
        let store = test.store
        var author = GRAuthor(id: a3, name: "Cy", joinedAt: ms(1_717_317_015_250))
        var book = GRBook(id: b4, title: "New", publishedAt: ms(1_709_208_000_500), isDraft: true)
        book.tags = [GRTag(id: t1, label: "classic"), GRTag(id: t3, label: "fresh")]
        author.books = [book]
        #expect(try author.save(in: store) == .inserted)

        #expect(
            try test.rawRows("SELECT typeof(id), hex(id), name, typeof(joinedAt), joinedAt FROM author WHERE id = X'\(hex(a3))'") == [
                [.text("blob"), .text(hex(a3)), .text("Cy"), .text("text"), .text("2024-06-02 08:30:15.250")]
            ])
        #expect(
            try test.rawRows(
                "SELECT typeof(id), hex(id), typeof(publishedAt), publishedAt, typeof(isDraft), isDraft, typeof(authorId), hex(authorId) FROM book WHERE id = X'\(hex(b4))'"
            ) == [
                [
                    .text("blob"), .text(hex(b4)), .text("text"), .text("2024-02-29 12:00:00.500"), .text("integer"), .integer(1),
                    .text("blob"), .text(hex(a3)),
                ]
            ])
        #expect(
            try test.rawRows(
                "SELECT typeof(bookId), hex(bookId), typeof(tagId), hex(tagId) FROM bookTag WHERE bookId = X'\(hex(b4))' ORDER BY hex(tagId)"
            )
                == [
                    [.text("blob"), .text(hex(b4)), .text("blob"), .text(hex(t1))],
                    [.text("blob"), .text(hex(b4)), .text("blob"), .text(hex(t3))],
                ])
        #expect(
            try test.rawRows("SELECT typeof(id), hex(id), label FROM tag WHERE id = X'\(hex(t3))'") == [
                [.text("blob"), .text(hex(t3)), .text("fresh")]
            ])

        // A link set from the to-one side, a batch update, and a delete through the join table.
        var verse = try #require(try GRBook.find(key: b3, in: store))
        verse.author = GRAuthor(id: a3, name: "Cy", joinedAt: ms(1_717_317_015_250))
        try verse.save(in: store)
        #expect(try test.rawRows("SELECT hex(authorId) FROM book WHERE id = X'\(hex(b3))'") == [[.text(hex(a3))]])
        #expect(try GRBook.updateAll(where: \.id == b2, set: [.set(\.publishedAt, to: ms(0))], in: store) == 1)
        #expect(try test.rawRows("SELECT publishedAt FROM book WHERE id = X'\(hex(b2))'") == [[.text("1970-01-01 00:00:00.000")]])
        #expect(try GRBook.delete(key: b4, in: store) == 1)
        #expect(try test.rawRows("SELECT count(*) FROM bookTag WHERE bookId = X'\(hex(b4))'") == [[.integer(0)]])
        #expect(try test.rawRows("PRAGMA foreign_key_check").isEmpty)
        #expect(try store.integrityCheck() == "ok")
    }

    @Test(arguments: Backend.available) func aStoreThatCreatesTheTablesDeclaresTheFormsTypes(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try GRBook(id: b1, title: "T", publishedAt: ms(5), isDraft: false).save(in: test.store)
        let (bytes, text) = backend == .sqlite ? ("BLOB", "TEXT") : ("bytea", "text")
        let columns = try test.declaredTypes("book")
        #expect(columns["id"] == bytes)
        #expect(columns["publishedAt"] == text)
        #expect(columns["authorId"] == bytes)
        #expect(try test.declaredTypes("bookTag") == ["bookId": bytes, "tagId": bytes])
        #expect(try test.rawRows(#"SELECT "publishedAt" FROM "book""#) == [[.text("1970-01-01 00:00:00.005")]])
    }
}

// MARK: - Each format

private struct Stamp: StoredModel, Equatable {
    var id: Int64
    var iso: Date
    var text: Date?
    var seconds: Date?
    var millis: Date?
    var isoSeconds: Date?
    var tenths: Date?
    var lower: UUID?
    var bytes: UUID?
    var plain: Date?
    static let primaryKey = ["id"]
    static let columnStorage: [ColumnStorage<Stamp>] = [
        .date(\.iso, as: .iso8601), .date(\.text, as: .sqliteText), .date(\.seconds, as: .unixSeconds),
        .date(\.millis, as: .unixMilliseconds), .date(\.isoSeconds, as: .iso8601(fractionDigits: 0)),
        .date(\.tenths, as: .sqliteText(fractionDigits: 1)), .uuid(\.lower, as: .lowercaseText), .uuid(\.bytes, as: .blob),
        .date(\.plain, as: .referenceSeconds),
    ]
}

/// A model keyed by a date in ISO text.
private struct Reading: StoredModel, Equatable {
    var at: Date
    var value: Double
    static let primaryKey = ["at"]
    static let columnStorage: [ColumnStorage<Reading>] = [.date(\.at, as: .iso8601)]
}

@Suite("Storage mappings: each declared form")
struct StorageFormatTests {
    /// Unix milliseconds and the ISO text of each: the epochs, before 1970, the ends of the
    /// four-digit years, a leap day, the sixteenth century.
    static let boundaries: [(Int64, String)] = [
        (0, "1970-01-01T00:00:00.000Z"), (978_307_200_000, "2001-01-01T00:00:00.000Z"), (-1, "1969-12-31T23:59:59.999Z"),
        (-62_135_596_800_000, "0001-01-01T00:00:00.000Z"), (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
        (1_709_208_000_500, "2024-02-29T12:00:00.500Z"), (-14_182_940_000_000, "1520-07-24T14:26:40.000Z"),
        (1_714_564_800_123, "2024-05-01T12:00:00.123Z"),
    ]

    @Test(arguments: Backend.available, boundaries)
    func everyFormRoundTripsAndStoresItsExactForm(_ backend: Backend, _ boundary: (Int64, String)) throws {
        let (unixMilliseconds, iso) = boundary
        let test = try TestStore(backend)
        let date = ms(unixMilliseconds)
        let id = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        let wholeSeconds = unixMilliseconds % 1000 == 0
        let tenths = unixMilliseconds % 100 == 0
        let stamp = Stamp(
            id: 1, iso: date, text: date, seconds: date, millis: date, isoSeconds: wholeSeconds ? date : nil, tenths: tenths ? date : nil,
            lower: id, bytes: id, plain: date)
        try stamp.save(in: test.store)
        let read = try #require(try Stamp.find(key: 1, in: test.store))
        #expect(read.iso == date)
        #expect(read.text == date)
        #expect(read.millis == date)
        #expect(read.isoSeconds == stamp.isoSeconds)
        #expect(read.tenths == stamp.tenths)
        #expect(read.lower == id)
        #expect(read.bytes == id)
        #expect(read.plain == date)
        // Unix seconds: the Double `timeIntervalSince1970` gives, read back as Foundation reads it.
        let stored = try #require(try test.rawRows(#"SELECT "seconds" FROM "Stamp""#).first?.first)
        #expect(stored == .real(date.timeIntervalSince1970))
        #expect(read.seconds == Date(timeIntervalSince1970: date.timeIntervalSince1970))

        let sqlite = iso.replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: "")
        // (A value read as .integer or .blob is stored as one: its storage class on SQLite.)
        let row = try #require(
            try test.rawRows(#"SELECT "iso", "text", "millis", "isoSeconds", "tenths", "lower", "bytes" FROM "Stamp""#).first)
        #expect(row[0] == .text(iso))
        #expect(row[1] == .text(sqlite))
        #expect(row[2] == .integer(unixMilliseconds))
        #expect(row[3] == (wholeSeconds ? .text(String(iso.dropLast(5)) + "Z") : .null))
        #expect(row[4] == (tenths ? .text(String(sqlite.dropLast(2))) : .null))
        #expect(row[5] == .text("e621e1f8-c36c-495a-93fc-0c247a3e6e5f"))
        #expect(row[6] == .blob(withUnsafeBytes(of: id.uuid) { Data($0) }))
        // Saved back unchanged: each stored form reads as a date that writes the same form.
        #expect(try read.save(in: test.store) == .unchanged)
        #expect(
            try Stamp.count(where: \.iso == date && \.millis == date && \.text == date && \.lower == id && \.bytes == id, in: test.store)
                == 1)
    }

    @Test(arguments: Backend.available) func nilIsNullAndClearingWritesNull(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let date = ms(1_000)
        try Stamp(id: 1, iso: date, text: date, millis: date, bytes: UUID()).save(in: test.store)
        try Stamp(id: 1, iso: date).save(clearing: [\.text, \.bytes], in: test.store)
        #expect(try test.rawRows(#"SELECT "text", "millis", "bytes" FROM "Stamp""#) == [[.null, .integer(1_000), .null]])
        let read = try #require(try Stamp.find(key: 1, in: test.store))
        #expect(read.text == nil && read.bytes == nil && read.seconds == nil && read.millis == date)
        #expect(try Stamp.count(where: \.text == nil, in: test.store) == 1)
    }

    @Test(arguments: Backend.available) func aDateOfMillisecondsMadeInEitherEpochIsAccepted(_ backend: Backend) throws {
        let test = try TestStore(backend)
        // Built from 1970, the Double differs from ms(…) in its last place: still a whole millisecond.
        let date = Date(timeIntervalSince1970: 1_714_564_800.123)
        try Stamp(id: 1, iso: date, millis: date).save(in: test.store)
        #expect(
            try test.rawRows(#"SELECT "iso", "millis" FROM "Stamp""#) == [[.text("2024-05-01T12:00:00.123Z"), .integer(1_714_564_800_123)]])
        #expect(try Stamp.find(key: 1, in: test.store)?.iso == ms(1_714_564_800_123))
    }

    @Test(arguments: Backend.available) func aDateFinerThanItsFormIsRefusedNotRounded(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Stamp(id: 1, iso: ms(0)).save(in: test.store)
        let cases: [(Stamp, String)] = [
            (Stamp(id: 2, iso: ms(0).addingTimeInterval(0.000_5)), "iso"),
            (Stamp(id: 2, iso: ms(0), millis: Date(timeIntervalSince1970: 1.000_001)), "millis"),
            (Stamp(id: 2, iso: ms(0), isoSeconds: ms(1_500)), "isoSeconds"),
            (Stamp(id: 2, iso: ms(0), tenths: ms(1_550)), "tenths"),
            (Stamp(id: 2, iso: ms(253_402_300_800_000)), "iso"),  // the year 10000
            (Stamp(id: 2, iso: ms(-62_135_596_800_001)), "iso"),  // before the year 1
            (Stamp(id: 2, iso: ms(0), millis: Date(timeIntervalSinceReferenceDate: 1e300)), "millis"),
            (Stamp(id: 2, iso: ms(0), seconds: Date(timeIntervalSinceReferenceDate: .infinity)), "seconds"),
            (Stamp(id: 2, iso: ms(0), millis: Date(timeIntervalSinceReferenceDate: -.infinity)), "millis"),
        ]
        for (stamp, column) in cases {
            let error = try #require(throws: ModelStoreError.self) { try stamp.save(in: test.store) }
            #expect(error.code == .encodingFailed, "\(column)")
            #expect(error.model == "Stamp")
            #expect(error.column == column)
            #expect(error.value != nil)
            #expect(error.message.contains("Stamp.\(column)"))
            #expect(error.suggestion != nil)
        }
        #expect(try Stamp.count(in: test.store) == 1)
        let error = try #require(throws: ModelStoreError.self) {
            try Stamp(id: 2, iso: ms(0).addingTimeInterval(0.000_5)).save(in: test.store)
        }
        #expect(error.message.contains("3 digits after the seconds"))
        #expect(error.suggestion?.contains("rounded()") == true)
        // Far dates fit the millisecond integer (and its text would not).
        try Stamp(id: 3, iso: ms(0), millis: ms(-8_000_000_000_000_000)).save(in: test.store)
        #expect(try Stamp.find(key: 3, in: test.store)?.millis == ms(-8_000_000_000_000_000))
    }

    @Test(arguments: Backend.available) func aStoredValueNotInTheDeclaredFormIsRefusedNamingModelColumnAndValue(_ backend: Backend) throws {
        var cases: [(column: String, sql: String, shown: String)] = [
            ("iso", "'yesterday'", "yesterday"),
            ("iso", "'2024-05-01T12:00:00Z'", "2024-05-01T12:00:00Z"),  // no fraction: another spelling
            ("iso", "'2024-05-01 12:00:00.000Z'", "2024-05-01 12:00:00.000Z"),
            ("iso", "'2024-02-30T12:00:00.000Z'", "2024-02-30"),
            ("iso", "'2023-02-29T12:00:00.000Z'", "2023-02-29"),
            ("iso", "'2024-05-01T24:00:00.000Z'", "24:00"),
            ("iso", "'2024-05-01T12:00:00.000+'", "+"),
            ("iso", "'0000-01-01T00:00:00.000Z'", "0000"),
            ("iso", "'2024-13-01T00:00:00.000Z'", "2024-13"),
            ("iso", "'2024-05-01T12:00:00,000Z'", ",000"),
            ("iso", "'2024-05-01T12:00:60.000Z'", ":60"),
            ("iso", "'2024-05-01T12:0a:00.000Z'", "0a"),
            ("iso", "1.5", "1.5"),
            ("text", "'2024-05-01T12:00:00.000'", "2024-05-01T12"),
            ("millis", "9223372036854775807", "9223372036854775807"),
            ("lower", "'E621E1F8-C36C-495A-93FC-0C247A3E6E5F'", "E621E1F8"),
            ("lower", "'not a uuid'", "not a uuid"),
            ("bytes", backend == .sqlite ? "X'00112233445566778899AABBCCDDEE'" : #"'\x00112233445566778899AABBCCDDEE'"#, "x'00112233"),
        ]
        if backend == .sqlite {
            // Values of another type than the column's: only SQLite's columns hold them.
            cases += [
                ("millis", "1.5", "1.5"), ("seconds", "'twelve'", "twelve"),
                ("bytes", "'E621E1F8-C36C-495A-93FC-0C247A3E6E5F'", "E621E1F8"), ("plain", "'abc'", "abc"),
            ]
        }
        for (column, sql, shown) in cases {
            let test = try TestStore(backend)
            try Stamp(id: 1, iso: ms(0)).save(in: test.store)
            try test.rawExecute(#"UPDATE "Stamp" SET "\#(column)" = \#(sql)"#)
            let error = try #require(throws: ModelStoreError.self) { try Stamp.find(key: 1, in: test.store) }
            #expect(error.code == .decodingFailed, "\(column) \(sql)")
            #expect(error.model == "Stamp")
            #expect(error.column == column)
            #expect(error.key == "id = 1")
            #expect(error.value?.contains(shown) == true, "\(String(describing: error.value))")
            #expect(error.message.contains("Stamp.\(column)"))
            // An aggregate over the column refuses the value the same way.
            if column == "iso" {
                let aggregate = try #require(throws: ModelStoreError.self) { try Stamp.all().max(\.iso, in: test.store) }
                #expect(aggregate.code == .decodingFailed)
                #expect(aggregate.column == "iso")
            }
        }
    }

    @Test(arguments: Backend.available) func keysAndConditionsInADeclaredForm(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Reading(at: ms(1_000), value: 1).save(in: test.store)
        try Reading(at: ms(2_000), value: 2).save(in: test.store)
        #expect(try Reading.find(key: ms(2_000), in: test.store)?.value == 2)
        #expect(try Reading.find(key: ["at": ms(1_000)], in: test.store)?.value == 1)
        #expect(try Reading.delete(key: ms(1_000), in: test.store) == 1)
        #expect(try test.rawRows(#"SELECT "at" FROM "Reading""#) == [[.text("1970-01-01T00:00:02.000Z")]])

        // A key or condition value the form cannot hold is refused, naming model and column.
        let key = try #require(throws: ModelStoreError.self) { try Reading.find(key: ms(0).addingTimeInterval(0.000_1), in: test.store) }
        #expect(key.code == .invalidKey)
        #expect(key.model == "Reading" && key.column == "at")
        let text = try #require(throws: ModelStoreError.self) { try Reading.find(key: "1970-01-01T00:00:02.000Z", in: test.store) }
        #expect(text.code == .invalidKey)
        let condition = try #require(throws: ModelStoreError.self) {
            try Reading.findAll(where: Column("at") == "1970-01-01T00:00:02.000Z", in: test.store)
        }
        #expect(condition.code == .invalidQuery)
        #expect(condition.model == "Reading" && condition.column == "at")
        #expect(condition.message == "Reading.at is stored as .date(iso8601): '1970-01-01T00:00:02.000Z' is not a Date value.")
        #expect(key.message.contains("Reading.at is stored as .date(iso8601): The date"))
        let uuid = try #require(throws: ModelStoreError.self) { try GRBook.find(key: "B1", in: TestStore().store) }
        #expect(uuid.code == .invalidKey && uuid.column == "id")

        // Match keys and matching saves bind the declared form too.
        try Reading(at: ms(2_000), value: 5).save(matching: \.at == ms(2_000), in: test.store)
        #expect(try Reading.find(key: ms(2_000), in: test.store)?.value == 5)
        let outcome = try Reading.save(
            [Reading(at: ms(2_000), value: 6), Reading(at: ms(3_000), value: 7)], matching: MatchKeys(varying: [\.at]), in: test.store)
        #expect(outcome.inserted == 1 && outcome.updated == 1)
        #expect(try Reading.findAll(where: .all, orderBy: [.descending(\.at)], in: test.store).map(\.value) == [7, 6])
    }
}

// MARK: - Declarations that cannot work

private struct TwiceDeclared: StoredModel {
    var id: Int64
    var at: Date
    static let primaryKey = ["id"]
    static let columnStorage: [ColumnStorage<TwiceDeclared>] = [.date(\.at, as: .iso8601), .date(\.at, as: .sqliteText)]
}

private struct ComputedDeclared: StoredModel {
    var id: Int64
    var at: Date
    var later: Date { at.addingTimeInterval(1) }
    static let primaryKey = ["id"]
    static let columnStorage: [ColumnStorage<ComputedDeclared>] = [.date(\.later, as: .iso8601)]
}

private struct TooManyDigits: StoredModel {
    var id: Int64
    var at: Date
    static let primaryKey = ["id"]
    static let columnStorage: [ColumnStorage<TooManyDigits>] = [.date(\.at, as: .iso8601(fractionDigits: 4))]
}

/// A Date property its own Codable conformance codes as text: it is not stored as a Date.
private struct CodedAsText: StoredModel {
    var id: Int64
    var at: Date
    static let primaryKey = ["id"]
    static let columnStorage: [ColumnStorage<CodedAsText>] = [.date(\.at, as: .unixSeconds)]
    enum CodingKeys: String, CodingKey { case id, at }
    init(id: Int64, at: Date) {
        self.id = id
        self.at = at
    }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        at = Date(timeIntervalSince1970: Double(try container.decode(String.self, forKey: .at)) ?? 0)
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(String(at.timeIntervalSince1970), forKey: .at)
    }
}

/// A declared form on a relationship property is refused: relationships are not columns.
private struct FormOnLink: StoredModel {
    var id: UUID
    var ticket: LinkTarget?
    static let primaryKey = ["id"]
    static let columnStorage: [ColumnStorage<FormOnLink>] = [.uuid(\.id, as: .blob)]
    static let relationships: [Relationship<FormOnLink>] = [.toOne(\.ticket).columns([""])]
}

private struct LinkTarget: StoredModel {
    var id: Int64
    static let primaryKey = ["id"]
}

private struct CountShelf: StoredModel {
    var id: Int64
    var items: [CountItem]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<CountShelf>] = [.toMany(\.items, inverse: \CountItem.shelf)]
}

private struct CountItem: StoredModel {
    var id: Int64
    @Related var shelf: CountShelf?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<CountItem>] = [.toOne(\.shelf, inverse: \CountShelf.items).columns(["shelfA", "shelfB"])]
}

private struct ManyShelf: StoredModel {
    var id: Int64
    var items: [ManyItem]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<ManyShelf>] = [.toMany(\.items, inverse: \ManyItem.shelf).columns(["shelfId"])]
}

private struct ManyItem: StoredModel {
    var id: Int64
    @Related var shelf: ManyShelf?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<ManyItem>] = [.toOne(\.shelf, inverse: \ManyShelf.items)]
}

private struct JoinOnToOne: StoredModel {
    var id: Int64
    var target: LinkTarget?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<JoinOnToOne>] = [.toOne(\.target).joinTable("t", columns: ["a"], targetColumns: ["b"])]
}

private struct DisagreeA: StoredModel {
    var id: Int64
    var bs: [DisagreeB]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<DisagreeA>] = [
        .toMany(\.bs, inverse: \DisagreeB.as).joinTable("ab", columns: ["aId"], targetColumns: ["bId"])
    ]
}

private struct DisagreeB: StoredModel {
    var id: Int64
    var `as`: [DisagreeA]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<DisagreeB>] = [
        .toMany(\.as, inverse: \DisagreeA.bs).joinTable("ab", columns: ["bId"], targetColumns: ["a"])
    ]
}

private struct BothA: StoredModel {
    var id: Int64
    @Related var b: BothB?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<BothA>] = [.toOne(\.b, inverse: \BothB.a).columns(["bId"])]
}

private struct BothB: StoredModel {
    var id: Int64
    @Related var a: BothA?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<BothB>] = [.toOne(\.a, inverse: \BothA.b).columns(["aId"])]
}

private struct EmptyJoin: StoredModel {
    var id: Int64
    var targets: [LinkTarget]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<EmptyJoin>] = [.toMany(\.targets).joinTable("", columns: ["a"], targetColumns: ["b"])]
}

private struct ShortJoin: StoredModel {
    var id: Int64
    var targets: [LinkTarget]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<ShortJoin>] = [.toMany(\.targets).joinTable("sj", columns: ["a"], targetColumns: [])]
}

// A one-to-one whose link lives on the side that sorts second, because that side names it.
private struct Desk: StoredModel, Equatable {
    var id: Int64
    @Related var chair: Chair?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Desk>] = [.toOne(\.chair, inverse: \Chair.desk)]
}

private struct Chair: StoredModel, Equatable {
    var id: Int64
    @Related var desk: Desk?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Chair>] = [.toOne(\.desk, inverse: \Desk.chair).columns(["deskNumber"])]
}

// A one-way to-many with its own join table.
private struct Board: StoredModel {
    var id: Int64
    var pins: [LinkTarget]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Board>] = [.toMany(\.pins).joinTable("board_pin", columns: ["board"], targetColumns: ["pin"])]
}

// Another one-way to-many that declares Board's join table: the two would mix their links.
private struct Wall: StoredModel {
    var id: Int64
    var pins: [LinkTarget]?
    static let primaryKey = ["id"]
    static let relationships: [Relationship<Wall>] = [.toMany(\.pins).joinTable("board_pin", columns: ["board"], targetColumns: ["pin"])]
}

@Suite("Storage mappings: declarations and stored tables that do not fit")
struct StorageMappingRefusalTests {
    private func refusal(_ backend: Backend, _ body: (ModelStore) throws -> Void) throws -> ModelStoreError {
        let test = try TestStore(backend)
        let error = try #require(throws: ModelStoreError.self) { try body(test.store) }
        #expect(try test.tableNames() == [])
        return error
    }

    @Test(arguments: Backend.available) func aFormDeclarationThatCannotWorkIsAnInvalidModel(_ backend: Backend) throws {
        let inline1 = try TestStore(backend)
        let cases: [(ModelStoreError, String, String, String)] = [
            (try refusal(backend) { try TwiceDeclared(id: 1, at: ms(0)).save(in: $0) }, "TwiceDeclared", "at", "twice"),
            (
                try refusal(backend) { try ComputedDeclared(id: 1, at: ms(0)).save(in: $0) }, "ComputedDeclared", "\\ComputedDeclared.",
                "not a stored property"
            ),
            (try refusal(backend) { try TooManyDigits(id: 1, at: ms(0)).save(in: $0) }, "TooManyDigits", "at", "0 to 3 digits"),
            (try refusal(backend) { try CodedAsText(id: 1, at: ms(0)).save(in: $0) }, "CodedAsText", "at", "reads it as String, not Date"),
        ]
        for (error, model, column, words) in cases {
            #expect(error.code == .invalidModel, "\(model)")
            #expect(error.model == model)
            // A computed property has no name of its own: the key path is shown as Swift prints it.
            #expect(error.column == column || error.column?.hasPrefix(column) == true)
            #expect(error.message.contains(words), "\(error.message)")
        }
        let read = try #require(throws: ModelStoreError.self) { try TwiceDeclared.findAll(in: inline1.store) }
        #expect(read.code == .invalidModel)
    }

    @Test(arguments: Backend.available) func aLinkDeclarationThatCannotWorkIsAnInvalidModel(_ backend: Backend) throws {
        let cases: [(ModelStoreError, String)] = [
            (
                try refusal(backend) { try CountItem(id: 1).save(in: $0) },
                "declares 2 link columns (shelfA, shelfB), but CountShelf's key has 1 (id)"
            ),
            // Either side, prepared first, refuses the same mistake.
            (try refusal(backend) { try CountShelf(id: 1).save(in: $0) }, "declares 2 link columns"),
            (try refusal(backend) { try ManyShelf(id: 1).save(in: $0) }, "ManyShelf.items declares link columns, but it is a to-many"),
            (try refusal(backend) { try ManyItem(id: 1).save(in: $0) }, "ManyShelf.items declares link columns"),
            (try refusal(backend) { try JoinOnToOne(id: 1).save(in: $0) }, "declares a join table, but it is stored as link columns"),
            (
                try refusal(backend) { try DisagreeA(id: 1).save(in: $0) },
                "declare different join tables: ab (aId → bId) and, seen from DisagreeA.bs, ab (a → bId)"
            ),
            (try refusal(backend) { try DisagreeB(id: 1).save(in: $0) }, "declare different join tables"),
            (try refusal(backend) { try BothA(id: 1).save(in: $0) }, "both declare link columns"),
            (try refusal(backend) { try EmptyJoin(id: 1).save(in: $0) }, "a join table with an empty name"),
            (try refusal(backend) { try ShortJoin(id: 1).save(in: $0) }, "declares 0 join-table target columns"),
            (try refusal(backend) { try FormOnLink(id: UUID()).save(in: $0) }, "an empty name for column 1"),
        ]
        for (error, words) in cases {
            #expect(error.code == .invalidModel)
            #expect(error.model != nil)
            #expect(error.message.contains(words), "\(error.message)")
        }
        #expect(cases[2].0.suggestion?.contains("ManyItem.shelf") == true)
    }

    @Test(arguments: Backend.available) func theSideOfAOneToOneThatNamesItsColumnsHoldsTheLink(_ backend: Backend) throws {
        let test = try TestStore(backend)
        var desk = Desk(id: 1)
        desk.chair = Chair(id: 7)
        try desk.save(in: test.store)
        // Desk sorts first and would hold the link; Chair names the column, so Chair holds it.
        #expect(try test.rawRows(#"SELECT "id", "deskNumber" FROM "Chair""#) == [[.integer(7), .integer(1)]])
        #expect(try test.declaredTypes("Desk").keys.sorted() == ["id"])
        #expect(try Desk.find(key: 1, loading: .direct, in: test.store)?.chair?.id == 7)
        #expect(try Chair.find(key: 7, loading: .direct, in: test.store)?.desk?.id == 1)

        var board = Board(id: 1)
        board.pins = [LinkTarget(id: 3)]
        try board.save(in: test.store)
        #expect(try test.rawRows(#"SELECT "board", "pin" FROM "board_pin""#) == [[.integer(1), .integer(3)]])
        #expect(try Board.find(key: 1, loading: .direct, in: test.store)?.pins?.map(\.id) == [3])
    }

    @Test(arguments: Backend.available) func aDeclaredJoinTableNameIsClaimedLikeADerivedOne(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Board(id: 1).save(in: test.store)
        let error = try #require(throws: ModelStoreError.self) { try Wall(id: 1).save(in: test.store) }
        #expect(error.code == .invalidModel)
        #expect(error.model == "Wall")
        #expect(error.value == "board_pin")
        #expect(error.message.contains("their records would mix"))
        #expect(try !test.tableNames().contains("Wall"))
    }

    // PostgreSQL differs: a join table without the target column fails at the write with the generic drift
    // message (no model, no value), and one with no key over the pair does not stop the save.
    @Test func aStoredJoinTableThatCannotHoldTheLinksIsRefusedBeforeAnythingIsWritten() throws {
        let backend = Backend.sqlite
        // Another tool's tables, in each backend's types for the key bytes and an id of its own.
        let (blob, ownId) =
            backend == .sqlite ? ("BLOB", "INTEGER PRIMARY KEY NOT NULL") : ("BYTEA", "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY")
        let tables: [(String, String)] = [
            (
                #"CREATE TABLE "bookTag" ("bookId" \#(blob) NOT NULL, "tag" \#(blob) NOT NULL, PRIMARY KEY ("bookId", "tag"))"#,
                "has no column tagId"
            ),
            (
                #"CREATE TABLE "bookTag" ("bookId" \#(blob) NOT NULL, "tagId" \#(blob) NOT NULL)"#,
                "has no primary key or unique index over (bookId, tagId)"
            ),
            (
                #"CREATE TABLE "bookTag" ("bookId" \#(blob) NOT NULL, "tagId" \#(blob) NOT NULL, "addedAt" TEXT NOT NULL, PRIMARY KEY ("bookId", "tagId"))"#,
                "addedAt that is NOT NULL"
            ),
            (
                #"CREATE TABLE "bookTag" ("bookId" \#(blob) NOT NULL UNIQUE, "tagId" \#(blob) NOT NULL, PRIMARY KEY ("bookId", "tagId"))"#,
                "unique over (bookid) alone"
            ),
        ]
        for (table, words) in tables {
            let test = try TestStore(backend)
            try test.rawExecute(table)
            let error = try #require(throws: ModelStoreError.self) {
                try GRBook(id: b1, title: "T", isDraft: false).save(in: test.store)
            }
            #expect(error.code == .schemaMismatch)
            #expect(error.model == "GRBook" || error.model == "GRTag")
            #expect(error.value == "bookTag")
            #expect(error.message.contains(words), "\(error.message)")
            #expect(error.message.contains("Nothing was written"))
            #expect(try test.tableNames() == ["bookTag"])
        }
        // An id of its own, a column with a default and a unique index are fine.
        let test = try TestStore(backend)
        try test.rawExecute(
            #"CREATE TABLE "bookTag" ("id" \#(ownId), "bookId" \#(blob) NOT NULL, "tagId" \#(blob) NOT NULL, "addedAt" TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"#
        )
        try test.rawExecute(#"CREATE UNIQUE INDEX "bookTag_pair" ON "bookTag" ("tagId", "bookId")"#)
        var book = GRBook(id: b1, title: "T", isDraft: false)
        book.tags = [GRTag(id: t1, label: "x")]
        try book.save(in: test.store)
        try book.save(in: test.store)
        #expect(try test.rawRows(#"SELECT count(*) FROM "bookTag""#) == [[.integer(1)]])
    }

    @Test(arguments: Backend.available) func aStoredColumnWhoseTypeWouldChangeTheFormsValuesIsRefused(_ backend: Backend) throws {
        let real = backend == .sqlite ? "REAL" : "DOUBLE PRECISION"
        for (column, declared) in [("millis", "TEXT"), ("seconds", "TEXT"), ("millis", real)] {
            let test = try TestStore(backend)
            try test.rawExecute(#"CREATE TABLE "Stamp" ("id" BIGINT PRIMARY KEY, "iso" TEXT NOT NULL, "\#(column)" \#(declared))"#)
            let error = try #require(throws: ModelStoreError.self) { try Stamp(id: 1, iso: ms(0)).save(in: test.store) }
            #expect(error.code == .schemaMismatch)
            #expect(error.column == column)
            #expect(try test.rawRows(#"SELECT count(*) FROM "Stamp""#) == [[.integer(0)]])
        }
    }

    // SQLite-only: NUMERIC and DATETIME column affinity is SQLite's (a server's numeric column holds no text).
    @Test func numericColumnsKeepTheFormsDateAndUUIDTexts() throws {
        // Date and UUID texts never read as numbers, so NUMERIC columns (GRDB's DATETIME) keep them.
        let test = try TestStore()
        try test.rawExecute("CREATE TABLE Stamp (id INTEGER PRIMARY KEY, iso DATETIME NOT NULL, text DATE, lower NUMERIC, bytes INTEGER)")
        let id = UUID()
        try Stamp(id: 1, iso: ms(0), text: ms(0), lower: id, bytes: id).save(in: test.store)
        #expect(try Stamp.find(key: 1, in: test.store) == Stamp(id: 1, iso: ms(0), text: ms(0), lower: id, bytes: id))
        #expect(
            try test.rawRows("SELECT typeof(iso), typeof(text), typeof(lower), typeof(bytes) FROM Stamp") == [
                [.text("text"), .text("text"), .text("text"), .text("blob")]
            ])
    }

    // SQLite-only: no store behind it (the forms' descriptions).
    @Test func formsDescribeThemselvesAsDeclared() {
        #expect(
            [
                DateStorage.referenceSeconds, .unixSeconds, .unixMilliseconds, .iso8601, .sqliteText, .iso8601(fractionDigits: 0),
                .sqliteText(fractionDigits: 2),
            ]
            .map(\.description) == [
                "referenceSeconds", "unixSeconds", "unixMilliseconds", "iso8601", "sqliteText", "iso8601(fractionDigits: 0)",
                "sqliteText(fractionDigits: 2)",
            ])
        #expect([UUIDStorage.text, .lowercaseText, .blob].map(\.description) == ["text", "lowercaseText", "blob"])
        #expect(ColumnFormat.uuid(.blob).description == ".uuid(blob)")
    }
}
