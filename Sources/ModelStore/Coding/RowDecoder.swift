import Foundation

/// Decodes models from the current row of a statement.
///
/// One decoder serves all rows of a query: `decode(_:)` is called once per row. Columns are
/// found by position (see `ColumnLayout.position(of:hint:)`), so decoding a row hashes no
/// strings in the common case.
final class RowDecoder: Decoder {
    let statement: Statement
    let layout: ColumnLayout
    /// The layout's relationship properties, held apart: reading `layout` copies the struct
    /// and retains each of its arrays, which a check made on every row should not pay.
    private let skippedNames: [String]
    /// Statement column of each layout column, or -1 when the query did not select it;
    /// nil when the statement selects every layout column in layout order.
    private let mapping: [Int32]?
    /// Layout positions of the primary key, to name the record in error messages.
    private let keyPositions: [Int]
    /// Where the next column is probably found. Pointer storage: a class `var` would pay a
    /// dynamic exclusivity check on every property of every row.
    private let hintStorage: UnsafeMutablePointer<Int>
    private var json: JSONDecoder?
    /// The keyed container of the last row, reused: building one costs several generic
    /// metadata lookups, and every row of a query asks for the same kind.
    private var cachedKey: ObjectIdentifier?
    private var cachedContainer: AnyObject?
    /// A relationship value the graph loader already knows for the next row (a child's
    /// parent): decoded in place instead of set through a key path later. Given ready-made
    /// as the wrapper (`Related<Parent>`) and as the plain value, so taking it is a type
    /// comparison and a copy, not a dynamic cast.
    var injectedKey: String?
    var injectedWrapper: InjectedValue?
    var injectedPlain: InjectedValue?

