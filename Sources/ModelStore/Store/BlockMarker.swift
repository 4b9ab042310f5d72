import Foundation

/// The user's blocks (`transaction`, `read`) and the calls made around them.
///
/// Inside a block, on its thread, calls on the same store join it (see `SessionContext`).
/// A task started inside a block runs elsewhere and inherits the block's marker, a task-local
/// value: while the block runs, its calls are refused rather than queued behind the block.
extension ModelStore {
    /// Runs the user's block marked, so that a call made from a task it starts (which
    /// inherits the marker) knows it would wait for the block.
    func withBlockMarker<T>(holdsCompletionQueue: Bool = false, _ body: () throws -> T) rethrows -> T {
        let marker = BlockMarker(store: ObjectIdentifier(self), outer: BlockMarker.current, holdsCompletionQueue: holdsCompletionQueue)
        defer { marker.end() }
        return try BlockMarker.$current.withValue(marker) { try body() }
    }

    /// A call (in any form) from a task started inside one of this store's blocks, while the
    /// block runs: it would queue behind the block, and a block that waits for it would
    /// never end.
    func refuseInsideBlock() throws {
        guard BlockMarker.current?.isActive(for: ObjectIdentifier(self)) == true else { return }
        throw attributed(
            ModelStoreError(
                .reentrancy,
                "A call was made on a store from a task started inside one of its blocks (transaction or read) while the block runs; it would wait for the block, and a block waiting for it would never end.",
                suggestion: "Inside a block, make the call in the block itself (it joins the block), or after the block returns."))
    }

    /// Hands the result of a completion-form call that ran inline in a block to its handler:
    /// on the completion queue, or at once when the block itself holds that queue (a block
    /// started in a completion handler, or on the main thread with `completionQueue = .main`),
    /// where a handler sent to the queue would wait for the block that may wait for it.
    func deliverInline<R: Sendable>(_ result: R, on queue: DispatchQueue, to completion: @escaping @Sendable (R) -> Void) {
        if BlockMarker.current?.holdsCompletionQueue(for: ObjectIdentifier(self)) == true {
            completion(result)
        } else {
            queue.async { completion(result) }
        }
    }
}

/// Marks the user's blocks (transaction, read) for tasks started inside them.
final class BlockMarker: Sendable {
    @TaskLocal static var current: BlockMarker?

    let store: ObjectIdentifier
    let outer: BlockMarker?
    /// Whether the block was started on the store's completion queue, which it then holds.
    let holdsCompletionQueue: Bool
    private let running = Locked(true)

    init(store: ObjectIdentifier, outer: BlockMarker?, holdsCompletionQueue: Bool) {
        self.store = store
        self.outer = outer
        self.holdsCompletionQueue = holdsCompletionQueue
    }

    func end() { running.withLock { $0 = false } }

    /// Whether a block of `store` is running in this marker's chain.
    func isActive(for store: ObjectIdentifier) -> Bool {
        running(for: store) != nil
    }

    /// Whether a running block of `store` in this chain holds its completion queue.
    func holdsCompletionQueue(for store: ObjectIdentifier) -> Bool {
        running(for: store)?.holdsCompletionQueue == true
    }

    /// The innermost running block of `store` in this marker's chain.
    private func running(for store: ObjectIdentifier) -> BlockMarker? {
        var marker: BlockMarker? = self
        while let candidate = marker {
            if candidate.store == store, candidate.running.current { return candidate }
            marker = candidate.outer
        }
        return nil
    }
}
