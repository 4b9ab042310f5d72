import Foundation

/// Foundation's `#Predicate` as a condition: its expression tree translated to the same bound
/// SQL the typed conditions produce, when the query compiles — so an expression that cannot
/// be translated throws `.invalidQuery` naming it before any SQL runs.
///
/// SQL's NULL stands for Swift's `nil`, and only there: `==` and `!=` compare as Swift does
/// (`IS`, `IS NOT`: `$0.price != 1` includes records whose price is nil), `??` is `coalesce`,
/// and an optional chain yields NULL exactly when Swift's yields `nil`.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Condition {
    /// The records for which `predicate` is true.
    ///
    /// ```swift
    /// let cheap = try Snack.findAll(where: Condition(#Predicate<Snack> { ($0.price ?? 0) < 2 && $0.name.contains("ock") }))
    /// ```
    public init(_ predicate: Predicate<Model>) {
        self.init(
            .translated { compiler in
                var translator = PredicateTranslator(compiler: compiler)
                translator.bindings[predicate.variable.key] = .model
                return try translator.condition(predicate.expression)
            })
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Query {
    /// Only records for which `predicate` is true, in addition to any earlier filter.
    ///
    /// ```swift
    /// let page = try Snack.filter(#Predicate { $0.price != nil && $0.name.starts(with: "P") }).page(0, rows: 20).findAll()
    /// ```
    public func filter(_ predicate: Predicate<Model>) -> Query {
        filter(Condition(predicate))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension StoredModel {
    /// A query over the records for which `predicate` is true.
    public static func filter(_ predicate: Predicate<Self>) -> Query<Self> {
        Query().filter(Condition(predicate))
    }
}

/// What a part of a predicate stands for while it is translated.
enum PredicateTerm {
    /// The record itself (the predicate's variable).
    case model
    /// A stored property, or a value inside a JSON-stored one.
    case column(ColumnReference)
    /// The element of a JSON array being walked (`json_each`'s `value`).
    case element
    /// A Swift value, bound as a parameter.
    case constant(Any)
    /// Any other SQL value or condition.
    case sql(SQLFragment)
}

/// Translates one predicate's expression tree for one table.
struct PredicateTranslator {
    let compiler: QueryCompiler
    var bindings: [PredicateExpressions.VariableID: PredicateTerm] = [:]

    init(compiler: QueryCompiler) {
        self.compiler = compiler
    }

    /// The expression as a condition (SQL that is true or false, never NULL for a Swift `Bool`).
    mutating func condition(_ expression: any PredicateExpression) throws -> SQLFragment {
        try sql(term(expression), context: nil)
    }

    mutating func term(_ expression: any PredicateExpression) throws -> PredicateTerm {
        var failure: (any Error)?
        if let translatable = expression as? any SQLTranslatable {
            do {
                return try translatable.translate(&self)
            } catch {
                failure = error
            }
        }
        // A part that uses no record is a value (`ids.contains { $0 > 3 }`): evaluated once,
        // bound as a parameter.
        func evaluate<E: PredicateExpression>(_ expression: E) throws -> Any { try expression.evaluate(PredicateBindings()) }
        if let value = try? evaluate(expression) { return .constant(value) }
        throw failure ?? unsupported(expression)
    }

    func unsupported(_ expression: any PredicateExpression, _ reason: String? = nil) -> ModelStoreError {
        let name = String(describing: type(of: expression)).replacingOccurrences(of: "PredicateExpressions.", with: "")
        return ModelStoreError(
            .invalidQuery,
            "A #Predicate on \(compiler.table.modelName) uses \(name), which ModelStore cannot translate to SQL"
                + (reason.map { ": " + $0 } ?? ".") + " Nothing was run.",
            model: compiler.table.modelName, value: name,
            suggestion: "Write that part with a typed Condition, or filter the results in Swift.")
    }

    /// How a constant compared with `other` is bound: in a column's stored form, or in JSON's.
    enum Context {
        case column(ColumnReference)
        case json
    }

    static func context(of term: PredicateTerm) -> Context? {
        switch term {
        case .column(let reference): return .column(reference)
        case .element: return .json
        default: return nil
        }
    }

    /// The term as SQL; a constant is bound in the form `context` asks for.
    mutating func sql(_ term: PredicateTerm, context: Context?) throws -> SQLFragment {
        switch term {
        case .model:
            throw ModelStoreError(
                .invalidQuery, "A #Predicate on \(compiler.table.modelName) uses the record itself as a value.",
                model: compiler.table.modelName)
        case .column(let reference):
            return SQLFragment(try compiler.expression(reference))
        case .element:
            return SQLFragment("value")
        case .sql(let fragment):
            return SQLFragment("(" + fragment.sql + ")", fragment.values)
        case .constant(let value):
            return SQLFragment("?", [try bound(value, context: context)])
        }
    }

    /// A Swift value as the SQL value a column (or a JSON element) compares with.
    func bound(_ value: Any, context: Context?) throws -> SQLValue {
        guard let unwrapped = Self.unwrapped(value) else { return .null }
        var convertible = unwrapped as? any SQLValueConvertible
        if convertible == nil, let raw = unwrapped as? any RawRepresentable {
            convertible = raw.rawValue as? any SQLValueConvertible
        }
        guard let convertible else {
            throw ModelStoreError(
                .invalidQuery,
                "A #Predicate on \(compiler.table.modelName) compares with \(RowEncoder.describe(unwrapped)) of type \(type(of: unwrapped)), which has no SQL value.",
                model: compiler.table.modelName, value: RowEncoder.describe(unwrapped))
        }
        switch context {
        case .column(let reference)?:
            return try compiler.bound([try PredicateNode.conditionValue(convertible, for: reference)], for: reference)[0]
        case .json?:
            guard let encodable = convertible as? any Encodable else { return try convertible.comparisonValue }
            return try JSONScalar.value(of: encodable)
        case nil:
            return try convertible.comparisonValue
        }
    }

    /// The value inside any number of Optionals, or nil.
    static func unwrapped(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        guard let child = mirror.children.first else { return nil }
        return unwrapped(child.value)
    }

    /// `lhs op rhs`, with a constant on either side bound in the other side's form.
    mutating func compare(_ lhs: any PredicateExpression, _ op: String, _ rhs: any PredicateExpression) throws -> PredicateTerm {
        let left = try term(lhs)
        let right = try term(rhs)
        let context = Self.context(of: left) ?? Self.context(of: right)
        let l = try sql(left, context: context)
        let r = try sql(right, context: context)
        // A Decimal column orders by its number, not its text; COLLATE on either side decides.
        var collation = ""
        for case .column(let reference) in [left, right] where collation.isEmpty && ["<", "<=", ">", ">="].contains(op) {
            collation = compiler.orderingCollation(for: reference)
        }
        return .sql(SQLFragment("\(l.sql) \(op) \(r.sql)\(collation)", l.values + r.values))
    }

    /// `lhs op rhs` for arithmetic and other value operators.
    mutating func combine(_ lhs: any PredicateExpression, _ op: String, _ rhs: any PredicateExpression) throws -> PredicateTerm {
        try compare(lhs, op, rhs)
    }
}

/// A `PredicateExpressions` type ModelStore can translate.
protocol SQLTranslatable: PredicateExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm
}

extension PredicateExpressions.Variable: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        guard let bound = translator.bindings[key] else { throw translator.unsupported(self, "a variable it does not know") }
        return bound
    }
}

