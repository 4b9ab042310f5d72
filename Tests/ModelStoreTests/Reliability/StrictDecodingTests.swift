import Foundation
import Testing
@testable import ModelStore

/// A property of each kind whose stored text is read by a conversion.
private struct Note: StoredModel, Equatable {
    var id: Int64
    var text: String?
    var decimal: Decimal?
    var uuid: UUID?
    var url: URL?
    var date: Date?
    var tags: [String]?
    var size: Size?
    var taste: Taste?
    var level: Level?
    static let primaryKey = ["id"]
}

/// A `Date` that is not Optional, one that is, and one in a declared form: the coders read and
/// write a Date in its own form directly, and everything else through its conversion.
private struct Stamp: StoredModel, Equatable {
    var id: Int64
    var at: Date
    var seen: Date?
    var logged: Date?
    static let primaryKey = ["id"]
    static let columnStorage: [ColumnStorage<Stamp>] = [.date(\.logged, as: .iso8601)]
}

/// A `UUID` key, a `UUID` that is not Optional, one that is, and one in a declared form: the
/// coders read and write a UUID in its own form directly, and everything else through its
/// conversion.
private struct Badge: StoredModel, Equatable {
    var id: UUID
    var owner: UUID
    var issuer: UUID?
    var packed: UUID?
    static let primaryKey = ["id"]
    static let columnStorage: [ColumnStorage<Badge>] = [.uuid(\.packed, as: .blob)]
}

