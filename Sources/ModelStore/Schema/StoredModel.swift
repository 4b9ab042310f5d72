/// A plain `Codable` struct that ModelStore can persist.
///
/// Declare which properties form the primary key; ModelStore derives the table from the
/// type itself — columns, their types, NOT NULL for non-optionals — and creates or extends
/// it on first use:
///
/// ```swift
/// struct Snack: StoredModel {
///     var snackId: Int64
///     var name: String?
///     var price: Double?
///     var tags: [String] = []          // stored as JSON text
///     static let primaryKey = ["snackId"]
/// }
///
/// try Snack(snackId: 1, name: "Pocky").save()
/// let snack = try Snack.find(key: 1)
/// ```
///
/// Stored properties map to columns by their coding keys. Optionals are nullable columns,
/// and a `nil` optional in a saved model leaves the stored value as it is (see `save()`).
public protocol StoredModel: Codable, Sendable {
    /// The properties that identify a record: one name, or several for a composite key.
    /// They must be non-optional stored properties.
    static var primaryKey: [String] { get }

    /// The table's name. Defaults to the type's name.
    static var tableName: String { get }

    /// Indexes on the table, single, composite or unique. Defaults to none.
    static var indexes: [TableIndex<Self>] { get }

    /// The properties that hold other models, with their inverses. Defaults to none.
    static var relationships: [Relationship<Self>] { get }

    /// Names the table and properties had in older versions of the model, so the store
    /// renames them in place instead of starting empty ones. Defaults to none.
    static var formerNames: [FormerName<Self>] { get }

    /// Date and UUID properties stored in another form than their type's own, to use a
    /// table another tool made as it is: `[.date(\.createdAt, as: .iso8601), .uuid(\.id, as: .blob)]`.
    /// Defaults to none (see `ColumnStorage`).
    static var columnStorage: [ColumnStorage<Self>] { get }

    /// Text properties kept in a full-text index that `search(_:)` and `.matches(_:)` query:
    /// `[.text(\.title, weight: 3), .text(\.body)]`. Defaults to none (see `SearchableText`).
    static var searchable: [SearchableText<Self>] { get }

    /// Checks the model before any write stores it; throw to refuse. Every path that writes
    /// a model calls it — save, insert, update, batches, match-key batches, save-matching,
    /// graph saves (related models too) — and a refusal writes nothing of the call. Throw a
    /// `ValidationError` to name the property; any other error is kept as `underlying`.
    /// Defaults to accepting every model.
    ///
    /// ```swift
    /// func validate() throws {
    ///     guard (0...150).contains(age) else { throw ValidationError("must be between 0 and 150", property: "age") }
    /// }
    /// ```
    /// - Throws: whatever the model decides; ModelStore reports it as `.validationFailed`.
    func validate() throws

    /// The properties the store stamps with the transaction's date: `created` on insert (when
    /// the model does not carry one), `updated` on insert and on every write that changes
    /// something. Defaults to none (see `Timestamps`).
    static var timestamps: Timestamps<Self> { get }

    /// Whether the store keeps a durable history of the model's changes: every committed
    /// insert, update and delete of its table, by any writer (this store, another process or
    /// machine, raw SQL), recorded by the database in the transaction of the change, and read
    /// back from a saved token with `store.history(since:)`. Defaults to false.
    ///
    /// ```swift
    /// struct Order: StoredModel {
    ///     static let primaryKey = ["id"]
    ///     static let keepsHistory = true
    ///     var id: Int64
    ///     var total: Double
    /// }
    /// ```
    static var keepsHistory: Bool { get }
}

extension StoredModel {
    /// The type's name, for example `"Snack"`.
    public static var tableName: String { String(describing: Self.self) }

    /// No indexes beyond the primary key.
    public static var indexes: [TableIndex<Self>] { [] }

    /// No relationships.
    public static var relationships: [Relationship<Self>] { [] }

    /// No former names.
    public static var formerNames: [FormerName<Self>] { [] }

    /// No full-text index.
    public static var searchable: [SearchableText<Self>] { [] }

    /// Accepts every model.
    public func validate() throws {}

    /// No timestamps.
    public static var timestamps: Timestamps<Self> { Timestamps() }

    /// No history.
    public static var keepsHistory: Bool { false }
}
