import Foundation
import Testing
@testable import ModelStore

/// One optional property of each kind, so each hostile value gets a record of its own.
private struct Extreme: StoredModel, Equatable {
    var id: Int64
    var text: String?
    var integer: Int64?
    var real: Double?
    var single: Float?
    var date: Date?
    var decimal: Decimal?
    var bytes: Data?
    var list: [String]?
    var map: [String: Int]?
    var set: Set<Int>?
    static let primaryKey = ["id"]

    init(
        id: Int64, text: String? = nil, integer: Int64? = nil, real: Double? = nil, single: Float? = nil,
        date: Date? = nil, decimal: Decimal? = nil, bytes: Data? = nil, list: [String]? = nil,
        map: [String: Int]? = nil, set: Set<Int>? = nil
    ) {
        self.id = id
        self.text = text
        self.integer = integer
        self.real = real
        self.single = single
        self.date = date
        self.decimal = decimal
        self.bytes = bytes
        self.list = list
        self.map = map
        self.set = set
    }
}

/// `GROUP` and `INDEX` are SQL keywords; the default table name is the type's name.
private struct Group: StoredModel, Equatable {
    var index: Int
    var `where`: String?
    var members: [Member]?
    static let primaryKey = ["index"]
    static let indexes: [TableIndex<Group>] = [.on(\.where)]
    static let relationships: [Relationship<Group>] = [.toMany(\.members, inverse: \Member.group).loading(.eager)]
}

/// Column and table names with quotes, spaces, semicolons and comment markers.
private struct Member: StoredModel, Equatable {
    var select: Int
    var from: String?
    var weird: String?
    @Related var group: Group?
    enum CodingKeys: String, CodingKey {
        case select
        case from = "from \"where\""
        case weird = "drop table; --"
        case group = "group's \"group\""
    }
    static let primaryKey = ["select"]
    static let tableName = "member \"items\"; DROP TABLE Snack; --"
    static let relationships: [Relationship<Member>] = [.toOne(\.group, inverse: \Group.members).loading(.eager)]
}

/// Promise 6: hostile and extreme values round-trip exactly or are refused with a clear error.
@Suite("Reliability: hostile and extreme values")
struct HostileValueTests {
    static let hostileStrings: [String] = [
        "", " ", "'", "\"", "''; DROP TABLE Extreme; --", "100%", "%", "_", "a_b", "\\", "[*?]",
        "nul\u{0}inside", "\u{0}", "\u{0}\u{0}end", "🍫", "👩‍👩‍👧‍👦", "e\u{301}", "\u{e9}", "\u{FEFF}bom",
        "line\nbreak\ttab\r", "\u{7F}\u{1}", "ＡＢＣ", "ǅ", "ß", "İ", "😀\u{0}😀",
    ]

