import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What the pool knows of the database file itself, learned without a descriptor of its own:
/// its header (through SQLite's handle), its identity and medium (`stat`, `statvfs`), and
/// which files this process's stores have open.
extension ConnectionPool {
    /// Whether the file system holding `path` is mounted read-only.
    static func isOnReadOnlyMedia(_ path: String) -> Bool {
        let directory = (path as NSString).deletingLastPathComponent
        var info = statvfs()
        guard statvfs(directory.isEmpty ? "." : directory, &info) == 0 else { return false }
        return info.f_flag & UInt(ST_RDONLY_FLAG) != 0
    }

    /// Refuses a file that cannot be an intact database before SQLite reads it, so a damaged
    /// file gets an error naming the damage and is left exactly as it was (no WAL or shared
    /// memory file beside it). SQLite would refuse these files too, but only at first use.
    /// Reads through SQLite's own descriptor: see the type's comment.
    static func checkHeader(of connection: Connection, path: String) throws {
        let (header, size) = try connection.readFileStart(count: 100)
        guard size > 0 else { return }  // a new, empty store
        let magic = Array("SQLite format 3\0".utf8)
        guard header.count == 100, header.starts(with: magic) else {
            throw ModelStoreError(
                .notADatabase,
                header.starts(with: magic.prefix(header.count)) && header.count < 100
                    ? "The file at \(path) is \(size) bytes long, too short to be an SQLite database: it was probably truncated."
                    : "The file at \(path) is not an SQLite database.",
                suggestion: "Open a store at another path, or restore the file from a backup. ModelStore has not modified it.")
        }
        func number(at offset: Int, _ width: Int) -> UInt64 {
            header[offset..<(offset + width)].reduce(0) { $0 << 8 | UInt64($1) }
        }
        let pageSize = number(at: 16, 2) == 1 ? 65536 : number(at: 16, 2)
        let pageCount = number(at: 28, 4)
        // SQLite trusts the header's page count only when the change counter matches the
        // version-valid-for number; a WAL or hot journal beside the file may legitimately hold
        // pages the file does not have yet.
        let countIsValid = pageCount > 0 && number(at: 24, 4) == number(at: 92, 4)
        let manager = FileManager.default
        let journaled = manager.fileExists(atPath: path + "-wal") || manager.fileExists(atPath: path + "-journal")
        if countIsValid, !journaled, UInt64(size) < pageCount * pageSize {
            throw ModelStoreError(
                .corrupt,
                "The database file at \(path) is \(size) bytes long, but its header says it holds \(pageCount) pages of \(pageSize) bytes: it was truncated.",
                suggestion: "Restore the file from a backup or copy it again. ModelStore has not modified it.")
        }
    }

    /// The files this process's stores have open for writing, by path: a store opened on a
    /// path whose file was replaced (or deleted) while another store here still has the old
    /// one open would pair the new file with the old one's `-wal`, which SQLite finds by name.
    static let openFiles = Locked<[String: [FileIdentity: Int]]>([:])

    /// The path with its directory resolved (symbolic links, `..`), so every spelling of one
    /// file gives one key; the directory still exists when the file was deleted or replaced.
    static func key(_ path: String) -> String {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let directory = url.deletingLastPathComponent().path
        guard let resolved = realpath(directory, nil) else { return url.path }
        defer { free(resolved) }
        return String(cString: resolved) + "/" + url.lastPathComponent
    }

    static func refuseReplacedFile(at path: String) throws {
        try refuseChangedCompanions(at: path)
        let current = FileIdentity(path: path)
        let held = openFiles.withLock { $0[key(path)].map { Array($0.keys) } ?? [] }
        guard held.contains(where: { $0 != current }) else { return }
        throw ModelStoreError(
            .fileReplaced,
            "The file at \(path) was replaced or deleted while another store in this process still has the old file open; opening it now would mix the new file with the old file's write-ahead log.",
            suggestion: "Close the other store (or let it go) first, then open the path again.")
    }
}

/// `ST_RDONLY` of `statvfs(3)`: 1 on Linux and on Apple platforms alike.
private let ST_RDONLY_FLAG = 1

/// A file's device and inode, read by path: equal while the path names the same file.
struct FileIdentity: Hashable {
    var device: UInt64
    var inode: UInt64

    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
