import ModelStoreCSQLite
import Foundation

/// The one error type ModelStore throws.
///
/// It says what went wrong (`code`) and in whose terms: the model, the column, the key and
/// the offending value, and — when SQLite refused something — SQLite's result code, its
/// message and the SQL that was running. Printing it gives a sentence a developer can act on.
///
/// Match on the code in a `catch`:
///
/// ```swift
/// do {
///     try Snack(snackId: 1).insert()
/// } catch ModelStoreError.Code.alreadyExists {
///     // a record with key 1 was already stored
/// }
/// ```
public struct ModelStoreError: Error, Sendable {
    /// What kind of failure this is.
    ///
    /// A struct of constants rather than an enum, so that `catch ModelStoreError.Code.notFound`
    /// is an expression pattern (matched through `~=`) and new codes can be added later.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, for example `"notFound"`.
        public let rawValue: String
        /// Creates a code from its name.
        public init(rawValue: String) { self.rawValue = rawValue }
        init(_ rawValue: String) { self.rawValue = rawValue }
        /// The code's name.
        public var description: String { rawValue }

        /// SQLite reported an error that has no more specific code here.
        public static let sqlite = Code("sqlite")
        /// The store's file could not be opened or created (missing directory, permissions,
        /// a directory where a file was expected).
        public static let cannotOpen = Code("cannotOpen")
        /// The file exists but is not an SQLite database.
        public static let notADatabase = Code("notADatabase")
        /// The database file is damaged.
        public static let corrupt = Code("corrupt")
        /// The store cannot be written: a read-only file or location.
        public static let readOnly = Code("readOnly")
        /// Another connection or process held a lock for longer than the busy timeout.
        public static let busy = Code("busy")
        /// The disk, the database's size limit, or the process's file-size limit
        /// (`RLIMIT_FSIZE`) has no room for the change — whichever of the store's files needed
        /// it: the database, its write-ahead log (`-wal`) or its shared-memory file (`-shm`).
        public static let storeFull = Code("storeFull")
        /// The operating system failed to read or write the store's files (SQLite's
        /// `SQLITE_IOERR`, other than a full disk): a failing disk, a network file system that
        /// went away, a file another program changed. The message names what failed.
        public static let ioError = Code("ioError")
        /// A NOT NULL, UNIQUE, CHECK or foreign-key constraint refused the change.
        public static let constraintViolation = Code("constraintViolation")
        /// A model's declarations cannot work: an empty or unknown primary key, an
        /// unsupported property type, a relationship that does not fit.
        public static let invalidModel = Code("invalidModel")
        /// A key passed to a call does not match the model's primary key.
        public static let invalidKey = Code("invalidKey")
        /// A query or call names a property the model lacks or cannot use that way, or asks
        /// for impossible paging.
        public static let invalidQuery = Code("invalidQuery")
        /// A save by match (a predicate, chosen properties or match keys) found several
        /// records where it needs one.
        public static let ambiguousMatch = Code("ambiguousMatch")
        /// An update-only call found no record with the model's key.
        public static let notFound = Code("notFound")
        /// An insert-only call found a record with the model's key already stored.
        public static let alreadyExists = Code("alreadyExists")
        /// A model's value cannot be stored (an integer out of range, NaN, unencodable data).
        public static let encodingFailed = Code("encodingFailed")
        /// A stored value cannot become the model's property (wrong type, out of range).
        public static let decodingFailed = Code("decodingFailed")
        /// The stored table disagrees with the model in a way ModelStore will not fix silently.
        public static let schemaMismatch = Code("schemaMismatch")
        /// A call made from inside the store's own work that cannot run there.
        public static let reentrancy = Code("reentrancy")
        /// The store was closed with `close()`; open a new one to go on.
        public static let closed = Code("closed")
        /// A call named no store while the implicit default store is switched off
        /// (`ModelStore.implicitDefaultEnabled`).
        public static let noStore = Code("noStore")
        /// The store's file — or its write-ahead log (`-wal`) or shared-memory file (`-shm`) —
        /// was deleted, or replaced by another file, while the store had it open; writing on
        /// would mix two databases. The suggestion says what to do.
        public static let fileReplaced = Code("fileReplaced")
        /// A migration step failed; it was rolled back and the store did not open. The
        /// error names the step and, when one was made, the backup from before migrating.
        public static let migrationFailed = Code("migrationFailed")
        /// A model's `validate()` refused it; nothing of the call was written. The model's
        /// own error is in `underlying`.
        public static let validationFailed = Code("validationFailed")
        /// A save or delete callback (`SaveCallbacks`, `DeleteCallbacks`) threw; the whole
        /// call was rolled back. The callback's error is in `underlying`.
        public static let callbackFailed = Code("callbackFailed")
        /// The call needs something only one backend has (on PostgreSQL: full-text search,
        /// observing changes, backups, SQLite's collations); nothing was changed.
        public static let unsupported = Code("unsupported")
        /// The connection to the database server was lost (the server restarted or the
        /// network failed). A transaction it was in was rolled back by the server, so
        /// nothing of the call was written; the store reconnects on the next call.
        public static let connectionLost = Code("connectionLost")
        /// The server reported an error that has no more specific code here (see
        /// `serverState` for its SQLSTATE).
        public static let server = Code("server")
        /// SQLite ended a transaction by itself when a call inside it failed (a trigger's
        /// `RAISE(ROLLBACK)`, an `ON CONFLICT ROLLBACK` constraint, some full-disk, I/O and
        /// out-of-memory errors): nothing of the block was written, and the block's later
        /// calls, and the block itself, fail with this code. The error that ended it is in
        /// `underlying`.
        public static let rolledBack = Code("rolledBack")
        /// The task awaiting the call was cancelled. A read stopped the statement it was
        /// running and returned nothing; a write that had not committed was rolled back
        /// entirely (one that committed returns normally); a call cancelled before it started
        /// ran nothing. Its connection went back to the store at once. The message names what
        /// was stopped, and `sql` the statement that was running.
        public static let cancelled = Code("cancelled")
        /// A read ran past its time limit (`Configuration.readTimeLimit`, or
        /// `withReadTimeLimit(_:_:)` around the call) and was stopped: it returned nothing,
        /// and its connection went back to the store at once. The message names the limit
        /// and what set it, and `sql` the statement that was running.
        public static let timedOut = Code("timedOut")
        /// Changes after a history token were purged (`purgeHistory(olderThan:)`), or the token
        /// is not of this store's history: reading on from it would miss changes. Read the
        /// consumer's data again from the records, then go on from `historyToken()`.
        public static let historyPurged = Code("historyPurged")
    }

    // The context is ModelStore's account of what happened: programs read it (and may build
    // their own errors with `init`), but cannot rewrite one ModelStore threw.

    /// What kind of failure this is.
    public internal(set) var code: Code
    /// A sentence saying what happened.
    public internal(set) var message: String
    /// The model type involved, if any (for example `"Snack"`).
    public internal(set) var model: String?
    /// The column (property) involved, if any.
    public internal(set) var column: String?
    /// The key of the record involved, as `name = value` pairs, if any.
    public internal(set) var key: String?
    /// The offending value, shortened for printing, if any.
    public internal(set) var value: String?
    /// How to fix it, when ModelStore can tell.
    public internal(set) var suggestion: String?
    /// The SQL that was running, if the failure came from SQLite.
    public internal(set) var sql: String?
    /// SQLite's extended result code, if the failure came from SQLite.
    public internal(set) var sqliteCode: Int32?
    /// SQLite's own message, if the failure came from SQLite.
    public internal(set) var sqliteMessage: String?
    /// The error a model's own code threw (`validate()`, a save or delete hook), kept with
    /// its type: `if let error = error.underlying as? AgeError { … }`.
    public internal(set) var underlying: (any Error)?
    /// The server's SQLSTATE (for example PostgreSQL's `"23505"`), if the failure came from a
    /// database server.
    public internal(set) var serverState: String?
    /// Set on the error a call's `Interruption` made, so it is not explained twice.
    var isInterruption = false

    /// Creates an error; ModelStore builds these, tests and wrappers may too.
    public init(
        _ code: Code, _ message: String, model: String? = nil, column: String? = nil,
        key: String? = nil, value: String? = nil, suggestion: String? = nil
    ) {
        self.code = code
        self.message = message
        self.model = model
        self.column = column
        self.key = key
        self.value = value
        self.suggestion = suggestion
    }

    /// SQLite's primary result code (the low byte of `sqliteCode`), if any.
    public var sqlitePrimaryCode: Int32? {
        sqliteCode.map { $0 & 0xFF }
    }

    /// A deadlock or serialization failure that a server resolved by rolling the transaction
    /// back (its driver says so): running the same work again may succeed.
    package internal(set) var isRetryableConflict = false
    /// For a unique violation a server reported, the table and the constraint it named (from
    /// the error's fields, not its words, which follow the server's language).
    package var violatedUniqueConstraint: (table: String, constraint: String)?
}

