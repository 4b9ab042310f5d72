import ModelStoreCSQLite
import Foundation

/// A statement of the user's own SQL, prepared, and what SQLite said about it while it did.
struct RawStatement {
    let statement: Statement
    /// Whether the statement leaves the database as it is (`sqlite3_stmt_readonly`).
    let isReadOnly: Bool
    /// Whether it creates, drops or alters something (the store's knowledge of tables is then stale).
    let changesSchema: Bool
    /// Tables the statement reads (views resolved to their tables), for live queries; nil
    /// where the backend does not say (a server: it has no authorizer to ask).
    let tablesRead: [String]?
    /// Tables the statement drops.
    let tablesDropped: [String]
}

/// What the authorizer learns while a raw statement is prepared.
private final class RawStatementInspector {
    var tablesRead: Set<String> = []
    var tablesDropped: [String] = []
    var changesSchema = false
    /// Why a statement was refused, when it was.
    var refusal: RawSQLRefusal?

    func authorize(_ action: Int32, _ first: String?, _ second: String?) -> Int32 {
        switch action {
        case SQLITE_READ:
            if let first, !first.hasPrefix("sqlite_") { tablesRead.insert(first) }
        case SQLITE_TRANSACTION, SQLITE_SAVEPOINT:
            refusal = RawSQLGuard.transactionControl
            return SQLITE_DENY
        case SQLITE_ATTACH, SQLITE_DETACH:
            refusal = RawSQLGuard.attach
            return SQLITE_DENY
        case SQLITE_PRAGMA:
            // The name as written, unquoted; its schema prefix (any) does not matter: these
            // settings are the connection's.
            if let first, let refused = RawSQLGuard.pragma(first, value: second) {
                refusal = refused
                return SQLITE_DENY
            }
        case SQLITE_DROP_TABLE, SQLITE_DROP_TEMP_TABLE:
            changesSchema = true
            if let first { tablesDropped.append(first) }
        case SQLITE_CREATE_INDEX, SQLITE_CREATE_TABLE, SQLITE_CREATE_TEMP_INDEX, SQLITE_CREATE_TEMP_TABLE,
            SQLITE_CREATE_TEMP_TRIGGER, SQLITE_CREATE_TEMP_VIEW, SQLITE_CREATE_TRIGGER, SQLITE_CREATE_VIEW,
            SQLITE_DROP_INDEX, SQLITE_DROP_TEMP_INDEX, SQLITE_DROP_TEMP_TRIGGER, SQLITE_DROP_TEMP_VIEW,
            SQLITE_DROP_TRIGGER, SQLITE_DROP_VIEW, SQLITE_ALTER_TABLE, SQLITE_CREATE_VTABLE, SQLITE_DROP_VTABLE:
            changesSchema = true
        default:
            break
        }
        return SQLITE_OK
    }
}

extension Connection {
    /// Prepares each statement of the user's `sql` in turn and hands it to `body`; the next
    /// is prepared only after `body` ran the previous one (it may use what that one made).
    ///
    /// While a statement is prepared, SQLite's authorizer refuses what would break the
    /// store's own work on the connection — transaction control, attaching databases,
    /// pragmas the store relies on — and notes what the statement reads and changes.
    /// `single`: more than one statement is refused (values bind to one statement only).
    func forEachRawStatement(in sql: String, single: Bool, _ body: (RawStatement) throws -> Void) throws {
        if remote != nil { return try forEachServerStatement(in: sql, single: single, body) }
        let inspector = RawStatementInspector()
        try sql.withCString { start in
            var rest: UnsafePointer<CChar>? = start
            var count = 0
            while let current = rest, current.pointee != 0 {
                inspector.tablesRead = []
                inspector.tablesDropped = []
                inspector.changesSchema = false
                inspector.refusal = nil
                var handle: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                sqlite3_set_authorizer(
                    self.handle,
                    { context, action, first, second, _, _ in
                        guard let context else { return SQLITE_OK }
                        let inspector = Unmanaged<RawStatementInspector>.fromOpaque(context).takeUnretainedValue()
                        return inspector.authorize(action, first.map { String(cString: $0) }, second.map { String(cString: $0) })
                    }, Unmanaged.passUnretained(inspector).toOpaque())
                let rc = sqlite3_prepare_v3(self.handle, current, -1, 0, &handle, &tail)
                sqlite3_set_authorizer(self.handle, nil, nil)
                guard rc == SQLITE_OK else {
                    throw Self.rawFailure(
                        resultCode: sqlite3_extended_errcode(self.handle), message: String(cString: sqlite3_errmsg(self.handle)),
                        refusal: inspector.refusal, sql: sql, database: self.handle)
                }
                rest = tail
                guard let handle else { continue }
                let text = String(cString: sqlite3_sql(handle))
                if let refusal = RawSQLGuard.statement(text) {
                    sqlite3_finalize(handle)
                    var error = ModelStoreError(.invalidQuery, refusal.message, suggestion: refusal.suggestion)
                    error.sql = sql
                    throw error
                }
                count += 1
                if single, count > 1 {
                    sqlite3_finalize(handle)
                    throw ModelStoreError(
                        .invalidQuery,
                        "The SQL holds more than one statement; this call runs one (its values bind to one statement).",
                        value: sql, suggestion: "Run each statement in its own call, inside store.transaction { } to group them.")
                }
                let statement = Statement(handle: handle, sql: text)
                try body(
                    RawStatement(
                        statement: statement, isReadOnly: sqlite3_stmt_readonly(handle) != 0, changesSchema: inspector.changesSchema,
                        tablesRead: inspector.tablesRead.sorted(), tablesDropped: inspector.tablesDropped))
            }
        }
    }

