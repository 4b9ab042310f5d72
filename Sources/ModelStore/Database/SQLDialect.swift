import Foundation

/// What differs between the SQL of the backends ModelStore runs on: the one place the engine
/// asks, so its statements are written once. The core declares it and implements it for
/// SQLite (`SQLiteDialect`); a driver product implements it for its server (ModelStorePostgres:
/// `PostgresDialect`), so nothing in the core names another backend.
///
/// The engine writes SQL with SQLite's placeholders (`?`, `?NNN`); a backend that numbers
/// them otherwise renumbers them when it prepares a statement (`SQLDialect.finish`).
/// Everything else that differs — identity tests, collations, column types, upsert details,
/// schema inspection, limits — the engine takes from here, and what a backend can do at all
/// from its `capabilities`. Statements are cached per connection once written, so none of
/// this is on a hot path.
package protocol SQLDialect: Sendable {
    /// The backend's name, for messages ("SQLite", "PostgreSQL").
    var name: String { get }
    /// What the backend can do, each a question the engine asks where backends differ.
    var capabilities: BackendCapabilities { get }
    /// The most parameters one statement may take.
    var maximumParameters: Int { get }
    /// Whether one INSERT may carry several `ON CONFLICT` clauses (one per unique index).
    var supportsMultipleUpsertClauses: Bool { get }
    /// `a IS b`: true when both are NULL or both are equal.
    func identical(_ left: String, _ right: String) -> String
    /// `a IS NOT b`: the negation of `identical`.
    func distinct(_ left: String, _ right: String) -> String
    /// The schema of a connection's temporary tables (`temp`, `pg_temp`).
    var temporarySchema: String { get }
    /// ` COLLATE BINARY` where the backend needs it to compare bytes, or "".
    var binaryCollation: String { get }
    /// The declared SQL type of a column SQLite declares as `sqliteType` (`INTEGER`, `REAL`,
    /// `TEXT`, `BLOB` or none); `isDecimal` for the text of a `Decimal`.
    func columnType(_ sqliteType: String, isDecimal: Bool) -> String
    /// The declared type of an integer key the database assigns (`var id: Int64?`).
    func assignedKeyColumnType() -> String?
    /// Appended to an INSERT (after any `RETURNING` list of its own, or as one) so the
    /// driver learns whether the row was inserted rather than updated, and its key.
    func insertedMarker(returning alreadyReturning: Bool, key: String?) -> String
    /// A query of one row per column of `table`: name, declared type, primary-key position
    /// (0 when not in the key), and 1 when the column has a DEFAULT (else 0). Takes the
    /// table's unquoted name as its one parameter.
    var tableColumnsSQL: String { get }
    /// A query returning a row when a table named by its one parameter exists.
    var tableExistsSQL: String { get }
    /// A query returning a row when an index named by its one parameter exists.
    var indexExistsSQL: String { get }
    /// Whether `CREATE INDEX IF NOT EXISTS` takes a lock that waits for open write
    /// transactions on the table even when the index exists (PostgreSQL's SHARE lock), so
    /// the engine asks `indexExistsSQL` first.
    var createIndexLocksTable: Bool { get }
    /// `sql` as the backend runs it (placeholders renumbered), and its parameter count.
    func finish(_ sql: String) -> (sql: String, parameterCount: Int)
    /// What begins a write transaction whose every statement writes given values and reads
    /// nothing it then decides on (`WriteIsolation.upserts`). SQLite has one writer at a
    /// time, so it is `BEGIN IMMEDIATE` as for any write.
    var beginUpsertsSQL: String { get }
    /// The statements of a script, each without its `;`.
    func split(_ sql: String) -> [String]
    /// Whether the database keeps a write-ahead log the store folds into its file on request
    /// (`store.checkpoint(_:)`); a server checkpoints its own files.
    var hasCheckpoints: Bool { get }
    /// Whether `VACUUM INTO` writes a compacted copy of the whole database to a new file
    /// (`store.vacuum(into:)`); a server's data is not one file.
    var canVacuumIntoFile: Bool { get }
    /// A query of the tables `vacuum()` names, each as a quoted, qualified name, when `VACUUM`
    /// alone would reach beyond the store (a server's database holds other schemas' tables);
    /// nil when `VACUUM` alone compacts exactly the store (SQLite: its file).
    var vacuumTablesSQL: String? { get }
    /// The statement that bounds how long each later statement on the connection may run
    /// (`milliseconds`), or lifts that bound (nil), when the database enforces it itself;
    /// nil when the store's own progress handler does (SQLite: see `Connection.running`).
    func statementTimeout(milliseconds: Int?) -> String?
    /// The longest name the backend keeps, in bytes (a longer one it would cut silently), or
    /// nil when names are unlimited.
    var maximumNameLength: Int? { get }
    /// The SQLite type whose affinity matches a column the backend declares as `declaredType`
    /// (what `tableColumnsSQL` answers), for the check that a stored column keeps what a
    /// property stores.
    func affinity(ofDeclaredType declaredType: String) -> String
    /// A statement taking one text parameter that holds a lock until the transaction ends, so
    /// stores in other processes preparing the same table wait for each other; nil when the
    /// backend's own write lock already serializes them.
    var tablePreparationLockSQL: String? { get }
    /// A query returning a row when the foreign-key constraint named by its one parameter
    /// exists, for backends that add constraints after their tables (see capabilities).
    var constraintExistsSQL: String? { get }
    /// Queries returning the stored name of a table, or an index, named by their one parameter
    /// ignoring case (one row, or none when there is no such table or index).
    func existsIgnoringCaseSQL(index: Bool) -> String
    /// A query of the names of the schema's tables (ModelStore's own among them), one a row.
    var tableNamesSQL: String { get }
    /// A query of the names of the schema's tables and indexes, one a row.
    var schemaObjectNamesSQL: String { get }
    /// Statements that take and release a lock the connection holds across transactions, so
    /// stores on one database running migration steps at once take turns. `take` never
    /// waits: it takes the key as its one parameter (NULL the first time, for the key of the
    /// store's schema) and answers the key when it got the lock (no row when not); `held`
    /// answers a row when the connection holds the lock of the key given; `release` takes
    /// the key. The key is made once: a step may change what it was made from. nil where
    /// each step's write transaction already makes them take turns (SQLite's lock on its
    /// file).
    var migrationLockSQL: (take: String, held: String, release: String)? { get }
    /// The catalog queries a table rebuild reads where the backend's catalog is not SQLite's;
    /// nil where the rebuild reads SQLite's own (`sqliteCatalog`).
    var rebuildCatalog: RebuildCatalog? { get }
    /// A statement that moves the key sequence of `table`'s assigned integer key past every
    /// stored key (records saved with keys of their own do not move it); nil when the
    /// database takes the largest key plus one by itself (SQLite's rowid).
    func advanceKeySequenceSQL(table quotedTable: String, key quotedKey: String) -> String?
    /// Whether `constraint`, named by a unique violation in `table` (unquoted), is the name
    /// the database gives that table's primary key; false where keys cannot clash this way.
    func isPrimaryKeyConstraint(_ constraint: String, of table: String) -> Bool
    /// The parameter carrying `values` (integers or texts) for `column = ANY(?)`, when the
    /// backend takes an array as one parameter; nil when it does not (SQLite: `json_each`).
    func arrayParameter(_ values: [SQLValue]) -> SQLValue?
    /// `function(column)` as the backend must spell it to answer as SQLite does (an integer
    /// sum, a Double average), or nil when the plain call does.
    func aggregate(_ function: String, of column: String, integerColumn: Bool) -> String?
    /// The statements that let a reader create its private temporary tables, and those that
    /// make it read-only again; nil when a reader's connection may always write its own.
    var temporaryWritesOnReader: (allow: String, forbid: String)? { get }
    /// The statements that read `query` (already finished, with its parameters) through a
    /// cursor named `name`, `rows` at a time, inside a transaction, and close it: so a stream
    /// holds a bounded number of a server's rows, not its whole result. nil where a statement
    /// is stepped row by row anyway (SQLite).
    func cursorStatements(name: String, query: String, rows: Int) -> (declare: String, fetch: String, close: String)?
    /// What follows an ORDER BY term (after any `DESC`) so that NULL sorts as SQLite sorts it:
    /// before every value ascending, after every value descending. "" where that is the
    /// backend's own rule.
    func nullsOrder(descending: Bool) -> String
    /// The collation a comparison or ordering of a column of `declaredType` (what
    /// `columnType` declared) names so that text compares by its bytes, as SQLite's BINARY
    /// and Swift's `<` on `String` scalars do; "" where the column already does.
    func byteOrderCollation(forDeclaredType declaredType: String) -> String
    /// How the backend keeps and reads the durable history (see `HistorySQL`).
    var history: HistorySQL { get }
    /// How conditions and orderings reach inside JSON-stored values (see `JSONPathSQL`),
    /// where `capabilities.conditionsInsideJSON`.
    var json: any JSONPathSQL { get }
    /// How a translated `#Predicate` spells truth values, checked arithmetic, refusals and
    /// text compared by characters (see `PredicateSQL`), where `capabilities.translatesPredicates`.
    var predicates: any PredicateSQL { get }
    /// How the backend keeps a model's full-text index and searches it (see `FullTextSQL`).
    var fullText: any FullTextSQL { get }
}

