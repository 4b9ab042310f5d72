/// Why the user's own SQL was refused, and what to do instead.
struct RawSQLRefusal: Sendable, Equatable {
    let message: String
    let suggestion: String
}

/// What the user's own SQL (`store.execute`, `store.findAll(_:sql:)`) may not do on the
/// store's connections, by name: end the store's transaction, attach databases, set what the
/// store configures or relies on, or run what needs to run outside a transaction (which has
/// a call of its own).
///
/// Pragmas are judged by SQLite's authorizer, which sees them after parsing, so every
/// spelling is caught (case, quotes, a `main.` prefix, the function form `PRAGMA x(1)`, after
/// a comment, inside a script). `VACUUM` never reaches the authorizer: it is judged by its
/// first word.
enum RawSQLGuard {
    static let transactionControl = RawSQLRefusal(
        message: "Raw SQL cannot begin, commit or roll back transactions or savepoints: the store runs each call in its own transaction.",
        suggestion: "Group calls with store.transaction { } instead.")

    static let attach = RawSQLRefusal(
        message: "Raw SQL cannot attach or detach databases on the store's connections, which other calls share.",
        suggestion: "Open another ModelStore on the other file.")

    /// Pragmas the store sets on its connections, or whose value its work depends on: each
    /// with why, and what to do instead. Refused when given a value; reading them is fine.
    static let guardedPragmas: [String: (why: String, instead: String)] = [
        "journal_mode": (
            "the store runs in WAL mode, so its readers work beside the writer and close() can fold the log into the file",
            "Leave it as the store set it; to fold the log into the file, call store.checkpoint(.truncate)."
        ),
        "locking_mode": (
            "EXCLUSIVE would lock the store's own readers, other stores and other processes out of the file",
            "Leave it as it is."
        ),
        "synchronous": (
            "the store's promise that a crash loses no commit rests on the setting it chose (NORMAL, in WAL mode)",
            "Leave it as the store set it."
        ),
        "foreign_keys": (
            "relationships' links and delete rules rely on SQLite enforcing foreign keys",
            "Leave it on; fix links that break them with UPDATE or DELETE statements."
        ),
        "recursive_triggers": (
            "change streams learn of the rows a REPLACE deletes only through recursive triggers",
            "Leave it as the store set it."
        ),
        "query_only": (
            "the store's readers are query-only so they never write, and its writer must stay writable",
            "Open the store with Configuration(readOnly: true) for a store that only reads."
        ),
        "writable_schema": (
            "editing sqlite_schema directly can corrupt the file",
            "Change the schema with CREATE, ALTER and DROP statements."
        ),
        "schema_version": (
            "SQLite documents that writing it can corrupt the file, and the store reads it to notice schema changes made behind its back",
            "Change the schema with CREATE, ALTER and DROP statements; SQLite moves the version itself."
        ),
        "busy_timeout": (
            "every connection of the store waits for locks as long as its Configuration.busyTimeout says, and its errors say so",
            "Set ModelStore.Configuration(busyTimeout:) when opening the store."
        ),
        "wal_autocheckpoint": (
            "the store relies on SQLite's automatic checkpoints to keep the write-ahead log short",
            "Call store.checkpoint(_:) to fold the log into the file when you choose."
        ),
        "trusted_schema": (
            "it decides which functions and virtual tables triggers and views may use, and the full-text index's and change streams' triggers rely on SQLite's default",
            "Leave it as it is."
        ),
        "case_sensitive_like": (
            "case-insensitive conditions compile to SQL's LIKE, which it would make case-sensitive",
            "Use a case-sensitive condition (.like(…, caseInsensitive: false)) where you need one."
        ),
        "legacy_alter_table": (
            "renames of tables and columns (formerNames, migration steps) rely on ALTER TABLE updating the triggers, views and indexes that name them",
            "Leave it as it is."
        ),
        "read_uncommitted": (
            "a reader of an in-memory store, which shares one cache with the writer, would see writes not yet committed",
            "Leave it as it is."
        ),
        "count_changes": (
            "every INSERT, UPDATE and DELETE would return a row, which the store's own statements do not expect",
            "Read how many rows changed from execute's result."
        ),
        "full_column_names": (
            "result columns would be named table.column, and rows are decoded by column name",
            "Name result columns with AS in the query."
        ),
        "short_column_names": (
            "result columns would be named otherwise, and rows are decoded by column name",
            "Name result columns with AS in the query."
        ),
    ]

