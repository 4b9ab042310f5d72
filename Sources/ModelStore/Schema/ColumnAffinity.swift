/// SQLite's type affinity of a column: what SQLite converts values to when they are stored.
///
/// A table ModelStore did not create may declare a column with a type that changes the
/// values ModelStore binds (an INTEGER column turns the text "0123" into 123; a REAL column
/// turns 9007199254740993 into 9007199254740992.0). The migrator compares each stored
/// column's affinity with the property's storage before it uses the table.
enum ColumnAffinity: String, Sendable {
    case integer = "INTEGER"
    case text = "TEXT"
    case blob = "BLOB"
    case real = "REAL"
    case numeric = "NUMERIC"

    /// The affinity SQLite gives a column declared as `declaredType`, by its rules
    /// (sqlite.org/datatype3.html, 3.1), applied in this order. `isStrict` is whether the
    /// table is STRICT, where `ANY` keeps every value as given instead of being NUMERIC.
    init(declaredType: String, isStrict: Bool = false) {
        // SQLite folds ASCII letters only; `uppercased()` would also turn a dotless "ı" into "I".
        let type = String(decoding: declaredType.utf8.map { (97...122).contains($0) ? $0 - 32 : $0 }, as: UTF8.self)
        if type.contains("INT") {
            self = .integer
        } else if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") {
            self = .text
        } else if type.contains("BLOB") || type.isEmpty {
            self = .blob
        } else if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") {
            self = .real
        } else if isStrict && type == "ANY" {
            self = .blob
        } else {
            self = .numeric
        }
    }

    /// Whether a column of this affinity keeps every value of `storage` as ModelStore binds
    /// it, so that it reads back as the same Swift value.
    func keeps(_ storage: StorageType) -> Bool {
        switch (storage, self) {
        // Affinity never converts a BLOB, and BLOB affinity converts nothing.
        case (.blob, _), (_, .blob): return true
        // INTEGER and NUMERIC affinity keep integers as they are.
        case (.integer, .integer), (.integer, .numeric): return true
        // A REAL with no fraction becomes the INTEGER of the same value, which the decoders
        // of Double, Float and Date read back exactly; other REALs stay REAL.
        case (.real, .real), (.real, .integer), (.real, .numeric): return true
        case (.text, .text): return true
        default: return false
        }
    }

    /// What SQLite would do to the values, for the error message.
    func damage(to storage: StorageType) -> String {
        switch (storage, self) {
        case (.integer, .real):
            return
                "SQLite would turn every integer into a REAL, which loses digits beyond 2^53 (9007199254740993 becomes 9007199254740992.0)"
        case (.integer, .text):
            return "SQLite would turn every integer into text"
        case (.real, _):
            return "SQLite would turn every number into text"
        case (.text, _):
            return "SQLite would turn text that looks like a number into a number ('0123' becomes 123, '1.50' becomes 1.5)"
        default:
            return "SQLite would convert some of its values to \(rawValue)"
        }
    }
}

extension StorageType {
    /// The declared types a column must have to keep this storage's values exactly.
    var acceptableDeclarations: String {
        switch self {
        case .integer: return "INTEGER (or NUMERIC, BLOB, or no type)"
        case .real: return "REAL (or INTEGER, NUMERIC, BLOB, or no type)"
        case .text: return "TEXT (or BLOB, or no type)"
        case .blob: return "any type"
        case .untyped: return "BLOB or no type"
        }
    }

    /// How the storage is named in messages.
    var displayName: String {
        self == .untyped ? "values of any type, as given" : rawValue
    }
}