extension PredicateExpressions.Value: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm { .constant(value) }
}

extension PredicateExpressions.KeyPath: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        switch try translator.term(root) {
        case .model:
            let reference = ColumnReference(keyPath as PartialKeyPath<Root.Output>)
            guard !reference.name.hasPrefix("\\") else { throw translator.unsupported(self, "\(keyPath) names no stored property") }
            return .column(reference)
        case .column(let reference):
            guard let components = PropertyName.components(keyPath), !components.isEmpty else {
                throw translator.unsupported(self, "\(keyPath) names no stored property")
            }
            return .column(ColumnReference(name: reference.name, path: reference.path + components))
        default:
            throw translator.unsupported(self, "\(keyPath) reaches into a value SQL does not hold")
        }
    }
}

extension PredicateExpressions.Conjunction: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let l = try translator.condition(lhs)
        let r = try translator.condition(rhs)
        return .sql(SQLFragment("\(l.sql) AND \(r.sql)", l.values + r.values))
    }
}

extension PredicateExpressions.Disjunction: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let l = try translator.condition(lhs)
        let r = try translator.condition(rhs)
        return .sql(SQLFragment("\(l.sql) OR \(r.sql)", l.values + r.values))
    }
}

extension PredicateExpressions.Negation: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let inner = try translator.condition(wrapped)
        return .sql(SQLFragment("NOT \(inner.sql)", inner.values))
    }
}

