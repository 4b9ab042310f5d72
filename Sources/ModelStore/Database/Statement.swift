import ModelStoreCSQLite
import Foundation

/// A prepared SQLite statement: bind values, step through rows, read columns.
///
/// Statements belong to one `Connection` and, like it, are used by one thread at a time.
/// After each use a statement is reset, so it never holds a read snapshot or a lock open.
final class Statement {
    /// The SQLite statement; on a server, an empty local statement that is never stepped
    /// (the rows are read from `remote`, see `RemoteStatement`).
    let handle: OpaquePointer
    let sql: String
    private(set) var columnCount: Int32
    /// How many `?` parameters the statement takes.
    let parameterCount: Int32
    /// Set when the statement runs on a server: what it sends and what came back.
    let remote: RemoteStatement?

    init(handle: OpaquePointer, sql: String) {
        self.handle = handle
        self.sql = sql
        self.columnCount = sqlite3_column_count(handle)
        self.parameterCount = sqlite3_bind_parameter_count(handle)
        self.remote = nil
    }

    /// A statement run on a server. `placeholder` is an empty local statement: it only
    /// gives the statement a handle; rows are read from `remote`.
    init(remote: RemoteStatement, placeholder: OpaquePointer, sql: String) {
        self.handle = placeholder
        self.sql = sql
        self.columnCount = 0
        self.parameterCount = Int32(remote.parameterCount)
        self.remote = remote
    }

    deinit {
        sqlite3_finalize(handle)
    }

    // MARK: Binding

    /// Binds `values` to the statement's parameters, in order (`?1`, `?2`, …).
    func bind(_ values: [SQLValue]) throws {
        guard values.count == Int(parameterCount) else {
            var error = ModelStoreError(
                .sqlite, "The statement takes \(parameterCount) values but \(values.count) were given.")
            error.sql = sql
            throw error
        }
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Binds one value to the 1-based parameter `index`.
    func bind(_ value: SQLValue, at index: Int32) throws {
        if let remote {
            remote.bindings[Int(index) - 1] = value
            return
        }
        try bindLocal(value, at: index)
    }

    private func bindLocal(_ value: SQLValue, at index: Int32) throws {
        let rc: Int32
        switch value {
        case .null:
            rc = sqlite3_bind_null(handle, index)
        case .integer(let integer):
            rc = sqlite3_bind_int64(handle, index, integer)
        case .real(let real):
            rc = sqlite3_bind_double(handle, index, real)
        case .text(let text):
            rc = bindText(text, at: index)
        case .blob(let data):
            rc = bindBlob(data, at: index)
        }
        if rc != SQLITE_OK { throw error(rc) }
    }

    /// Binds one value of a row being written: text goes through `arena` (see `TextArena`),
    /// which the caller has sized for the row.
    @inline(__always)
    func bind(_ value: SQLValue, at index: Int32, arena: TextArena) throws {
        guard case .text(let text) = value, remote == nil else { return try bind(value, at: index) }
        let rc = arena.bind(text, to: handle, at: index)
        if rc != SQLITE_OK { throw error(rc) }
    }

    private func bindText(_ text: String, at index: Int32) -> Int32 {
        // An explicit length keeps NUL characters inside strings; -1 would stop at the first.
        var text = text
        return text.withUTF8 { buffer -> Int32 in
            guard buffer.count <= Int(Int32.max) else { return SQLITE_TOOBIG }
            // An empty buffer may have no address, and a NULL pointer would bind SQL NULL.
            guard let base = buffer.baseAddress, buffer.count > 0 else {
                return csqlite_bind_text(handle, index, "", 0)
            }
            return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                csqlite_bind_text(handle, index, $0, Int32(buffer.count))
            }
        }
    }

    private func bindBlob(_ data: Data, at index: Int32) -> Int32 {
        guard data.count <= Int(Int32.max) else { return SQLITE_TOOBIG }
        // A NULL pointer would bind SQL NULL; an empty blob must stay an empty blob.
        guard !data.isEmpty else { return sqlite3_bind_zeroblob(handle, index, 0) }
        return data.withUnsafeBytes { csqlite_bind_blob(handle, index, $0.baseAddress, Int32($0.count)) }
    }

    // MARK: Stepping

    /// Advances to the next row. Returns `true` when a row is available, `false` when done.
    @inline(__always)
    func step() throws -> Bool {
        if let remote { return try stepRemote(remote) }
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        let failure = error(rc)
        sqlite3_reset(handle)
        throw failure
    }

    /// Resets the statement so it can run again; releases its read snapshot and locks.
    @inline(__always)
    func reset() {
        if let remote { remote.reset() }
        sqlite3_reset(handle)
    }