    var hint: Int {
        get { hintStorage.pointee }
        set { hintStorage.pointee = newValue }
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(statement: Statement, layout: ColumnLayout, keyPositions: [Int], mapping: [Int32]? = nil) {
        self.statement = statement
        self.layout = layout
        self.skippedNames = layout.skippedNames
        self.keyPositions = keyPositions
        self.mapping = mapping
        self.hintStorage = .allocate(capacity: 1)
        hintStorage.initialize(to: 0)
    }

    deinit {
        hintStorage.deallocate()
    }

    /// Whether `name` is a relationship this row decodes as nil: not a column, and not the
    /// parent the graph loader hands to a child.
    @inline(__always)
    func decodesAsNil(_ name: String) -> Bool {
        guard !skippedNames.isEmpty else { return false }
        for skipped in skippedNames where skipped == name {
            return injectedKey.map { $0 != name } ?? true
        }
        return false
    }

    /// Decodes one model from the statement's current row.
    func decode<M: Decodable>(_ type: M.Type) throws -> M {
        hint = 0
        do {
            return try M(from: self)
        } catch let error as ModelStoreError {
            throw error.naming(model: layout.modelName, key: keyDescription())
        } catch {
            throw wrap(error)
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        let key = ObjectIdentifier(type)
        if cachedKey == key, let cached = cachedContainer {
            // The key type matches, so the box holds this container type: no cast needed.
            return unsafeDowncast(cached, to: ContainerBox<Key>.self).container
        }
        let container = KeyedDecodingContainer(RowKeyedContainer<Key>(decoder: self))
        cachedKey = key
        cachedContainer = ContainerBox(container)
        return container
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw ModelStoreError(.invalidModel, "\(layout.modelName) must decode from a keyed container.", model: layout.modelName)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw ModelStoreError(.invalidModel, "\(layout.modelName) must decode from a keyed container.", model: layout.modelName)
    }

    // MARK: Columns

    /// The layout position and statement column of `name`; nil when the row lacks it.
    @inline(__always)
    func column(_ name: String) -> (position: Int, index: Int32)? {
        guard let position = layout.position(of: name, hint: &hintStorage.pointee) else { return nil }
        guard let mapping else { return (position, Int32(position)) }
        let index = mapping[position]
        return index < 0 ? nil : (position, index)
    }

    /// Finds `name` and checks for NULL: returns nil for NULL or an absent column when the
    /// property is optional, and throws when it is not. `value` is SQLite's value object, nil
    /// on a server (whose row is read in place by index): read it through the statement's
    /// readers that take both.
    @inline(__always)
    func present(_ name: String, optional: Bool) throws -> (position: Int, index: Int32, value: OpaquePointer?, storage: Int32)? {
        guard let (position, index) = column(name) else {
            if optional { return nil }
            throw missing(name)
        }
        let (value, storage) = statement.cell(at: index)
        if storage == StorageClass.null {
            if optional { return nil }
            throw nullValue(position)
        }
        return (position, index, value, storage)
    }

    // MARK: Typed reads

    @inline(__always)
    func integer<T: FixedWidthInteger>(_ type: T.Type, _ name: String, optional: Bool) throws -> T? {
        guard let (position, index, value, storage) = try present(name, optional: optional) else { return nil }
        guard storage == StorageClass.integer else { throw mismatch(position, index, expected: T.self) }
        let stored = statement.int64(value, at: index)
        guard let value = T(exactly: stored) else {
            throw failure("The stored integer \(stored) does not fit in \(T.self).", position, index)
        }
        return value
    }

    @inline(__always)
    func double(_ name: String, optional: Bool) throws -> Double? {
        guard let (position, index, value, storage) = try present(name, optional: optional) else { return nil }
        if storage == StorageClass.float { return statement.double(value, at: index) }
        if storage == StorageClass.integer, let exact = Double(exactly: statement.int64(value, at: index)) { return exact }
        throw mismatch(position, index, expected: Double.self)
    }

    @inline(__always)
    func float(_ name: String, optional: Bool) throws -> Float? {
        guard let double = try double(name, optional: optional) else { return nil }
        let float = Float(double)
        guard Double(float) == double || double.isInfinite else {
            let (position, index) = column(name)!
            throw failure("The stored number \(double) does not fit in Float without rounding.", position, index)
        }
        return float
    }

    @inline(__always)
    func string(_ name: String, optional: Bool) throws -> String? {
        guard let (position, index, value, storage) = try present(name, optional: optional) else { return nil }
        guard storage == StorageClass.text else { throw mismatch(position, index, expected: String.self) }
        guard let text = statement.exactString(value, at: index) else { throw invalidText(position, index) }
        return text
    }

    @inline(__always)
    func bool(_ name: String, optional: Bool) throws -> Bool? {
        guard let (position, index, value, storage) = try present(name, optional: optional) else { return nil }
        if storage == StorageClass.integer {
            switch statement.int64(value, at: index) {
            case 0: return false
            case 1: return true
            default: break
            }
        }
        throw mismatch(position, index, expected: Bool.self)
    }

    /// A `Date` stored in its own form (REAL seconds since 2001, or whole seconds as INTEGER),
    /// read in place: the generic path's casts, `SQLValue` and metadata cost more than the
    /// value. Anything else — a declared form, NULL in a non-optional property, another
    /// storage class — takes `value`, which reads or explains it exactly as before.
    @inline(__always)
    func date(_ name: String, optional: Bool) throws -> Date? {
        // The fallback looks the column up again: from the same hint, so it finds it as fast.
        let hint = hintStorage.pointee
        if let (position, index) = column(name), layout.holdsOwnDate[position] {
            let (value, storage) = statement.cell(at: index)
            if storage == StorageClass.float { return Date(timeIntervalSinceReferenceDate: statement.double(value, at: index)) }
            if storage == StorageClass.null, optional { return nil }
            if storage == StorageClass.integer, let seconds = Double(exactly: statement.int64(value, at: index)) {
                return Date(timeIntervalSinceReferenceDate: seconds)
            }
        }
        hintStorage.pointee = hint
        return try value(Date.self, name, optional: optional)
    }

    /// A `UUID` stored in its own form (the 36 upper-case characters `uuidString` writes, or
    /// 16 bytes), read in place: parsing the text checks its exact form without making a
    /// `String` and a second one to compare it with. Anything else — a declared form, NULL in
    /// a non-optional property, lower-case or malformed text, a server's row — takes `value`,
    /// which reads or explains it exactly as before.
    @inline(__always)
    func uuid(_ name: String, optional: Bool) throws -> UUID? {
        let hint = hintStorage.pointee
        if let (position, index) = column(name) {
            if layout.holdsOwnUUID[position] {
                let (value, storage) = statement.cell(at: index)
                if let value, let uuid = Statement.ownUUID(of: value, storage: storage) { return uuid }
                if storage == StorageClass.null, optional { return nil }
            } else if layout.holdsBlobUUID[position], let uuid = declaredBlobUUID(at: index) {
                return uuid
            }
        }
        hintStorage.pointee = hint
        return try value(UUID.self, name, optional: optional)
    }

    /// A UUID declared in the 16-byte form, when the cell holds exactly 16 bytes; nil for
    /// anything else (NULL, text, another length), which `value` reads or refuses. A function
    /// of its own, so that the own form's path above stays as small as it was.
    @inline(never)
    private func declaredBlobUUID(at index: Int32) -> UUID? {
        let (value, storage) = statement.cell(at: index)
        guard let value, storage == StorageClass.blob else { return nil }
        return Statement.ownUUID(of: value, storage: storage)
    }

    /// `value` of a property that is not Optional. A function of its own: the `T?` it unwraps
    /// needs `Optional<T>`'s metadata, which a caller would look up on entry even on a path
    /// that never gets here (a Date's, which costs less than that look-up).
    @inline(never)
    func required<T: Decodable>(_ type: T.Type, _ name: String) throws -> T {
        try value(type, name, optional: false)!
    }

    /// Any other type: by the column's coding (exact conversion, single value or JSON).
    func value<T: Decodable>(_ type: T.Type, _ name: String, optional: Bool) throws -> T? {
        // An injected relationship is never a column: look for it first, and save a failed
        // column lookup on every child row.
        if let injectedKey, injectedKey == name {
            if let wrapper = injectedWrapper?.value(as: T.self) ?? injectedPlain?.value(as: T.self) { return wrapper }
            // A custom init(from:) may ask for another spelling (`Parent??`): cast.
            if let wrapper = injectedWrapper?.boxed as? T ?? injectedPlain?.boxed as? T { return wrapper }
        }
        guard let (position, index) = column(name) else {
            if layout.skippedKeys.contains(name) {
                // A relationship the read does not fill. Asked for as an Optional (a custom
                // init(from:) that calls decode(T?.self)), it is nil, exactly as through
                // decodeIfPresent: a placeholder here would read back as a record that does
                // not exist, and saving the model would write it.
                if optional { return nil }
                if let wrapper = type as? any OptionalDecodable.Type { return (wrapper.nilValue as! T) }
                return try skippedPlaceholder(type, name)
            }
            if optional { return nil }
            throw missing(name)
        }
        if statement.isNull(at: index) {
            if let wrapper = type as? any OptionalDecodable.Type { return (wrapper.nilValue as! T) }
            if optional { return nil }
            throw nullValue(position)
        }
        do {
            let coding = layout.columns[position].coding
            switch coding {
            case .json:
                guard statement.storageClass(at: index) == StorageClass.text else {
                    throw mismatch(position, index, expected: T.self)
                }
                guard case .text(let text) = statement.value(at: index) else { throw invalidText(position, index) }
                // Measured first, as the encoder does: decoding JSON nested too deeply would
                // run out of stack inside the type's init(from:).
                guard NestingLimit.depth(ofJSON: text) <= NestingLimit.maximum else {
                    var error = failure(
                        "The stored JSON nests more than \(NestingLimit.maximum) levels deep, the most ModelStore decodes; "
                            + "a deeper value could run the thread out of stack.", position, index)
                    error.value = text.count > 60 ? String(text.prefix(57)) + "…" : text
                    error.suggestion = NestingLimit.suggestion
                    throw error
                }
                let decoder = json ?? JSONDecoder()
                json = decoder
                return try decoder.decode(T.self, from: Data(text.utf8))
            case .primitive, .convertible, .singleValue, .mapped:
                var stored = statement.value(at: index)
                // `value(at:)` gives text that is not UTF-8 as its bytes; say what it is.
                if case .blob = stored, statement.storageClass(at: index) == StorageClass.text {
                    throw invalidText(position, index)
                }
                // A declared form (`columnStorage`) becomes the type's own stored form first.
                if case .mapped(let format) = coding { stored = try format.load(stored) }
                if let convertible = type as? any SQLValueConvertible.Type {
                    return (try convertible.init(sqlValue: stored) as! T)
                }
                return try T(from: SingleValueColumnDecoder(value: stored))
            }
        } catch var error as ModelStoreError {
            if error.column == nil {
                // A conversion's own error (Decimal, UUID, a raw value): say whose value it is.
                error.column = layout.columns[position].name
                error.message = "\(layout.modelName).\(layout.columns[position].name): " + error.message
            }
            if error.code == .decodingFailed, error.suggestion == nil {
                error.suggestion = storedValueSuggestion
            }
            throw error
        } catch {
            throw failure(
                "The stored value cannot be decoded as \(T.self): \(Self.describe(error))", position, index)
        }
    }

    /// A relationship property the row does not hold: an empty value until the graph loader
    /// fills it (for example `[]` for a non-optional to-many array).
    private func skippedPlaceholder<T: Decodable>(_ type: T.Type, _ name: String) throws -> T {
        if let value = Placeholder.make(type, depth: 0).value { return value }
        throw missing(name)
    }

    // MARK: Errors

    func failure(_ message: String, _ position: Int, _ index: Int32) -> ModelStoreError {
        let column = layout.columns[position].name
        return ModelStoreError(
            .decodingFailed, "\(layout.modelName).\(column): \(message)", model: layout.modelName,
            column: column, key: keyDescription(), value: statement.value(at: index).description,
            suggestion: storedValueSuggestion)
    }

    /// TEXT whose bytes are not UTF-8. Reading it with U+FFFD in their place would hide the
    /// damage, and saving the record back would overwrite the stored bytes for good.
    private func invalidText(_ position: Int, _ index: Int32) -> ModelStoreError {
        var error = failure(
            "The stored text is not valid UTF-8 (the value shows its bytes); ModelStore does not replace them with U+FFFD.",
            position, index)
        error.suggestion =
            "Another tool wrote bytes that are not UTF-8 as TEXT: correct the stored value, or make the property Data if the column holds bytes."
        return error
    }

    private func mismatch(_ position: Int, _ index: Int32, expected: Any.Type) -> ModelStoreError {
        let stored = statement.value(at: index)
        var error = failure("The stored value \(stored) cannot be read as \(expected).", position, index)
        error.suggestion =
            "The column holds values of another type than the property; migrate the stored values or change the property's type."
        return error
    }

    private func nullValue(_ position: Int) -> ModelStoreError {
        let column = layout.columns[position].name
        return ModelStoreError(
            .decodingFailed,
            "\(layout.modelName).\(column) is NULL in the stored record, but the property is not Optional.",
            model: layout.modelName, column: column, key: keyDescription(), value: "NULL",
            suggestion:
                "If the column was added after the record was stored, give the records a value (for example with an update by predicate) or make '\(column)' Optional."
        )
    }

    private func missing(_ name: String) -> ModelStoreError {
        ModelStoreError(
            .decodingFailed,
            "The query result has no column '\(name)', which \(layout.modelName) needs.",
            model: layout.modelName, column: name, key: keyDescription())
    }

    private func wrap(_ error: any Error) -> ModelStoreError {
        var column: String?
        if let decodingError = error as? DecodingError {
            switch decodingError {
            case .typeMismatch(_, let context), .valueNotFound(_, let context),
                .keyNotFound(_, let context), .dataCorrupted(let context):
                column = context.codingPath.first?.stringValue
            @unknown default: break
            }
        }
        var wrapped = ModelStoreError(
            .decodingFailed, "\(layout.modelName) could not be decoded: \(Self.describe(error))",
            model: layout.modelName, column: column, key: keyDescription())
        if let column, let (_, index) = self.column(column) {
            wrapped.value = statement.value(at: index).description
        }
        return wrapped
    }

    /// The record's key as `name = value` pairs, read from the current row.
    func keyDescription() -> String? {
        var parts: [String] = []
        for position in keyPositions {
            let index = mapping.map { $0[position] } ?? Int32(position)
            guard index >= 0 else { return nil }
            parts.append("\(layout.columns[position].name) = \(statement.value(at: index))")
        }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    static func describe(_ error: any Error) -> String {
        guard let decodingError = error as? DecodingError else { return String(describing: error) }
        switch decodingError {
        case .typeMismatch(_, let context), .valueNotFound(_, let context),
            .keyNotFound(_, let context), .dataCorrupted(let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        @unknown default:
            return String(describing: error)
        }
    }
}

/// Holds a keyed container so the decoder can keep it without knowing its key type.
private final class ContainerBox<Key: CodingKey> {
    let container: KeyedDecodingContainer<Key>
    init(_ container: KeyedDecodingContainer<Key>) { self.container = container }
}

/// A value of any type kept with its type's identity, so a generic caller asking for exactly
/// that type gets it back without a dynamic cast (which costs a metadata lookup per call).
final class InjectedValue {
    private let type: ObjectIdentifier
    private let storage: UnsafeMutableRawPointer
    private let destroy: (UnsafeMutableRawPointer) -> Void
    /// The value as an existential, for callers that ask for a related type.
    let boxed: Any

    init<V>(_ value: V) {
        type = ObjectIdentifier(V.self)
        let typed = UnsafeMutablePointer<V>.allocate(capacity: 1)
        typed.initialize(to: value)
        storage = UnsafeMutableRawPointer(typed)
        destroy = { raw in
            let typed = raw.assumingMemoryBound(to: V.self)
            typed.deinitialize(count: 1)
            typed.deallocate()
        }
        boxed = value
    }

    deinit {
        destroy(storage)
    }

    /// The value, when `T` is exactly its type.
    @inline(__always)
    func value<T>(as _: T.Type) -> T? {
        guard type == ObjectIdentifier(T.self) else { return nil }
        return storage.assumingMemoryBound(to: T.self).pointee
    }
}
