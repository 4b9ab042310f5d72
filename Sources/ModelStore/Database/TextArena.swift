import ModelStoreCSQLite

/// Bytes for one row's bound text, so it can be bound with `SQLITE_STATIC`.
///
/// With `SQLITE_TRANSIENT` SQLite mallocs and copies every bound string; writing a batch,
/// that is most of the binding cost. A row's texts are copied here instead (sized before
/// the first copy, so earlier pointers stay valid) and stay put until the next row is bound,
/// after the statement has run.
final class TextArena {
    private var storage: UnsafeMutableRawPointer
    private var capacity: Int
    private var used = 0

    init() {
        capacity = 4096
        storage = .allocate(byteCount: capacity, alignment: 1)
    }

    deinit {
        storage.deallocate()
    }

    /// Starts a row whose texts take at most `bytes` bytes.
    func begin(reserving bytes: Int) {
        used = 0
        guard bytes > capacity else { return }
        storage.deallocate()
        capacity = max(bytes, capacity * 2)
        storage = .allocate(byteCount: capacity, alignment: 1)
    }

    /// Binds `text` (copied here) to parameter `index` without SQLite copying it again.
    func bind(_ text: String, to statement: OpaquePointer, at index: Int32) -> Int32 {
        var text = text
        return text.withUTF8 { bytes -> Int32 in
            guard bytes.count <= Int(Int32.max) else { return SQLITE_TOOBIG }
            let start = storage + used
            if let base = bytes.baseAddress, bytes.count > 0 {
                start.copyMemory(from: base, byteCount: bytes.count)
            }
            used += bytes.count
            return sqlite3_bind_text(statement, index, start.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil)
        }
    }
}
