/// A primary key as a caller passed it: one value, or named components for composite keys.
/// Converted to bound values before any work is queued, so a bad key fails at once.
enum KeyInput: Sendable {
    case single(SQLValue)
    case components([String: SQLValue])

    /// Converts a caller's value, turning conversion failures into `.invalidKey`. The model's
    /// name is only for that error: an autoclosure, so a find by key never builds it
    /// (`String(describing:)` of a type was a quarter of a find's instructions).
    static func single(_ value: some SQLValueConvertible, model: @autoclosure () -> String) throws -> KeyInput {
        .single(try convert(value, model: model(), column: nil))
    }

    static func components(_ values: [String: any SQLValueConvertible], model: @autoclosure () -> String) throws -> KeyInput {
        var converted: [String: SQLValue] = [:]
        for (name, value) in values { converted[name] = try convert(value, model: model(), column: name) }
        return .components(converted)
    }

    private static func convert(_ value: any SQLValueConvertible, model: @autoclosure () -> String, column: String?) throws -> SQLValue {
        do {
            return try value.comparisonValue
        } catch var error as ModelStoreError {
            error.code = .invalidKey
            error.model = model()
            error.column = column
            throw error
        }
    }
}

extension TableDescription {
    /// The key's values in `primaryKey` order, checked: every component present, none
    /// extra, none NULL, each of a storage class its column can match.
    func keyValues(_ input: KeyInput) throws -> [SQLValue] {
        let names = keyNames
        let values: [SQLValue]
        switch input {
        case .single(let value):
            guard names.count == 1 else {
                let example = names.map { "\"\($0)\": …" }.joined(separator: ", ")
                throw ModelStoreError(
                    .invalidKey,
                    "\(modelName)'s primary key has \(names.count) properties (\(names.joined(separator: ", "))), but one value was given.",
                    model: modelName, value: value.description, suggestion: "Pass every component: key: [\(example)].")
            }
            values = [value]
        case .components(let components):
            let missing = names.filter { components[$0] == nil }
            let extra = components.keys.filter { !names.contains($0) }.sorted()
            guard missing.isEmpty, extra.isEmpty else {
                var problems: [String] = []
                if !missing.isEmpty { problems.append("missing \(missing.joined(separator: ", "))") }
                if !extra.isEmpty { problems.append("not part of the key: \(extra.joined(separator: ", "))") }
                throw ModelStoreError(
                    .invalidKey,
                    "The key for \(modelName) does not match its primary key (\(names.joined(separator: ", "))): \(problems.joined(separator: "; ")).",
                    model: modelName, column: (missing + extra).first)
            }
            values = names.map { components[$0]! }
        }
        guard layout.hasDeclaredForms else {
            for (offset, value) in values.enumerated() {
                try checkKeyComponent(value, column: layout.columns[keyPositions[offset]])
            }
            return values
        }
        // A key in a declared form (a UUID stored as 16 bytes) is bound in that form.
        var stored = values
        for (offset, value) in values.enumerated() {
            let column = layout.columns[keyPositions[offset]]
            if case .mapped(let format) = column.coding {
                stored[offset] = try format.store(value, code: .invalidKey, model: modelName, column: column.name)
            }
            try checkKeyComponent(stored[offset], column: column)
        }
        return stored
    }

    private func checkKeyComponent(_ value: SQLValue, column: ColumnDescription) throws {
        let fits: Bool
        switch (column.storage, value) {
        case (_, .null): fits = false
        case (.untyped, _): fits = true
        case (.integer, .integer), (.real, .integer), (.real, .real), (.text, .text), (.blob, .blob): fits = true
        default: fits = false
        }
        guard fits else {
            throw ModelStoreError(
                .invalidKey,
                "\(modelName).\(column.name) holds \(column.typeName) values, which \(value) can never match.",
                model: modelName, column: column.name, value: value.description)
        }
    }

    /// `name = value` pairs for messages.
    func describeKey(_ values: [SQLValue]) -> String {
        zip(keyNames, values).map { "\($0) = \($1)" }.joined(separator: ", ")
    }
}
