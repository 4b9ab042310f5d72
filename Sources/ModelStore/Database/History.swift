import Foundation

/// Where a consumer of a store's history stands: every change before it has been read, none
/// after it. Save it beside what the consumer made of the changes (in the same transaction,
/// when that is a ModelStore too) and read on from it after a restart, on any machine.
///
/// ```swift
/// var token = try savedToken ?? store.historyToken()
/// let page = try store.history(since: token)
/// for change in page.changes { apply(change) }
/// token = page.token
/// ```
///
/// A token is `Codable`; its contents are the store's own and may change between versions.
public struct HistoryToken: Codable, Sendable, Hashable {
    /// The identity of the log it belongs to ("" before any log existed: the beginning).
    package var log: String
    /// The largest position read.
    package var position: Int64
    /// Where positions are not commit order (a server): the snapshot of the transactions
    /// read (every change it sees is read); nil at the beginning, and on SQLite.
    package var snapshot: String?
    /// A batch read partway, where a limit cut it: its snapshot, and the last position read.
    package var pendingSnapshot: String?
    package var pendingPosition: Int64?

    /// The beginning of the history: reading from it answers every change the log holds
    /// (refused, like any token, once changes after it were purged).
    public static let beginning = HistoryToken(log: "", position: 0, snapshot: nil)

    package init(log: String, position: Int64, snapshot: String?, pendingSnapshot: String? = nil, pendingPosition: Int64? = nil) {
        self.log = log
        self.position = position
        self.snapshot = snapshot
        self.pendingSnapshot = pendingSnapshot
        self.pendingPosition = pendingPosition
    }
}

/// One recorded change of a history-keeping model's table (`StoredModel.keepsHistory`).
public struct HistoryChange: Sendable, Hashable {
    /// What happened to the record.
    public enum Operation: Sendable, Hashable {
        /// The record was inserted (an update that changed its key: the new key's insert).
        case insert
        /// The record was changed.
        case update
        /// The record was deleted (an update that changed its key: the old key's delete).
        case delete
        /// Rows of the table changed, which ones the database did not tell (PostgreSQL's
        /// `TRUNCATE`, or a key column renamed behind the store's back): read the table again.
        case unknownRows
    }

    /// The table, as the database named it when the change was made.
    public let table: String
    /// What happened.
    public let operation: Operation
    /// The record's key, in the model's `primaryKey` order; empty for `.unknownRows`.
    public let key: [SQLValue]

    /// The key of a model with a single-property key, converted.
    ///
    /// ```swift
    /// let id = try change.key(as: Int64.self)
    /// ```
    /// - Throws: `ModelStoreError` `.decodingFailed` when the key is not one `Key`.
    public func key<Key: SQLValueConvertible>(as type: Key.Type) throws -> Key {
        guard key.count == 1 else {
            throw ModelStoreError(
                .decodingFailed,
                "The change of \(table) has a key of \(key.count) values, not one \(Key.self).",
                value: key.map(\.description).joined(separator: ", "),
                suggestion: "Read change.key, one value per primary-key property.")
        }
        return try Key(sqlValue: key[0])
    }
}

/// Changes read from the history, and where the reader stands after them.
public struct HistoryPage: Sendable {
    /// The changes, in commit order (on PostgreSQL, a page's changes in the order they were
    /// written; a transaction that commits after the page was read comes in a later page).
    public let changes: [HistoryChange]
    /// Where to read on from: after every change in `changes`.
    public let token: HistoryToken
    /// True when the page holds every change committed when it was read; false when the
    /// limit cut it (read again at once for the rest).
    public let isComplete: Bool
}

/// The token rules of the durable history, on any backend's `HistorySQL`.
enum History {
    static func logExists(on connection: Connection) throws -> Bool {
        try connection.scalar(connection.dialect.tableExistsSQL, [.text(HistoryNames.horizon)]) != nil
    }

    static func token(on connection: Connection) throws -> HistoryToken {
        try connection.inReadTransaction { try currentToken(on: connection) }
    }

    private static func currentToken(on connection: Connection) throws -> HistoryToken {
        guard try logExists(on: connection) else { return .beginning }
        let statement = try connection.makeStatement(connection.dialect.history.now)
        var token = HistoryToken.beginning
        try statement.forEachRow {
            token = HistoryToken(
                log: statement.string(at: 0), position: statement.int64(at: 2),
                snapshot: statement.isNull(at: 1) ? nil : statement.string(at: 1))
        }
        return token
    }

    static func page(since token: HistoryToken, limit: Int, on connection: Connection) throws -> HistoryPage {
        guard limit >= 1 else {
            throw ModelStoreError(
                .invalidQuery, "history(since:limit:) was given a limit of \(limit); a page holds at least one change.",
                value: String(limit))
        }
        // One snapshot for the check and the read: a purge committed between them would
        // otherwise leave a hole the check did not see.
        return try connection.inReadTransaction { try readPage(since: token, limit: limit, on: connection) }
    }