/// Promise: a stored value is read exactly or not at all. A value that would only read by
/// repairing, trimming, rounding or guessing is `.decodingFailed` naming the model, the
/// column, the record's key and the stored value, with a suggestion — and the stored value
/// stays as it was.
@Suite("Reliability: strict decoding")
struct StrictDecodingTests {
    /// Stores `sql` in `column` of record `id`, then expects every way of reading the record
    /// to fail naming it, and the stored value to be unchanged.
    private func expectRefused(
        _ test: TestStore, _ column: String, _ sql: String, id: Int64 = 1, value: String? = nil,
        saying: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try store(test, column, sql, id: id)
        // SQLite's type and bytes of the value (its text may not be UTF-8); a server's column has one type.
        let stored = test.backend == .sqlite ? "typeof(\(quoted(column))), hex(\(quoted(column)))" : quoted(column)
        let before = try test.rawRows(#"SELECT \#(stored) FROM "Note" WHERE "id" = \#(id)"#)
        let error = try #require(throws: ModelStoreError.self, "\(column) = \(sql)", sourceLocation: sourceLocation) {
            try Note.find(key: id, in: test.store)
        }
        #expect(error.code == .decodingFailed, "\(column) = \(sql)", sourceLocation: sourceLocation)
        #expect(error.model == "Note", sourceLocation: sourceLocation)
        #expect(error.column == column, "\(column) = \(sql)", sourceLocation: sourceLocation)
        #expect(error.key == "id = \(id)", sourceLocation: sourceLocation)
        #expect(error.value != nil, sourceLocation: sourceLocation)
        if let value { #expect(error.value == value, "\(column) = \(sql)", sourceLocation: sourceLocation) }
        #expect(error.suggestion != nil, sourceLocation: sourceLocation)
        if let saying { #expect(error.message.contains(saying), "\(error.message)", sourceLocation: sourceLocation) }
        #expect(error.message.hasPrefix("Note.\(column): "), "\(error.message)", sourceLocation: sourceLocation)
        #expect(throws: ModelStoreError.self, sourceLocation: sourceLocation) { try Note.findAll(in: test.store) }
        #expect(try test.rawRows(#"SELECT \#(stored) FROM "Note" WHERE "id" = \#(id)"#) == before, sourceLocation: sourceLocation)
        try test.rawExecute(#"DELETE FROM "Note" WHERE "id" = \#(id)"#)
    }

    /// Stores `sql` in `column` of record `id` alone, replacing the record.
    private func store(_ test: TestStore, _ column: String, _ sql: String, id: Int64) throws {
        try test.rawExecute(#"DELETE FROM "Note" WHERE "id" = \#(id)"#)
        try test.rawExecute(#"INSERT INTO "Note" ("id", \#(quoted(column))) VALUES (\#(id), \#(sql))"#)
    }

    private func expectRead(
        _ test: TestStore, _ column: String, _ sql: String, _ expected: Note,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try store(test, column, sql, id: expected.id)
        #expect(try Note.find(key: expected.id, in: test.store) == expected, "\(column) = \(sql)", sourceLocation: sourceLocation)
        try test.rawExecute(#"DELETE FROM "Note" WHERE "id" = \#(expected.id)"#)
    }

    // MARK: Text

    /// Bytes that are not UTF-8, stored as TEXT by another tool.
    static let invalidUTF8 = [
        "FF", "61FF62", "80", "C0AF", "EDA080", "F4908080", "E282", "61E2822862",
        // A truncated 4-byte sequence of 3 bytes: its repair (one 3-byte U+FFFD) is as long
        // as the original, so only comparing the bytes finds it.
        "61F09F9862", "F09F98",
    ]

    // SQLite-only: text that is not UTF-8 cannot be stored on a server (its UTF-8 database refuses the bytes).
    @Test func textThatIsNotUTF8IsRefusedNamingTheRecordNotRepairedOrOverwritten() throws {
        let test = try TestStore()
        try Note(id: 0, text: "fine").save(in: test.store)
        for hex in Self.invalidUTF8 {
            let sql = "CAST(X'\(hex)' AS TEXT)"
            // A String and every conversion from text refuse the same bytes.
            for column in ["text", "decimal", "uuid", "url", "tags", "size", "taste"] {
                try expectRefused(test, column, sql, value: "x'\(hex.lowercased())'", saying: "not valid UTF-8")
            }
        }
        // The other record still reads.
        #expect(try Note.find(key: 0, in: test.store)?.text == "fine")
    }

    // SQLite-only: text that is not UTF-8 cannot be stored on a server (its UTF-8 database refuses the bytes).
    @Test func textThatIsNotUTF8IsRefusedByAggregatesAndProjectionsToo() throws {
        let test = try TestStore()
        try Note(id: 0, text: "fine").save(in: test.store)
        try test.rawExecute("INSERT INTO Note (id, text) VALUES (1, CAST(X'61F09F9862' AS TEXT))")
        for read in [
            { _ = try Note.all().values(of: \.text, in: test.store) },
            { _ = try Note.all().distinct(\.text, in: test.store) },
            { _ = try Note.all().min(\.text, in: test.store) },  // the damaged text sorts first
        ] {
            let error = try #require(throws: ModelStoreError.self) { try read() }
            #expect(error.code == .decodingFailed)
            #expect(error.model == "Note")
            #expect(error.column == "text")
            #expect(error.value == "x'61f09f9862'")
        }
        struct TextOnly: Decodable, Sendable { var text: String? }
        let error = try #require(throws: ModelStoreError.self) { try Note.all().findAll(as: TextOnly.self, in: test.store) }
        #expect(error.code == .decodingFailed)
        #expect(error.column == "text")
    }

    @Test(arguments: Backend.available) func validTextWithNulCharactersReadsExactlyAndSavesBackUnchanged(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Note(id: 0).save(in: test.store)
        // PostgreSQL text cannot hold NUL (U+0000): there only the texts without one.
        let stored = ["610062", "00", "0000", "F09F988000F09F9880", "EFBFBD", "C3A9", "65CC81", ""]
            .filter { backend == .sqlite || !Self.bytes($0).contains(0) }
        // The text of these UTF-8 bytes, and the bytes of a stored text, in each backend's SQL.
        let text = { (hex: String) in
            backend == .sqlite ? "CAST(X'\(hex)' AS TEXT)" : "convert_from(decode('\(hex)', 'hex'), 'UTF8')"
        }
        let bytes = backend == .sqlite ? #"hex("text")"# : #"upper(encode(convert_to("text", 'UTF8'), 'hex'))"#
        for (offset, hex) in stored.enumerated() {
            let id = Int64(offset + 1)
            try test.rawExecute(#"INSERT INTO "Note" ("id", "text") VALUES (\#(id), \#(text(hex)))"#)
            var note = try #require(try Note.find(key: id, in: test.store))
            #expect(note.text.map { Array($0.utf8) } == Self.bytes(hex), "\(hex)")
            note.level = .low
            try note.save(in: test.store)
            #expect(try test.rawRows(#"SELECT \#(bytes) FROM "Note" WHERE "id" = \#(id)"#) == [[.text(hex)]])
        }
    }

    // MARK: Conversions from text

    @Test(arguments: Backend.available) func decimalTextMustBeExactlyTheDigitsADecimalWrites(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Note(id: 0).save(in: test.store)
        // A server stores a Decimal in a numeric column, which refuses these texts itself.
        for text in [
            "12abc", " 7", "7 ", "", "NaN", "nan", "1,5", "1.50", "01", "+1", "-0", ".5", "5.", "1e5", "0x10",
            "12345678901234567890123456789012345678901", "1e200", "١٢",
        ] where backend == .sqlite {
            try expectRefused(test, "decimal", "'\(text)'", value: "'\(text)'")
        }
        for text in ["12.5", "-0.001", "0", "12345678901234567890123456789012345678", "-1234567890123456789.0123456789012345678"] {
            try expectRead(test, "decimal", "'\(text)'", Note(id: 1, decimal: Decimal(string: text)!))
        }
        // An INTEGER or REAL written by another tool: the integer exactly, a REAL as the shortest
        // decimal that is the same Double; one no Decimal holds is refused.
        #expect(try Decimal(sqlValue: .integer(.max)) == Decimal(string: "9223372036854775807"))
        #expect(try Decimal(sqlValue: .real(0.1)) == Decimal(string: "0.1"))
        #expect(try Decimal(sqlValue: .real(1_234_567_890.123_456_7)).description == "1234567890.1234567")
        for real in [1e300, .leastNonzeroMagnitude, .infinity, -.infinity] {
            #expect(throws: ModelStoreError.self, "\(real)") { try Decimal(sqlValue: .real(real)) }
        }
    }

    @Test(arguments: Backend.available) func everyDecimalModelStoreWritesReadsBackUnderTheExactRule(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let seed = SeededGenerator.seed(from: "DECIMAL_SEED")
        var random = SeededGenerator(seed: seed)
        var decimals: [Decimal] = [
            .greatestFiniteMagnitude, .leastFiniteMagnitude, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, 0,
            Decimal(1) / Decimal(3), Decimal(-2) / Decimal(3), Decimal(string: "1e127")!, Decimal(string: "1e-128")!,
            Decimal(sign: .plus, exponent: -2, significand: 150), Decimal(sign: .minus, exponent: 5, significand: 42),
        ]
        for _ in 0..<500 {
            let digits = String((0..<Int.random(in: 1...38, using: &random)).map { _ in "0123456789".randomElement(using: &random)! })
            let exponent = Int.random(in: -90...90, using: &random)
            decimals.append(Decimal(string: "\(Bool.random(using: &random) ? "-" : "")\(digits)e\(exponent)")!)
        }
        let notes = decimals.enumerated().map { Note(id: Int64($0.offset), decimal: $0.element) }
        _ = try Note.save(notes, in: test.store)
        let loaded = try Note.findAll(in: test.store)
        #expect(loaded.map(\.decimal) == notes.map(\.decimal), "seed \(seed)")
        #expect(loaded.map { $0.decimal?.description } == notes.map { $0.decimal?.description }, "seed \(seed)")
    }

    @Test(arguments: Backend.available) func uuidAndURLTextMustBeExactlyWhatTheyWrite(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Note(id: 0).save(in: test.store)
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        for text in [
            "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", " E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
            "{E621E1F8-C36C-495A-93FC-0C247A3E6E5F}", "E621E1F8C36C495A93FC0C247A3E6E5F", "", "x",
        ] {
            try expectRefused(test, "uuid", "'\(text)'", value: "'\(text)'")
        }
        try expectRead(test, "uuid", "'\(uuid.uuidString)'", Note(id: 1, uuid: uuid))
        if backend == .sqlite {
            // 16 bytes, as other libraries store a UUID, read exactly; other lengths do not. (A
            // server's text column holds no bytes.)
            try expectRead(test, "uuid", "X'E621E1F8C36C495A93FC0C247A3E6E5F'", Note(id: 1, uuid: uuid))
            try expectRefused(test, "uuid", "X'E621E1F8C36C495A93FC0C247A3E6E'")
        }

        // URL(string:) would percent-encode these, reading another URL than was stored.
        for text in ["a b", "https://example.com/a b", "http://x/%zz", "https://example.com/ü", ""] {
            try expectRefused(test, "url", "'\(text)'", value: "'\(text)'")
        }
        try expectRead(test, "url", "'https://example.com/a%20b?c=d#e'", Note(id: 1, url: URL(string: "https://example.com/a%20b?c=d#e")!))
    }

    @Test(arguments: Backend.available) func datesAreNumbersThatADoubleHoldsExactly(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Note(id: 0).save(in: test.store)
        if backend == .sqlite {
            // A server's double precision column refuses this text and blob itself.
            try expectRefused(test, "date", "'2020-01-01'", value: "'2020-01-01'")
            try expectRefused(test, "date", "X'00'")
        }
        try expectRead(test, "date", "5", Note(id: 1, date: Date(timeIntervalSinceReferenceDate: 5)))
        // A REAL column cannot hold the integer 2^53 + 1, but a value from elsewhere can be one.
        #expect(throws: ModelStoreError.self) { try Date(sqlValue: .integer(9_007_199_254_740_993)) }
        #expect(try Date(sqlValue: .integer(9_007_199_254_740_992)) == Date(timeIntervalSinceReferenceDate: 0x1p53))
    }

    /// The direct path for a Date in its own form answers exactly as `Date.sqlValue` and
    /// `Date(sqlValue:)` do: the same stored double, bit for bit (a negative zero as zero),
    /// NaN refused naming the property, a declared form still converted, and a stored value
    /// that is not a number refused naming the column, whether the property is Optional or not.
    @Test(arguments: Backend.available) func aDateIsStoredAndReadAsTheDoubleItHoldsOrRefusedByName(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let seconds: [Double] = [0, -0.0, 123.456, -978_307_200, 0x1p53, .greatestFiniteMagnitude, -.infinity, 1e-300]
        let stamps = seconds.enumerated().map { offset, value in
            let date = Date(timeIntervalSinceReferenceDate: value)
            return Stamp(
                id: Int64(offset), at: date, seen: offset.isMultiple(of: 2) ? date : nil,
                logged: offset == 2 ? Date(timeIntervalSinceReferenceDate: 5.25) : nil)
        }
        for stamp in stamps.prefix(4) { try stamp.save(in: test.store) }
        _ = try Stamp.save(Array(stamps.dropFirst(4)), in: test.store)
        let read = try Stamp.findAll(where: .all, orderBy: [.ascending(\.id)], in: test.store)
        #expect(read.map(\.id) == stamps.map(\.id))
        for (stored, expected) in zip(read, seconds) {
            let bits = (expected + 0).bitPattern
            #expect(stored.at.timeIntervalSinceReferenceDate.bitPattern == bits, "\(expected)")
            #expect(stored.seen?.timeIntervalSinceReferenceDate.bitPattern == (stored.id.isMultiple(of: 2) ? bits : nil), "\(expected)")
        }
        let raw = try test.rawRows(#"SELECT "at", "logged" FROM "Stamp" WHERE "id" = 2"#)
        #expect(raw == [[.real(123.456), .text("2001-01-01T00:00:05.250Z")]])
        #expect(read[2].logged == Date(timeIntervalSinceReferenceDate: 5.25))

        for nan in [
            Stamp(id: 100, at: Date(timeIntervalSinceReferenceDate: .nan)),
            Stamp(id: 101, at: .now, seen: Date(timeIntervalSinceReferenceDate: .nan)),
        ] {
            let error = try #require(throws: ModelStoreError.self) { try nan.save(in: test.store) }
            #expect(error.code == .encodingFailed)
            #expect(error.column == (nan.id == 100 ? "at" : "seen"), "\(error)")
            #expect(error.message.hasPrefix("Stamp.\(error.column ?? ""): "), "\(error.message)")
        }
        #expect(try Stamp.count(in: test.store) == stamps.count)
        if backend == .sqlite {
            // A server's double precision column refuses text itself.
            for column in ["at", "seen"] {
                try test.rawExecute(#"UPDATE "Stamp" SET \#(quoted(column)) = 'soon' WHERE "id" = 0"#)
                let error = try #require(throws: ModelStoreError.self, "\(column)") { try Stamp.find(key: 0, in: test.store) }
                #expect(error.code == .decodingFailed)
                #expect(error.column == column, "\(error)")
                #expect(error.key == "id = 0")
                try test.rawExecute(#"UPDATE "Stamp" SET \#(quoted(column)) = 0.0 WHERE "id" = 0"#)
            }
        }
    }

    /// The direct path for a UUID in its own form answers exactly as `UUID.sqlValue` and
    /// `UUID(sqlValue:)` do: the stored text is `uuidString` byte for byte (keys, single and
    /// batch saves, finds by key), 16 bytes read as the same UUID, and text in any other
    /// spelling — lower or mixed case, a misplaced hyphen, a letter past F, one character
    /// more or less — is refused naming the column, whether the property is Optional or not.
    @Test(arguments: Backend.available) func aUUIDIsStoredAsItsUpperCaseTextAndReadOnlyInThatForm(_ backend: Backend) throws {
        let test = try TestStore(backend)
        var generator = SeededGenerator(seed: 29)
        let edges = [
            UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
            UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)),
            UUID(uuidString: "0A1B2C3D-4E5F-6071-8293-A4B5C6D7E8F9")!,
        ]
        let uuids =
            edges
            + (0..<120).map { _ in
                UUID(uuid: withUnsafeBytes(of: (generator.next(), generator.next())) { $0.load(as: uuid_t.self) })
            }
        let badges = uuids.indices.map { index in
            Badge(
                id: uuids[index], owner: uuids[(index + 1) % uuids.count], issuer: index.isMultiple(of: 2) ? uuids[index] : nil,
                packed: index.isMultiple(of: 3) ? uuids[index] : nil)
        }
        for badge in badges.prefix(3) { try badge.save(in: test.store) }
        _ = try Badge.save(Array(badges.dropFirst(3)), in: test.store)
        let read = Dictionary(uniqueKeysWithValues: try Badge.findAll(in: test.store).map { ($0.id, $0) })
        #expect(read.count == badges.count)
        for badge in badges { #expect(read[badge.id] == badge, "\(badge.id)") }
        for badge in badges.prefix(10) { #expect(try Badge.find(key: badge.id, in: test.store) == badge) }
        #expect(try Badge.filter(\.owner == uuids[1]).findAll(in: test.store) == [badges[0]])
        if backend == .sqlite {
            // The declared form holds the 16 bytes, in order (a server's bytea reads back as text here).
            let raw = try test.rawRows(#"SELECT hex("packed") FROM "Badge" WHERE "id" = '\#(uuids[0].uuidString)'"#)
            #expect(raw == [[.text(String(repeating: "0", count: 32))]])
            let edge = try test.rawRows(#"SELECT hex("packed") FROM "Badge" WHERE "id" = '\#(uuids[2].uuidString)'"#)
            #expect(edge == [[.text("")]])  // NULL: hex() of it is empty
            let third = try test.rawRows(#"SELECT hex("packed") FROM "Badge" WHERE "id" = '\#(uuids[3].uuidString)'"#)
            #expect(third == [[.text(uuids[3].uuidString.replacingOccurrences(of: "-", with: ""))]])
        }
        for index in 0..<3 {
            let raw = try test.rawRows(#"SELECT "id", "owner", "issuer" FROM "Badge" WHERE "id" = '\#(uuids[index].uuidString)'"#)
            let issuer: SQLValue = index.isMultiple(of: 2) ? .text(uuids[index].uuidString) : .null
            #expect(raw == [[.text(uuids[index].uuidString), .text(uuids[index + 1].uuidString), issuer]])
        }

        let key = uuids[1].uuidString
        let spelled = "0A1B2C3D-4E5F-6071-8293-A4B5C6D7E8F9"
        for column in ["owner", "issuer"] {
            for text in [
                spelled.lowercased(), "0A1B2C3D-4E5F-6071-8293-A4B5C6D7e8F9", "0A1B2C3D4-E5F-6071-8293-A4B5C6D7E8F9",
                "0A1B2C3D-4E5F-6071-8293-A4B5C6D7E8FG", spelled + "0", String(spelled.dropLast()), "",
                // 36 bytes that are not 36 characters; a ligature whose upper case is "FF".
                "0A1B2C3D-4E5F-6071-8293-A4B5C6D7E8é", "0A1B2C3D-4E5F-6071-8293-A4B5C6D7E8\u{FB00}",
            ] {
                try test.rawExecute(#"UPDATE "Badge" SET "\#(column)" = '\#(text)' WHERE "id" = '\#(key)'"#)
                let error = try #require(throws: ModelStoreError.self, "\(column) = '\(text)'") {
                    try Badge.find(key: uuids[1], in: test.store)
                }
                #expect(error.code == .decodingFailed, "\(column) = '\(text)'")
                #expect(error.model == "Badge")
                #expect(error.column == column, "\(error)")
                #expect(error.value != nil, "\(error)")
            }
            try test.rawExecute(#"UPDATE "Badge" SET "\#(column)" = '\#(spelled)' WHERE "id" = '\#(key)'"#)
            let restored = try #require(try Badge.find(key: uuids[1], in: test.store))
            #expect((column == "owner" ? restored.owner : restored.issuer) == edges[2])
        }
        if backend == .sqlite {
            // 36 bytes with a NUL inside (text a server refuses to hold): refused naming the column.
            for value in ["CAST(X'30413142324333002D344535462D363037312D383239332D413442354336443745384639' AS TEXT)"] {
                try test.rawExecute(#"UPDATE "Badge" SET "owner" = \#(value) WHERE "id" = '\#(key)'"#)
                let error = try #require(throws: ModelStoreError.self, "\(value)") { try Badge.find(key: uuids[1], in: test.store) }
                #expect(error.column == "owner", "\(error)")
            }
            try test.rawExecute(#"UPDATE "Badge" SET "owner" = '\#(spelled)' WHERE "id" = '\#(key)'"#)
        }
        if backend == .sqlite {
            // 16 bytes, as other libraries store a UUID, read as the same UUID; 15 do not. (A
            // server's text column holds no bytes.)
            try test.rawExecute(#"UPDATE "Badge" SET "owner" = X'0A1B2C3D4E5F60718293A4B5C6D7E8F9' WHERE "id" = '\#(key)'"#)
            #expect(try Badge.find(key: uuids[1], in: test.store)?.owner == edges[2])
            try test.rawExecute(#"UPDATE "Badge" SET "owner" = X'0A1B2C3D4E5F60718293A4B5C6D7E8' WHERE "id" = '\#(key)'"#)
            let error = try #require(throws: ModelStoreError.self) { try Badge.find(key: uuids[1], in: test.store) }
            #expect(error.column == "owner", "\(error)")
            try test.rawExecute(#"UPDATE "Badge" SET "owner" = '\#(spelled)' WHERE "id" = '\#(key)'"#)
            // The declared 16-byte form reads its bytes and nothing else: not the text that is
            // the own form's, not 15 bytes.
            try test.rawExecute(#"UPDATE "Badge" SET "packed" = X'0A1B2C3D4E5F60718293A4B5C6D7E8F9' WHERE "id" = '\#(key)'"#)
            #expect(try Badge.find(key: uuids[1], in: test.store)?.packed == edges[2])
            for stored in ["'\(spelled)'", "X'0A1B2C3D4E5F60718293A4B5C6D7E8'"] {
                try test.rawExecute(#"UPDATE "Badge" SET "packed" = \#(stored) WHERE "id" = '\#(key)'"#)
                let error = try #require(throws: ModelStoreError.self, "\(stored)") { try Badge.find(key: uuids[1], in: test.store) }
                #expect(error.code == .decodingFailed, "\(stored)")
                #expect(error.column == "packed", "\(error)")
            }
        }
    }

    /// The UUID text ModelStore writes and accepts is decided without Foundation's parse and
    /// print; it must decide exactly what `uuidString` and `UUID(uuidString:)` decide: the
    /// written text is `uuidString`, and a spelling reads if and only if Foundation parses it
    /// and writes it back the same. Every character of random UUIDs is replaced, removed or
    /// doubled in turn, and each declared text form is asked too.
    @Test func uuidTextIsWrittenAndAcceptedExactlyAsFoundationSpellsIt() throws {
        var generator = SeededGenerator(seed: 36)
        let replacements: [Character] = ["a", "f", "g", "A", "F", "G", "0", "9", "-", " ", "{", "é"]
        for _ in 0..<40 {
            let uuid = UUID(uuid: withUnsafeBytes(of: (generator.next(), generator.next())) { $0.load(as: uuid_t.self) })
            #expect(uuid.sqlValue == .text(uuid.uuidString))
            let text = Array(uuid.uuidString)
            var spellings = [uuid.uuidString, uuid.uuidString.lowercased(), "", "{\(uuid.uuidString)}"]
            for position in text.indices {
                for replacement in replacements.shuffled(using: &generator).prefix(3) {
                    var changed = text
                    changed[position] = replacement
                    spellings.append(String(changed))
                }
                var removed = text
                removed.remove(at: position)
                spellings.append(String(removed))
                var doubled = text
                doubled.insert(text[position], at: position)
                spellings.append(String(doubled))
            }
            for spelling in spellings {
                let foundation = UUID(uuidString: spelling).flatMap { $0.uuidString == spelling ? $0 : nil }
                #expect((try? UUID(sqlValue: .text(spelling))) == foundation, "\(spelling)")
                let lower = UUID(uuidString: spelling).flatMap { $0.uuidString.lowercased() == spelling ? $0 : nil }
                #expect((try? UUIDStorage.lowercaseText.load(.text(spelling))) == lower.map { .text($0.uuidString) }, "\(spelling)")
                #expect((try? UUIDStorage.text.load(.text(spelling))) == foundation.map { .text($0.uuidString) }, "\(spelling)")
            }
            #expect(try UUIDStorage.lowercaseText.store(uuid.sqlValue) == .text(uuid.uuidString.lowercased()))
            #expect(try UUIDStorage.blob.load(UUIDStorage.blob.store(uuid.sqlValue)) == uuid.sqlValue)
        }
    }

    @Test(arguments: Backend.available) func enumRawValuesThatNameNoCaseAreRefused(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Note(id: 0).save(in: test.store)
        try expectRefused(test, "size", "'XL'", value: "'XL'")
        try expectRefused(test, "size", "'s'", value: "'s'")
        try expectRefused(test, "taste", "'Sweet'", value: "'Sweet'")
        try expectRefused(test, "taste", "'sweet '", value: "'sweet '")
        try expectRefused(test, "level", "15", value: "15")
        if backend == .sqlite {
            // A server's integer column rounds 10.5 as it stores it.
            try expectRefused(test, "level", "10.5", value: "10.5")
        }
        try expectRead(test, "level", "'20'", Note(id: 1, level: .high))
    }

    // MARK: Numbers

    @Test(arguments: Backend.available) func integersBoolsAndFloatsOutOfRangeOrWithAFractionAreRefused(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let sample = Everything.sample(1)
        try sample.save(in: test.store)
        var refused: [(column: String, sql: String, value: String)] = [
            ("int8", "128", "128"), ("int8", "-129", "-129"), ("int16", "40000", "40000"),
            ("int32", "2147483648", "2147483648"), ("uint8", "-1", "-1"), ("uint8", "256", "256"), ("uint16", "65536", "65536"),
            ("uint32", "-1", "-1"), ("uint32", "4294967296", "4294967296"), ("uint", "-1", "-1"), ("uint64", "-5", "-5"),
            ("bool", "2", "2"), ("bool", "-1", "-1"), ("float", "0.1", "0.1"), ("float", "1e300", "1e+300"),
        ]
        if backend == .sqlite {
            // Values only SQLite's columns hold: a server's integer column rounds a fraction, or
            // refuses text or a value beyond Int64, as it stores it.
            refused += [
                ("int64", "1.5", "1.5"), ("int64", "1e19", "1e+19"), ("int32", "2.5", "2.5"), ("bool", "0.5", "0.5"),
                ("bool", "'true'", "'true'"), ("double", "'1.5x'", "'1.5x'"),
            ]
        }
        for (column, sql, value) in refused {
            try test.rawExecute(#"UPDATE "Everything" SET "\#(column)" = \#(sql)"#)
            let error = try #require(throws: ModelStoreError.self, "\(column) = \(sql)") {
                try Everything.findAll(in: test.store)
            }
            #expect(error.code == .decodingFailed, "\(column) = \(sql)")
            #expect(error.model == "Everything")
            #expect(error.column == column, "\(column) = \(sql)")
            #expect(error.key == "id = 1", "\(column) = \(sql)")
            #expect(error.value == value, "\(column) = \(sql)")
            #expect(error.suggestion != nil)
            try test.rawExecute(#"DELETE FROM "Everything""#)
            try sample.save(in: test.store)
        }
        // The same values through an aggregate are refused too, naming the column.
        try test.rawExecute(#"UPDATE "Everything" SET "int8" = 300"#)
        let error = try #require(throws: ModelStoreError.self) { try Everything.all().max(\.int8, in: test.store) }
        #expect(error.code == .decodingFailed)
        #expect(error.column == "int8")
        #expect(error.suggestion != nil)
        // Whole REALs in an INTEGER column were already made integers by the database, and read.
        try test.rawExecute(#"UPDATE "Everything" SET "int8" = 3.0, "bool" = 1.0"#)
        #expect(try Everything.find(key: 1, in: test.store)?.int8 == 3)
    }

    static func bytes(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }
}
