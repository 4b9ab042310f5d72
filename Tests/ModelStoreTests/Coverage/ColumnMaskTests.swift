import Testing
@testable import ModelStore

@Suite("Coverage: column masks beyond 64 columns")
struct ColumnMaskTests {
    @Test func positionsBeyondTheFirstWordAreHeldAndCounted() {
        var mask = ColumnMask([0, 63, 64, 130, 200])
        #expect(mask.contains(0))
        #expect(mask.contains(63))
        #expect(mask.contains(64))
        #expect(mask.contains(130))
        #expect(mask.contains(200))
        #expect(!mask.contains(65))
        #expect(!mask.contains(400))
        #expect(mask.count == 5)
        #expect(!mask.isEmpty)
        mask.insert(130)
        #expect(mask.count == 5)
    }

    @Test func removingTheHighestPositionsMakesTheMaskEqualToOneThatNeverHeldThem() {
        var mask = ColumnMask([1, 70, 190])
        mask.remove(190)
        #expect(!mask.contains(190))
        #expect(mask == ColumnMask([1, 70]))
        #expect(mask.hashValue == ColumnMask([1, 70]).hashValue)
        mask.remove(70)
        #expect(mask == ColumnMask([1]))
        #expect(mask.count == 1)
        mask.remove(1)
        #expect(mask.isEmpty)
        #expect(mask == ColumnMask())
    }

    @Test func removingAPositionNeverHeldChangesNothing() {
        var mask = ColumnMask([3, 80])
        mask.remove(300)
        mask.remove(100)
        mask.remove(4)
        #expect(mask == ColumnMask([3, 80]))
        #expect(mask.count == 2)
    }

    @Test func subsetsAreJudgedOverEveryWord() {
        let big = ColumnMask([2, 66, 140])
        #expect(ColumnMask([2, 66]).isSubset(of: big))
        #expect(ColumnMask([66, 140]).isSubset(of: big))
        #expect(ColumnMask().isSubset(of: big))
        #expect(!ColumnMask([67]).isSubset(of: big))
        #expect(!ColumnMask([2, 141]).isSubset(of: big))
        // A high position the other mask has no word for.
        #expect(!ColumnMask([250]).isSubset(of: big))
        #expect(!big.isSubset(of: ColumnMask([2, 66])))
        #expect(!big.isSubset(of: ColumnMask([2])))
        #expect(!ColumnMask([5]).isSubset(of: ColumnMask([2, 66])))
    }
}
