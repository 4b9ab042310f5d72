/// Maps a key path such as `\Snack.price` to the property name `price`.
///
/// Swift prints key paths as `\Root.path`; the root may carry generic arguments with dots
/// inside angle brackets, so the name starts after the first dot outside them. A key path
/// through several properties (`\.a.b`) or an optional chain has no single column; it maps
/// to its full description, which no column matches, so the caller's check reports it.
enum PropertyName {
    private static let cache = Locked<[AnyKeyPath: String]>([:])

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
        let name = String(changed.dropFirst())
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
        let name = parse(String(describing: keyPath))
        cache.withLock { $0[keyPath] = name }
        return name
    }

    static func parse(_ description: String) -> String {
        guard description.hasPrefix("\\") else { return description }
        var depth = 0
        var index = description.index(after: description.startIndex)
        while index < description.endIndex {
            switch description[index] {
            case "<": depth += 1
            case ">": depth -= 1
            case "." where depth == 0:
                let name = description[description.index(after: index)...]
                // `a.b`, `a?`, `a!` reach through several properties; `<computed …>` is an
                // accessor, such as a property wrapper's, with no name to read.
                if name.isEmpty || name.contains(where: { ".?!<> ()".contains($0) }) {
                    return description
                }
                return String(name)
            default: break
            }
            index = description.index(after: index)
        }
        return description
    }
}
