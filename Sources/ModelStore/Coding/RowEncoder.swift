import Foundation

/// Encodes a model into one value per column, noting which columns it carries.
///
/// Synthesized `encode(to:)` skips nil optionals, so `present` holds exactly the properties
/// the model carries: a save writes those and leaves the rest of the stored record alone.
/// One encoder is reused for every model of a batch.
final class RowEncoder: Encoder {
    /// The mutable state, behind a pointer: as class `var`s, every write of every property
    /// of every model would pay a dynamic exclusivity check.
    private struct State {
        var values: [SQLValue]
        var present = ColumnMask()
        /// Relationship properties the model encoded with a value (nil ones are absent).
        var carried: [String] = []
        var hint = 0
        var json: JSONEncoder?
        var nesting: NestingProbe?
        var failure: ModelStoreError?
        /// The keyed container of the last model, reused (see `RowDecoder`'s).
        var containerKey: ObjectIdentifier?
        var container: AnyObject?
        /// Whether the row's key was assigned by SQLite when it was saved (it had none).
        var assignedKey = false
    }

    let layout: ColumnLayout
    private let state: UnsafeMutablePointer<State>
    private let nilProbe = NilProbe()

    /// The encoded values by layout position; meaningful only where `present` says so.
    var values: [SQLValue] { state.pointee.values }
    /// Which positions the model carried.
    var present: ColumnMask { state.pointee.present }

    /// Whether the key in the row was assigned by SQLite when it was saved.
    var assignedKey: Bool { state.pointee.assignedKey }

    /// Writes the key SQLite assigned.
    func setAssignedKey(_ value: SQLValue, at position: Int) {
        set(value, at: position)
        state.pointee.assignedKey = true
    }