    @Test(arguments: Backend.available) func hostileStringsRoundTripByteForByteAndMatchOnlyThemselves(_ backend: Backend) throws {
        let test = try TestStore(backend)
        // PostgreSQL text cannot hold NUL (U+0000): saving one throws .encodingFailed there.
        let strings = backend == .sqlite ? Self.hostileStrings : Self.hostileStrings.filter { !$0.contains("\u{0}") }
        let records = strings.enumerated().map { Extreme(id: Int64($0.offset), text: $0.element) }
        _ = try Extreme.save(records, in: test.store)
        let bytes = { (text: String?) in text.map { Array($0.utf8) } }
        for record in records {
            let loaded = try #require(try Extreme.find(key: record.id, in: test.store))
            // Compared as bytes: Swift's == treats "é" and "e\u{301}" as equal, SQLite does not.
            #expect(bytes(loaded.text) == bytes(record.text), "record \(record.id)")
        }
        for needle in strings {
            let utf8 = Array(needle.utf8)
            func expected(_ keep: ([UInt8]) -> Bool) -> [Int64] {
                records.filter { keep(Array($0.text!.utf8)) }.map(\.id)
            }
            func found(_ condition: Condition<Extreme>) throws -> [Int64] {
                try Extreme.findAll(where: condition, in: test.store).map(\.id)
            }
            #expect(try found(\.text == needle) == expected { $0 == utf8 }, "== \(utf8)")
            #expect(try found(.hasPrefix(\.text, needle)) == expected { $0.starts(with: utf8) }, "prefix \(utf8)")
            #expect(try found(.hasSuffix(\.text, needle)) == expected { $0.reversed().starts(with: utf8.reversed()) }, "suffix \(utf8)")
            #expect(try found(.contains(\.text, needle)) == expected { Self.bytes($0, contain: utf8) }, "contains \(utf8)")
            // Negated, every non-matching text matches — the empty one too, which SQLite's
            // substr() would turn into NULL.
            #expect(try found(!.hasPrefix(\.text, needle)) == expected { !$0.starts(with: utf8) }, "not prefix \(utf8)")
            #expect(
                try found(!.hasSuffix(\.text, needle, caseInsensitive: true))
                    == expected { !Self.asciiLowercased($0).reversed().starts(with: Self.asciiLowercased(utf8).reversed()) },
                "not suffix folded \(utf8)")
            // Case folding is ASCII-only, as SQL's lower(): fold the expectation the same way.
            let folded = Self.asciiLowercased(utf8)
            #expect(
                try found(.contains(\.text, needle, caseInsensitive: true))
                    == expected { Self.bytes(Self.asciiLowercased($0), contain: folded) }, "contains folded \(utf8)")
            #expect(
                try found(.hasPrefix(\.text, needle, caseInsensitive: true))
                    == expected { Self.asciiLowercased($0).starts(with: folded) }, "prefix folded \(utf8)")
            #expect(try found(.in(\.text, [needle, "no such text"])) == expected { $0 == utf8 }, "in \(utf8)")
        }
        // The table is still there: no value was ever spliced into SQL.
        #expect(try Extreme.count(in: test.store) == records.count)
    }

    @Test(arguments: Backend.available) func aLikePatternWithANulIsRefusedRatherThanCutShort(_ backend: Backend) throws {
        let test = try TestStore(backend)
        // A text the pattern cut at its NUL would match (a server's text holds no NUL).
        try Extreme(id: 1, text: backend == .sqlite ? "a\u{0}b" : "a").save(in: test.store)
        let error = try #require(throws: ModelStoreError.self) {
            try Extreme.findAll(where: .like(\.text, "a\u{0}%"), in: test.store)
        }
        #expect(error.code == .invalidQuery)
        #expect(error.message.contains("NUL"))
    }

    @Test(arguments: Backend.available) func aMegabyteOfTextRoundTripsAndIsFoundByItsEnd(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        // A server's text holds no NUL (U+0000): there the 24 bytes repeated end in a space instead.
        let end = backend == .sqlite ? "\u{0}" : " "
        var text = String(repeating: "0123456789abcdef🍫'\"%_" + end, count: 1_048_576 / 24)
        text += "THE END"
        let models = [Extreme(id: 1, text: text), Extreme(id: 2, text: String(text.reversed()))]
        _ = try Extreme.save(models, in: test.store)
        #expect(try Extreme.find(key: 1, in: test.store)?.text?.utf8.elementsEqual(text.utf8) == true)
        #expect(try Extreme.findAll(where: .hasSuffix(\.text, "THE END"), in: test.store).map(\.id) == [1])
        let byteLength = backend == .sqlite ? #"length(CAST("text" AS BLOB))"# : #"octet_length("text")"#
        #expect(try test.rawRows(#"SELECT \#(byteLength) FROM "Extreme" WHERE "id" = 1"#) == [[.integer(Int64(text.utf8.count))]])
    }

    @Test(arguments: Backend.available) func integersAtTheEdgesOfInt64RoundTripCompareAndSort(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let values: [Int64] = [.min, .min + 1, -1, 0, 1, Int64(Int32.max) + 1, .max - 1, .max]
        _ = try Extreme.save(values.enumerated().map { Extreme(id: Int64($0.offset), integer: $0.element) }, in: test.store)
        #expect(try Extreme.findAll(in: test.store).map(\.integer) == values)
        #expect(try Extreme.findAll(where: \.integer == Int64.min, in: test.store).map(\.id) == [0])
        #expect(try Extreme.findAll(where: \.integer > Int64.max - 1, in: test.store).map(\.id) == [7])
        #expect(try Extreme.all().order(.descending(\.integer)).findAll(in: test.store).map(\.integer) == values.reversed())
        #expect(try Extreme.find(key: Int64.min, in: test.store) == nil)
        try Extreme(id: .min, integer: .max).save(in: test.store)
        #expect(try Extreme.find(key: Int64.min, in: test.store)?.integer == .max)
        // A sum that overflows Int64 is an error, never a wrapped number.
        #expect(throws: ModelStoreError.self) { try Extreme.all().sum(\.integer, in: test.store) }
    }

    @Test(arguments: Backend.available) func extremeFloatingPointValuesRoundTripBitForBit(_ backend: Backend) throws {
        let test = try TestStore(.file, or: backend)
        let doubles: [Double] = [
            .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude,
            -.leastNonzeroMagnitude, .leastNormalMagnitude, 0, 0.1 + 0.2, 1e-300, -1e300, 9_007_199_254_740_994, 0x1p62, -0x1p63,
        ]
        let floats: [Float] = [.infinity, -.infinity, .greatestFiniteMagnitude, .leastNonzeroMagnitude, 0.1, 3]
        var records = doubles.enumerated().map { Extreme(id: Int64($0.offset), real: $0.element) }
        records += floats.enumerated().map { Extreme(id: Int64(100 + $0.offset), single: $0.element) }
        _ = try Extreme.save(records, in: test.store)
        for record in records {
            let loaded = try #require(try Extreme.find(key: record.id, in: test.store))
            #expect(loaded.real?.bitPattern == record.real?.bitPattern, "record \(record.id)")
            #expect(loaded.single?.bitPattern == record.single?.bitPattern, "record \(record.id)")
        }
        #expect(try Extreme.findAll(where: \.real > Double.greatestFiniteMagnitude, in: test.store).map(\.id) == [0])
        #expect(try Extreme.all().filter(.isNotNull(\.real)).order(.ascending(\.real)).findAll(in: test.store).first?.real == -.infinity)
        // A query for -0.0 finds the zero it equals (see NegativeZeroTests).
        #expect(try Extreme.findAll(where: \.real == -0.0, in: test.store).map(\.id) == [7])
    }

    /// -0.0 is no longer refused: it saves as 0.0 (NegativeZeroTests).
    @Test(arguments: Backend.available) func nanIsRefusedWithTheModelPropertyAndValue(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Extreme(id: 1, real: 1, single: 1).save(in: test.store)
        let refused: [(Extreme, String, String)] = [
            (Extreme(id: 1, real: .nan), "real", "nan"),
            (Extreme(id: 1, single: .nan), "single", "nan"),
            (Extreme(id: 1, real: .signalingNaN), "real", "nan"),
            (Extreme(id: 1, real: -.nan), "real", "nan"),
        ]
        for (model, column, value) in refused {
            let error = try #require(throws: ModelStoreError.self) { try model.save(in: test.store) }
            #expect(error.code == .encodingFailed)
            #expect(error.model == "Extreme")
            #expect(error.column == column)
            #expect(error.value == value)
            #expect(error.suggestion != nil)
            // A batch refuses it too, before writing anything.
            let batchError = try #require(throws: ModelStoreError.self) {
                try Extreme.save([Extreme(id: 2, real: 2), model], in: test.store)
            }
            #expect(batchError.code == .encodingFailed)
            #expect(try Extreme.findAll(in: test.store) == [Extreme(id: 1, real: 1, single: 1)])
        }
        var decimalNaN = Decimal.nan
        decimalNaN = decimalNaN * 1
        let error = try #require(throws: ModelStoreError.self) { try Extreme(id: 3, decimal: decimalNaN).save(in: test.store) }
        #expect(error.code == .encodingFailed)
        #expect(error.column == "decimal")
    }

    @Test(arguments: Backend.available) func datesFromYearOneToYear9999RoundTripExactlyAndSortInTime(_ backend: Backend) throws {
        let test = try TestStore(backend)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        func date(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ second: Int = 0, _ nanosecond: Int = 0) -> Date {
            calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, second: second, nanosecond: nanosecond))!
        }
        let dates = [
            date(1, 1, 1), date(1, 1, 1, 0, 1), date(1582, 10, 15), date(1969, 12, 31, 23, 59, 999_000_000),
            Date(timeIntervalSince1970: 0), Date(timeIntervalSinceReferenceDate: 0.000_001), date(2038, 1, 19, 3, 14),
            date(9999, 12, 31, 23, 59, 999_000_000), .distantPast, .distantFuture,
        ]
        let records = dates.enumerated().map { Extreme(id: Int64($0.offset), date: $0.element) }
        _ = try Extreme.save(records, in: test.store)
        for record in records {
            let loaded = try #require(try Extreme.find(key: record.id, in: test.store))
            #expect(loaded.date?.timeIntervalSinceReferenceDate.bitPattern == record.date?.timeIntervalSinceReferenceDate.bitPattern)
        }
        let sorted = try Extreme.all().order(.ascending(\.date)).findAll(in: test.store).map(\.date)
        #expect(sorted == dates.sorted())
        #expect(try Extreme.findAll(where: \.date < date(1, 1, 2), in: test.store).map(\.id) == [0, 1, 8])
        #expect(calendar.component(.year, from: try #require(try Extreme.find(key: 7, in: test.store)?.date)) == 9999)
    }

    @Test(arguments: Backend.available) func decimalsWith38DigitsRoundTripExactly(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let texts = [
            "12345678901234567890123456789012345678", "99999999999999999999999999999999999999",
            "-1234567890123456789.0123456789012345678", "0.00000000000000000000000000000000000001",
            "-0.1", "0", "3.4028236692093846346337460743176821145e+40",
        ]
        let decimals = texts.map { Decimal(string: $0, locale: Locale(identifier: "en_US_POSIX"))! }
        let records = decimals.enumerated().map { Extreme(id: Int64($0.offset), decimal: $0.element) }
        _ = try Extreme.save(records, in: test.store)
        for record in records {
            let loaded = try #require(try Extreme.find(key: record.id, in: test.store))
            #expect(loaded.decimal == record.decimal, "\(record.decimal!)")
            #expect(loaded.decimal?.description == record.decimal?.description)
        }
    }

    @Test(arguments: Backend.available) func emptyCollectionsEmptyTextAndEmptyBytesStayEmptyNotNil(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let empty = Extreme(id: 1, text: "", bytes: Data(), list: [], map: [:], set: [])
        try empty.save(in: test.store)
        try Extreme(id: 2).save(in: test.store)
        #expect(try Extreme.find(key: 1, in: test.store) == empty)
        #expect(try Extreme.find(key: 2, in: test.store) == Extreme(id: 2))
        #expect(try test.rawRows(#"SELECT "text", "bytes" FROM "Extreme" WHERE "id" = 1"#) == [[.text(""), .blob(Data())]])
        #expect(try Extreme.findAll(where: .isNull(\.bytes), in: test.store).map(\.id) == [2])
        #expect(try Extreme.findAll(where: \.bytes == Data(), in: test.store).map(\.id) == [1])
    }

    // PostgreSQL differs: the derived index name is 64 bytes, which a server store refuses (.invalidModel; its limit is 63).
    @Test func keywordsQuotesAndSemicolonsInTableAndColumnNamesAreQuotedEverywhere() throws {
        let test = try TestStore(.file)
        try Snack(snackId: 1, name: "still here").save(in: test.store)
        var member = Member(select: 1, from: "x", weird: "'; DROP TABLE Snack; --")
        member.group = Group(index: 7, where: "here")
        try member.save(in: test.store)
        try Group(index: 8, where: "there", members: [Member(select: 2, from: "y")]).save(in: test.store)

        let loaded = try #require(try Member.find(key: 1, in: test.store))
        #expect(loaded.weird == member.weird)
        #expect(loaded.group?.index == 7)
        #expect(try Group.find(key: 8, in: test.store)?.members?.map(\.select) == [2])
        #expect(try Group.findAll(where: \.where == "here", orderBy: [.descending(\.index)], in: test.store).map(\.index) == [7])
        #expect(try Member.findAll(where: .hasPrefix(\.from, "y"), in: test.store).map(\.select) == [2])
        #expect(try Member.all().countsGrouped(by: \.from, in: test.store) == ["x": 1, "y": 1])
        #expect(try Group.delete(key: 7, in: test.store) == 1)
        #expect(try Member.find(key: 1, in: test.store)?.group == nil)
        let columns = try test.rawRows(#"SELECT name FROM pragma_table_info('member "items"; DROP TABLE Snack; --')"#)
        #expect(
            columns.map { $0[0] } == [.text("select"), .text("from \"where\""), .text("drop table; --"), .text("group's \"group\"_index")])
        #expect(try Snack.find(key: 1, in: test.store)?.name == "still here")
        #expect(try test.store.integrityCheck() == "ok")
    }

    // MARK: Byte helpers

    static func bytes(_ haystack: [UInt8], contain needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    static func asciiLowercased(_ bytes: [UInt8]) -> [UInt8] {
        bytes.map { (65...90).contains($0) ? $0 + 32 : $0 }
    }
}