extension ModelStoreError.Code {
    /// Lets `catch ModelStoreError.Code.notFound { … }` match errors by their code.
    public static func ~= (pattern: Self, error: any Error) -> Bool {
        (error as? ModelStoreError)?.code == pattern
    }
}

extension ModelStoreError {
    /// The error with the model, key and column filled in where it does not name them yet.
    ///
    /// The layer nearest the failure knows the most exact facts (a batch element's key, a
    /// decoded column), so what an error already names is never overwritten: each layer on
    /// the way out adds only what is missing.
    func naming(model: String? = nil, key keyDescription: @autoclosure () -> String? = nil, column: String? = nil) -> ModelStoreError {
        var error = self
        if error.model == nil { error.model = model }
        if error.key == nil { error.key = keyDescription() }
        if error.column == nil { error.column = column }
        return error
    }
}

extension ModelStoreError: CustomStringConvertible, LocalizedError {
    /// The error as one readable paragraph: code, message, then whatever context it carries.
    public var description: String {
        var text = "ModelStoreError.\(code.rawValue): \(message)"
        var context: [String] = []
        if let model { context.append("model: \(model)") }
        if let column { context.append("column: \(column)") }
        if let key { context.append("key: \(key)") }
        if let value { context.append("value: \(value)") }
        if let sqliteCode {
            let name = String(cString: sqlite3_errstr(sqliteCode))
            context.append("SQLite \(sqliteCode) (\(name)): \(sqliteMessage ?? name)")
        }
        if let sql { context.append("SQL: \(sql)") }
        if !context.isEmpty { text += " [" + context.joined(separator: "; ") + "]" }
        if let suggestion { text += " Fix: \(suggestion)" }
        return text
    }

