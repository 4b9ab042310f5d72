/// One property to set in a batch update: `.set(\.price, to: 2)`.
///
/// ```swift
/// try Snack.filter(\.taste == "sweet").updateAll(.set(\.price, to: 0.99), .set(\.name, to: nil))
/// ```
/// Setting an optional to `nil` stores NULL; setting a non-optional to `nil` is refused.
public struct Assignment<Model: StoredModel>: Sendable {
    let column: ColumnReference
    let value: @Sendable (RowEncoder) throws -> Void

    /// Sets `property` to `value`, stored as a save would store it.
    public static func set<Value: Encodable & Sendable>(_ property: KeyPath<Model, Value>, to value: Value) -> Assignment {
        let column = ColumnReference(property)
        return Assignment(column: column) { encoder in try encoder.set(value, column.name) }
    }

    /// Sets the column named `column` to `value`.
    public static func set<Value: Encodable & Sendable>(_ column: Column, to value: Value) -> Assignment {
        Assignment(column: column.reference) { encoder in try encoder.set(value, column.name) }
    }

    /// The column and its value, encoded with the model's own rules and checked.
    func resolve(in table: TableDescription) throws -> (ColumnDescription, SQLValue) {
        _ = try QueryCompiler(table: table).column(column)
        let position = table.layout.position(of: column.name)!
        let encoder = RowEncoder(layout: table.layout)
        let description = table.columns[position]
        do {
            try value(encoder)
        } catch let error as ModelStoreError {
            throw error.naming(model: table.modelName)
        }
        let stored = encoder.value(at: position) ?? .null
        if stored.isNull && !description.isOptional {
            throw ModelStoreError(
                .invalidQuery, "\(table.modelName).\(description.name) is not Optional, so an update cannot set it to NULL.",
                model: table.modelName, column: description.name, value: "NULL")
        }
        return (description, stored)
    }
}
