/// How a batch save finds the stored record each element stands for, when that is not by
/// primary key: properties all elements share (they narrow the lookup, such as the owning
/// account) and properties that identify each element within them (such as a friend id).
///
/// ```swift
/// // Each Contact has its own local key, but the server identifies it by (account, friendId).
/// try Contact.save(contacts, matching: MatchKeys(shared: [\.accountId], varying: [\.friendId]))
/// ```
///
/// Existing records are found with one query per chunk of elements
/// (`WHERE accountId = ? AND friendId IN (…)`), never one per element. An element whose
/// varying values match a record updates that record (merge rules; the record keeps its
/// key); the others are inserted. Elements with equal varying values merge in array order.
/// Every element must carry the shared properties with the same values.
public struct MatchKeys<Model: StoredModel>: Sendable {
    let shared: [ColumnReference]
    let varying: [ColumnReference]

    /// Match by `varying` properties within the values of `shared` ones.
    public init(shared: [PartialKeyPath<Model>] = [], varying: [PartialKeyPath<Model>]) {
        self.shared = shared.map { ColumnReference($0) }
        self.varying = varying.map { ColumnReference($0) }
    }

    /// Match by properties named by string.
    public init(sharedColumns: [String] = [], varyingColumns: [String]) {
        self.shared = sharedColumns.map { ColumnReference(name: $0) }
        self.varying = varyingColumns.map { ColumnReference(name: $0) }
    }
}