    /// `forEachRawStatement` on a server, which has no authorizer: each statement is judged
    /// by its first word — transaction control refused, DDL noted as changing the schema,
    /// only queries taken as reads.
    private func forEachServerStatement(in sql: String, single: Bool, _ body: (RawStatement) throws -> Void) throws {
        let statements = dialect.split(sql)
        if single, statements.count > 1 {
            throw ModelStoreError(
                .invalidQuery, "The SQL holds more than one statement; this call runs one (its values bind to one statement).",
                value: sql, suggestion: "Run each statement in its own call, inside store.transaction { } to group them.")
        }
        for text in statements {
            let words = text.split(whereSeparator: { $0.isWhitespace || $0 == "(" }).prefix(5).map { $0.uppercased() }
            let first = words.first ?? ""
            let refusal =
                ["BEGIN", "START", "COMMIT", "END", "ROLLBACK", "ABORT", "SAVEPOINT", "RELEASE", "PREPARE"].contains(first)
                ? RawSQLGuard.transactionControl : RawSQLGuard.statement(text)
            if let refusal {
                var error = ModelStoreError(.invalidQuery, refusal.message, value: text, suggestion: refusal.suggestion)
                error.sql = text
                throw error
            }
            let changesSchema = ["CREATE", "ALTER", "DROP", "TRUNCATE", "COMMENT", "GRANT", "REVOKE"].contains(first)
            var dropped: [String] = []
            if first == "DROP", words.count > 2, words[1] == "TABLE" {
                let name = words.count > 4 && words[2] == "IF" ? words[4] : words[2]
                dropped.append(name.trimmingCharacters(in: CharacterSet(charactersIn: "\";")))
            }
            let isReadOnly = ["SELECT", "VALUES", "SHOW", "EXPLAIN", "TABLE"].contains(first)
            let statement = try makeStatement(text)
            do {
                try body(
                    RawStatement(
                        statement: statement, isReadOnly: isReadOnly, changesSchema: changesSchema, tablesRead: nil, tablesDropped: dropped)
                )
            } catch let error as ModelStoreError where error.sql != nil && error.sql == statement.remote?.serverSQL {
                throw Self.rawServerFailure(error, sql: text)
            }
        }
    }

    /// The server's refusal of the user's own statement as SQLite's is: SQL the server cannot
    /// run — a syntax error, a table, column, function or type it does not know (SQLSTATE class
    /// 42), a value of the wrong form (22P02) — is the caller's `.invalidQuery` naming the SQL,
    /// not a sign that a model's table changed behind the store's back.
    private static func rawServerFailure(_ error: ModelStoreError, sql: String) -> ModelStoreError {
        guard let state = error.serverState, state.hasPrefix("42") && state != "42501" || state == "22P02" else { return error }
        var failure = error
        failure.code = .invalidQuery
        failure.message = "The SQL cannot run: \(error.sqliteMessage ?? error.message)."
        failure.suggestion = "Check the statement's syntax and the names it uses."
        failure.sql = sql
        return failure
    }

    /// A raw statement SQLite would not prepare: the user's SQL is at fault (`.invalidQuery`,
    /// naming it), unless the failure is about the store (busy, corrupt, …).
    static func rawFailure(
        resultCode: Int32, message: String, refusal: RawSQLRefusal?, sql: String, database: OpaquePointer? = nil
    ) -> ModelStoreError {
        switch resultCode & 0xFF {
        case SQLITE_ERROR, SQLITE_AUTH, SQLITE_RANGE, SQLITE_MISUSE, SQLITE_TOOBIG:
            var error = ModelStoreError(
                .invalidQuery, refusal?.message ?? "The SQL cannot run: \(message).",
                suggestion: refusal?.suggestion ?? "Check the statement's syntax and the names it uses.")
            error.sql = sql
            error.sqliteCode = resultCode
            error.sqliteMessage = message
            return error
        default:
            return .sqlite(resultCode: resultCode, message: message, sql: sql, database: database)
        }
    }
}