    /// On a server, makes this statement's query read through a cursor a chunk at a time when
    /// it runs inside a transaction (a stream's own query: its rows stay bounded); true when
    /// it will, false on SQLite, whose statements step row by row anyway.
    @discardableResult
    func readInChunks() -> Bool {
        guard let remote, remote.connection.dialect.cursorStatements(name: "c", query: "", rows: 1) != nil else { return false }
        remote.throughCursor = true
        return true
    }

    /// On a server, runs the bound statement now (the first `step` would), so its columns
    /// are known before a row is read; nothing on SQLite, whose statement knows them.
    func runOnServer() throws {
        guard let remote, !remote.hasRun else { return }
        try remote.run()
        columnCount = Int32(remote.columns.count)
    }

    /// How many rows the bound statement's result holds, when the backend knows without
    /// stepping through them: a server answers with every row at once (nil when the result
    /// is read through a cursor). Nil on SQLite, which finds its rows as it steps.
    func rowCountWithoutStepping() throws -> Int? {
        guard let remote else { return nil }
        try runOnServer()
        return remote.heldRowCount
    }

    /// Runs the statement on the server at the first step, then moves to its next row, which
    /// the column readers read in place.
    private func stepRemote(_ remote: RemoteStatement) throws -> Bool {
        try runOnServer()
        return try remote.nextRow() != nil
    }

    /// Binds `values`, runs the statement to completion and resets it.
    func execute(_ values: [SQLValue] = []) throws {
        defer { reset() }
        try bind(values)
        while try step() {}
    }

    /// Binds `values` and calls `row` for each result row; resets the statement afterwards.
    func forEachRow(_ values: [SQLValue] = [], _ row: () throws -> Void) throws {
        defer { reset() }
        try bind(values)
        while try step() { try row() }
    }

    // MARK: Reading columns

    /// The column's value object, read once and then inspected: cheaper than one
    /// `sqlite3_column_*` call for its type and another for its contents.
    /// On a server the value object is nil: the value is read from the row in place, by
    /// index, through the readers that take both (`int64(_:at:)` …).
    @inline(__always)
    func cell(at index: Int32) -> (value: OpaquePointer?, storage: Int32) {
        if let remote { return (nil, remote.storageClass(index)) }
        let value = sqlite3_column_value(handle, index)
        return (value, sqlite3_value_type(value))
    }

    /// The integer of a cell from `cell(at:)`.
    @inline(__always)
    func int64(_ value: OpaquePointer?, at index: Int32) -> Int64 {
        if let value { return sqlite3_value_int64(value) }
        return int64(at: index)
    }

    /// The double of a cell from `cell(at:)`.
    @inline(__always)
    func double(_ value: OpaquePointer?, at index: Int32) -> Double {
        if let value { return sqlite3_value_double(value) }
        return double(at: index)
    }

    /// The exact text of a cell from `cell(at:)`; nil when its bytes are not UTF-8.
    @inline(__always)
    func exactString(_ value: OpaquePointer?, at index: Int32) -> String? {
        if let value { return Self.exactString(of: value) }
        if case .text(let text) = remote?.cell(index) { return text }
        return nil
    }

    /// SQLite's storage class of column `index` in the current row (`SQLITE_INTEGER` …).
    @inline(__always)
    func storageClass(at index: Int32) -> Int32 {
        if let remote { return remote.storageClass(index) }
        return sqlite3_column_type(handle, index)
    }

    @inline(__always)
    func isNull(at index: Int32) -> Bool {
        storageClass(at: index) == SQLITE_NULL
    }

    /// The column as an integer, converted as SQLite's `sqlite3_column_int64` does.
    @inline(__always)
    func int64(at index: Int32) -> Int64 {
        if let remote { return remote.cell(index).int64Value }
        return sqlite3_column_int64(handle, index)
    }

    /// The column as a double, converted as SQLite's `sqlite3_column_double` does.
    @inline(__always)
    func double(at index: Int32) -> Double {
        if let remote { return remote.cell(index).doubleValue }
        return sqlite3_column_double(handle, index)
    }

