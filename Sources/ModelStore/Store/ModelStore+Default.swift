import Foundation

extension ModelStore {
    private static let defaultStore = Locked<ModelStore?>(nil)
    private static let implicitDefault = Locked(true)

    /// The store that calls without an explicit store use (`Snack.find(key:)`,
    /// `snack.save()`).
    ///
    /// Set it once at launch. A program that never sets it gets a store file at
    /// `defaultLocation`, created (with its directory) on first use — unless
    /// `implicitDefaultEnabled` is false.
    public static var `default`: ModelStore {
        get {
            defaultStore.withLock { store in
                if let store { return store }
                guard implicitDefault.current else { return unavailable }
                let path = defaultLocation.path
                let created = ModelStore(
                    location: .file(path), path: path, configuration: Configuration(), createsDirectory: true)
                store = created
                return created
            }
        }
        set {
            defaultStore.withLock { $0 = newValue }
        }
    }

    /// Whether a call that names no store, while `default` was never set, creates and uses
    /// the implicit default store at `defaultLocation`. Default: true.
    ///
    /// A program that hands one store to every call (a server with an injected store, say)
    /// sets it to false at launch: a call that forgets `in: store` then throws `.noStore`
    /// instead of quietly writing to a second database file.
    ///
    /// ```swift
    /// ModelStore.implicitDefaultEnabled = false
    /// try Snack.count()                 // throws ModelStoreError.Code.noStore
    /// try Snack.count(in: store)        // fine
    /// ```
    public static var implicitDefaultEnabled: Bool {
        get { implicitDefault.current }
        set { implicitDefault.withLock { $0 = newValue } }
    }

    /// The default store if one was set or created, without creating one (for tests).
    static var existingDefault: ModelStore? {
        get { defaultStore.current }
        set { defaultStore.withLock { $0 = newValue } }
    }

    /// What calls without a store use while the implicit default is switched off: a store
    /// whose every call throws `.noStore`.
    private static let unavailable = ModelStore(
        location: .unavailable(
            ModelStoreError(
                .noStore,
                "A call named no store (in: store), ModelStore.default was never set, and the implicit default store is switched off (ModelStore.implicitDefaultEnabled = false).",
                suggestion: "Pass the store to the call (in: store, or Query.findAll(in:)), or set ModelStore.default at launch.")),
        path: nil, configuration: Configuration(), createsDirectory: false)

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