    /// Whether the model encoded the relationship property `name` with a value: a nil
    /// `@Related` or Optional never needs reading through its key path.
    func carries(_ name: String) -> Bool {
        state.pointee.carried.contains(name)
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(layout: ColumnLayout) {
        self.layout = layout
        state = .allocate(capacity: 1)
        state.initialize(to: State(values: Array(repeating: .null, count: layout.columns.count)))
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Encodes `model`, replacing what the previous call left.
    func encode<M: Encodable>(_ model: M) throws {
        state.pointee.present = ColumnMask()
        state.pointee.assignedKey = false
        if !state.pointee.carried.isEmpty { state.pointee.carried.removeAll(keepingCapacity: true) }
        state.pointee.hint = 0
        state.pointee.failure = nil
        do {
            try model.encode(to: self)
        } catch let error as ModelStoreError {
            throw error.naming(model: layout.modelName)
        } catch {
            throw ModelStoreError(
                .encodingFailed, "\(layout.modelName) could not be encoded: \(error)", model: layout.modelName)
        }
        if let failure = state.pointee.failure { throw failure }
    }

    /// Restores a row encoded earlier, so statements can bind it again.
    func load(values: [SQLValue], present: ColumnMask) {
        state.pointee.values = values
        state.pointee.present = present
    }

    /// Writes `value` at `position` (a link column the model itself does not encode).
    func set(_ value: SQLValue, at position: Int) {
        state.pointee.values[position] = value
        state.pointee.present.insert(position)
    }

    /// Marks `position` as written with NULL: an explicit clear.
    func setNull(at position: Int) {
        set(.null, at: position)
    }

    /// The value at `position`, or nil when the model did not carry that property.
    @inline(__always)
    func value(at position: Int) -> SQLValue? {
        state.pointee.present.contains(position) ? state.pointee.values[position] : nil
    }

    /// The value at a position the caller knows is present.
    @inline(__always)
    func presentValue(at position: Int) -> SQLValue {
        state.pointee.values[position]
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let key = ObjectIdentifier(type)
        if state.pointee.containerKey == key, let cached = state.pointee.container {
            return unsafeDowncast(cached, to: EncodingContainerBox<Key>.self).container
        }
        let container = KeyedEncodingContainer(RowKeyedEncodingContainer<Key>(encoder: self))
        state.pointee.containerKey = key
        state.pointee.container = EncodingContainerBox(container)
        return container
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        state.pointee.failure = notKeyed()
        return DiscardingUnkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        state.pointee.failure = notKeyed()
        return SingleValueColumnEncoder()
    }

    /// Records a failure found where the Encoder protocol gives no way to throw.
    func fail(_ error: ModelStoreError) {
        if state.pointee.failure == nil { state.pointee.failure = error }
    }

    private func notKeyed() -> ModelStoreError {
        ModelStoreError(
            .invalidModel, "\(layout.modelName) must encode to a keyed container.", model: layout.modelName)
    }

    // MARK: Setting values

    @inline(__always)
    func set(_ value: SQLValue, _ name: String) throws {
        guard let position = layout.position(of: name, hint: &state.pointee.hint) else {
            throw unknown(name)
        }
        state.pointee.values[position] = value
        state.pointee.present.insert(position)
    }

    /// A `Date`: stored as the REAL it holds where its column takes its own form (the value
    /// `Date.sqlValue` gives, without the casts that find it); any other column, or a NaN
    /// date that must be refused with its name, takes the generic path.
    @inline(__always)
    func setDate(_ date: Date, _ name: String) throws {
        // The fallback looks the column up again: from the same hint, so it finds it as fast.
        let hint = state.pointee.hint
        if let position = layout.position(of: name, hint: &state.pointee.hint), layout.holdsOwnDate[position] {
            let seconds = date.timeIntervalSinceReferenceDate
            if !seconds.isNaN {
                state.pointee.values[position] = .real(seconds + 0)
                state.pointee.present.insert(position)
                return
            }
        }
        state.pointee.hint = hint
        try set(date, name)
    }

    /// A `UUID`: stored as the upper-case text `UUID.sqlValue` gives where its column takes
    /// its own form, and as its 16 bytes where the column is declared `.blob`, made without
    /// the casts that find it; any other column takes the generic path.
    @inline(__always)
    func setUUID(_ uuid: UUID, _ name: String) throws {
        let hint = state.pointee.hint
        if let position = layout.position(of: name, hint: &state.pointee.hint) {
            if layout.holdsOwnUUID[position] {
                state.pointee.values[position] = .text(Statement.upperCaseText(of: uuid))
                state.pointee.present.insert(position)
                return
            }
            if layout.holdsBlobUUID[position] {
                // What `UUIDStorage.blob.store` makes, without the text it parses on the way.
                state.pointee.values[position] = withUnsafeBytes(of: uuid.uuid) { .blob(Data($0)) }
                state.pointee.present.insert(position)
                return
            }
        }
        state.pointee.hint = hint
        try set(uuid, name)
    }

    /// Any non-primitive value, by its column's coding.
    func set<T: Encodable>(_ value: T, _ name: String) throws {
        guard let position = layout.position(of: name, hint: &state.pointee.hint) else {
            // Relationships are read through their key paths, not encoded; only note
            // whether this one holds anything.
            if layout.skippedKeys.contains(name) {
                // A plain Optional arrives only when it has a value; a wrapper always
                // arrives, so it is asked to encode itself into a probe that notes nil.
                if layout.wrapperKeys.contains(name) {
                    let probe = nilProbe
                    probe.isNil = true
                    try value.encode(to: probe)
                    if probe.isNil { return }
                }
                state.pointee.carried.append(name)
                return
            }
            throw unknown(name)
        }
        do {
            var stored: SQLValue
            let coding = layout.columns[position].coding
            if let optional = value as? any OptionalEncodable, optional.isNone {
                // An explicit nil (from a custom encode or a batch update) is NULL, never "null".
                stored = .null
            } else if case .json = coding {
                // Measured first: encoding (and describing, in an error) a value nested too
                // deeply would run out of stack inside Codable's recursion.
                let probe = state.pointee.nesting ?? NestingProbe()
                state.pointee.nesting = probe
                do {
                    try probe.measure(value)
                } catch is NestingProbe.TooDeep {
                    throw NestingLimit.tooDeep(T.self)
                }
                let encoder = state.pointee.json ?? Self.makeJSONEncoder()
                state.pointee.json = encoder
                stored = .text(String(decoding: try encoder.encode(value), as: UTF8.self))
            } else if let convertible = value as? any SQLValueConvertible {
                stored = try convertible.sqlValue
                // A declared form (`columnStorage`) converts the value's own stored form.
                if case .mapped(let format) = coding { stored = try format.store(stored) }
            } else {
                let single = SingleValueColumnEncoder()
                try value.encode(to: single)
                if let failure = single.box.failure { throw failure }
                guard let encoded = single.box.value else {
                    throw ModelStoreError(.encodingFailed, "\(T.self) encoded no value.")
                }
                stored = encoded
            }
            state.pointee.values[position] = stored
            state.pointee.present.insert(position)
        } catch var error as ModelStoreError {
            error.column = error.column ?? name
            error.value = error.value ?? Self.describe(value)
            error.message = "\(layout.modelName).\(name): " + error.message
            throw error
        } catch {
            throw ModelStoreError(
                .encodingFailed, "\(layout.modelName).\(name) could not be encoded: \(error)",
                model: layout.modelName, column: name, value: Self.describe(value))
        }
    }

    func numberFailure(_ error: ModelStoreError, _ name: String) -> ModelStoreError {
        var error = error
        error.model = layout.modelName
        error.column = name
        error.message = "\(layout.modelName).\(name): " + error.message
        return error
    }

    private func unknown(_ name: String) -> ModelStoreError {
        ModelStoreError(
            .invalidModel,
            "\(layout.modelName).encode(to:) writes '\(name)', which its init(from:) never reads, so it has no column.",
            model: layout.modelName, column: name,
            suggestion: "Make encode(to:) and init(from:) use the same keys.")
    }

    static func makeJSONEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        // Sorted keys make equal values equal text, so JSON columns compare and dedupe.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    static func describe(_ value: Any) -> String {
        let text = String(describing: value)
        return text.count > 120 ? String(text.prefix(117)) + "…" : text
    }
}

/// Lets the encoder see that a generic value is a nil Optional.
protocol OptionalEncodable {
    var isNone: Bool { get }
}

extension Optional: OptionalEncodable {
    var isNone: Bool { self == nil }
}

/// Holds a keyed container so the encoder can keep it without knowing its key type.
private final class EncodingContainerBox<Key: CodingKey> {
    let container: KeyedEncodingContainer<Key>
    init(_ container: KeyedEncodingContainer<Key>) { self.container = container }
}

/// Notes whether a value encodes as nil, without encoding anything else. Each `RowEncoder`
/// owns one, used on that encoder's thread only.
final class NilProbe: Encoder, SingleValueEncodingContainer {
    var isNil = true
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        isNil = false
        return KeyedEncodingContainer(DiscardingKeyedContainer<Key>())
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        isNil = false
        return DiscardingUnkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }
    func encodeNil() { isNil = true }
    func encode<T: Encodable>(_ value: T) { isNil = false }
}
