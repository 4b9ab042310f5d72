#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Which store's work the current thread is doing, so a synchronous call made from inside
/// that work runs inline on the same connection instead of deadlocking on the store's queue.
final class SessionContext {
    let store: ObjectIdentifier
    let link: PooledConnection
    let isWriter: Bool
    /// The store's migration steps are running: calls on the store are refused, since it is
    /// not open yet and they would wait for the steps that made them.
    let isMigrating: Bool
    let previous: SessionContext?

    private init(store: ObjectIdentifier, link: PooledConnection, isWriter: Bool, isMigrating: Bool, previous: SessionContext?) {
        self.store = store
        self.link = link
        self.isWriter = isWriter
        self.isMigrating = isMigrating
        self.previous = previous
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    private static var top: SessionContext? {
        pthread_getspecific(key).map { Unmanaged<SessionContext>.fromOpaque($0).takeUnretainedValue() }
    }

    /// The context of `store`'s work on this thread, if this thread is inside it.
    static func current(for store: ObjectIdentifier) -> SessionContext? {
        var context = top
        while let candidate = context {
            if candidate.store == store { return candidate }
            context = candidate.previous
        }
        return nil
    }

    /// Runs `body` marked as `store`'s work on `link`.
    static func with<T>(
        store: ObjectIdentifier, link: PooledConnection, isWriter: Bool, isMigrating: Bool = false, _ body: () throws -> T
    ) rethrows -> T {
        let context = SessionContext(store: store, link: link, isWriter: isWriter, isMigrating: isMigrating, previous: top)
        // Unretained is safe: `withExtendedLifetime` below keeps the context alive for as long
        // as the thread-local slot points at it, and the `defer` restores the previous
        // context (kept alive by its own frame further up this thread's stack) before
        // returning. Only this thread reads the slot.
        pthread_setspecific(key, Unmanaged.passUnretained(context).toOpaque())
        defer {
            pthread_setspecific(key, context.previous.map { Unmanaged.passUnretained($0).toOpaque() })
        }
        return try withExtendedLifetime(context) { try body() }
    }
}