/// The queries with which a migration step's `rebuild` and `transform` read a table they
/// replace (and `dropColumn` the constraints on a column), on a backend whose catalog is not
/// SQLite's. Each takes the table's name (as stored, in the store's schema) as its first
/// parameter.
package struct RebuildCatalog: Sendable {
    /// One row per column, in order: name, declared type, 1 when NOT NULL (else 0), and the
    /// DEFAULT expression (or NULL).
    package var columns: String
    /// One row per part of the table a rebuild from a model could lose, as (kind, name,
    /// detail): `constraint` (CHECK, UNIQUE, EXCLUDE), `foreignKey`, `trigger`, `view`, and the
    /// columns that are `identity`, `generated`, or draw their DEFAULT from a `sequence`.
    package var parts: String
    /// One row per index not behind a constraint: name, the statement that makes it, and its
    /// columns joined by commas ('' for an expression).
    package var indexes: String
    /// One row per foreign key of another table that refers to this one: the referring
    /// table (as SQL names it), the constraint's name, its definition.
    package var references: String
    /// One row per constraint that holds the column named by the second parameter (of the
    /// table named by the first): its name and definition. For a column a step drops in
    /// place, where the backend would drop such constraints silently along with it (SQLite
    /// refuses instead).
    package var columnConstraints: String
    /// One row per statement that gives the new table what the old one had beyond its
    /// columns (privileges, comments, its owner), in the order to run them: the statement,
    /// with `%s` where the table's quoted name goes, and the column it is about ('' for the
    /// table). Made again only for columns the new table keeps.
    package var carried: String
    /// For an assigned key: a query of the last value its sequence gave (table and key
    /// column as parameters; NULL when none), and a statement that moves the new table's
    /// sequence up to a value given as the third parameter, so no key is given twice.
    package var keySequence: (lastValue: String, raise: String)

    package init(
        columns: String, parts: String, indexes: String, references: String, carried: String,
        keySequence: (lastValue: String, raise: String), columnConstraints: String
    ) {
        self.columns = columns
        self.parts = parts
        self.indexes = indexes
        self.references = references
        self.carried = carried
        self.keySequence = keySequence
        self.columnConstraints = columnConstraints
    }
}

