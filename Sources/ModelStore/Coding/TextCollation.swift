/// How SQLite compares a text column's values: the column's collation, which keys, unique
/// indexes, conditions (`==`, `<`, `in`, `between`) and sorting all follow.
///
/// ```swift
/// static let columnStorage: [ColumnStorage<Maintainer>] = [.text(\.email, collation: .caseInsensitive)]
/// ```
public enum TextCollation: String, Sendable, Hashable {
    /// Byte for byte (SQLite's `BINARY`, the default).
    case binary = "BINARY"
    /// ASCII letters compare without regard to case (SQLite's `NOCASE`): `georgesk@debian.Org`
    /// and `georgesk@debian.org` are one value. Letters beyond ASCII (`É`, `é`) still differ.
    case caseInsensitive = "NOCASE"
    /// Trailing spaces are ignored (SQLite's `RTRIM`).
    case ignoringTrailingSpaces = "RTRIM"

    /// The form two texts equal under the collation share, for comparing them in Swift.
    func folded(_ text: String) -> String {
        switch self {
        case .binary:
            return text
        case .caseInsensitive:
            var bytes = Array(text.utf8)
            for index in bytes.indices where bytes[index] >= 0x41 && bytes[index] <= 0x5A { bytes[index] += 0x20 }
            return String(decoding: bytes, as: UTF8.self)
        case .ignoringTrailingSpaces:
            var bytes = Array(text.utf8)
            while bytes.last == 0x20 { bytes.removeLast() }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
