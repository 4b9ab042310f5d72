/// A set of column positions, as bits: which columns a model carries, which a statement
/// writes. Hashable without allocating for tables of up to 64 columns.
struct ColumnMask: Hashable, Sendable {
    private var low: UInt64 = 0
    private var high: [UInt64] = []

    init() {}

    init(_ positions: some Sequence<Int>) {
        for position in positions { insert(position) }
    }

    @inline(__always)
    mutating func insert(_ position: Int) {
        if position < 64 {
            low |= 1 << UInt64(position)
            return
        }
        let word = position / 64 - 1
        if high.count <= word { high.append(contentsOf: repeatElement(0, count: word - high.count + 1)) }
        high[word] |= 1 << UInt64(position % 64)
    }

    @inline(__always)
    mutating func remove(_ position: Int) {
        if position < 64 {
            low &= ~(1 << UInt64(position))
            return
        }
        let word = position / 64 - 1
        if word < high.count { high[word] &= ~(1 << UInt64(position % 64)) }
        // Trailing zero words would make equal sets compare unequal.
        while high.last == 0 { high.removeLast() }
    }

    @inline(__always)
    func contains(_ position: Int) -> Bool {
        if position < 64 { return low & (1 << UInt64(position)) != 0 }
        let word = position / 64 - 1
        return word < high.count && high[word] & (1 << UInt64(position % 64)) != 0
    }

    /// Whether every position in this set is in `other`.
    @inline(__always)
    func isSubset(of other: ColumnMask) -> Bool {
        guard low & other.low == low else { return false }
        for (offset, word) in high.enumerated() {
            let theirs = offset < other.high.count ? other.high[offset] : 0
            if word & theirs != word { return false }
        }
        return true
    }

    var isEmpty: Bool {
        low == 0 && high.allSatisfy { $0 == 0 }
    }

    var count: Int {
        low.nonzeroBitCount + high.reduce(0) { $0 + $1.nonzeroBitCount }
    }
}