    /// The refusal of `PRAGMA name` (`value`: its argument, nil when it only reads), or nil
    /// when the pragma may run.
    static func pragma(_ name: String, value: String?) -> RawSQLRefusal? {
        let key = name.lowercased()
        if key == "wal_checkpoint" {
            // Even without a value it acts: inside the store's transaction SQLite refuses it
            // ("database table is locked").
            return RawSQLRefusal(
                message:
                    "Raw SQL cannot run PRAGMA wal_checkpoint: a checkpoint must run on the writer between transactions, and the store runs every call in one.",
                suggestion:
                    "Call store.checkpoint(.passive), .full, .restart or .truncate: it runs on the writer outside any transaction and returns the frames SQLite reports."
            )
        }
        guard value != nil, let guarded = guardedPragmas[key] else { return nil }
        return RawSQLRefusal(message: "Raw SQL cannot set PRAGMA \(key): \(guarded.why).", suggestion: guarded.instead)
    }

    /// The refusal of a statement judged by its words, or nil: `VACUUM` (SQLite's authorizer
    /// is not asked about it), which cannot run inside the transaction every call runs in.
    static func statement(_ sql: String) -> RawSQLRefusal? {
        let words = leadingWords(of: sql, count: 4)
        guard words.first == "VACUUM" else { return nil }
        if words.contains("INTO") {
            return RawSQLRefusal(
                message: "Raw SQL cannot run VACUUM INTO: VACUUM cannot run inside a transaction, and the store runs every call in one.",
                suggestion: "Call store.vacuum(into: path): it writes the compacted copy from the writer, outside any transaction.")
        }
        return RawSQLRefusal(
            message: "Raw SQL cannot run VACUUM: VACUUM cannot run inside a transaction, and the store runs every call in one.",
            suggestion: "Call store.vacuum(): it compacts the store on the writer, outside any transaction.")
    }

    /// The first `count` words of `sql`, upper-cased, skipping whitespace and comments
    /// (`-- …`, `/* … */`); a quoted name or string counts as one word (unquoted as it is).
    static func leadingWords(of sql: String, count: Int) -> [String] {
        let scalars = Array(sql.unicodeScalars)
        var words: [String] = []
        var index = 0
        while index < scalars.count, words.count < count {
            let scalar = scalars[index]
            if scalar.properties.isWhitespace || scalar == ";" || scalar == "(" || scalar == ")" || scalar == "," || scalar == "." {
                index += 1
            } else if scalar == "-", index + 1 < scalars.count, scalars[index + 1] == "-" {
                while index < scalars.count, scalars[index] != "\n" { index += 1 }
            } else if scalar == "/", index + 1 < scalars.count, scalars[index + 1] == "*" {
                index += 2
                while index + 1 < scalars.count, !(scalars[index] == "*" && scalars[index + 1] == "/") { index += 1 }
                index += 2
            } else if scalar == "'" || scalar == "\"" || scalar == "`" || scalar == "[" {
                let close: Unicode.Scalar = scalar == "[" ? "]" : scalar
                var end = index + 1
                while end < scalars.count, scalars[end] != close { end += 1 }
                words.append(String(String.UnicodeScalarView(scalars[(index + 1)..<min(end, scalars.count)])).uppercased())
                index = end + 1
            } else {
                var end = index
                while end < scalars.count, scalars[end] == "_" || scalars[end].properties.isAlphabetic || ("0"..."9").contains(scalars[end])
                {
                    end += 1
                }
                if end == index { end += 1 }
                words.append(String(String.UnicodeScalarView(scalars[index..<end])).uppercased())
                index = end
            }
        }
        return words
    }
}
