import ModelStoreCSQLite
import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What an `SQLITE_IOERR` means for the store: a full disk or a file-size limit is a full
/// store (`.storeFull`), whichever of its files ran out of room; anything else is an I/O error
/// of its own (`.ioError`) that says which operation failed, never SQLite's bare
/// "disk I/O error".
///
/// SQLite reports a full disk as `SQLITE_FULL` only while it writes the database or its log;
/// growing the shared-memory file (`-shm`) fails as `SQLITE_IOERR_SHMSIZE`, and a write past
/// the process's file-size limit (`RLIMIT_FSIZE`, with `SIGXFSZ` ignored) as
/// `SQLITE_IOERR_WRITE` — whose `errno` (`EFBIG`) SQLite does not always keep, so the limit
/// is compared with the sizes of the store's files instead.
struct IOFailure {
    let code: ModelStoreError.Code
    let message: String
    let suggestion: String

    /// `resultCode`: SQLite's extended code (an `SQLITE_IOERR_…`); `database`: the connection
    /// that met it, for the operating system's error number and the file's path.
    init(resultCode: Int32, database: OpaquePointer?) {
        let step = (resultCode >> 8) & 0xFF
        // SQLite reads the thread's errno when it reports the error: it is this failure's only
        // after a system call that failed (not after a short read), else it may be stale.
        let systemError = Self.failedSystemCalls.contains(step) ? database.map { sqlite3_system_errno($0) } ?? 0 : 0
        let path = database.flatMap { sqlite3_db_filename($0, "main") }.map { String(cString: $0) } ?? ""
        let (name, activity) = Self.names[step] ?? ("SQLITE_IOERR", "reading or writing a file")
        let files = path.isEmpty ? "the store's files" : path
        if resultCode == Self.shmSize || (systemError == ENOSPC && Self.writes.contains(step)) {
            code = .storeFull
            message =
                "The store is full: the disk holding \(files) had no room left while \(activity) (\(name)\(Self.describe(systemError))). Nothing of it was written."
            suggestion = "Free space on the disk (the -wal and -shm files beside the store need room too), then try again."
        } else if let limit = Self.fileSizeLimitReached(path: path, systemError: systemError, resultCode: resultCode) {
            code = .storeFull
            message =
                "The store is full: a file of \(files) reached the process's file-size limit (RLIMIT_FSIZE, \(limit) bytes) while \(activity) (\(name)). Nothing of it was written."
            suggestion =
                "Raise the process's file-size limit (ulimit -f), or keep the store smaller: delete records, then call store.vacuum()."
        } else {
            code = .ioError
            message = "An I/O error occurred on \(files) while \(activity) (\(name)\(Self.describe(systemError)))."
            suggestion =
                "Check the disk and the file system holding the store (a failing disk, a network mount that went away), and that no other program changed, moved or deleted its files (-wal, -shm); then try again."
        }
    }

    private static let shmSize = SQLITE_IOERR | (19 << 8)
    /// The extended codes SQLite reports when a system call failed (read, write, fsync,
    /// truncate, stat, lock, close, open or map the shared memory, seek, mmap, delete).
    private static let failedSystemCalls: Set<Int32> = [1, 3, 4, 5, 6, 7, 8, 9, 10, 15, 16, 17, 18, 19, 20, 21, 22, 24]
    /// Those that write, and so may find the disk full.
    private static let writes: Set<Int32> = [3, 4, 5, 6, 19, 21, 24]

    /// SQLite's name of each extended I/O error (by its number above `SQLITE_IOERR`) and what
    /// was being done, in words.
    private static let names: [Int32: (String, String)] = [
        1: ("SQLITE_IOERR_READ", "reading a file"),
        2: ("SQLITE_IOERR_SHORT_READ", "reading a file, which was shorter than expected"),
        3: ("SQLITE_IOERR_WRITE", "writing a file"),
        4: ("SQLITE_IOERR_FSYNC", "flushing a file to disk"),
        5: ("SQLITE_IOERR_DIR_FSYNC", "flushing a directory to disk"),
        6: ("SQLITE_IOERR_TRUNCATE", "truncating a file"),
        7: ("SQLITE_IOERR_FSTAT", "reading a file's size and attributes"),
        8: ("SQLITE_IOERR_UNLOCK", "unlocking a file"),
        9: ("SQLITE_IOERR_RDLOCK", "locking a file to read it"),
        10: ("SQLITE_IOERR_DELETE", "deleting a journal file"),
        12: ("SQLITE_IOERR_NOMEM", "getting memory for file access"),
        13: ("SQLITE_IOERR_ACCESS", "checking that a file exists"),
        14: ("SQLITE_IOERR_CHECKRESERVEDLOCK", "checking a file's locks"),
        15: ("SQLITE_IOERR_LOCK", "locking a file"),
        16: ("SQLITE_IOERR_CLOSE", "closing a file"),
        17: ("SQLITE_IOERR_DIR_CLOSE", "closing a directory"),
        18: ("SQLITE_IOERR_SHMOPEN", "opening the shared-memory file (-shm)"),
        19: ("SQLITE_IOERR_SHMSIZE", "growing the shared-memory file (-shm)"),
        20: ("SQLITE_IOERR_SHMLOCK", "locking the shared-memory file (-shm)"),
        21: ("SQLITE_IOERR_SHMMAP", "mapping the shared-memory file (-shm) into memory"),
        22: ("SQLITE_IOERR_SEEK", "seeking in a file"),
        23: ("SQLITE_IOERR_DELETE_NOENT", "deleting a journal file that was already gone"),
        24: ("SQLITE_IOERR_MMAP", "mapping a file into memory"),
        25: ("SQLITE_IOERR_GETTEMPPATH", "finding a directory for temporary files"),
        26: ("SQLITE_IOERR_CONVPATH", "converting a file's path"),
        32: ("SQLITE_IOERR_DATA", "checking a page's checksum"),
        33: ("SQLITE_IOERR_CORRUPTFS", "reading a file, whose file system reported damage"),
    ]

    /// `: errno 28, No space left on device`, or nothing when SQLite kept no error number.
    private static func describe(_ systemError: Int32) -> String {
        guard systemError != 0 else { return "" }
        return ": errno \(systemError), \(String(cString: strerror(systemError)))"
    }

    /// The process's file-size limit, when a write failed because a file of the store reached
    /// it: SQLite said `EFBIG`, or (it often keeps no error number) the database, its `-wal` or
    /// its `-journal` is within a page of the limit.
    private static func fileSizeLimitReached(path: String, systemError: Int32, resultCode: Int32) -> UInt64? {
        var limit = rlimit()
        #if canImport(Glibc)
            let resource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
        #else
            let resource = RLIMIT_FSIZE
        #endif
        #if canImport(Darwin)
            let unlimited = RLIM_INFINITY
        #else
            let unlimited = rlim_t.max  // RLIM_INFINITY, which Swift does not import on Linux
        #endif
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur != unlimited else { return nil }
        let bound = UInt64(limit.rlim_cur)
        guard [3, 6].contains((resultCode >> 8) & 0xFF) else { return nil }  // WRITE, TRUNCATE
        if systemError == EFBIG { return bound }
        guard !path.isEmpty else { return nil }
        // The largest page (64 KiB) and a WAL frame's header: a write that did not fit.
        let margin: UInt64 = 65_536 + 24
        for file in [path, path + "-wal", path + "-journal"] {
            var info = stat()
            if stat(file, &info) == 0, UInt64(max(0, info.st_size)) + margin > bound { return bound }
        }
        return nil
    }
}