    /// The column as text, NUL characters included. Bytes that are not UTF-8 become U+FFFD:
    /// for names and messages only; values are read with `exactString` or `value(at:)`.
    @inline(__always)
    func string(at index: Int32) -> String {
        if let remote { return remote.cell(index).textValue }
        guard let bytes = sqlite3_column_text(handle, index) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    @inline(__always)
    func data(at index: Int32) -> Data {
        if let remote { return remote.cell(index).dataValue }
        guard let bytes = sqlite3_column_blob(handle, index) else { return Data() }
        return Data(bytes: bytes, count: Int(sqlite3_column_bytes(handle, index)))
    }

    /// The values of `count` consecutive columns from `start`: a key, a link or a match read
    /// from the current row.
    func values(from start: Int32 = 0, count: Int) -> [SQLValue] {
        (0..<Int32(count)).map { value(at: start + $0) }
    }

    /// The values of the columns at `positions`, each moved by `offset`: a key read from a row
    /// laid out as the model's table.
    func values(at positions: [Int], offset: Int32 = 0) -> [SQLValue] {
        positions.map { value(at: offset + Int32($0)) }
    }

    /// The column as an `SQLValue`, whatever its storage class.
    ///
    /// TEXT whose bytes are not valid UTF-8 (written by another tool) comes back as `.blob`
    /// of those bytes: a `String` cannot hold them, and repairing them would hand the caller
    /// a different value — one that saving back would write over the stored bytes. Every
    /// conversion to a Swift text type then refuses it, and messages show the exact bytes.
    func value(at index: Int32) -> SQLValue {
        if let remote { return remote.cell(index) }
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: return .integer(int64(at: index))
        case SQLITE_FLOAT: return .real(double(at: index))
        case SQLITE_TEXT:
            guard let bytes = sqlite3_column_text(handle, index) else { return .text("") }
            let count = Int(sqlite3_column_bytes(handle, index))
            if let text = Self.exactString(bytes, count) { return .text(text) }
            return .blob(Data(bytes: bytes, count: count))
        case SQLITE_BLOB: return .blob(data(at: index))
        default: return .null
        }
    }

    /// The text of a value object exactly as stored, NUL characters included; nil when its
    /// bytes are not valid UTF-8.
    @inline(__always)
    static func exactString(of value: OpaquePointer) -> String? {
        guard let bytes = sqlite3_value_text(value) else { return "" }
        return exactString(bytes, Int(sqlite3_value_bytes(value)))
    }

    /// A SQLite value holding a UUID in ModelStore's own form: exactly what `uuidString`
    /// writes (36 characters, upper-case hexadecimal digits, hyphens after the 8th, 12th,
    /// 16th and 20th), or 16 bytes as other libraries store it. Nil for anything else, which
    /// `UUID(sqlValue:)` reads or refuses with its reasons.
    @inline(__always)
    static func ownUUID(of value: OpaquePointer, storage: Int32) -> UUID? {
        if storage == StorageClass.text {
            guard let text = sqlite3_value_text(value), sqlite3_value_bytes(value) == 36 else { return nil }
            return parseUpperCaseUUID(text)
        }
        if storage == StorageClass.blob {
            guard let bytes = sqlite3_value_blob(value), sqlite3_value_bytes(value) == 16 else { return nil }
            return UUID(uuid: UnsafeRawPointer(bytes).loadUnaligned(as: uuid_t.self))
        }
        return nil
    }

    /// The UUID that 36 bytes spell in `uuidString`'s form, or nil when they spell it in any
    /// other (lower case, braces, a misplaced hyphen): `UUID(uuidString:)` followed by a
    /// comparison with `uuidString`, without the two strings.
    static func parseUpperCaseUUID(_ text: UnsafePointer<UInt8>) -> UUID? {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = withUnsafeMutableBytes(of: &bytes) { out -> Bool in
            var offset = 0
            for byte in 0..<16 {
                if byte == 4 || byte == 6 || byte == 8 || byte == 10 {
                    guard text[offset] == UInt8(ascii: "-") else { return false }
                    offset += 1
                }
                guard let high = upperHexDigit(text[offset]), let low = upperHexDigit(text[offset + 1]) else { return false }
                out[byte] = high << 4 | low
                offset += 2
            }
            return true
        }
        return parsed ? UUID(uuid: bytes) : nil
    }

