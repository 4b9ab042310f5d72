#if PostgreSQL
    import Foundation
    import ModelStore
    import ServiceLifecycle

    /// A store as a swift-service-lifecycle `Service`: it runs until its service group shuts
    /// down (gracefully, or by cancelling the task), then closes the store — the calls already
    /// submitted finish first — so a service that stops leaves no connection open on the server.
    ///
    /// ```swift
    /// let store = try ModelStore(postgres: "postgres://app@db.internal/shop")
    /// let group = ServiceGroup(services: [ModelStoreService(store), httpServer], logger: logger)
    /// try await group.run()
    /// ```
    public struct ModelStoreService: Service {
        /// The store the service closes when it stops.
        public let store: ModelStore

        /// A service that closes `store` when its group shuts down.
        public init(_ store: ModelStore) {
            self.store = store
        }

        /// Waits for the group's graceful shutdown (or the task's cancellation), then closes the
        /// store.
        /// - Throws: what `ModelStore.close()` throws.
        public func run() async throws {
            // Thrown only when the task is cancelled: the store closes all the same.
            try? await gracefulShutdown()
            let store = self.store
            // Closing waits for the calls in flight: on a thread of its own, never on the
            // cooperative pool.
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                Thread.detachNewThread {
                    continuation.resume(with: Result { try store.close() })
                }
            }
        }
    }
#endif