/// What a backend can do, each answered once by its dialect: the engine asks these where the
/// backends differ, and never which backend it runs on. A third backend (a MySQL or libSQL
/// driver) answers them for itself; see docs/ARCHITECTURE.md.
package struct BackendCapabilities: Sendable {
    /// The schema is read through SQLite's catalog (`PRAGMA table_info`, `sqlite_master`,
    /// `PRAGMA schema_version`), which also tells collations, STRICT tables and join-table
    /// shapes; otherwise through `SQLDialect.tableColumnsSQL` alone, and tables are checked
    /// again only when a statement met one changed behind the store's back.
    package var sqliteCatalog: Bool
    /// Committed changes are recorded by triggers calling into the store, so live queries and
    /// change streams work (`observe`, `changes`).
    package var observesChanges: Bool
    /// Foundation `#Predicate`s translate to this backend's functions.
    package var translatesPredicates: Bool
    /// Conditions and orderings reach inside JSON-stored values (`SQLDialect.json`).
    package var conditionsInsideJSON: Bool
    /// A column may declare one of SQLite's collations (`NOCASE`, `RTRIM`).
    package var columnCollations: Bool
    /// Declared former names of tables and columns are renamed in place.
    package var renames: Bool
    /// Text may hold NUL characters; where it may not, a value with one is refused before
    /// anything is written.
    package var textHoldsNUL: Bool
    /// Every row has a `rowid` that selects it (a page of a query is selected by rowid).
    package var rowids: Bool
    /// A `Decimal` is stored as text and needs the store's collation to order as a number
    /// (otherwise the column is an exact numeric type of the database's own).
    package var decimalsAsText: Bool
    /// A failed statement aborts its whole transaction, so a read inside a block runs in a
    /// savepoint of its own (SQLite undoes only the statement).
    package var failedStatementAbortsTransaction: Bool
    /// A foreign key is checked against its table when declared, so link constraints and join
    /// tables are added once the related tables exist, and columns are added without them.
    package var foreignKeysAfterTables: Bool
    /// `CREATE TABLE … AS SELECT …` takes parameters.
    package var createTableAsTakesParameters: Bool
    /// Writers in several connections take row locks as they go, so a batch writes its rows in
    /// key order (two batches then never wait on each other in a cycle).
    package var rowLocksInKeyOrder: Bool
    /// `GLOB` matches case-sensitively, and `LIKE` folds ASCII letters; otherwise text is
    /// matched with `strpos`, `starts_with` and `LIKE … ESCAPE ''` on ASCII-lowered text.
    package var globAndLike: Bool
    /// Every column declares a type (SQLite may leave one untyped, taking any value).
    package var typesEveryColumn: Bool
    /// In `ON CONFLICT … DO UPDATE … WHERE`, a bare column name is ambiguous between the
    /// stored and the proposed row, so the stored row's columns are qualified by the table.
    package var qualifiedUpsertColumns: Bool
    /// `a != ?` also matches a stored NULL when spelled `IS DISTINCT FROM` (the spelling this
    /// backend's `!=` needs to answer as SQLite's does for the store's conditions).
    package var notEqualAsDistinct: Bool
    /// With `SELECT DISTINCT`, `ORDER BY` may name only expressions of the select list, so a
    /// collated ordering selects the collated expression.
    package var distinctOrdersBySelectedExpressions: Bool

    /// What SQLite does: everything above.
    package static let sqlite = BackendCapabilities(
        sqliteCatalog: true, observesChanges: true, translatesPredicates: true, conditionsInsideJSON: true,
        columnCollations: true, renames: true, textHoldsNUL: true, rowids: true,
        decimalsAsText: true, failedStatementAbortsTransaction: false, foreignKeysAfterTables: false,
        createTableAsTakesParameters: true, rowLocksInKeyOrder: false, globAndLike: true, typesEveryColumn: false,
        qualifiedUpsertColumns: false, notEqualAsDistinct: false, distinctOrdersBySelectedExpressions: false)

    package init(
        sqliteCatalog: Bool, observesChanges: Bool, translatesPredicates: Bool, conditionsInsideJSON: Bool,
        columnCollations: Bool, renames: Bool, textHoldsNUL: Bool, rowids: Bool,
        decimalsAsText: Bool, failedStatementAbortsTransaction: Bool, foreignKeysAfterTables: Bool,
        createTableAsTakesParameters: Bool, rowLocksInKeyOrder: Bool, globAndLike: Bool, typesEveryColumn: Bool,
        qualifiedUpsertColumns: Bool, notEqualAsDistinct: Bool, distinctOrdersBySelectedExpressions: Bool
    ) {
        self.sqliteCatalog = sqliteCatalog
        self.observesChanges = observesChanges
        self.translatesPredicates = translatesPredicates
        self.conditionsInsideJSON = conditionsInsideJSON
        self.columnCollations = columnCollations
        self.renames = renames
        self.textHoldsNUL = textHoldsNUL
        self.rowids = rowids
        self.decimalsAsText = decimalsAsText
        self.failedStatementAbortsTransaction = failedStatementAbortsTransaction
        self.foreignKeysAfterTables = foreignKeysAfterTables
        self.createTableAsTakesParameters = createTableAsTakesParameters
        self.rowLocksInKeyOrder = rowLocksInKeyOrder
        self.globAndLike = globAndLike
        self.typesEveryColumn = typesEveryColumn
        self.qualifiedUpsertColumns = qualifiedUpsertColumns
        self.notEqualAsDistinct = notEqualAsDistinct
        self.distinctOrdersBySelectedExpressions = distinctOrdersBySelectedExpressions
    }
}

