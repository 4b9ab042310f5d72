/// Maps a key path such as `\Snack.price` to the property name `price`.
///
/// Swift prints key paths as `\Root.path`; the root may carry generic arguments with dots
/// inside angle brackets, so the name starts after the first dot outside them. A key path
/// through several properties (`\.a.b`) or an optional chain has no single column; it maps
/// to its full description, which no column matches, so the caller's check reports it.
enum PropertyName {
    // nonisolated(unsafe): `AnyKeyPath` is not `Sendable`, so the compiler cannot check this
    // box. It is safe: every access goes through the box's lock, and a key path is an
    // immutable object (its description and equality never change), so sharing one between
    // threads as a dictionary key cannot race.
    nonisolated(unsafe) private static let cache = Locked<[AnyKeyPath: String]>([:])

    /// The name of a to-one property, `@Related`-wrapped ones included: Swift describes a key
    /// path to a wrapped property as a computed accessor with no name, so the name is found
    /// by writing a value through the key path into a placeholder model and seeing which
    /// stored wrapper (`_name`) changed.
    static func of<Root: StoredModel, Target: StoredModel>(toOne keyPath: KeyPath<Root, Target?>) -> String {
        let described = of(keyPath)
        guard described.hasPrefix("\\") else { return described }
        if let name = cache.withLock({ $0[keyPath] }), !name.hasPrefix("\\") { return name }
        guard let writable = keyPath as? WritableKeyPath<Root, Target?>,
            var model = try? SchemaProbe.placeholder(of: Root.self),
            let target = Placeholder.make(Target.self, depth: 0).value
        else { return described }
        let before = emptyWrappers(in: model)
        model[keyPath: writable] = target
        let after = emptyWrappers(in: model)
        guard let changed = before.subtracting(after).first, changed.hasPrefix("_") else { return described }
        let name = renamedKeys(of: Root.self)[changed] ?? String(changed.dropFirst())
        cache.withLock { $0[keyPath] = name }
        return name
    }

    /// Labels of the stored `@Related` wrappers that hold nothing.
    private static func emptyWrappers(in model: Any) -> Set<String> {
        var labels = Set<String>()
        for child in Mirror(reflecting: model).children {
            if let label = child.label, let wrapper = child.value as? any EmptyRelationshipValue, wrapper.isEmpty {
                labels.insert(label)
            }
        }
        return labels
    }

    static func of(_ keyPath: AnyKeyPath) -> String {
        if let name = cache.withLock({ $0[keyPath] }) { return name }
        var name = parse(String(describing: keyPath))
        if !name.hasPrefix("\\"), let root = type(of: keyPath).rootType as? any Decodable.Type {
            name = renamedKeys(of: root)[name] ?? name
        }
        cache.withLock { $0[keyPath] = name }
        return name
    }

    // MARK: Renamed coding keys

    /// The column a declaration names: `name` itself when it is a column, else the coding key
    /// of the property called `name` (a primary key may name either).
    static func column<M: Decodable>(named name: String, of type: M.Type, in layout: ColumnLayout) -> String {
        layout.position(of: name) == nil ? renamedKeys(of: type)[name] ?? name : name
    }

    private static let renamed = Locked<[ObjectIdentifier: [String: String]]>([:])

    /// The coding key of each property whose key differs from its name, for models with
    /// custom `CodingKeys` (`case createdAt = "created_at"`): key paths name properties,
    /// while columns are named by keys. Empty for the common model whose keys are its names.
    static func renamedKeys<M: Decodable>(of type: M.Type) -> [String: String] {
        let id = ObjectIdentifier(type)
        if let map = renamed.withLock({ $0[id] }) { return map }
        let map = (try? findRenamedKeys(of: type)) ?? [:]
        renamed.withLock { $0[id] = map }
        return map
    }

