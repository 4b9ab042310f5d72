import Foundation
import Testing
@testable import ModelStore

/// An optional property of every primitive type: synthesized coding reads each with the
/// keyed container's typed `decodeIfPresent`.
struct OptionalPrimitives: StoredModel, Equatable {
    var id: Int64
    var bool: Bool?
    var string: String?
    var double: Double?
    var float: Float?
    var int: Int?
    var int8: Int8?
    var int16: Int16?
    var int32: Int32?
    var int64: Int64?
    var uint: UInt?
    var uint8: UInt8?
    var uint16: UInt16?
    var uint32: UInt32?
    var uint64: UInt64?
    static let primaryKey = ["id"]

    static func extremes(_ id: Int64) -> OptionalPrimitives {
        OptionalPrimitives(
            id: id, bool: false, string: "", double: -.infinity, float: .greatestFiniteMagnitude, int: Int.min, int8: Int8.min,
            int16: Int16.min, int32: Int32.max, int64: Int64.min, uint: UInt(Int64.max), uint8: UInt8.max, uint16: UInt16.max,
            uint32: UInt32.max, uint64: UInt64(Int64.max))
    }
}

/// A note whose custom coding reads older formats through nested containers: format 0 is
/// flat; formats 1–4 open a nested keyed, a nested unkeyed container, a keyed super coder
/// and a plain super coder. The schema probe only ever sees format 0.
struct FormattedNote: StoredModel, Equatable {
    var id: Int64
    var format: Int
    var text: String
    static let primaryKey = ["id"]

    enum CodingKeys: String, CodingKey { case id, format, text }
    enum BodyKeys: String, CodingKey { case body }

    init(id: Int64, format: Int, text: String) {
        self.id = id
        self.format = format
        self.text = text
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        format = try container.decode(Int.self, forKey: .format)
        switch format {
        case 1: text = try container.nestedContainer(keyedBy: BodyKeys.self, forKey: .text).decode(String.self, forKey: .body)
        case 2:
            var list = try container.nestedUnkeyedContainer(forKey: .text)
            text = try list.decode(String.self)
        case 3: text = try String(from: container.superDecoder(forKey: .text))
        case 4: text = try String(from: container.superDecoder())
        default: text = try container.decode(String.self, forKey: .text)
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(format, forKey: .format)
        switch format {
        case 1:
            var body = container.nestedContainer(keyedBy: BodyKeys.self, forKey: .text)
            try body.encode(text, forKey: .body)
        case 2:
            var list = container.nestedUnkeyedContainer(forKey: .text)
            try list.encode(text)
        case 3: try text.encode(to: container.superEncoder(forKey: .text))
        case 4: try text.encode(to: container.superEncoder())
        default: try container.encode(text, forKey: .text)
        }
    }
}

/// A model whose custom `init(from:)` asks its container what it holds, and whose custom
/// `encode(to:)` writes an explicit nil and validates like hand-written Codable code does.
struct Annotated: StoredModel {
    var id: Int64
    var note: String?
    /// Not stored: what the container reported while this value was decoded.
    var keysSeen: [String] = []
    var noteWasNull = false
    var containsRetired = true
    var retiredWasNull = false
    var codingPathLength = -1
    static let primaryKey = ["id"]

    /// `retired` is a key the type knows but never decodes, so it has no column.
    enum CodingKeys: String, CodingKey { case id, note, retired }

    init(id: Int64, note: String?) {
        self.id = id
        self.note = note
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        note = try container.decodeIfPresent(String.self, forKey: .note)
        if note == "" {
            throw DecodingError.dataCorruptedError(forKey: .note, in: container, debugDescription: "An empty note is not a note")
        }
        keysSeen = container.allKeys.map(\.stringValue)
        noteWasNull = try container.decodeNil(forKey: .note)
        containsRetired = container.contains(.retired)
        retiredWasNull = try container.decodeNil(forKey: .retired)
        codingPathLength = decoder.codingPath.count + container.codingPath.count
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        if note == "" {
            throw EncodingError.invalidValue(
                note as Any,
                .init(
                    codingPath: container.codingPath + ([CodingKeys.note] as [any CodingKey]),
                    debugDescription: "An empty note is not a note"))
        }
        if let note { try container.encode(note, forKey: .note) } else { try container.encodeNil(forKey: .note) }
    }
}

@Suite("Coverage: models with custom init(from:) and encode(to:)")
struct CustomCodableModelTests {
    @Test(arguments: StoreKind.everywhere)
    func optionalsOfEveryPrimitiveTypeRoundTripWithExtremeValues(kind: StoreKind) throws {
        let test = try TestStore(kind)
        let model = OptionalPrimitives.extremes(1)
        try model.save(in: test.store)
        #expect(try OptionalPrimitives.find(key: 1, in: test.store) == model)
        let stored = try test.rawRows(#"SELECT "bool", "int8", "uint8", "uint32", "uint64", "float" FROM "OptionalPrimitives""#)
        #expect(
            stored == [
                [
                    .integer(0), .integer(-128), .integer(255), .integer(4_294_967_295), .integer(Int64.max),
                    .real(Double(Float.greatestFiniteMagnitude)),
                ]
            ])
    }

