import Foundation

extension ModelStore {
    /// What calls that name no store use, and why: one value behind one lock.
    struct DefaultState: Sendable {
        /// The store `default` was set to.
        var chosen: ModelStore?
        /// The store made at `defaultLocation` on first use, while nothing else applies.
        var implicit: ModelStore?
        /// `implicitDefaultEnabled`.
        var implicitEnabled = true
        /// How the program opened its first store of its own (`ModelStore(path: "…")`),
        /// after which the implicit default is no longer used.
        var firstOpened: String?
        /// The refusing store made for `firstOpened`, kept so every call gets the same one.
        var openedRefusal: ModelStore?
        /// Whether opening a store sets `firstOpened`. Only tests clear it, to act as a
        /// program that opens no store while other tests in the process open theirs.
        var notesOpenings = true
    }

    private static let defaultState = Locked(DefaultState())

    /// The store that calls without an explicit store use (`Snack.find(key:)`,
    /// `snack.save()`).
    ///
    /// Set it once at launch. A program that never sets it, and never opens a store itself,
    /// gets a store file at `defaultLocation`, created (with its directory) on first use. A
    /// program that opens a store (`ModelStore(path:)`, `ModelStore(url:)`, `inMemory()`, a
    /// PostgreSQL store) and never sets `default` gets `.noStore` from a call that names no
    /// store: such a call has forgotten `in: store`, and would otherwise write a second
    /// database nobody reads.
    ///
    /// ```swift
    /// let store = try ModelStore(path: "shop.sqlite")
    /// try Snack.count()                 // throws .noStore: the program opened its own store
    /// ModelStore.default = store
    /// try Snack.count()                 // fine: the calls without `in:` use `store`
    /// ```
    public static var `default`: ModelStore {
        get {
            defaultState.withLock { state in
                if let chosen = state.chosen { return chosen }
                guard state.implicitEnabled else { return switchedOff }
                if let opened = state.firstOpened {
                    if let refusal = state.openedRefusal { return refusal }
                    let refusal = refusing(because: opened)
                    state.openedRefusal = refusal
                    return refusal
                }
                if let implicit = state.implicit { return implicit }
                let path = defaultLocation.path
                let created = ModelStore(
                    location: .file(path), path: path, configuration: Configuration(), createsDirectory: true)
                state.implicit = created
                return created
            }
        }
        set {
            defaultState.withLock { $0.chosen = newValue }
        }
    }

    /// Whether a call that names no store, while `default` was never set and the program
    /// opened no store itself, creates and uses the implicit default store at
    /// `defaultLocation`. Default: true.
    ///
    /// A program that hands one store to every call (a server with an injected store, say)
    /// may set it to false at launch, so that a call that forgets `in: store` throws
    /// `.noStore` even before it opens that store. Set after the implicit default store was
    /// created, it applies from then on: later calls without a store throw `.noStore` (the
    /// store already created stays open until the program ends).
    ///
    /// ```swift
    /// ModelStore.implicitDefaultEnabled = false
    /// try Snack.count()                 // throws ModelStoreError.Code.noStore
    /// try Snack.count(in: store)        // fine
    /// ```
    public static var implicitDefaultEnabled: Bool {
        get { defaultState.withLock { $0.implicitEnabled } }
        set { defaultState.withLock { $0.implicitEnabled = newValue } }
    }

    /// Reads and changes what calls without a store use (for tests, which must restore it).
    static func withDefaultState<T>(_ body: (inout DefaultState) throws -> T) rethrows -> T {
        try defaultState.withLock { try body(&$0) }
    }

    /// Records that the program opened a store itself, so that calls naming no store stop
    /// using the implicit default (see `default`). Stores ModelStore makes for itself (the
    /// implicit default, the refusing stand-ins) are not opened through here.
    static func noteOpenedByProgram(as opening: String) {
        defaultState.withLock { state in
            if state.firstOpened == nil && state.notesOpenings { state.firstOpened = opening }
        }
    }

    /// What calls without a store use while the implicit default is switched off: a store
    /// whose every call throws `.noStore`.
    private static let switchedOff = ModelStore(
        location: .unavailable(
            ModelStoreError(
                .noStore,
                "A call named no store (in: store), ModelStore.default was never set, and the implicit default store is switched off (ModelStore.implicitDefaultEnabled = false).",
                suggestion: "Pass the store to the call (in: store, or Query.findAll(in:)), or set ModelStore.default at launch.")),
        path: nil, configuration: Configuration(), createsDirectory: false)

    /// What calls without a store use in a program that opened a store of its own and never
    /// set `default`: a store whose every call throws `.noStore` naming that store.
    private static func refusing(because opened: String) -> ModelStore {
        ModelStore(
            location: .unavailable(
                ModelStoreError(
                    .noStore,
                    "A call named no store (in: store), and this program opened its own store (\(opened)) without setting ModelStore.default: the call would have created and written a second database at \(defaultLocation.path).",
                    suggestion:
                        "Pass the store to the call (snack.save(in: store); on a query chain, to the last call: .findAll(in: store)), or set ModelStore.default = store once, after opening it."
                )),
            path: nil, configuration: Configuration(), createsDirectory: false)
    }

    /// Where the default store's file lives when `default` was never set:
    /// - Apple platforms: `Application Support/<bundle identifier or process name>/ModelStore.sqlite`
    /// - Linux and others: `$XDG_DATA_HOME/<process name>/ModelStore.sqlite`, where
    ///   `$XDG_DATA_HOME` defaults to `~/.local/share`.
    public static var defaultLocation: URL {
        let folder: String
        let base: URL
        #if canImport(Darwin)
            folder = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
            base =
                FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent("Library/Application Support")
        #else
            folder = ProcessInfo.processInfo.processName
            let environment = ProcessInfo.processInfo.environment
            if let dataHome = environment["XDG_DATA_HOME"], dataHome.hasPrefix("/") {
                base = URL(fileURLWithPath: dataHome, isDirectory: true)
            } else {
                base = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share", isDirectory: true)
            }
        #endif
        return base.appendingPathComponent(folder, isDirectory: true).appendingPathComponent("ModelStore.sqlite")
    }

    /// The store a call uses: the one it names, else the default.
    @inline(__always)
    static func resolve(_ store: ModelStore?) -> ModelStore {
        store ?? .default
    }
}
