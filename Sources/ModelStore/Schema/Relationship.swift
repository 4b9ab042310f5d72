/// Whether a relationship holds one model or many.
enum RelationshipKind: Sendable {
    case toOne, toMany
}

/// What happens to related records when a record is deleted.
public enum DeleteRule: Sendable {
    /// The related records stay; their link to the deleted record is removed. The default.
    case nullify
    /// The related records are deleted too (and their own rules apply).
    case cascade
    /// Deleting fails with `.constraintViolation` while related records exist.
    case deny
    /// ModelStore does nothing; the foreign key then refuses to commit while related records
    /// still refer to the deleted one (SQL's NO ACTION), so the transaction must fix them.
    case noAction
}

/// When a relationship's related models load, if a read does not say (see `LoadOptions`).
public enum RelationshipLoading: Sendable {
    /// Only when a read asks for it (`loading: .direct`, `.only("players")`, …). The
    /// default: a plain finder pays for no related record it was not asked for.
    case onRequest
    /// With its record, on every read that does not say otherwise (`LoadOptions.declared`,
    /// the finders' default): for a relationship nearly every use of the model needs.
    case eager
}

/// One relationship of a model, declared with key paths so the compiler checks names and
/// types:
///
/// ```swift
/// struct Team: StoredModel {
///     var id: Int64
///     var name: String?
///     @Related var coach: Coach?            // one-to-one
///     var players: [Player]?                // one-to-many
///     static let primaryKey = ["id"]
///     static let relationships: [Relationship<Team>] = [
///         .toOne(\.coach, inverse: \Coach.team),
///         .toMany(\.players, inverse: \Player.team, deleteRule: .cascade),
///     ]
/// }
/// ```
///
/// Related models load when a read asks for them (`Team.find(key: 1, loading: .direct)`);
/// a relationship declared `.loading(.eager)` loads with its record on every read that does
/// not say otherwise. A to-many held in a non-optional array is eager unless it says
/// otherwise, since its empty array would unlink every target when saved back.
///
/// A to-one property is Optional (`Target?`, or `@Related var x: Target?` when the two
/// models refer to each other); a to-many property is `[Target]?` or `[Target]`. The inverse
/// is optional: without one, a relationship is one-way. Both sides of a pair must declare
/// each other; ModelStore checks that on first use.
public struct Relationship<Model: StoredModel>: @unchecked Sendable {
    // @unchecked: holds key paths (immutable objects) inside its accessor closures.
    let property: String
    let kind: RelationshipKind
    let target: any StoredModel.Type
    let inverse: String?
    let inverseKind: RelationshipKind?
    let deleteRule: DeleteRule
    /// When its related models load if a read does not say.
    var loading = RelationshipLoading.onRequest
    /// The link columns or join table the declaration names (`columns(_:)`, `joinTable(…)`).
    var linkNames = LinkNames()
    /// The related models the property holds; nil when it is nil (links stay as stored).
    let read: (Model) -> [any StoredModel]?
    /// Whether the property holds anything (`read` would not be nil), without building the
    /// array `read` returns: a save asks it of every element to choose its path.
    let holdsValue: (Model) -> Bool
    /// Stores loaded models into the property, given as `[Target]` (one cast per record,
    /// not per related model); a to-one takes the first.
    let assign: (inout Model, Any) -> Void

    /// This relationship, loading as `loading` says when a read does not say.
    ///
    /// ```swift
    /// .toOne(\.team, inverse: \Team.players).loading(.eager)   // every read of a player fills its team
    /// ```
    public func loading(_ loading: RelationshipLoading) -> Relationship {
        var relationship = self
        relationship.loading = loading
        return relationship
    }

    // MARK: To-one

    /// A one-way to-one relationship: the model stores the target's key.
    public static func toOne<Target: StoredModel>(
        _ property: WritableKeyPath<Model, Target?>, deleteRule: DeleteRule = .nullify
    ) -> Relationship {
        toOne(property, inverse: nil, inverseKind: nil, deleteRule)
    }

    /// One side of a one-to-one relationship.
    public static func toOne<Target: StoredModel>(
        _ property: WritableKeyPath<Model, Target?>, inverse: KeyPath<Target, Model?>, deleteRule: DeleteRule = .nullify
    ) -> Relationship {
        toOne(property, inverse: PropertyName.of(toOne: inverse), inverseKind: .toOne, deleteRule)
    }

