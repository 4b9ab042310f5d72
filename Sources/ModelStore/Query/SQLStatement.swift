import Foundation

/// An SQL statement with its values, for the store's raw-SQL calls (`execute`, `findAll`,
/// `findFirst`, `forEach`, `stream`).
///
/// Written as a string literal, every interpolated value becomes a `?` parameter bound to
/// that value — never text spliced into the SQL — so quotes, semicolons and keywords in a
/// value stay part of the value:
///
/// ```swift
/// let name = "Pocky'; DROP TABLE Snack; --"
/// try store.execute("UPDATE Snack SET price = \(1.5) WHERE name = \(name)")   // two bound values
/// let cheap = try store.findAll(Snack.self, sql: "SELECT * FROM \(table: Snack.self) WHERE price < \(2.0)")
/// ```
///
/// Names are not values: `\(table: Snack.self)` and `\(identifier: "odd name")` insert a
/// quoted identifier, and `\(list: [1, 2, 3])` a parenthesised list of bound values for `IN`.
/// SQL held in a `String` is used as it is only through `SQLStatement(_:arguments:)`, which
/// takes its values separately, for `?` parameters.
///
/// Values are bound in their type's own stored form (a `Date` as seconds since 2001, a `UUID`
/// as its upper-case `uuidString`); a column declared in another form (`columnStorage`)
/// compares with values in that form.
public struct SQLStatement: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The statement's text, with a `?` for each value.
    public private(set) var sql: String
    /// The values bound to the `?` parameters, in order.
    public private(set) var arguments: [SQLValue]
    /// A value that has no stored form (NaN, an integer past `Int64.max`): reported when the
    /// statement runs, as any call reports an unstorable value.
    var failure: ModelStoreError?

    /// A statement from SQL text with `?` parameters and their values, in order.
    ///
    /// ```swift
    /// try store.execute(SQLStatement("DELETE FROM Snack WHERE price > ?", arguments: [5]))
    /// ```
    public init(_ sql: String, arguments: [(any SQLValueConvertible)?] = []) {
        self.sql = sql
        self.arguments = []
        for argument in arguments { append(argument) }
    }

    /// A statement from a literal without interpolations.
    public init(stringLiteral value: String) {
        self.sql = value
        self.arguments = []
    }

    /// A statement from a literal whose interpolations are bound values (or quoted names).
    public init(stringInterpolation: Interpolation) {
        self = stringInterpolation.statement
    }

    /// The SQL, followed by its values when it has any.
    public var description: String {
        arguments.isEmpty ? sql : sql + " " + arguments.description
    }

    private mutating func append(_ value: (any SQLValueConvertible)?) {
        guard let value else {
            arguments.append(.null)
            return
        }
        do {
            arguments.append(try value.sqlValue)
        } catch {
            arguments.append(.null)
            if failure == nil { failure = ModelStoreError.wrapping(error) }
        }
    }

    /// Builds a statement from a string literal's pieces: literal text is SQL, interpolated
    /// values are parameters.
    public struct Interpolation: StringInterpolationProtocol, Sendable {
        var statement = SQLStatement(stringLiteral: "")

        /// Reserves room for the literal's text.
        public init(literalCapacity: Int, interpolationCount: Int) {
            statement.sql.reserveCapacity(literalCapacity + interpolationCount)
        }

        /// Literal text: SQL.
        public mutating func appendLiteral(_ literal: String) {
            statement.sql += literal
        }

        /// A value: a `?` parameter bound to it (`nil` binds NULL).
        public mutating func appendInterpolation<Value: SQLValueConvertible>(_ value: Value) {
            statement.sql += "?"
            statement.append(value)
        }

        /// An optional value: a `?` parameter bound to it, or to NULL when it is nil. (Its own
        /// overload, so an optional is bound without the compiler's warning about
        /// interpolating optionals into text.)
        public mutating func appendInterpolation<Value: SQLValueConvertible>(_ value: Value?) {
            statement.sql += "?"
            statement.append(value)
        }

        /// A parenthesised list of bound values, for `IN`: `(?, ?, ?)`; `()` when empty: `IN`
        /// it matches no row and `NOT IN` it every row, on both backends (a PostgreSQL store
        /// sends `= ANY('{}')` and `<> ALL('{}')`, the server's spelling).
        public mutating func appendInterpolation<Values: Sequence>(list values: Values)
        where Values.Element: SQLValueConvertible {
            var first = true
            statement.sql += "("
            for value in values {
                statement.sql += first ? "?" : ", ?"
                first = false
                statement.append(value)
            }
            statement.sql += ")"
        }

        /// A model's table name, quoted.
        public mutating func appendInterpolation<Model: StoredModel>(table model: Model.Type) {
            statement.sql += quoted(model.tableName)
        }

        /// A table or column name, quoted (`my "odd" name` becomes `"my ""odd"" name"`): a
        /// name, never a value.
        public mutating func appendInterpolation(identifier name: String) {
            statement.sql += quoted(name)
        }

        /// Another statement, its SQL and values in place.
        public mutating func appendInterpolation(_ fragment: SQLStatement) {
            statement.sql += fragment.sql
            statement.arguments += fragment.arguments
            if statement.failure == nil { statement.failure = fragment.failure }
        }
    }
}