    private static func readPage(since token: HistoryToken, limit: Int, on connection: Connection) throws -> HistoryPage {
        guard try logExists(on: connection) else { return HistoryPage(changes: [], token: token, isComplete: true) }
        let history = connection.dialect.history
        let snapshot: SQLValue = token.snapshot.map { .text($0) } ?? .null
        let whole = try connection.makeStatement(history.tokenWhole)
        var log = ""
        var isWhole = false
        var isBehind = false
        try whole.forEachRow([snapshot, .integer(token.position)]) {
            log = whole.string(at: 0)
            isWhole = whole.int64(at: 1) == 1
            isBehind = whole.int64(at: 2) == 1
        }
        guard token.log.isEmpty || token.log == log else {
            throw ModelStoreError(
                .historyPurged,
                "The history token is not of this store's history (its log \(token.log), the store's \(log)): another store's token, or a log made again since.",
                value: token.log,
                suggestion: "Read what the consumer keeps again from the records, then go on from store.historyToken().")
        }
        guard isBehind else {
            throw ModelStoreError(
                .historyPurged,
                "The history token (position \(token.position)) is ahead of this store's history: a token read from the data before it was replaced by a copy or a backup restored since. Reading on from it would skip the changes made since the copy.",
                value: String(token.position),
                suggestion: "Read what the consumer keeps again from the records, then go on from store.historyToken().")
        }
        guard isWhole else {
            throw ModelStoreError(
                .historyPurged,
                "Changes after the history token (position \(token.position)) were purged; reading on from it would miss them.",
                value: String(token.position),
                suggestion: "Read what the consumer keeps again from the records, then go on from store.historyToken().")
        }
        let read = try connection.makeStatement(history.read)
        var changes: [HistoryChange] = []
        var readAt: String?
        var last: Int64?
        let values: [SQLValue] = [
            snapshot, .integer(token.position), token.pendingSnapshot.map { .text($0) } ?? .null,
            token.pendingPosition.map { .integer($0) } ?? .null, .integer(Int64(limit)),
        ]
        var rows: [(table: String, operation: Int64, key: String)] = []
        try read.forEachRow(values) {
            readAt = read.isNull(at: 0) ? nil : read.string(at: 0)
            guard !read.isNull(at: 1) else { return }
            last = read.int64(at: 1)
            rows.append((read.string(at: 2), read.int64(at: 3), read.string(at: 4)))
        }
        for row in rows { changes.append(change(row.table, row.operation, row.key, keyValue: history.keyValue)) }
        var next = token
        next.log = log
        let isComplete = changes.count < limit
        if let pending = token.pendingSnapshot {
            // Finishing a batch a limit cut: once it is all read, its snapshot is the token's,
            // and the rest of the page is what committed since.
            if isComplete {
                next = HistoryToken(
                    log: log, position: max(token.position, token.pendingPosition ?? 0, last ?? 0), snapshot: pending)
                let more = try readPage(since: next, limit: limit - changes.count, on: connection)
                return HistoryPage(changes: changes + more.changes, token: more.token, isComplete: more.isComplete)
            } else {
                next.pendingPosition = last
            }
        } else if readAt == nil {
            // Positions are commit order: the last one read is the token.
            next.position = max(token.position, last ?? 0)
        } else if isComplete {
            next = HistoryToken(log: log, position: max(token.position, last ?? 0), snapshot: readAt)
        } else {
            next.pendingSnapshot = readAt
            next.pendingPosition = last
        }
        return HistoryPage(changes: changes, token: next, isComplete: isComplete)
    }

    static func checkAge(_ age: TimeInterval) throws {
        guard age.isFinite, age >= 0 else {
            throw ModelStoreError(
                .invalidQuery, "purgeHistory(olderThan:) was given an age of \(age) seconds; it takes a finite age of 0 or more.",
                value: String(age))
        }
    }

    static func purge(olderThan age: TimeInterval, on connection: Connection) throws -> Int {
        guard try logExists(on: connection) else { return 0 }
        let cutoff = SQLValue.real(Date().timeIntervalSince1970 - age)
        var removed = 0
        let statements = connection.dialect.history.purge
        for sql in statements {
            let statement = try connection.makeStatement(sql)
            try statement.forEachRow(statement.parameterCount > 0 ? [cutoff] : []) { removed += Int(statement.int64(at: 0)) }
        }
        return removed
    }

    private static func change(_ table: String, _ operation: Int64, _ key: String, keyValue: (String?, String) -> SQLValue)
        -> HistoryChange
    {
        let kind: HistoryChange.Operation
        switch operation {
        case 1: kind = .insert
        case 2: kind = .update
        case 3: kind = .delete
        default: return HistoryChange(table: table, operation: .unknownRows, key: [])
        }
        // Each value is recorded as its type's name, a colon and its text.
        let values = (JSONTextArray.strings(key) ?? []).map { recorded -> SQLValue in
            guard let recorded, let colon = recorded.firstIndex(of: ":") else { return .null }
            return keyValue(String(recorded[recorded.index(after: colon)...]), String(recorded[..<colon]))
        }
        return HistoryChange(table: table, operation: kind, key: values)
    }
}