    /// The "one" end of a one-to-many relationship seen from the many side (a player's team).
    public static func toOne<Target: StoredModel>(
        _ property: WritableKeyPath<Model, Target?>, inverse: KeyPath<Target, [Model]?>, deleteRule: DeleteRule = .nullify
    ) -> Relationship {
        toOne(property, inverse: PropertyName.of(inverse), inverseKind: .toMany, deleteRule)
    }

    /// The "one" end of a one-to-many relationship whose inverse is a non-optional array.
    public static func toOne<Target: StoredModel>(
        _ property: WritableKeyPath<Model, Target?>, inverse: KeyPath<Target, [Model]>, deleteRule: DeleteRule = .nullify
    ) -> Relationship {
        toOne(property, inverse: PropertyName.of(inverse), inverseKind: .toMany, deleteRule)
    }

    private static func toOne<Target: StoredModel>(
        _ property: WritableKeyPath<Model, Target?>, inverse: String?, inverseKind: RelationshipKind?, _ deleteRule: DeleteRule
    ) -> Relationship {
        Relationship(
            property: PropertyName.of(toOne: property), kind: .toOne, target: Target.self, inverse: inverse,
            inverseKind: inverseKind, deleteRule: deleteRule,
            read: { model in model[keyPath: property].map { [$0] } },
            holdsValue: { model in model[keyPath: property] != nil },
            assign: { model, values in model[keyPath: property] = (values as? [Target])?.first })
    }

    // MARK: To-many

    /// A one-way to-many relationship, stored in a join table.
    public static func toMany<Target: StoredModel>(
        _ property: WritableKeyPath<Model, [Target]?>, deleteRule: DeleteRule = .nullify
    ) -> Relationship {
        toMany(property, inverse: nil, inverseKind: nil, deleteRule)
    }

    /// The "many" end of a one-to-many relationship (a team's players).
    public static func toMany<Target: StoredModel>(
        _ property: WritableKeyPath<Model, [Target]?>, inverse: KeyPath<Target, Model?>, deleteRule: DeleteRule = .nullify
    ) -> Relationship {
        toMany(property, inverse: PropertyName.of(toOne: inverse), inverseKind: .toOne, deleteRule)
    }

    /// One side of a many-to-many relationship, stored in a join table.
    public static func toMany<Target: StoredModel>(
        _ property: WritableKeyPath<Model, [Target]?>, inverse: KeyPath<Target, [Model]?>, deleteRule: DeleteRule = .nullify
    ) -> Relationship {
        toMany(property, inverse: PropertyName.of(inverse), inverseKind: .toMany, deleteRule)
    }

    /// One side of a many-to-many relationship whose inverse is a non-optional array.
    public static func toMany<Target: StoredModel>(
        _ property: WritableKeyPath<Model, [Target]?>, inverse: KeyPath<Target, [Model]>, deleteRule: DeleteRule = .nullify
    ) -> Relationship {
        toMany(property, inverse: PropertyName.of(inverse), inverseKind: .toMany, deleteRule)
    }

    private static func toMany<Target: StoredModel>(
        _ property: WritableKeyPath<Model, [Target]?>, inverse: String?, inverseKind: RelationshipKind?, _ deleteRule: DeleteRule
    ) -> Relationship {
        Relationship(
            property: PropertyName.of(property), kind: .toMany, target: Target.self, inverse: inverse,
            inverseKind: inverseKind, deleteRule: deleteRule,
            read: { model in model[keyPath: property] },
            holdsValue: { model in model[keyPath: property] != nil },
            assign: { model, values in model[keyPath: property] = (values as? [Target]) ?? [] })
    }

    // MARK: To-many as a non-optional array

    // These load with their record by default (`.eager`): a non-optional array cannot say
    // "not loaded", and saving one is the complete set. `.loading(.onRequest)` makes such a
    // relationship load only when asked, and a model read without it must then not be saved
    // back with its empty array.

