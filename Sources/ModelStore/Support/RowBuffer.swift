/// Collects decoded models without touching `Array` per row.
///
/// The engine's generic code is not specialized for the caller's model type, so each
/// `Array.append` would look up `Array<Model>` metadata. Models go into chunks instead
/// (needing only the model's own metadata), which `finish` moves into one array, freeing
/// each chunk as it goes: nothing is copied twice, and the peak is the array plus one chunk,
/// not a doubled buffer plus the array. State sits behind a pointer, so appending pays no
/// dynamic exclusivity check.
final class RowBuffer<Element> {
    private struct State {
        /// Every chunk is full except the last, which holds `filledInLast`.
        var chunks: [(start: UnsafeMutablePointer<Element>, capacity: Int)] = []
        /// The last chunk, kept apart so appending never reads the array.
        var current: UnsafeMutablePointer<Element>?
        var currentCapacity = 0
        var filledInLast = 0
        var nextCapacity: Int
        var count = 0
    }

    /// Small enough that the last chunk's unused part is negligible next to the result.
    private static var largestChunk: Int { 512 }
    private let state: UnsafeMutablePointer<State>

    init(capacity: Int = 64) {
        state = .allocate(capacity: 1)
        state.initialize(to: State(nextCapacity: min(max(1, capacity), Self.largestChunk)))
    }

    deinit {
        release(moving: nil)
        state.deinitialize(count: 1)
        state.deallocate()
    }

    var count: Int { state.pointee.count }

    @inline(__always)
    func append(_ element: consuming Element) {
        if state.pointee.filledInLast == state.pointee.currentCapacity { addChunk() }
        (state.pointee.current! + state.pointee.filledInLast).initialize(to: element)
        state.pointee.filledInLast += 1
        state.pointee.count += 1
    }

    private func addChunk() {
        let capacity = state.pointee.nextCapacity
        let chunk = UnsafeMutablePointer<Element>.allocate(capacity: capacity)
        state.pointee.chunks.append((chunk, capacity))
        state.pointee.current = chunk
        state.pointee.currentCapacity = capacity
        state.pointee.nextCapacity = min(capacity * 2, Self.largestChunk)
        state.pointee.filledInLast = 0
    }

    /// The elements as an array; the buffer is left empty.
    func finish() -> [Element] {
        // With capacity 0 the initializer writes the count into the shared empty-array
        // singleton, a (benign) race that the thread sanitizer rightly reports.
        guard state.pointee.count > 0 else { return [] }
        return Array(unsafeUninitializedCapacity: state.pointee.count) { buffer, initialized in
            initialized = release(moving: buffer.baseAddress)
        }
    }

    /// Moves every element to `destination` (or destroys them when nil), freeing the chunks;
    /// returns how many there were.
    @discardableResult
    private func release(moving destination: UnsafeMutablePointer<Element>?) -> Int {
        var offset = 0
        let chunks = state.pointee.chunks
        for index in 0..<chunks.count {
            let size = index == chunks.count - 1 ? state.pointee.filledInLast : chunks[index].capacity
            if let destination {
                (destination + offset).moveInitialize(from: chunks[index].start, count: size)
            } else {
                chunks[index].start.deinitialize(count: size)
            }
            chunks[index].start.deallocate()
            offset += size
        }
        state.pointee = State(nextCapacity: state.pointee.nextCapacity)
        return offset
    }
}
