/// Maps a key path such as `\Snack.price` to the property name `price`.
///
/// Swift prints key paths as `\Root.path`; the root may carry generic arguments with dots
/// inside angle brackets, so the name starts after the first dot outside them. A key path
/// through several properties (`\.a.b`) or an optional chain has no single column; it maps
/// to its full description, which no column matches, so the caller's check reports it.
enum PropertyName {
    private static let cache = Locked<[AnyKeyPath: String]>([:])

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
                if name.isEmpty || name.contains(where: { $0 == "." || $0 == "?" || $0 == "!" }) {
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
