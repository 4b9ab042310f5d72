import Foundation

/// What a type's `init(from:)` asked its decoder for first: it tells how the type encodes.
enum ContainerRequest: Sendable {
    /// One value; the storage of the primitive it read, if it read one.
    case single(StorageType?)
    case keyed
    case unkeyed
}

/// Stand-in values that let the schema probe walk through a model's `init(from:)`.
///
/// The probe needs an instance of every property's type to keep decoding; the values are
/// thrown away as soon as the layout is known.
enum Placeholder {
    /// A placeholder for a standard type, with the storage it uses and whether ModelStore's
    /// containers read it through their typed methods (`.primitive`).
    static func standard<T>(_ type: T.Type) -> (value: T, storage: StorageType, coding: ColumnCoding)? {
        func make(_ value: Any, _ storage: StorageType, _ coding: ColumnCoding = .primitive)
            -> (value: T, storage: StorageType, coding: ColumnCoding)
        {
            (value as! T, storage, coding)
        }
        switch ObjectIdentifier(type) {
        case ObjectIdentifier(Bool.self): return make(false, .integer)
        case ObjectIdentifier(Int.self): return make(0 as Int, .integer)
        case ObjectIdentifier(Int8.self): return make(0 as Int8, .integer)
        case ObjectIdentifier(Int16.self): return make(0 as Int16, .integer)
        case ObjectIdentifier(Int32.self): return make(0 as Int32, .integer)
        case ObjectIdentifier(Int64.self): return make(0 as Int64, .integer)
        case ObjectIdentifier(UInt.self): return make(0 as UInt, .integer)
        case ObjectIdentifier(UInt8.self): return make(0 as UInt8, .integer)
        case ObjectIdentifier(UInt16.self): return make(0 as UInt16, .integer)
        case ObjectIdentifier(UInt32.self): return make(0 as UInt32, .integer)
        case ObjectIdentifier(UInt64.self): return make(0 as UInt64, .integer)
        case ObjectIdentifier(Double.self): return make(0 as Double, .real)
        case ObjectIdentifier(Float.self): return make(0 as Float, .real)
        case ObjectIdentifier(String.self): return make("", .text)
        case ObjectIdentifier(Data.self): return make(Data(), .blob, .convertible(Data.self))
        case ObjectIdentifier(Date.self):
            return make(Date(timeIntervalSinceReferenceDate: 0), .real, .convertible(Date.self))
        case ObjectIdentifier(Decimal.self): return make(Decimal(0), .text, .convertible(Decimal.self))
        case ObjectIdentifier(UUID.self):
            return make(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), .text, .convertible(UUID.self))
        case ObjectIdentifier(URL.self):
            return make(URL(string: "about:blank")!, .text, .convertible(URL.self))
        default: return nil
        }
    }

    /// A value of a standard type (or a case-iterable enum with two cases or more) that
    /// differs from its placeholder, for telling properties apart.
    static func alternate<T>(_ type: T.Type) -> T? {
        let value: Any?
        switch ObjectIdentifier(type) {
        case ObjectIdentifier(Bool.self): value = true
        case ObjectIdentifier(Int.self): value = 1 as Int
        case ObjectIdentifier(Int8.self): value = 1 as Int8
        case ObjectIdentifier(Int16.self): value = 1 as Int16
        case ObjectIdentifier(Int32.self): value = 1 as Int32
        case ObjectIdentifier(Int64.self): value = 1 as Int64
        case ObjectIdentifier(UInt.self): value = 1 as UInt
        case ObjectIdentifier(UInt8.self): value = 1 as UInt8
        case ObjectIdentifier(UInt16.self): value = 1 as UInt16
        case ObjectIdentifier(UInt32.self): value = 1 as UInt32
        case ObjectIdentifier(UInt64.self): value = 1 as UInt64
        case ObjectIdentifier(Double.self): value = 1 as Double
        case ObjectIdentifier(Float.self): value = 1 as Float
        case ObjectIdentifier(String.self): value = "alternate"
        case ObjectIdentifier(Data.self): value = Data([1])
        case ObjectIdentifier(Date.self): value = Date(timeIntervalSinceReferenceDate: 1)
        case ObjectIdentifier(Decimal.self): value = Decimal(1)
        case ObjectIdentifier(UUID.self): value = UUID(uuid: (1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        case ObjectIdentifier(URL.self): value = URL(string: "about:alternate")
        default:
            guard let iterable = type as? any CaseIterable.Type else { return nil }
            func second<C: CaseIterable>(_ type: C.Type) -> Any? { type.allCases.dropFirst().first }
            value = second(iterable)
        }
        return value as? T
    }

    /// Builds a placeholder of any decodable type by decoding it from stand-in values.
    ///
    /// Returns the value (nil when no stand-in satisfied the type's `init(from:)`, and no
    /// fallback applied), what the type asked for first, and the error that stopped it.
    static func make<T: Decodable>(_ type: T.Type, depth: Int) -> (value: T?, request: ContainerRequest?, failure: (any Error)?) {
        if let standard = standard(type) { return (standard.value, .single(standard.storage), nil) }
        if let empty = type as? any EmptyRelationshipValue.Type { return (empty.emptyValue as? T, nil, nil) }
        guard depth < 32 else {
            return (nil, nil, ModelStoreError(.invalidModel, "\(T.self) nests itself too deeply to derive a table."))
        }
        let decoder = PlaceholderDecoder(depth: depth + 1)
        do {
            return (try T(from: decoder), decoder.request, nil)
        } catch {
            // The type rejected the stand-ins (an enum whose raw value must name a case).
            if let first = firstCase(of: type) ?? zeroed(type) {
                return (first, decoder.request, nil)
            }
            return (nil, decoder.request, error)
        }
    }

    private static func firstCase<T>(of type: T.Type) -> T? {
        guard let iterable = type as? any CaseIterable.Type else { return nil }
        func first<C: CaseIterable>(_ type: C.Type) -> Any? { type.allCases.first }
        return first(iterable) as? T
    }

    /// A value whose bytes are all zero, for plain-data types only (no references inside):
    /// for a payload-free enum that is its first case. It is never stored, only passed to
    /// the model's initializer while the probe runs.
    private static func zeroed<T>(_ type: T.Type) -> T? {
        guard _isPOD(type) else { return nil }
        let size = max(MemoryLayout<T>.size, 1)
        let raw = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<T>.alignment)
        defer { raw.deallocate() }
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        return raw.load(as: T.self)
    }
}

/// Marks `Optional` so the probe can see through `decode(T?.self, forKey:)` in custom inits.
protocol OptionalDecodable {
    static var wrappedDecodableType: any Decodable.Type { get }
    static var nilValue: Self { get }
}

extension Optional: OptionalDecodable where Wrapped: Decodable {
    static var wrappedDecodableType: any Decodable.Type { Wrapped.self }
    static var nilValue: Self { nil }
}