    /// Same as `description`, so Foundation APIs that show `localizedDescription` print it.
    public var errorDescription: String? { description }
}

extension ModelStoreError {
    /// Wraps any error into a `ModelStoreError`, keeping ours as they are.
    static func wrapping(_ error: any Error, model: String? = nil) -> ModelStoreError {
        if let error = error as? ModelStoreError { return error }
        return ModelStoreError(.sqlite, String(describing: error), model: model)
    }

    /// An error from an SQLite result code, with SQLite's message and the SQL.
    /// An error a server's driver reported, with the code it mapped its own error to:
    /// `state` is the server's error code (for example an SQLSTATE), `message` its own words,
    /// and `retryable` says that the server rolled the transaction back to break a deadlock
    /// or a serialization conflict, so running the same work again may succeed.
    package static func backend(
        _ code: Code, _ summary: String, message: String, state: String?, sql: String?, column: String? = nil,
        retryable: Bool = false, model: String? = nil, suggestion: String? = nil
    ) -> ModelStoreError {
        var error = ModelStoreError(code, summary, model: model, column: column, suggestion: suggestion)
        error.serverState = state
        error.sqliteMessage = message
        error.sql = sql
        error.isRetryableConflict = retryable
        if code == .connectionLost { error.suggestion = "Try the call again; the store reconnects." }
        return error
    }