    @Test(arguments: Backend.available) func optionalsOfEveryPrimitiveTypeReadBackNilFromNull(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try OptionalPrimitives.extremes(1).save(in: test.store)
        let columns = [
            "bool", "string", "double", "float", "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
        ]
        try test.rawExecute(#"UPDATE "OptionalPrimitives" SET "# + columns.map { "\(quoted($0)) = NULL" }.joined(separator: ", "))
        #expect(try OptionalPrimitives.find(key: 1, in: test.store) == OptionalPrimitives(id: 1))
    }

    /// Stored values an optional property's type cannot hold, on each backend: the last ones
    /// only SQLite's columns hold (a server's column refuses or converts them as it stores them).
    static let unfitValues: [(Backend, String, String)] = Backend.available.flatMap { backend in
        let portable = [
            ("int8", "128"), ("int16", "-32769"), ("int32", "2147483648"), ("uint", "-1"), ("uint8", "256"), ("uint16", "65536"),
            ("uint32", "4294967296"), ("uint64", "-1"), ("bool", "2"), ("float", "0.1"),
        ]
        let sqliteOnly = [("int", "'seven'"), ("int64", "1.5"), ("double", "'x'"), ("string", "X'41'")]
        return (portable + (backend == .sqlite ? sqliteOnly : [])).map { (backend, $0.0, $0.1) }
    }

    @Test(arguments: unfitValues)
    func anOptionalPropertyWhoseStoredValueItsTypeCannotHoldIsADecodingErrorNamingTheColumn(
        _ backend: Backend, column: String, stored: String
    ) throws {
        let test = try TestStore(backend)
        try OptionalPrimitives.extremes(1).save(in: test.store)
        try test.rawExecute(#"UPDATE "OptionalPrimitives" SET "\#(column)" = \#(stored)"#)
        let error = try #require(throws: ModelStoreError.self) { try OptionalPrimitives.find(key: 1, in: test.store) }
        #expect(error.code == .decodingFailed)
        #expect(error.model == "OptionalPrimitives")
        #expect(error.column == column)
        #expect(error.key == "id = 1")
    }

    @Test(arguments: Backend.available) func aCustomCodingThatStaysFlatRoundTrips(_ backend: Backend) throws {
        let test = try TestStore(backend)
        let note = FormattedNote(id: 1, format: 0, text: "flat")
        try note.save(in: test.store)
        #expect(try FormattedNote.find(key: 1, in: test.store) == note)
        #expect(try test.rawRows(#"SELECT "id", "format", "text" FROM "FormattedNote""#) == [[.integer(1), .integer(0), .text("flat")]])
    }

    @Test(arguments: Backend.available, [(1, "text"), (2, "text"), (3, "text"), (4, nil)] as [(Int, String?)])
    func anEncodeThatOpensANestedContainerIsRefusedNamingThePropertyAndNothingIsWritten(
        _ backend: Backend, change: (format: Int, column: String?)
    ) throws {
        let (format, column) = change
        let test = try TestStore(backend)
        try FormattedNote(id: 1, format: 0, text: "kept").save(in: test.store)
        let error = try #require(throws: ModelStoreError.self) {
            try FormattedNote(id: 1, format: format, text: "nested").save(in: test.store)
        }
        #expect(error.code == .invalidModel)
        #expect(error.model == "FormattedNote")
        #expect(error.column == column)
        #expect(error.message.contains("nested container"))
        #expect(error.suggestion != nil)
        #expect(try FormattedNote.find(key: 1, in: test.store) == FormattedNote(id: 1, format: 0, text: "kept"))
        let batch = try #require(throws: ModelStoreError.self) {
            try FormattedNote.save(
                [FormattedNote(id: 2, format: 0, text: "fine"), FormattedNote(id: 3, format: format, text: "x")], in: test.store)
        }
        #expect(batch.code == .invalidModel)
        #expect(try FormattedNote.count(in: test.store) == 1)
    }

