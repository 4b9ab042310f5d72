import Foundation

extension ModelStore {
    private static let defaultStore = Locked<ModelStore?>(nil)

    /// The store that calls without an explicit store use (`Snack.find(key:)`,
    /// `snack.save()`).
    ///
    /// Set it once at launch. A program that never sets it gets a store file at
    /// `defaultLocation`, created (with its directory) on first use.
    public static var `default`: ModelStore {
        get {
            defaultStore.withLock { store in
                if let store { return store }
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

    /// Where the default store's file lives when `default` was never set:
    /// - Apple platforms: `Application Support/<bundle identifier or process name>/ModelStore.sqlite`
    /// - Linux and others: `$XDG_DATA_HOME/<process name>/ModelStore.sqlite`, where
    ///   `$XDG_DATA_HOME` defaults to `~/.local/share`.
    public static var defaultLocation: URL {
        let folder: String
        let base: URL
        #if canImport(Darwin)
        folder = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
        base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
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
