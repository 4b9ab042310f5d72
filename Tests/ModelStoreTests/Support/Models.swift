import Foundation
import ModelStore

struct Snack: StoredModel, Equatable {
    var snackId: Int64
    var name: String?
    var taste: String?
    var size: Double?
    var price: Double?
    var tags: [String] = []
    var createdAt: Date?
    static let primaryKey = ["snackId"]
}

/// A composite key.
struct Friendship: StoredModel, Equatable {
    var userId: Int64
    var friendId: String
    var since: Date?
    var note: String?
    static let primaryKey = ["userId", "friendId"]
}

enum Taste: String, Codable, Sendable, CaseIterable {
    case sweet, sour, salty
}

/// A raw-value enum that is neither CaseIterable nor SQLValueConvertible.
enum Level: Int, Codable, Sendable {
    case low = 10, high = 20
}

/// An enum that opts into exact conversion.
enum Size: String, Codable, Sendable, SQLValueConvertible {
    case small = "S", large = "L"
}

struct Address: Codable, Sendable, Equatable {
    var street: String
    var zip: Int
    var tags: Set<String>
}

/// One property of every supported kind.
struct Everything: StoredModel, Equatable {
    var id: Int
    var bool: Bool
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var uint: UInt
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var uint64: UInt64
    var float: Float
    var double: Double
    var decimal: Decimal
    var string: String
    var date: Date
    var data: Data
    var uuid: UUID
    var url: URL
    var taste: Taste
    var level: Level
    var size: Size
    var array: [Int]
    var set: Set<String>
    var dictionary: [String: Double]
    var address: Address
    var optionalInt: Int?
    var optionalString: String?
    var optionalDate: Date?
    var optionalDecimal: Decimal?
    var optionalUUID: UUID?
    var optionalTaste: Taste?
    var optionalLevel: Level?
    var optionalAddress: Address?
    var optionalArray: [String]?
    static let primaryKey = ["id"]

    static func sample(_ id: Int) -> Everything {
        Everything(
            id: id, bool: true, int8: -8, int16: -16, int32: -32, int64: -64, uint: 1, uint8: 8, uint16: 16,
            uint32: 32, uint64: UInt64(Int64.max), float: 1.5, double: 0.1 + 0.2,
            decimal: Decimal(string: "12345678901234567890.123456789012345678")!,
            string: "it's 100% \"quoted\" _text_ with émoji 🍫", date: Date(timeIntervalSinceReferenceDate: 123_456.789_012_345),
            data: Data([0, 1, 2, 255]), uuid: UUID(), url: URL(string: "https://example.com/a?b=c#d")!,
            taste: .salty, level: .high, size: .large, array: [3, 1, 2], set: ["x", "y"],
            dictionary: ["a": 1.5, "b": -2], address: Address(street: "Main St", zip: 12345, tags: ["home"]),
            optionalInt: 7, optionalString: "s", optionalDate: Date(timeIntervalSince1970: 0),
            optionalDecimal: Decimal(string: "0.1")!, optionalUUID: UUID(), optionalTaste: .sour,
            optionalLevel: .low, optionalAddress: Address(street: "B", zip: 1, tags: []), optionalArray: ["q"])
    }
}