    /// `database`: the connection that met the failure, for what an I/O error was (see
    /// `IOFailure`): its operating-system error number and file.
    static func sqlite(
        resultCode: Int32, message: String?, sql: String?, model: String? = nil, database: OpaquePointer? = nil
    ) -> ModelStoreError {
        let code: Code
        var summary: String
        var suggestion: String?
        switch resultCode & 0xFF {
        case SQLITE_IOERR:
            let failure = IOFailure(resultCode: resultCode, database: database)
            code = failure.code
            summary = failure.message
            suggestion = failure.suggestion
        case SQLITE_BUSY, SQLITE_LOCKED:
            code = .busy
            summary = "The store is locked by another connection or process, and stayed locked longer than the busy timeout."
        case SQLITE_FULL:
            code = .storeFull
            summary = "The store is full: the disk or the database's size limit has no room for this change. Nothing of it was written."
        case SQLITE_CORRUPT:
            code = .corrupt
            summary = "The database file is damaged."
        case SQLITE_NOTADB:
            code = .notADatabase
            summary = "The file is not an SQLite database."
        case SQLITE_CANTOPEN:
            code = .cannotOpen
            summary = "The store's file cannot be opened or created."
        case SQLITE_READONLY, SQLITE_PERM:
            code = .readOnly
            summary = "The store cannot be written: the file or its directory is read-only."
        case SQLITE_INTERRUPT:
            // Only a call's `Interruption` interrupts (its progress handler), and the call
            // explains it: what was stopped, and why.
            code = .cancelled
            summary = "SQLite stopped the statement before it finished (interrupted)."
        case SQLITE_CONSTRAINT:
            code = .constraintViolation
            summary = "A constraint refused the change"
            if let message { summary += ": \(message)." } else { summary += "." }
        default:
            code = .sqlite
            summary = message ?? String(cString: sqlite3_errstr(resultCode))
        }
        if resultCode & 0xFF == SQLITE_ERROR, let message, message.hasPrefix(PredicateFunctions.refusalPrefix) {
            // A translated #Predicate met a record on which Swift's evaluation would trap.
            var error = ModelStoreError(
                .invalidQuery, String(message.dropFirst(PredicateFunctions.refusalPrefix.count)) + " Nothing was changed.", model: model,
                suggestion: "Guard the operation in the predicate (b != 0 ? a / b : 0), or fix the stored values.")
            error.sqliteCode = resultCode
            error.sqliteMessage = message
            error.sql = sql
            return error
        }
        if resultCode & 0xFF == SQLITE_ERROR, message == "malformed JSON" {
            var error = ModelStoreError(.decodingFailed, Self.notJSON(message ?? ""), model: model, suggestion: Self.notJSONSuggestion)
            error.sqliteCode = resultCode
            error.sqliteMessage = message
            error.sql = sql
            return error
        }
        if resultCode & 0xFF == SQLITE_ERROR, let message, let drift = SchemaDrift(message) {
            var error = ModelStoreError(
                .schemaMismatch, drift.explanation, model: model, column: drift.column, suggestion: drift.suggestion)
            error.sqliteCode = resultCode
            error.sqliteMessage = message
            error.sql = sql
            return error
        }
        var error = ModelStoreError(code, summary, model: model, suggestion: suggestion)
        error.sqliteCode = resultCode
        error.sqliteMessage = message
        error.sql = sql
        return error
    }
}

extension ModelStoreError {
    /// What a statement that reached inside a JSON-stored value says when a stored value of
    /// it is not JSON (another program wrote it): the database's words are `detail`.
    package static func notJSON(_ detail: String) -> String {
        "A value stored in a JSON-stored property is not JSON (\(detail)), so a condition or ordering that reaches inside it cannot read it: another program wrote it. Nothing was changed."
    }

    package static let notJSONSuggestion =
        "Find the record with a condition on its other properties and save it again, or correct the stored text."
}

/// A table or column that the store's SQL names and the database no longer has: another
/// program renamed or dropped it while the store was open (the store checks each table when
/// it first uses it). Recognised from SQLite's messages, so every statement gets it.
package struct SchemaDrift {
    package var column: String?
    package var table: String?

    /// A drift a server reported in its own words (its driver knows its messages).
    package init(column: String?, table: String?) {
        self.column = column
        self.table = table
    }

    init?(_ message: String) {
        if let name = Self.suffix(of: message, after: "no such column: ") {
            column = name
        } else if message.hasPrefix("table "), let range = message.range(of: " has no column named ") {
            table = String(message[message.index(message.startIndex, offsetBy: 6)..<range.lowerBound])
            column = String(message[range.upperBound...])
        } else if let name = Self.suffix(of: message, after: "no such table: ") {
            table = name.hasPrefix("main.") ? String(name.dropFirst(5)) : name
        } else {
            return nil
        }
    }

    private static func suffix(of message: String, after prefix: String) -> String? {
        guard message.hasPrefix(prefix) else { return nil }
        let name = String(message.dropFirst(prefix.count))
        // "no such column: t.c" names the column with its table.
        if let dot = name.lastIndex(of: "."), !name.hasPrefix("\"") { return String(name[name.index(after: dot)...]) }
        return name
    }

    package var explanation: String {
        if let column {
            return
                "The stored table\(table.map { " " + $0 } ?? "") has no column \(column), which the model stores a property in: another program renamed or dropped it after the store checked the table. Nothing was read or written."
        }
        return
            "The stored table \(table ?? "") no longer exists: another program dropped or renamed it after the store checked it. Nothing was read or written."
    }

    package var suggestion: String {
        if let column {
            return
                "Rename the column back to \(column) (ALTER TABLE … RENAME COLUMN … TO \(quoted(column))) or restore it from a backup; a store opened afterwards re-checks the table and adds a missing column empty."
        }
        return "Restore the table, or open the store again: a new store creates missing tables on first use."
    }
}
