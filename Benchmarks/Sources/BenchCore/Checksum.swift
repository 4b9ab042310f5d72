import CBaseline

/// A summary of a result that a wrong answer would change: how many rows, and sums of
/// their keys, text lengths and prices (in cents).
public struct Checksum: Equatable, Sendable, CustomStringConvertible {
    public var count = 0
    public var keys: Int64 = 0
    public var text: Int64 = 0
    public var cents: Int64 = 0

    public init() {}

    public mutating func add(key: Int64, text: String, price: Double = 0) {
        count += 1
        keys &+= key
        self.text &+= Int64(text.utf8.count)
        cents &+= Int64((price * 100).rounded())
    }

    public var description: String { "rows \(count), keys \(keys), text \(text), cents \(cents)" }

    /// A checksum of a table read straight from the file with the C API, the same for
    /// every contender: `sql` must return (count, sum of keys, sum of text lengths, sum of cents).
    public static func ofFile(_ path: String, _ sql: String) -> Checksum {
        var values = [Int64](repeating: 0, count: 4)
        cb_checksum(path, sql, &values)
        var checksum = Checksum()
        checksum.count = Int(values[0])
        checksum.keys = values[1]
        checksum.text = values[2]
        checksum.cents = values[3]
        return checksum
    }

    public static let itemTableSQL =
        "SELECT count(*), coalesce(sum(id), 0), coalesce(sum(length(name)), 0), coalesce(sum(CAST(round(price * 100) AS INTEGER)), 0) FROM item"
    public static let graphTableSQL =
        "SELECT (SELECT count(*) FROM player), (SELECT coalesce(sum(id + team_id), 0) FROM player), (SELECT coalesce(sum(length(name)), 0) FROM team), (SELECT count(*) FROM team)"
}