    @inline(__always)
    private static func upperHexDigit(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character &- UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return character &- UInt8(ascii: "A") &+ 10
        default: return nil
        }
    }

    /// `uuidString` of `uuid`, made in place (one allocation, no C string to copy from).
    static func upperCaseText(of uuid: UUID) -> String {
        withUnsafeBytes(of: uuid.uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { out in
                var offset = 0
                for byte in 0..<16 {
                    if byte == 4 || byte == 6 || byte == 8 || byte == 10 {
                        out[offset] = UInt8(ascii: "-")
                        offset += 1
                    }
                    out[offset] = upperHexCharacter(bytes[byte] >> 4)
                    out[offset + 1] = upperHexCharacter(bytes[byte] & 0x0F)
                    offset += 2
                }
                return 36
            }
        }
    }

    @inline(__always)
    private static func upperHexCharacter(_ digit: UInt8) -> UInt8 {
        digit < 10 ? UInt8(ascii: "0") &+ digit : UInt8(ascii: "A") &+ digit &- 10
    }

    /// `count` bytes as a String, or nil when they are not valid UTF-8.
    ///
    /// Reading text is the hot path of every fetch, so this makes one String and no other
    /// allocation. `String(decoding:)` copies and replaces invalid sequences with U+FFFD, so
    /// the result holds exactly the source bytes if and only if they were valid. ASCII text,
    /// the common case, is always valid: an 8-bytes-at-a-time scan of the source settles it.
    /// Other text is compared with the source, one memcmp; comparing lengths alone is not
    /// enough (a truncated 4-byte sequence of 3 bytes becomes one 3-byte U+FFFD).
    /// (`String(validating:as:)` needs macOS 15, and measured slower than this on Linux.)
    @inline(__always)
    static func exactString(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> String? {
        let buffer = UnsafeBufferPointer(start: bytes, count: count)
        let string = String(decoding: buffer, as: UTF8.self)
        if isASCII(bytes, count) { return string }
        let same =
            string.utf8.withContiguousStorageIfAvailable { stored in
                stored.count == count && memcmp(stored.baseAddress!, bytes, count) == 0
            } ?? string.utf8.elementsEqual(buffer)
        return same ? string : nil
    }

    /// Whether no byte has its high bit set.
    @inline(__always)
    private static func isASCII(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        let raw = UnsafeRawPointer(bytes)
        var bits: UInt64 = 0
        var offset = 0
        while offset + 8 <= count {
            bits |= raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        while offset < count {
            bits |= UInt64(bytes[offset])
            offset += 1
        }
        return bits & 0x8080_8080_8080_8080 == 0
    }

    func columnName(at index: Int32) -> String {
        if let remote {
            return index >= 0 && Int(index) < remote.columns.count ? remote.columns[Int(index)] : "column \(index)"
        }
        return sqlite3_column_name(handle, index).map { String(cString: $0) } ?? "column \(index)"
    }

    // MARK: Errors

    func error(_ rc: Int32) -> ModelStoreError {
        let db = sqlite3_db_handle(handle)
        let message = db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
        let extended = db.map { sqlite3_extended_errcode($0) } ?? rc
        // sqlite3_errmsg describes the last failure on the connection; trust it only when it
        // matches this result code.
        let code = (extended & 0xFF) == (rc & 0xFF) ? extended : rc
        return .sqlite(resultCode: code, message: message, sql: sql, database: db)
    }
}

extension SQLValue {
    /// The value as an integer, converted about as `sqlite3_column_int64` converts a column
    /// (text by the number it spells, a double toward zero, NULL as 0): the engine reads
    /// integers this way only from catalog queries, whose columns are integers.
    var int64Value: Int64 {
        switch self {
        case .null: 0
        case .integer(let integer): integer
        case .real(let real): Int64(exactly: real.rounded(.towardZero)) ?? (real.isNaN ? 0 : (real < 0 ? .min : .max))
        case .text(let text):
            Int64(text.trimmingCharacters(in: .whitespaces)) ?? Self.real(text).map { Int64(exactly: $0.rounded(.towardZero)) ?? 0 } ?? 0
        case .blob(let data): SQLValue.text(String(decoding: data, as: UTF8.self)).int64Value
        }
    }

    /// The number text spells, spaces around it ignored.
    private static func real(_ text: String) -> Double? {
        Double(text.trimmingCharacters(in: .whitespaces))
    }

    /// The value as a double, converted as `sqlite3_column_double` converts a column.
    var doubleValue: Double {
        switch self {
        case .null: 0
        case .integer(let integer): Double(integer)
        case .real(let real): real
        case .text(let text): Self.real(text) ?? 0
        case .blob(let data): Self.real(String(decoding: data, as: UTF8.self)) ?? 0
        }
    }

    /// The value as text (for names and messages): numbers in SQLite's spelling, bytes as
    /// UTF-8 with U+FFFD for what is not, NULL as empty text.
    var textValue: String {
        switch self {
        case .null: ""
        case .integer(let integer): String(integer)
        case .real(let real): String(real)
        case .text(let text): text
        case .blob(let data): String(decoding: data, as: UTF8.self)
        }
    }

    /// The value as bytes: text as its UTF-8, NULL as no bytes.
    var dataValue: Data {
        switch self {
        case .null: Data()
        case .integer, .real: Data(textValue.utf8)
        case .text(let text): Data(text.utf8)
        case .blob(let data): data
        }
    }
}
