import Testing
@testable import ModelStore

@Suite("Graph load key index")
struct KeyIndexTests {
    @Test func everyKeyIsFoundThroughGrowthCollisionsAndReplacement() {
        var index = KeyIndex()  // non-copyable: its table is freed when it ends
        // Keys that share low bits, negative keys and the extremes all go through one table.
        let integers: [Int64] = (0..<5000).map { Int64($0) << 20 } + [-1, .min, .max, 0x7FF0_0000_0000_0000]
        for (position, key) in integers.enumerated() { index.insert(.integer(key), at: position) }
        for (position, key) in integers.enumerated() { #expect(index.position(of: .integer(key)) == position) }
        #expect(index.position(of: .integer(1)) == nil)

        index.insert(.integer(.min), at: 42)
        #expect(index.position(of: .integer(.min)) == 42)

        index.insert(.text("a"), at: 7)
        index.insert(.values([.integer(1), .text("b")]), at: 8)
        #expect(index.position(of: .text("a")) == 7)
        #expect(index.position(of: .values([.integer(1), .text("b")])) == 8)
        #expect(index.position(of: .text("b")) == nil)
    }
}
