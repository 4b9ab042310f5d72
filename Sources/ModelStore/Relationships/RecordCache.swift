/// Every record of one model type that a load has decoded: each decoded once, kept as
/// decoded (its stored values) and as being filled (with relationships).
///
/// Models live in raw buffers of their own type, and the bookkeeping behind a pointer: the
/// loader's generic code is not specialized for user models, so arrays of existentials
/// would cost casts and metadata lookups, and class `var`s a dynamic exclusivity check on
/// every access of every row.
final class RecordCache<T: StoredModel> {
    private struct Bookkeeping: ~Copyable {
        var keys: [RecordKey] = []
        var links: [SQLValue] = []
        var positions = KeyIndex()
        /// The number of the load that reached each record first and fills it, or -1.
        /// (Narrow types: these grow by one per record a load reads.)
        var expandedIn: [Int32] = []
        /// For records decoded with their parent already in the inverse property, that
        /// property's relationship index; -1 for the others.
        var injected: [Int16] = []
        /// Where a record's copy being filled lives in `filled`, or -1 while it is unchanged
        /// from its stored values (most related records never change: no second copy).
        var filledSlot: [Int] = []
        var filledCount = 0
        var filledCapacity = 0
    }

    let table: TableDescription
    /// Link (foreign-key) columns per record, stored flat.
    let linkWidth: Int
    private let state: UnsafeMutablePointer<Bookkeeping>
    private let sizes: UnsafeMutablePointer<(count: Int, capacity: Int)>
    private let storage: UnsafeMutablePointer<(shallow: UnsafeMutablePointer<T>, filled: UnsafeMutablePointer<T>)>

    init(table: TableDescription) {
        self.table = table
        linkWidth = table.foreignKeyColumns.count
        state = .allocate(capacity: 1)
        state.initialize(to: Bookkeeping(filledCapacity: 16))
        sizes = .allocate(capacity: 1)
        sizes.initialize(to: (0, 64))
        storage = .allocate(capacity: 1)
        storage.initialize(to: (.allocate(capacity: 64), .allocate(capacity: 16)))
    }

    deinit {
        storage.pointee.shallow.deinitialize(count: count)
        storage.pointee.filled.deinitialize(count: state.pointee.filledCount)
        storage.pointee.shallow.deallocate()
        storage.pointee.filled.deallocate()
        storage.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
        sizes.deallocate()
    }

    var count: Int { sizes.pointee.count }

    func position(of key: RecordKey) -> Int? {
        state.pointee.positions.position(of: key)
    }

    func key(_ position: Int) -> RecordKey {
        state.pointee.keys[position]
    }

    func isExpanded(_ position: Int) -> Bool {
        state.pointee.expandedIn[position] >= 0
    }

    /// The number of the load that reached the record first, or -1.
    func expandedIn(_ position: Int) -> Int32 {
        state.pointee.expandedIn[position]
    }

    func markExpanded(_ position: Int, in load: Int32) {
        state.pointee.expandedIn[position] = load
    }

    func wasDecodedWithParent(_ position: Int) -> Bool {
        state.pointee.injected[position] >= 0
    }

    /// Adds a decoded record; returns its position. `link(i)` gives its link values (a
    /// closure rather than a collection: generic collection code is not specialized here).
    @discardableResult
    /// `injected` is the index of the relationship decoded with the parent's value, or -1.
    func add(_ model: T, key: RecordKey, injected: Int16 = -1, link: (Int) -> SQLValue) -> Int {
        let position = sizes.pointee.count
        if position == sizes.pointee.capacity { grow() }
        (storage.pointee.shallow + position).initialize(to: model)
        state.pointee.filledSlot.append(-1)
        state.pointee.keys.append(key)
        for offset in 0..<linkWidth { state.pointee.links.append(link(offset)) }
        state.pointee.positions.insert(key, at: position)
        state.pointee.expandedIn.append(-1)
        state.pointee.injected.append(injected)
        sizes.pointee.count = position + 1
        return position
    }

    private func grow() {
        let (count, capacity) = sizes.pointee
        let shallow = UnsafeMutablePointer<T>.allocate(capacity: capacity * 2)
        shallow.moveInitialize(from: storage.pointee.shallow, count: count)
        storage.pointee.shallow.deallocate()
        storage.pointee.shallow = shallow
        sizes.pointee.capacity = capacity * 2
    }

    /// The slot of the record's copy being filled, made from its stored values on first use.
    private func filledSlot(_ position: Int) -> Int {
        let slot = state.pointee.filledSlot[position]
        if slot >= 0 { return slot }
        let count = state.pointee.filledCount
        if count == state.pointee.filledCapacity {
            let larger = UnsafeMutablePointer<T>.allocate(capacity: count * 2)
            larger.moveInitialize(from: storage.pointee.filled, count: count)
            storage.pointee.filled.deallocate()
            storage.pointee.filled = larger
            state.pointee.filledCapacity = count * 2
        }
        (storage.pointee.filled + count).initialize(to: storage.pointee.shallow[position])
        state.pointee.filledSlot[position] = count
        state.pointee.filledCount = count + 1
        return count
    }

    /// The record as decoded: its stored values (and the parent it was decoded with).
    func storedValues(_ position: Int) -> T {
        storage.pointee.shallow[position]
    }

    /// The record as its children hold it in their inverse: its stored values, without the
    /// parent it was itself decoded with. Otherwise each record of a chain (a hierarchy of
    /// reports, say) would hold its parent holding its parent, all the way up: a value as
    /// deep as the chain, which Swift destroys by recursion — 100,000 levels would overflow
    /// the stack when the loaded models are released.
    func parentValues(_ position: Int) -> T {
        let injected = state.pointee.injected[position]
        guard injected >= 0 else { return storage.pointee.shallow[position] }
        var bare = storage.pointee.shallow[position]
        // A to-one (only to-ones are decoded with a parent) given no models becomes nil.
        T.relationships[Int(injected)].assign(&bare, ())
        return bare
    }

    /// The record with the relationships filled so far.
    func model(_ position: Int) -> T {
        let slot = state.pointee.filledSlot[position]
        return slot >= 0 ? storage.pointee.filled[slot] : storage.pointee.shallow[position]
    }

    /// Runs `body` on the record being filled.
    @inline(__always)
    func fill(_ position: Int, _ body: (inout T) -> Void) {
        // The slot first: making it may move the buffer.
        let slot = filledSlot(position)
        body(&storage.pointee.filled[slot])
    }

    func link(_ position: Int, _ offset: Int) -> SQLValue {
        state.pointee.links[position * linkWidth + offset]
    }
}
