/// A to-one relationship property that may refer back to its own model's type.
///
/// Two structs cannot hold each other directly — `Team` with a `Coach?` and `Coach` with a
/// `Team?` would be infinitely large — so one side (or both) stores its value indirectly:
///
/// ```swift
/// struct Coach: StoredModel {
///     var id: Int64
///     @Related var team: Team?        // reads and writes as Team?
///     …
/// }
/// ```
///
/// It codes as its value would (`null` or the object), so models stay plain `Codable`.
/// A missing key decodes as `nil`.
@propertyWrapper
public struct Related<Target: StoredModel>: Sendable {
    // Inlinable so that models using it get specialized accessors.
    @usableFromInline
    indirect enum Storage: Sendable {
        case empty
        case value(Target)
    }

    @usableFromInline
    var storage: Storage

    /// The related model, or nil.
    @inlinable
    public var wrappedValue: Target? {
        get {
            if case .value(let target) = storage { return target }
            return nil
        }
        set {
            if let newValue { storage = .value(newValue) } else { storage = .empty }
        }
    }

    /// A relationship holding `wrappedValue`.
    @inlinable
    public init(wrappedValue: Target? = nil) {
        if let wrappedValue { storage = .value(wrappedValue) } else { storage = .empty }
    }
}

extension Related: Codable {
    /// Decodes the related model, or nil from `null`.
    /// - Throws: The coder's errors.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self.init(wrappedValue: container.decodeNil() ? nil : try container.decode(Target.self))
    }

    /// Encodes the related model, or `null`.
    /// - Throws: The coder's errors.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let target = wrappedValue { try container.encode(target) } else { try container.encodeNil() }
    }
}

extension Related: Equatable where Target: Equatable {
    /// Equal when both hold equal models or both are empty.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.wrappedValue == rhs.wrappedValue }
}

extension Related: Hashable where Target: Hashable {
    /// Hashes the related model.
    public func hash(into hasher: inout Hasher) { hasher.combine(wrappedValue) }
}

extension KeyedDecodingContainer {
    /// Lets a `@Related` property be absent from the data, as an Optional may be: synthesized
    /// `init(from:)` calls this overload for wrapped properties.
    /// - Throws: The coder's errors.
    @inlinable
    public func decode<Target>(_ type: Related<Target>.Type, forKey key: Key) throws -> Related<Target> {
        try decodeIfPresent(type, forKey: key) ?? Related()
    }
}

extension Related: EmptyRelationshipValue {
    static var emptyValue: Self { Related() }
    static var holdingPlaceholder: Self? {
        Placeholder.make(Target.self, depth: 0).value.map { Related(wrappedValue: $0) }
    }
    var isEmpty: Bool { wrappedValue == nil }
}
