/// Collects decoded models without touching `Array` per row.
///
/// The engine's generic code is not specialized for the caller's model type, so each
/// `Array.append` would look up `Array<Model>` metadata. A raw buffer needs only the model's
/// own metadata; the array is made once, at the end.
struct RowBuffer<Element>: ~Copyable {
    private var storage: UnsafeMutablePointer<Element>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int = 64) {
        self.capacity = max(1, capacity)
        storage = .allocate(capacity: self.capacity)
    }

    @inline(__always)
    mutating func append(_ element: consuming Element) {
        if count == capacity {
            let larger = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
            larger.moveInitialize(from: storage, count: count)
            storage.deallocate()
            storage = larger
            capacity *= 2
        }
        (storage + count).initialize(to: element)
        count += 1
    }

    /// The elements as an array; the buffer is consumed.
    consuming func finish() -> [Element] {
        let count = self.count
        let storage = self.storage
        discard self
        defer { storage.deallocate() }
        return Array(unsafeUninitializedCapacity: count) { buffer, initialized in
            buffer.baseAddress?.moveInitialize(from: storage, count: count)
            initialized = count
        }
    }

    deinit {
        storage.deinitialize(count: count)
        storage.deallocate()
    }
}