extension SQLDialect {
    /// The SQL of `value` as a string literal.
    package func literal(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
    }
}

/// SQLite's SQL: what the engine writes natively.
struct SQLiteDialect: SQLDialect {
    var name: String { "SQLite" }
    var capabilities: BackendCapabilities { .sqlite }
    var maximumParameters: Int { 32_766 }
    var supportsMultipleUpsertClauses: Bool { Connection.supportsMultipleUpsertClauses }
    func identical(_ left: String, _ right: String) -> String { "\(left) IS \(right)" }
    func distinct(_ left: String, _ right: String) -> String { "\(left) IS NOT \(right)" }
    var binaryCollation: String { " COLLATE BINARY" }
    var temporarySchema: String { "temp" }
    func columnType(_ sqliteType: String, isDecimal: Bool) -> String { sqliteType }
    func assignedKeyColumnType() -> String? { nil }
    func insertedMarker(returning alreadyReturning: Bool, key: String?) -> String { "" }
    var tableColumnsSQL: String { "SELECT name, type, pk, dflt_value IS NOT NULL FROM pragma_table_info(?)" }
    var tableExistsSQL: String { "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?" }
    var indexExistsSQL: String { "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?" }
    var createIndexLocksTable: Bool { false }
    func finish(_ sql: String) -> (sql: String, parameterCount: Int) { (sql, 0) }
    var beginUpsertsSQL: String { "BEGIN IMMEDIATE" }
    func split(_ sql: String) -> [String] { [sql] }
    var hasCheckpoints: Bool { true }
    var canVacuumIntoFile: Bool { true }
    var vacuumTablesSQL: String? { nil }
    func statementTimeout(milliseconds: Int?) -> String? { nil }
    var maximumNameLength: Int? { nil }
    func affinity(ofDeclaredType declaredType: String) -> String { declaredType }
    var tablePreparationLockSQL: String? { nil }
    var constraintExistsSQL: String? { nil }
    func existsIgnoringCaseSQL(index: Bool) -> String {
        "SELECT name FROM main.sqlite_master WHERE type = '\(index ? "index" : "table")' AND name = ? COLLATE NOCASE"
    }
    var tableNamesSQL: String { "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT GLOB 'sqlite_*'" }
    var schemaObjectNamesSQL: String { "SELECT name FROM main.sqlite_master" }
    var migrationLockSQL: (take: String, held: String, release: String)? { nil }
    var rebuildCatalog: RebuildCatalog? { nil }
    func advanceKeySequenceSQL(table quotedTable: String, key quotedKey: String) -> String? { nil }
    func isPrimaryKeyConstraint(_ constraint: String, of table: String) -> Bool { false }
    func arrayParameter(_ values: [SQLValue]) -> SQLValue? { nil }
    func aggregate(_ function: String, of column: String, integerColumn: Bool) -> String? { nil }
    var temporaryWritesOnReader: (allow: String, forbid: String)? { ("PRAGMA query_only = 0", "PRAGMA query_only = 1") }
    func cursorStatements(name: String, query: String, rows: Int) -> (declare: String, fetch: String, close: String)? { nil }
    func nullsOrder(descending: Bool) -> String { "" }
    func byteOrderCollation(forDeclaredType declaredType: String) -> String { "" }
    var history: HistorySQL { Self.history }
    var json: any JSONPathSQL { SQLiteJSONPaths() }
    var predicates: any PredicateSQL { SQLitePredicates() }
    var fullText: any FullTextSQL { SQLiteFullText() }
}
