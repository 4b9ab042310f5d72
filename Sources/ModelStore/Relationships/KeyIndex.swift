/// Positions of records by key, for a graph load's record caches.
///
/// Nearly every key is one integer, and a load looks up or adds one per row it reads.
/// Integers go into an open-addressing table with a multiplicative hash — a few
/// instructions, where a `Dictionary` runs SipHash and grows by rehashing; other keys
/// (text, composite) use a dictionary.
///
/// Non-copyable: it owns its table and frees it when it ends, so a copy — which would share
/// the table and free it twice — is a compile-time error.
struct KeyIndex: ~Copyable {
    /// Slots of (key, position + 1); a stored 0 marks an empty slot.
    private var slots: UnsafeMutablePointer<(key: Int64, position: Int)>?
    private var mask = 0
    private var used = 0
    private var others: [RecordKey: Int] = [:]

    init() {}

    deinit {
        slots?.deallocate()
    }

    func position(of key: RecordKey) -> Int? {
        guard case .integer(let integer) = key else { return others[key] }
        guard let slots else { return nil }
        var slot = Self.hash(integer) & mask
        while true {
            let entry = slots[slot]
            if entry.position == 0 { return nil }
            if entry.key == integer { return entry.position - 1 }
            slot = (slot + 1) & mask
        }
    }

    /// Records `position` for `key`, replacing the position it had.
    mutating func insert(_ key: RecordKey, at position: Int) {
        guard case .integer(let integer) = key else {
            others[key] = position
            return
        }
        if slots == nil || (used + 1) * 2 > mask + 1 { grow() }
        if place(integer, position + 1) { used += 1 }
    }

    /// Stores the entry; returns whether it took a new slot.
    @discardableResult
    private mutating func place(_ key: Int64, _ stored: Int) -> Bool {
        var slot = Self.hash(key) & mask
        while slots![slot].position != 0 {
            if slots![slot].key == key {
                slots![slot].position = stored
                return false
            }
            slot = (slot + 1) & mask
        }
        slots![slot] = (key, stored)
        return true
    }

    private mutating func grow() {
        let old = slots
        let oldCapacity = old == nil ? 0 : mask + 1
        let capacity = max(64, oldCapacity * 2)
        let fresh = UnsafeMutablePointer<(key: Int64, position: Int)>.allocate(capacity: capacity)
        fresh.initialize(repeating: (0, 0), count: capacity)
        slots = fresh
        mask = capacity - 1
        if let old {
            for slot in 0..<oldCapacity where old[slot].position != 0 { place(old[slot].key, old[slot].position) }
            old.deallocate()
        }
    }

    @inline(__always)
    private static func hash(_ key: Int64) -> Int {
        // Fibonacci hashing: the high bits of the product mix every bit of the key.
        Int(truncatingIfNeeded: (UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15) >> 20)
    }
}
