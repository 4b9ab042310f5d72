import Foundation

/// A model's refusal from `validate()`, naming the property at fault.
///
/// ```swift
/// throw ValidationError("must look like an email address", property: "email")
/// ```
public struct ValidationError: Error, Sendable, CustomStringConvertible {
    /// Why the model is refused.
    public let reason: String
    /// The property at fault, if one is.
    public let property: String?

    /// A refusal for `reason`, naming `property` when one is at fault.
    public init(_ reason: String, property: String? = nil) {
        self.reason = reason
        self.property = property
    }

    /// "age must be between 0 and 150": the property, then the reason.
    public var description: String { property.map { "\($0) \(reason)" } ?? reason }
}

/// The `Date` properties a model's records are stamped in (`StoredModel.timestamps`).
///
/// ```swift
/// struct Note: StoredModel {
///     var id: Int64
///     var text: String
///     var createdAt: Date?
///     var updatedAt: Date?
///     static let primaryKey = ["id"]
///     static let timestamps = Timestamps<Note>(created: \.createdAt, updated: \.updatedAt)
/// }
/// ```
///
/// One date stamps every record of a transaction (a batch, a graph, a `write` block). The
/// creation date is set on insert when the model carries none (an import may bring its
/// own) and never changed by a later save; the change date is set on insert and on every
/// write that changes a value — a save that changes nothing leaves it as it was. Batch
/// updates by condition (`updateAll`) and raw SQL decode no model and stamp nothing.
public struct Timestamps<Model: StoredModel>: Sendable {
    let created: String?
    let updated: String?

    /// No timestamps.
    public init() {
        created = nil
        updated = nil
    }

    /// Stamps `created` on insert and `updated` on every change; either may be left out.
    public init(created: KeyPath<Model, Date?>? = nil, updated: KeyPath<Model, Date?>? = nil) {
        self.created = created.map { PropertyName.of($0) }
        self.updated = updated.map { PropertyName.of($0) }
    }

    /// Stamps non-optional `Date` properties (a model made in code must still give them a
    /// value; the store replaces it as above).
    public init(created: KeyPath<Model, Date>? = nil, updated: KeyPath<Model, Date>? = nil) {
        self.created = created.map { PropertyName.of($0) }
        self.updated = updated.map { PropertyName.of($0) }
    }
}