extension PredicateExpressions.Equal: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm { try translator.compare(lhs, "IS", rhs) }
}

extension PredicateExpressions.NotEqual: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm { try translator.compare(lhs, "IS NOT", rhs) }
}

extension PredicateExpressions.Comparison: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let symbol: String
        switch op {
        case .lessThan: symbol = "<"
        case .lessThanOrEqual: symbol = "<="
        case .greaterThan: symbol = ">"
        case .greaterThanOrEqual: symbol = ">="
        @unknown default: throw translator.unsupported(self, "an unknown comparison")
        }
        return try translator.compare(lhs, symbol, rhs)
    }
}

extension PredicateExpressions.NilCoalesce: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let left = try translator.term(lhs)
        let context = PredicateTranslator.context(of: left)
        let l = try translator.sql(left, context: context)
        let r = try translator.sql(translator.term(rhs), context: context)
        return .sql(SQLFragment("coalesce(\(l.sql), \(r.sql))", l.values + r.values))
    }
}

extension PredicateExpressions.OptionalFlatMap: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let inner = try translator.term(wrapped)
        translator.bindings[variable.key] = inner
        let result = try translator.term(transform)
        // A path further into the same JSON value is NULL exactly when the value is.
        if case .column(let base) = inner, case .column(let reached) = result, reached.name == base.name,
            reached.path.starts(with: base.path)
        {
            return result
        }
        let w = try translator.sql(inner, context: nil)
        let t = try translator.sql(result, context: nil)
        return .sql(SQLFragment("CASE WHEN \(w.sql) IS NULL THEN NULL ELSE \(t.sql) END", w.values + t.values))
    }
}

extension PredicateExpressions.Arithmetic: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let symbol: String
        switch op {
        case .add: symbol = "+"
        case .subtract: symbol = "-"
        case .multiply: symbol = "*"
        @unknown default: throw translator.unsupported(self, "an unknown operator")
        }
        return try translator.combine(lhs, symbol, rhs)
    }
}

extension PredicateExpressions.IntRemainder: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm { try translator.combine(lhs, "%", rhs) }
}

extension PredicateExpressions.IntDivision: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm { try translator.combine(lhs, "/", rhs) }
}

extension PredicateExpressions.FloatDivision: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        // `* 1.0`: SQL divides two integer-valued operands as integers.
        let l = try translator.sql(translator.term(lhs), context: nil)
        let r = try translator.sql(translator.term(rhs), context: nil)
        return .sql(SQLFragment("\(l.sql) * 1.0 / \(r.sql)", l.values + r.values))
    }
}

extension PredicateExpressions.UnaryMinus: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let inner = try translator.sql(translator.term(wrapped), context: nil)
        return .sql(SQLFragment("- \(inner.sql)", inner.values))
    }
}

extension PredicateExpressions.Conditional: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let test = try translator.condition(self.test)
        let yes = try translator.sql(translator.term(trueBranch), context: nil)
        let no = try translator.sql(translator.term(falseBranch), context: nil)
        return .sql(SQLFragment("CASE WHEN \(test.sql) THEN \(yes.sql) ELSE \(no.sql) END", test.values + yes.values + no.values))
    }
}

extension PredicateExpressions.CollectionContainsCollection: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        guard Base.Output.self == String.self, Other.Output.self == String.self else {
            throw translator.unsupported(self, "only a string containing a string translates")
        }
        let haystack = try translator.sql(translator.term(base), context: nil)
        let needle = try translator.sql(translator.term(other), context: nil)
        return .sql(SQLFragment("instr(\(haystack.sql), \(needle.sql)) > 0", haystack.values + needle.values))
    }
}

extension PredicateExpressions.SequenceStartsWith: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        guard Base.Output.self == String.self, Prefix.Output.self == String.self else {
            throw translator.unsupported(self, "only a string starting with a string translates")
        }
        let text = try translator.sql(translator.term(base), context: nil)
        let start = try translator.sql(translator.term(prefix), context: nil)
        // Bytes, as Swift's comparison of NFC text; an empty prefix starts every string.
        let blob = "CAST(\(start.sql) AS BLOB)"
        return .sql(
            SQLFragment(
                "coalesce(length(\(blob)) = 0 OR substr(CAST(\(text.sql) AS BLOB), 1, length(\(blob))) = \(blob), 0)",
                start.values + text.values + start.values + start.values))
    }
}

