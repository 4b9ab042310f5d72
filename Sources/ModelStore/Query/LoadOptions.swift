/// Which relationships a read fills.
///
/// ```swift
/// let team = try Team.find(key: 1)                                   // .declared: stored values, and eager relationships
/// let full = try Team.find(key: 1, loading: .direct)                 // players and coach too
/// let deep = try Team.find(key: 1, loading: .only("players.agent"))  // a named path
/// let all = try Team.findAll(loading: .all)                          // everything reachable
/// ```
///
/// The default, `.declared`, fills only the relationships declared `.loading(.eager)`, one
/// level deep; a model whose relationships all load on request (the default) is read by a
/// plain finder at the cost of a model without relationships. `.direct` fills all of the
/// model's own relationships one level deep: safe on large graphs, since it never wanders
/// further than the records it names. Loading related records costs one query per
/// relationship per level, whatever the number of records, all in one read transaction.
/// Whatever the option,
/// the inverse of the relationship a record was reached through is not walked again: a
/// to-one inverse holds the record it was reached from (its stored values only), a to-many
/// inverse is left as decoded (nil, or empty for a non-optional array). Each record is
/// decoded once per read; its relationships are filled where it is first reached, and
/// elsewhere it appears with its stored values only — so graphs with cycles terminate.
public struct LoadOptions: Sendable {
    indirect enum Plan: Sendable {
        case none
        /// The relationships declared `.eager`, one level deep.
        case declared
        case depth(Int)
        case everything
        case paths([String: Plan])
    }

    let plan: Plan

    /// No relationships: stored values only.
    public static let none = LoadOptions(plan: .none)

    /// The relationships the model declares `.loading(.eager)`, one level deep; none when it
    /// declares none. The finders' default.
    public static let declared = LoadOptions(plan: .declared)

    /// The model's own relationships, one level deep.
    public static let direct = LoadOptions(plan: .depth(1))

    /// Every relationship reachable from the model, cycle-safe. Use with care on large
    /// connected graphs: it reads every record they reach.
    public static let all = LoadOptions(plan: .everything)

    /// Relationships `levels` deep.
    public static func depth(_ levels: Int) -> LoadOptions {
        LoadOptions(plan: .depth(max(0, levels)))
    }

    /// Only the named relationship paths, such as `"players"` or `"players.agent"` (which
    /// includes `"players"`). Unknown names throw `.invalidQuery`.
    public static func only(_ paths: String...) -> LoadOptions {
        only(paths)
    }

    /// Only the named relationship paths.
    public static func only(_ paths: [String]) -> LoadOptions {
        var tree: [String: Plan] = [:]
        for path in paths {
            insert(path.split(separator: ".").map(String.init)[...], into: &tree)
        }
        return LoadOptions(plan: .paths(tree))
    }

    private static func insert(_ components: ArraySlice<String>, into tree: inout [String: Plan]) {
        guard let first = components.first else { return }
        var children: [String: Plan] = [:]
        if case .paths(let existing)? = tree[first] { children = existing }
        insert(components.dropFirst(), into: &children)
        tree[first] = .paths(children)
    }
}

extension LoadOptions.Plan {
    /// Whether the plan loads nothing from any model (`.declared` may load from some).
    var isEmpty: Bool {
        switch self {
        case .none, .depth(0): return true
        case .paths(let children): return children.isEmpty
        default: return false
        }
    }

    /// Whether the plan loads nothing from records of `table`.
    func loadsNothing(from table: TableDescription) -> Bool {
        guard case .declared = self else { return isEmpty }
        return !table.relationships.contains(where: \.loadsWithRecord)
    }

    /// The plan for the records reached through `relationship`, or nil when it is not loaded.
    func child(_ relationship: RelationshipDescription) -> LoadOptions.Plan? {
        switch self {
        case .none: return nil
        case .declared: return relationship.loadsWithRecord ? LoadOptions.Plan.none : nil
        case .depth(let levels): return levels > 0 ? .depth(levels - 1) : nil
        case .everything: return .everything
        case .paths(let children): return children[relationship.property]
        }
    }
}