    /// A one-way to-many relationship held in a non-optional array. The array is always the
    /// complete set: saving a model whose array is empty unlinks every stored target.
    public static func toMany<Target: StoredModel>(
        _ property: WritableKeyPath<Model, [Target]>, deleteRule: DeleteRule = .nullify
    ) -> Relationship {
        toManyArray(property, inverse: nil, inverseKind: nil, deleteRule)
    }

    /// The "many" end of a one-to-many relationship held in a non-optional array.
    public static func toMany<Target: StoredModel>(
        _ property: WritableKeyPath<Model, [Target]>, inverse: KeyPath<Target, Model?>, deleteRule: DeleteRule = .nullify
    ) -> Relationship {
        toManyArray(property, inverse: PropertyName.of(toOne: inverse), inverseKind: .toOne, deleteRule)
    }

    /// One side of a many-to-many relationship held in a non-optional array.
    public static func toMany<Target: StoredModel>(
        _ property: WritableKeyPath<Model, [Target]>, inverse: KeyPath<Target, [Model]?>, deleteRule: DeleteRule = .nullify
    ) -> Relationship {
        toManyArray(property, inverse: PropertyName.of(inverse), inverseKind: .toMany, deleteRule)
    }

    /// One side of a many-to-many relationship, both sides non-optional arrays.
    public static func toMany<Target: StoredModel>(
        _ property: WritableKeyPath<Model, [Target]>, inverse: KeyPath<Target, [Model]>, deleteRule: DeleteRule = .nullify
    ) -> Relationship {
        toManyArray(property, inverse: PropertyName.of(inverse), inverseKind: .toMany, deleteRule)
    }

    // MARK: Inverses of another type

    // Swift answers an inverse whose root or value is not what a declaration takes with "no
    // exact matches in call to static method 'toMany'", naming neither side. These take any
    // other inverse and say what it must be instead; they never win over the declarations
    // above, which are more specific and available.

    /// Not a relationship: the inverse must point back at this model. See the error.
    @available(
        *, unavailable,
        message:
            "inverse: must be a key path of the target model to its property holding this model, typed Model? (one-to-one), [Model]? or [Model] (one-to-many); this key path's root or value is another type"
    )
    public static func toOne<Target: StoredModel, Root, Value>(
        _ property: WritableKeyPath<Model, Target?>, inverse: KeyPath<Root, Value>, deleteRule: DeleteRule = .nullify
    ) -> Relationship {
        fatalError("unavailable")
    }

    /// Not a relationship: the inverse must point back at this model. See the error.
    @available(
        *, unavailable,
        message:
            "inverse: must be a key path of the target model to its property holding this model, typed Model? (one-to-many) or [Model]?, [Model] (many-to-many); this key path's root or value is another type"
    )
    public static func toMany<Target: StoredModel, Root, Value>(
        _ property: WritableKeyPath<Model, [Target]?>, inverse: KeyPath<Root, Value>, deleteRule: DeleteRule = .nullify
    ) -> Relationship {
        fatalError("unavailable")
    }

    /// Not a relationship: the inverse must point back at this model. See the error.
    @available(
        *, unavailable,
        message:
            "inverse: must be a key path of the target model to its property holding this model, typed Model? (one-to-many) or [Model]?, [Model] (many-to-many); this key path's root or value is another type"
    )
    public static func toMany<Target: StoredModel, Root, Value>(
        _ property: WritableKeyPath<Model, [Target]>, inverse: KeyPath<Root, Value>, deleteRule: DeleteRule = .nullify
    ) -> Relationship {
        fatalError("unavailable")
    }

    private static func toManyArray<Target: StoredModel>(
        _ property: WritableKeyPath<Model, [Target]>, inverse: String?, inverseKind: RelationshipKind?, _ deleteRule: DeleteRule
    ) -> Relationship {
        // Eager by default: a non-optional array cannot say "not loaded", and a saved array
        // is the complete set, so a model read without it and saved back would unlink
        // every stored target.
        Relationship(
            property: PropertyName.of(property), kind: .toMany, target: Target.self, inverse: inverse,
            inverseKind: inverseKind, deleteRule: deleteRule, loading: .eager,
            read: { model in model[keyPath: property] },
            holdsValue: { _ in true },
            assign: { model, values in model[keyPath: property] = (values as? [Target]) ?? [] })
    }
}