extension PredicateExpressions.SequenceContains: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let list = try translator.term(sequence)
        let item = try translator.term(element)
        switch list {
        case .constant(let listValue):
            guard let list = listValue as? any Sequence else { throw translator.unsupported(self) }
            let context = PredicateTranslator.context(of: item)
            var bound: [SQLValue] = []
            for value in list { bound.append(try translator.bound(value, context: context)) }
            let column = try translator.sql(item, context: context)
            guard column.values.isEmpty else { throw translator.unsupported(self, "the value looked for must be a property") }
            let members = try translator.compiler.membership(column.sql, bound.filter { !$0.isNull }, negated: false)
            // A nil in a Swift list of optionals is found by `contains`: `IS NULL` finds it too.
            let nulls = bound.contains(where: \.isNull) ? " OR \(column.sql) IS NULL" : ""
            return .sql(SQLFragment("coalesce(" + members.sql + nulls + ", 0)", members.values))
        case .column(let reference):
            let source = try translator.jsonEach(reference, self)
            let value = try translator.sql(item, context: .json)
            return .sql(SQLFragment("EXISTS (SELECT 1 FROM \(source) WHERE value IS \(value.sql))", value.values))
        default:
            throw translator.unsupported(self)
        }
    }
}

extension PredicateExpressions.SequenceContainsWhere: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        guard case .column(let reference) = try translator.term(sequence) else {
            throw translator.unsupported(self, "only a JSON-stored array can be searched with contains(where:)")
        }
        let source = try translator.jsonEach(reference, self)
        let outer = translator.bindings[variable.key]
        translator.bindings[variable.key] = .element
        defer { translator.bindings[variable.key] = outer }
        let condition = try translator.condition(test)
        return .sql(SQLFragment("EXISTS (SELECT 1 FROM \(source) WHERE \(condition.sql))", condition.values))
    }
}

extension PredicateTranslator {
    /// `json_each(column)` (or at a path inside it) for a JSON-stored array.
    func jsonEach(_ reference: ColumnReference, _ expression: any PredicateExpression) throws -> String {
        let base = try compiler.column(ColumnReference(name: reference.name))
        guard let position = compiler.table.layout.position(of: reference.name), compiler.table.columns[position].isJSON else {
            throw unsupported(expression, "\(reference.described) is not stored as a JSON array")
        }
        guard !reference.path.isEmpty else { return "json_each(\(base))" }
        return "json_each(\(base), '\(try QueryCompiler.jsonPath(reference.path, table: compiler.table, reference: reference))')"
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Ordering {
    /// Foundation's `SortDescriptor` as an ordering: its key path, forward or reverse. A
    /// descriptor on a `String` key path is refused when the query runs: it compares with a
    /// `String.StandardComparator` (localized by default), an order SQLite cannot reproduce.
    /// Order text with `Ordering.ascending(\.name)`, in byte order (Swift's `<` on NFC text).
    ///
    /// ```swift
    /// let byPrice = try Gadget.all().order([SortDescriptor(\Gadget.stock, order: .reverse)]).findAll()
    /// ```
    public init(_ descriptor: SortDescriptor<Model>) {
        let descending = descriptor.order == .reverse
        guard let keyPath = descriptor.keyPath else {
            self.init(
                term: .refused(ModelStoreError(.invalidQuery, "A SortDescriptor without a key path cannot be translated to SQL.")),
                descending: descending)
            return
        }
        let reference = ColumnReference(keyPath)
        if let comparator = descriptor.stringComparator {
            self.init(
                term: .refused(
                    ModelStoreError(
                        .invalidQuery,
                        "The SortDescriptor on '\(reference.described)' compares strings with \(comparator), a localized order SQLite cannot reproduce.",
                        column: reference.described,
                        suggestion:
                            "Order by .ascending(\\.\(reference.described)) or .descending(…): strings in byte order, as Swift's < orders NFC text."
                    )
                ),
                descending: descending)
            return
        }
        self.init(term: .column(reference), descending: descending)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Query {
    /// Sorted by Foundation's `SortDescriptor`s, replacing any earlier order; ties are broken
    /// by primary key, as `sorted(using:)` keeps the key order of equal records.
    public func order(_ descriptors: [SortDescriptor<Model>]) -> Query {
        order(descriptors.map { Ordering($0) })
    }
}