    @Test(arguments: Backend.available, [(1, "text"), (2, "text"), (3, "text"), (4, nil)] as [(Int, String?)])
    func aDecodeThatOpensANestedContainerIsRefusedNamingThePropertyAndRecord(_ backend: Backend, change: (format: Int, column: String?))
        throws
    {
        let (format, column) = change
        let test = try TestStore(backend)
        try FormattedNote(id: 1, format: 0, text: "old").save(in: test.store)
        try test.rawExecute(#"UPDATE "FormattedNote" SET "format" = \#(format)"#)
        let error = try #require(throws: ModelStoreError.self) { try FormattedNote.find(key: 1, in: test.store) }
        #expect(error.code == .invalidModel)
        #expect(error.model == "FormattedNote")
        #expect(error.column == column)
        #expect(error.key == "id = 1")
        #expect(error.message.contains("nested container"))
        #expect(throws: ModelStoreError.self) { try FormattedNote.findAll(in: test.store) }
    }

    @Test(arguments: Backend.available) func aCustomInitSeesTheColumnsAsTheContainersKeys(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Annotated(id: 1, note: "hello").save(in: test.store)
        let loaded = try #require(try Annotated.find(key: 1, in: test.store))
        #expect(loaded.note == "hello")
        #expect(loaded.keysSeen == ["id", "note"])
        #expect(loaded.noteWasNull == false)
        // A key the type knows but never decoded has no column: absent, so nil.
        #expect(loaded.containsRetired == false)
        #expect(loaded.retiredWasNull == true)
        #expect(loaded.codingPathLength == 0)
        #expect(try test.declaredTypes("Annotated").keys.sorted() == ["id", "note"])
    }

    @Test(arguments: Backend.available) func decodeNilTellsAStoredNullFromAValue(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Annotated(id: 1, note: nil).save(in: test.store)
        try Annotated(id: 2, note: "set").save(in: test.store)
        let loaded = try Annotated.findAll(in: test.store)
        #expect(loaded.map(\.note) == [nil, "set"])
        #expect(loaded.map(\.noteWasNull) == [true, false])
    }

    @Test(arguments: Backend.available) func anExplicitNilFromACustomEncodeStoresNull(_ backend: Backend) throws {
        let test = try TestStore(backend)
        try Annotated(id: 1, note: "first").save(in: test.store)
        // Synthesized coding skips a nil optional, which keeps the stored value; this type
        // writes encodeNil, which is an explicit NULL.
        try Annotated(id: 1, note: nil).save(in: test.store)
        #expect(try test.rawRows(#"SELECT "note" FROM "Annotated""#) == [[.null]])
        #expect(try Annotated.find(key: 1, in: test.store)?.note == nil)
    }

    @Test(arguments: Backend.available) func aCustomEncodesOwnErrorIsAnEncodingFailureNamingTheModelAndNothingIsWritten(_ backend: Backend)
        throws
    {
        let test = try TestStore(backend)
        try Annotated(id: 1, note: "first").save(in: test.store)
        let error = try #require(throws: ModelStoreError.self) { try Annotated(id: 1, note: "").save(in: test.store) }
        #expect(error.code == .encodingFailed)
        #expect(error.model == "Annotated")
        #expect(error.message.contains("An empty note is not a note"))
        #expect(try test.rawRows(#"SELECT "note" FROM "Annotated""#) == [[.text("first")]])
    }

    @Test(arguments: Backend.available) func aCustomInitsOwnErrorIsADecodingFailureNamingTheColumnFromItsCodingPath(_ backend: Backend)
        throws
    {
        let test = try TestStore(backend)
        try Annotated(id: 1, note: "first").save(in: test.store)
        try test.rawExecute(#"UPDATE "Annotated" SET "note" = ''"#)
        let error = try #require(throws: ModelStoreError.self) { try Annotated.find(key: 1, in: test.store) }
        #expect(error.code == .decodingFailed)
        #expect(error.model == "Annotated")
        #expect(error.column == "note")
        #expect(error.key == "id = 1")
        #expect(error.value == "''")
        #expect(error.message.contains("An empty note is not a note"))
    }
}