    /// Decodes a placeholder model once per renamed key, with that key holding a different
    /// value, and sees which property changed: this follows any `init(from:)`, not only the
    /// synthesized one. A property and a key left over at the end belong together.
    private static func findRenamedKeys<M: Decodable>(of type: M.Type) throws -> [String: String] {
        func describedChildren(_ value: Any) -> [(label: String, value: String)] {
            Mirror(reflecting: value).children.compactMap { child in
                child.label.map { ($0, String(describing: child.value)) }
            }
        }
        let keys = try SchemaProbe.cachedLayout(of: type).columns.map(\.name)
        let keySet = Set(keys)
        let baseline = describedChildren(try SchemaProbe.placeholder(of: type))
        let labels = Set(baseline.map(\.label))
        // A property wrapper's storage is labelled `_name`.
        let renamedKeys = keys.filter { !labels.contains($0) && !labels.contains("_" + $0) }
        guard !renamedKeys.isEmpty else { return [:] }
        let candidates = baseline.filter { child in
            !keySet.contains(child.label) && !(child.label.hasPrefix("_") && keySet.contains(String(child.label.dropFirst())))
        }
        var map: [String: String] = [:]
        for key in renamedKeys {
            guard let marked = try? SchemaProbe.placeholder(of: type, marking: key) else { continue }
            let values = Dictionary(describedChildren(marked).map { ($0.label, $0.value) }) { first, _ in first }
            let changed = candidates.filter { values[$0.label] != $0.value }
            if changed.count == 1 { map[changed[0].label] = key }
        }
        let leftKeys = renamedKeys.filter { !map.values.contains($0) }
        let leftLabels = candidates.map(\.label).filter { map[$0] == nil }
        if leftKeys.count == 1, leftLabels.count == 1 { map[leftLabels[0]] = leftKeys[0] }
        return map
    }

    /// The properties a key path passes through (`\\Snack.address?.city` → `address`, `city`),
    /// the first mapped to its coding key; nil when a component is not a plain property (a
    /// subscript, a computed accessor).
    static func components(_ keyPath: AnyKeyPath) -> [String]? {
        guard let rest = path(in: String(describing: keyPath)),
            !rest.contains(where: { "<> ()[]".contains($0) })
        else { return nil }
        var names = rest.split(separator: ".", omittingEmptySubsequences: false).map {
            String($0.filter { $0 != "?" && $0 != "!" })
        }
        guard !names.contains(where: \.isEmpty) else { return nil }
        if let known = componentCache.withLock({ $0[keyPath] }) { return known }
        if let root = type(of: keyPath).rootType as? any Decodable.Type {
            // A name no key of its type answers to reads nothing: no path, so the query
            // is refused naming the key path rather than silently matching nothing.
            guard let keys = codingKeys(names, from: root) else { return nil }
            names = keys
        }
        componentCache.withLock { $0[keyPath] = names }
        return names
    }

    // nonisolated(unsafe): as `cache`.
    nonisolated(unsafe) private static let componentCache = Locked<[AnyKeyPath: [String]]>([:])

    /// Each name of a path as the coding key its type stores it under: a nested type's renamed
    /// keys (`case city = "town"`) as well as the root's, so `\.venue.city` reads `$."town"`.
    /// Nil when a nested type's keys are known and none is the name found for a property (its
    /// key could not be told from its neighbours').
    private static func codingKeys(_ names: [String], from root: any Decodable.Type) -> [String]? {
        var names = names
        var type: (any Decodable.Type)? = root
        for index in names.indices {
            guard let current = type else { break }
            let property = names[index]
            names[index] = renamedKeys(of: current)[property] ?? property
            if index > 0, let keys = try? SchemaProbe.cachedLayout(of: current).columns.map(\.name), !keys.isEmpty,
                !keys.contains(names[index])
            {
                return nil
            }
            type = index + 1 < names.count ? propertyType(named: property, in: current) : nil
        }
        return names
    }

    /// The type of `type`'s stored property `name` (an optional's wrapped type), read from a
    /// placeholder's mirror; nil when it is not `Decodable` or cannot be seen.
    private static func propertyType(named name: String, in type: any Decodable.Type) -> (any Decodable.Type)? {
        guard let placeholder = try? SchemaProbe.placeholder(of: type),
            let child = Mirror(reflecting: placeholder).children.first(where: { $0.label == name || $0.label == "_" + name })
        else { return nil }
        var found: Any.Type = Swift.type(of: child.value)
        while let optional = found as? any OptionalDecodable.Type { found = optional.wrappedDecodableType }
        return found as? any Decodable.Type
    }

    static func parse(_ description: String) -> String {
        // `a.b`, `a?`, `a!` reach through several properties; `<computed …>` is an accessor,
        // such as a property wrapper's, with no name to read.
        guard let name = path(in: description), !name.isEmpty, !name.contains(where: { ".?!<> ()".contains($0) }) else {
            return description
        }
        return String(name)
    }

    /// What follows the root type in a key path's description (`\\Root<A.B>.a.b` → `a.b`):
    /// the first dot outside angle brackets ends the root, whose generic arguments may hold dots.
    private static func path(in description: String) -> Substring? {
        guard description.hasPrefix("\\") else { return nil }
        var depth = 0
        var index = description.index(after: description.startIndex)
        while index < description.endIndex {
            switch description[index] {
            case "<": depth += 1
            case ">": depth -= 1
            case "." where depth == 0: return description[description.index(after: index)...]
            default: break
            }
            index = description.index(after: index)
        }
        return nil
    }
}
