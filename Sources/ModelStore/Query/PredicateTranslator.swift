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

/// What a query does with the parts of a `#Predicate` that cannot be translated to SQL.
public enum UntranslatedPredicate: Sendable {
    /// Refuse the query with `.invalidQuery` naming the part, before any SQL runs (the default).
    case refuse
    /// Select with the parts that translate, then evaluate the whole predicate in Swift
    /// (`Predicate.evaluate`) on each record read; pages and limits are applied after it.
    /// Only `findAll`, `findFirst`, `count`, `exists` and `observe` read such a query.
    case evaluateInMemory
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

    /// Only records for which `predicate` is true; with `.evaluateInMemory`, a predicate SQL
    /// cannot express is still answered exactly: the parts of its top-level `&&` that
    /// translate select the records, and Swift evaluates the whole predicate on each.
    ///
    /// ```swift
    /// let odd = try Snack.filter(#Predicate { $0.price > 1 && $0.name.count % 2 == 1 }, untranslated: .evaluateInMemory).findAll()
    /// ```
    ///
    /// Every record the translated parts select is read and decoded, so keep them selective.
    /// Aggregates, streams, updates and deletes run in SQL and refuse such a query with
    /// `.invalidQuery`.
    public func filter(_ predicate: Predicate<Model>, untranslated: UntranslatedPredicate) -> Query {
        guard untranslated == .evaluateInMemory else { return filter(predicate) }
        // Swift's evaluate stops the program on integer overflow, division by zero, `!` of nil
        // or an index out of range; the store will not run such code on records it has not seen.
        let shape = String(describing: type(of: predicate.expression))
        if let risky = PredicateTranslator.mayTrap.first(where: { shape.contains($0) }) {
            var query = self
            query.failure = ModelStoreError(
                .invalidQuery,
                "A #Predicate on \(Model.self) asked to be evaluated in memory uses \(risky.dropLast()), which stops the program on some values (overflow, division by zero, nil, an index out of range) when Swift evaluates it. Nothing was run.",
                model: String(describing: Model.self), value: String(risky.dropLast()),
                suggestion: "Write that part so it translates to SQL, or check the values in Swift after reading the records.")
            return query
        }
        var query = filter(
            Condition(
                .translated { compiler in
                    var translator = PredicateTranslator(compiler: compiler)
                    translator.bindings[predicate.variable.key] = .model
                    return translator.prefilter(predicate.expression)
                }))
        let earlier = query.memoryFilter
        query.memoryFilter = MemoryFilter { model in
            if let earlier, try !earlier.matches(model) { return false }
            return try predicate.evaluate(model)
        }
        return query
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension StoredModel {
    /// A query over the records for which `predicate` is true.
    ///
    /// ```swift
    /// let cheap = try Snack.filter(#Predicate { ($0.price ?? 0) < 2 }).order(.ascending(\.name)).findAll()
    /// ```
    public static func filter(_ predicate: Predicate<Self>) -> Query<Self> {
        Query().filter(Condition(predicate))
    }

    /// A query over the records for which `predicate` is true, evaluating in Swift what SQL
    /// cannot express when `untranslated` is `.evaluateInMemory` (see `Query.filter(_:untranslated:)`).
    public static func filter(_ predicate: Predicate<Self>, untranslated: UntranslatedPredicate) -> Query<Self> {
        Query().filter(predicate, untranslated: untranslated)
    }
}

/// What a part of a predicate stands for while it is translated.
enum PredicateTerm {
    /// The record itself (the predicate's variable).
    case model
    /// A stored property, or a value inside a JSON-stored one.
    case column(ColumnReference)
    /// The element of a JSON array being walked: its SQL and its text (`JSONPathSQL.elements`).
    case element(String, text: String)
    /// The record (to-one) or records (to-many) a relationship links to.
    case relationship(String)
    /// A stored property (or a value inside a JSON-stored one) of the record a to-one
    /// relationship links to: NULL when it links to none, as Swift's optional chain is nil.
    case relatedColumn(String, ColumnReference)
    /// A Swift value, bound as a parameter.
    case constant(Any)
    /// A computed value (`??`, `? :`) in the stored form of the property it comes from, so a
    /// constant compared with it is bound in that form and ordered by that column's rule.
    case formed(SQLFragment, PredicateTranslator.Context)
    /// A condition: SQL that is true, false or unknown (a comparison, `AND`, `EXISTS` …).
    case condition(SQLFragment)
    /// `test ? yes : no` of values in no stored form of their own (constants): bound in the
    /// form of what the choice is compared with.
    indirect case choice(SQLFragment, PredicateTerm, PredicateTerm)
    /// Any other SQL value.
    case sql(SQLFragment)
}

/// Translates one predicate's expression tree for one table.
struct PredicateTranslator {
    let compiler: QueryCompiler
    var bindings: [PredicateExpressions.VariableID: PredicateTerm] = [:]
    /// How many `json_each` walks this translation has opened, to alias each apart.
    var walks = 0

    init(compiler: QueryCompiler) {
        // Columns named with their table: inside a `json_each` subquery, a bare `"key"`
        // would be the walk's own column.
        var compiler = compiler
        compiler.qualifiesColumns = true
        self.compiler = compiler
    }

    /// The parts of the expression's top-level `&&` that translate, joined by `AND` ("1" when
    /// none does): a condition every record the whole expression accepts satisfies.
    mutating func prefilter(_ expression: any PredicateExpression) -> SQLFragment {
        if let conjunction = expression as? any PredicateConjunctionParts {
            let (lhs, rhs) = conjunction.operands
            let l = prefilter(lhs)
            let r = prefilter(rhs)
            return SQLFragment("(\(l.sql)) AND (\(r.sql))", l.values + r.values)
        }
        return (try? condition(expression)) ?? SQLFragment("TRUE")
    }

    /// The expression as a condition (SQL that is true or false, never NULL for a Swift `Bool`).
    mutating func condition(_ expression: any PredicateExpression) throws -> SQLFragment {
        try truth(term(expression))
    }

    /// A term as a condition: a condition as it is, a value (a `Bool` property, a constant)
    /// as the backend tests it (`PredicateSQL.truth`).
    mutating func truth(_ term: PredicateTerm) throws -> SQLFragment {
        if case .condition(let fragment) = term { return SQLFragment("(" + fragment.sql + ")", fragment.values) }
        if Self.isInsideJSON(term), !compiler.dialect.json.selectsValues {
            // A Bool inside a JSON-stored value, where the backend reads such a value as a key
            // that compares: true where it is not false (0).
            let context = Self.context(of: term)
            let value = try sql(term, context: context)
            let zero = try placed(.integer(0), context: context)
            return SQLFragment("\(value.sql) <> \(zero.sql)", value.values + zero.values)
        }
        let value = try sql(term, context: nil)
        return SQLFragment(compiler.dialect.predicates.truth(of: value.sql), value.values)
    }

    mutating func term(_ expression: any PredicateExpression) throws -> PredicateTerm {
        var failure: (any Error)?
        if let translatable = Self.translatableType(of: expression) {
            func translate<T: SQLTranslatable>(_: T.Type, _ translator: inout PredicateTranslator) throws -> PredicateTerm {
                // A cast to the exact type found before: no conformance lookup.
                try (expression as! T).translate(&translator)
            }
            do {
                return try translate(translatable, &self)
            } catch {
                failure = error
            }
        }
        // A part that uses no record is a value (`ids.contains { $0 > 3 }`): evaluated once,
        // bound as a parameter — unless evaluating it could trap (a range out of order, `!`
        // of nil, a division by zero), which would stop the program instead of the query.
        func evaluate<E: PredicateExpression>(_ expression: E) throws -> Any { try expression.evaluate(PredicateBindings()) }
        let shape = String(describing: type(of: expression))
        if !Self.mayTrap.contains(where: { shape.contains($0) }), let value = try? evaluate(expression) { return .constant(value) }
        throw failure ?? unsupported(expression)
    }

    /// The expression as a constant when it uses no record and cannot trap (`prefix ?? ""`,
    /// which would otherwise translate to SQL), else as it translates: a backend that tells
    /// Characters apart only in a constant text (`PredicateSQL.characterContains`) gets one.
    mutating func constantFirst(_ expression: any PredicateExpression) throws -> PredicateTerm {
        func evaluate<E: PredicateExpression>(_ expression: E) throws -> Any { try expression.evaluate(PredicateBindings()) }
        if !(expression is any SQLTranslatableValue) {
            let shape = String(describing: type(of: expression))
            if !Self.mayTrap.contains(where: { shape.contains($0) }), let value = try? evaluate(expression) { return .constant(value) }
        }
        return try term(expression)
    }

    /// Which expression types translate, by type: a predicate of one shape is made of the same
    /// types every time, and looking a conformance up costs more than the rest of a node's
    /// translation (measured: W5 as a predicate, 23,000 instructions a query before).
    // nonisolated(unsafe): metatypes are immutable, and every access goes through the lock.
    nonisolated(unsafe) private static let translatableTypes = Locked<[ObjectIdentifier: (any SQLTranslatable.Type)?]>([:])

    static func translatableType(of expression: any PredicateExpression) -> (any SQLTranslatable.Type)? {
        let type = type(of: expression)
        let id = ObjectIdentifier(type)
        if let known = translatableTypes.withLock({ $0[id] }) { return known }
        let found = type as? any SQLTranslatable.Type
        translatableTypes.withLock { $0[id] = .some(found) }
        return found
    }

    /// Expression types whose evaluation traps on some values.
    static let mayTrap = [
        "ClosedRange<", "Range<", "ForcedUnwrap<", "IntDivision<", "IntRemainder<", "Arithmetic<", "UnaryMinus<", "Subscript<",
    ]

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
        case related(String, ColumnReference)
    }

    static func context(of term: PredicateTerm) -> Context? {
        switch term {
        case .column(let reference): return .column(reference)
        case .relatedColumn(let relationship, let reference): return .related(relationship, reference)
        case .element: return .json
        case .formed(_, let context): return context
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
        case .element(let element, _):
            return SQLFragment(element)
        case .relationship(let name):
            throw ModelStoreError(
                .invalidQuery,
                "A #Predicate on \(compiler.table.modelName) uses the related record '\(name)' itself as a value; only its properties, or a comparison with nil, translate.",
                model: compiler.table.modelName, column: name,
                suggestion: "Compare one of its properties ($0.\(name)?.name == …), or test $0.\(name) == nil.")
        case .relatedColumn(let relationship, let reference):
            return try compiler.relatedValue(relationship, reference)
        case .sql(let fragment), .formed(let fragment, _):
            return SQLFragment("(" + fragment.sql + ")", fragment.values)
        case .choice(let test, let yes, let no):
            let y = try sql(yes, context: context)
            let n = try sql(no, context: context)
            return SQLFragment("(CASE WHEN \(test.sql) THEN \(y.sql) ELSE \(n.sql) END)", test.values + y.values + n.values)
        case .condition(let fragment):
            // A condition used as a value (`$0.flag == ($0.stock > 3)`): 1, 0 or NULL.
            return SQLFragment(compiler.dialect.predicates.number(of: "(" + fragment.sql + ")"), fragment.values)
        case .constant(let value):
            return try placed(bound(value, context: context), context: context)
        }
    }

    /// A bound value as the SQL that compares with a term of `context`: a placeholder, or
    /// inside a JSON-stored value the backend's operand (`JSONPathSQL.operand`).
    func placed(_ bound: SQLValue, context: Context?) throws -> SQLFragment {
        switch context {
        case .json?:
            let operand = compiler.dialect.json.operand(bound)
            return SQLFragment(operand.sql, operand.values)
        case .column(let reference)? where !reference.path.isEmpty:
            return compiler.operand(bound, for: reference)
        case .related(let name, let reference)? where !reference.path.isEmpty:
            return try compiler.relatedCompiler(name).operand(bound, for: reference)
        case .column?, .related?:
            return SQLFragment("?", [bound])
        case nil:
            return SQLFragment(compiler.dialect.predicates.placeholder(for: bound), [bound])
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
        case .related(let relationship, let reference)?:
            return try compiler.relatedCompiler(relationship).bound(
                [try PredicateNode.conditionValue(convertible, for: reference)], for: reference)[0]
        case .json?:
            guard let encodable = convertible as? any Encodable else { return try convertible.comparisonValue }
            return try JSONScalar.value(of: encodable)
        case nil:
            return try convertible.comparisonValue
        }
    }

    /// The value inside any number of Optionals, or nil. (A protocol cast: `Mirror` costs
    /// several times more, on every value of every query.)
    static func unwrapped(_ value: Any) -> Any? {
        // Whether a type is Optional is remembered: a failed conformance lookup, for every
        // non-optional value, costs as much as the rest of binding it.
        let id = ObjectIdentifier(type(of: value))
        let isOptional =
            optionalTypes.withLock { $0[id] }
            ?? {
                let found = type(of: value) is any PredicateOptional.Type
                optionalTypes.withLock { $0[id] = found }
                return found
            }()
        guard isOptional, let optional = value as? any PredicateOptional else { return value }
        return optional.wrappedAny.flatMap(unwrapped)
    }

    private static let optionalTypes = Locked<[ObjectIdentifier: Bool]>([:])

    /// `lhs op rhs`, with a constant on either side bound in the other side's form.
    mutating func compare(_ lhs: any PredicateExpression, _ op: String, _ rhs: any PredicateExpression) throws -> PredicateTerm {
        try compare(term(lhs), op, term(rhs))
    }

    /// `left op right` for terms already translated.
    mutating func compare(_ left: PredicateTerm, _ op: String, _ right: PredicateTerm) throws -> PredicateTerm {
        // A choice between constants compares each with the other side: each constant is then
        // bound in that side's form and typed by it.
        if case .choice(let test, let yes, let no) = right {
            let y = try truth(compare(left, op, yes))
            let n = try truth(compare(left, op, no))
            return .condition(SQLFragment("CASE WHEN \(test.sql) THEN \(y.sql) ELSE \(n.sql) END", test.values + y.values + n.values))
        }
        if case .choice(let test, let yes, let no) = left {
            let y = try truth(compare(yes, op, right))
            let n = try truth(compare(no, op, right))
            return .condition(SQLFragment("CASE WHEN \(test.sql) THEN \(y.sql) ELSE \(n.sql) END", test.values + y.values + n.values))
        }
        try requireSameForm(left, right, "compares")
        try requireComparable(left, right, "compares")
        let context = Self.context(of: left) ?? Self.context(of: right)
        let l = try sql(left, context: context)
        let r = try sql(right, context: context)
        // A Decimal column orders by its number, not its text; COLLATE on either side decides.
        var collation = ["<", "<=", ">", ">="].contains(op) ? try orderingCollation(left, right) : ""
        if collation.isEmpty { collation = try binaryCollation(left, right) }
        let compared: String
        switch op {
        // Swift's == and != with nil: NULL is equal to NULL and to nothing else.
        case "IS": compared = compiler.dialect.identical(l.sql, r.sql + collation)
        case "IS NOT": compared = compiler.dialect.distinct(l.sql, r.sql + collation)
        default: compared = "\(l.sql) \(op) \(r.sql)\(collation)"
        }
        return .condition(SQLFragment(compared, l.values + r.values))
    }

    /// `fragment`, computed from `term`, in `term`'s stored form where it has one (so a
    /// constant compared with it is bound in that form, inside JSON as the backend's operand).
    static func keeping(_ term: PredicateTerm, _ fragment: SQLFragment) -> PredicateTerm {
        if case .condition = term { return .sql(fragment) }
        return context(of: term).map { .formed(fragment, $0) } ?? .sql(fragment)
    }

    /// A computed value in a column's form stands for that column when choosing a collation.
    static func columnTerm(_ term: PredicateTerm) -> PredicateTerm {
        switch term {
        case .formed(_, .column(let reference)): return .column(reference)
        case .formed(_, .related(let name, let reference)): return .relatedColumn(name, reference)
        default: return term
        }
    }

    /// How a context's values are stored, when not as the Swift type's own plain form: a
    /// declared form (ISO dates, blob UUIDs), a Decimal's text, or a JSON value. nil: plain.
    func form(of context: Context?) throws -> String? {
        let table: TableDescription
        let reference: ColumnReference
        switch context {
        case nil: return nil
        case .json?: return "a JSON value"
        case .column(let found)?: (table, reference) = (compiler.table, found)
        case .related(let name, let found)?: (table, reference) = (try compiler.relatedCompiler(name).table, found)
        }
        guard reference.path.isEmpty else { return "a JSON value" }
        guard let position = table.layout.position(of: reference.name) else { return nil }
        if let format = table.layout.format(of: reference.name) { return "\(format)" }
        return table.columns[position].holdsDecimal ? "a Decimal's text" : nil
    }

    /// Refuses comparing or combining two values stored in different forms (an ISO date with
    /// a number of seconds, a blob UUID with a text one): SQL would compare the stored forms.
    func requireSameForm(_ left: PredicateTerm, _ right: PredicateTerm, _ what: String) throws {
        let l = Self.context(of: left)
        let r = Self.context(of: right)
        guard l != nil, r != nil else { return }
        let (lf, rf) = (try form(of: l), try form(of: r))
        guard lf != rf else { return }
        throw ModelStoreError(
            .invalidQuery,
            "A #Predicate on \(compiler.table.modelName) \(what) two values stored in different forms (\(lf ?? "a plain value") and \(rf ?? "a plain value")), which SQL would compare as stored, not as Swift values. Nothing was run.",
            model: compiler.table.modelName,
            suggestion: "Compare each property with a value, or store both in the same form (columnStorage).")
    }

    /// Refuses a value inside a JSON-stored property beside a computed value or another
    /// property, where the backend reads the first as a key that compares only with a constant
    /// or another such key (`JSONPathSQL.selectsValues` false).
    func requireComparable(_ left: PredicateTerm, _ right: PredicateTerm, _ what: String) throws {
        guard !compiler.dialect.json.selectsValues, Self.isInsideJSON(left) != Self.isInsideJSON(right) else { return }
        let other = Self.isInsideJSON(left) ? right : left
        if Self.isConstant(other) { return }
        throw ModelStoreError(
            .invalidQuery,
            "A #Predicate on \(compiler.table.modelName) \(what) a value inside a JSON-stored property with a property or a computed value, which \(compiler.dialect.name) compares only with a constant or another value inside JSON. Nothing was run.",
            model: compiler.table.modelName,
            suggestion: "Compare the value with a constant, or filter with untranslated: .evaluateInMemory.")
    }

    /// ` COLLATE BINARY` when either term is text with a declared collation
    /// (`.text(_:collation:)`): typed conditions follow it, a predicate compares as Swift does.
    func binaryCollation(_ terms: PredicateTerm...) throws -> String {
        for term in terms.map(Self.columnTerm) {
            let table: TableDescription
            let reference: ColumnReference
            switch term {
            case .column(let found): (table, reference) = (compiler.table, found)
            case .relatedColumn(let name, let found): (table, reference) = (try compiler.relatedCompiler(name).table, found)
            default: continue
            }
            guard reference.path.isEmpty, let position = table.layout.position(of: reference.name) else { continue }
            if (table.columns[position].collation ?? .binary) != .binary { return compiler.dialect.binaryCollation }
        }
        return ""
    }

    /// ` COLLATE modelstore_decimal` when either term is a Decimal property (of this record or
    /// of a related one), so it orders by its number, not its text; else nothing.
    func orderingCollation(_ terms: PredicateTerm...) throws -> String {
        for term in terms.map(Self.columnTerm) {
            switch term {
            case .column(let reference):
                let collation = compiler.orderingCollation(for: reference)
                if !collation.isEmpty { return collation }
            case .relatedColumn(let name, let reference):
                let collation = try compiler.relatedCompiler(name).orderingCollation(for: reference)
                if !collation.isEmpty { return collation }
            default: continue
            }
        }
        return ""
    }
}

/// An Optional of any type, opened without `Mirror`.
protocol PredicateOptional {
    var wrappedAny: Any? { get }
}

extension Optional: PredicateOptional {
    var wrappedAny: Any? { self.map { $0 } }
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

/// A captured value, a constant as it translates.
protocol SQLTranslatableValue {}

extension PredicateExpressions.Value: SQLTranslatableValue {}

extension PredicateExpressions.Value: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm { .constant(value) }
}

extension PredicateExpressions.KeyPath: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let root = try translator.term(root)
        if let measured = try translator.measure(root, keyPath, Root.Output.self, self) { return measured }
        switch root {
        case .model:
            let reference = ColumnReference(keyPath as PartialKeyPath<Root.Output>)
            guard !reference.name.hasPrefix("\\") else { throw translator.unsupported(self, "\(keyPath) names no stored property") }
            if reference.path.isEmpty, translator.compiler.table.relationships.contains(where: { $0.property == reference.name }) {
                return .relationship(reference.name)
            }
            return .column(reference)
        case .column(let reference):
            guard let components = PropertyName.components(keyPath), !components.isEmpty else {
                throw translator.unsupported(self, "\(keyPath) names no stored property")
            }
            return .column(ColumnReference(name: reference.name, path: reference.path + components))
        case .relationship(let name):
            let relationship = try translator.compiler.relationship(name)
            guard relationship.kind == .toOne else {
                throw translator.unsupported(
                    self,
                    "'\(name)' is a to-many relationship, whose records have no single value; test them with contains(where:) or allSatisfy"
                )
            }
            let target = try translator.compiler.relatedCompiler(name)
            let reference = ColumnReference(keyPath as PartialKeyPath<Root.Output>)
            guard !reference.name.hasPrefix("\\") else { throw translator.unsupported(self, "\(keyPath) names no stored property") }
            if target.table.relationships.contains(where: { $0.property == reference.name }) {
                throw translator.unsupported(
                    self,
                    "it follows '\(name)' and then '\(reference.name)', two relationships; a predicate follows one. Write the deeper part as .related(\\.\(name), .related(\\.\(reference.name), …))"
                )
            }
            return .relatedColumn(name, reference)
        case .relatedColumn(let name, let reference):
            guard let components = PropertyName.components(keyPath), !components.isEmpty else {
                throw translator.unsupported(self, "\(keyPath) names no stored property")
            }
            return .relatedColumn(name, ColumnReference(name: reference.name, path: reference.path + components))
        default:
            throw translator.unsupported(self, "\(keyPath) reaches into a value SQL does not hold")
        }
    }
}

extension PredicateExpressions.Conjunction: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let l = try translator.condition(lhs)
        let r = try translator.condition(rhs)
        return .condition(SQLFragment("\(l.sql) AND \(r.sql)", l.values + r.values))
    }
}

/// A `&&`'s two sides, for `prefilter`.
protocol PredicateConjunctionParts {
    var operands: (any PredicateExpression, any PredicateExpression) { get }
}

extension PredicateExpressions.Conjunction: PredicateConjunctionParts {
    var operands: (any PredicateExpression, any PredicateExpression) { (lhs, rhs) }
}

extension PredicateExpressions.Disjunction: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let l = try translator.condition(lhs)
        let r = try translator.condition(rhs)
        return .condition(SQLFragment("\(l.sql) OR \(r.sql)", l.values + r.values))
    }
}

extension PredicateExpressions.Negation: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let inner = try translator.condition(wrapped)
        return .condition(SQLFragment("NOT \(inner.sql)", inner.values))
    }
}

extension PredicateExpressions.Equal: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let (left, right) = (try translator.term(lhs), try translator.term(rhs))
        if let linked = try translator.linked(left, right, self) { return .condition(linked.negated) }
        return try translator.compare(left, "IS", right)
    }
}

extension PredicateExpressions.NotEqual: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let (left, right) = (try translator.term(lhs), try translator.term(rhs))
        if let linked = try translator.linked(left, right, self) { return .condition(linked) }
        return try translator.compare(left, "IS NOT", right)
    }
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
        let right = try translator.term(rhs)
        try translator.requireSameForm(left, right, "coalesces")
        try translator.requireComparable(left, right, "coalesces")
        let context = PredicateTranslator.context(of: left) ?? PredicateTranslator.context(of: right)
        let l = try translator.sql(left, context: context)
        let r = try translator.sql(right, context: context)
        let coalesced = SQLFragment("coalesce(\(l.sql), \(r.sql))", l.values + r.values)
        return context.map { .formed(coalesced, $0) } ?? .sql(coalesced)
    }
}

extension PredicateExpressions.OptionalFlatMap: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let inner = try translator.term(wrapped)
        translator.bindings[variable.key] = inner
        let result = try translator.term(transform)
        if case .relationship(let name) = inner {
            // A related record's value is already NULL when no record is linked, as Swift's
            // chain is nil; anything else is made NULL then. (A to-many array is never nil.)
            if case .relatedColumn(let reached, _) = result, reached == name { return result }
            let t = try translator.sql(result, context: nil)
            guard try translator.compiler.relationship(name).kind == .toOne else { return .sql(t) }
            let linked = try translator.compiler.relatedKeys(name, matching: .constant(true))
            return PredicateTranslator.keeping(
                result, SQLFragment("CASE WHEN NOT \(linked.sql) THEN NULL ELSE \(t.sql) END", linked.values + t.values))
        }
        // A path further into the same JSON value is NULL exactly when the value is (of this
        // record, or of the record a to-one links to).
        if case .column(let base) = inner, case .column(let reached) = result, reached.name == base.name,
            reached.path.starts(with: base.path)
        {
            return result
        }
        if case .relatedColumn(let name, let base) = inner, case .relatedColumn(let other, let reached) = result, other == name,
            reached.name == base.name, reached.path.starts(with: base.path)
        {
            return result
        }
        let w = try translator.sql(inner, context: nil)
        let t = try translator.sql(result, context: nil)
        return PredicateTranslator.keeping(
            result, SQLFragment("CASE WHEN \(w.sql) IS NULL THEN NULL ELSE \(t.sql) END", w.values + t.values))
    }
}

// Arithmetic as Swift does it, or a refusal: SQLite turns an integer overflow into a REAL and
// a division by zero into NULL, where Swift stops the program; the SQL below fails the
// statement on such a record (`modelstore_refuse`, reported as `.invalidQuery`, nothing
// changed) instead of answering with a value Swift never gives.

extension PredicateTranslator {
    /// `Decimal` and `Float` arithmetic would run in SQLite's binary Double: refused.
    func checkArithmetic(_ type: Any.Type, _ expression: any PredicateExpression) throws {
        if type == Decimal.self {
            throw unsupported(
                expression, "SQLite would compute with Decimals as binary floating point, inexactly; compare the property itself")
        }
        if type == Float.self {
            throw unsupported(expression, "SQLite computes in Double, where Swift rounds each Float step; compare the property itself")
        }
    }

    /// The range an integer type holds, or nil for a floating-point type.
    static func integerBounds(_ type: Any.Type) -> (min: Int64, max: Int64)? {
        func bounds<T: FixedWidthInteger>(_: T.Type) -> (min: Int64, max: Int64) { (Int64(clamping: T.min), Int64(clamping: T.max)) }
        guard let integer = type as? any FixedWidthInteger.Type else { return nil }
        return bounds(integer)
    }

    /// `expression` checked as Swift's result would be: an integer within its type's range, a
    /// floating-point value SQLite has (its NULL stands for Swift's NaN or infinity from a
    /// division by zero). A function does the check, so the expression is written once.
    func checked(_ expression: SQLFragment, _ type: Any.Type, _ what: String) -> SQLFragment {
        let message =
            "A #Predicate on \(compiler.table.modelName) \(what) on a stored record, where Swift stops the program or gives infinity or NaN."
        let predicates = compiler.dialect.predicates
        if let bounds = Self.integerBounds(type) {
            return SQLFragment(
                predicates.checkedInteger(expression.sql, min: bounds.min, max: bounds.max, message: message), expression.values)
        }
        return SQLFragment(predicates.checkedReal(expression.sql, message: message), expression.values)
    }

    /// Refuses arithmetic on a value inside a JSON-stored property where the backend reads
    /// such a value as a key it only compares (`JSONPathSQL.selectsValues`).
    func requireComputable(_ terms: PredicateTerm...) throws {
        guard !compiler.dialect.json.selectsValues, terms.contains(where: Self.isInsideJSON) else { return }
        throw ModelStoreError(
            .invalidQuery,
            "A #Predicate on \(compiler.table.modelName) computes with a value inside a JSON-stored property, which \(compiler.dialect.name) compares and orders but does not compute with. Nothing was run.",
            model: compiler.table.modelName,
            suggestion: "Compare the value itself, or filter with untranslated: .evaluateInMemory.")
    }

    /// `-value` for a number Swift negates without trapping (not an integer type's minimum);
    /// nil for anything else.
    static func negatedConstant(_ value: Any) -> Any? {
        func negated<T: FixedWidthInteger & SignedInteger>(_ integer: T) -> Any? {
            let (result, overflow) = T.zero.subtractingReportingOverflow(integer)
            return overflow ? nil : result
        }
        if let integer = value as? any FixedWidthInteger & SignedInteger { return negated(integer) }
        if let real = value as? Double { return -real }
        return nil
    }

    /// Whether `term` is a constant other than 0 and -1: dividing by it needs no check.
    static func isSafeDivisor(_ term: PredicateTerm) -> Bool {
        guard case .constant(let value) = term, let number = unwrapped(value) else { return false }
        if let integer = number as? any BinaryInteger {
            func safe<T: BinaryInteger>(_ value: T) -> Bool { value > 0 ? true : value < 0 && value.magnitude != 1 }
            return safe(integer)
        }
        if let real = number as? Double { return real != 0 && real.isFinite }
        return false
    }
}

extension PredicateExpressions.Arithmetic: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        try translator.checkArithmetic(LHS.Output.self, self)
        let symbol: String
        switch op {
        case .add: symbol = "+"
        case .subtract: symbol = "-"
        case .multiply: symbol = "*"
        @unknown default: throw translator.unsupported(self, "an unknown operator")
        }
        let (left, right) = (try translator.term(lhs), try translator.term(rhs))
        let l = try translator.sql(left, context: nil)
        let r = try translator.sql(right, context: nil)
        try translator.requireComputable(left, right)
        return .sql(
            translator.checked(
                SQLFragment("\(l.sql) \(symbol) \(r.sql)", l.values + r.values), LHS.Output.self, "computes beyond the range of its type"))
    }
}

extension PredicateTranslator {
    /// `lhs / rhs` or `lhs % rhs` on integers: a zero divisor, or the type's minimum divided
    /// by -1, traps in Swift.
    mutating func integerDivision(
        _ lhs: any PredicateExpression, _ op: String, _ rhs: any PredicateExpression, _ type: Any.Type,
        _ expression: any PredicateExpression
    ) throws -> PredicateTerm {
        let (dividend, divisor) = (try term(lhs), try term(rhs))
        let l = try sql(dividend, context: nil)
        let r = try sql(divisor, context: nil)
        try requireComputable(dividend, divisor)
        let plain = SQLFragment("\(l.sql) \(op) \(r.sql)", l.values + r.values)
        guard !Self.isSafeDivisor(divisor) else { return .sql(plain) }
        let minimum = Self.integerBounds(type)?.min ?? Int64.min
        // The refusal reads both operands, so it belongs to the record (a backend must not
        // raise it for a constant divisor before any record is read).
        let refusal = compiler.dialect.predicates.refusal(
            "A #Predicate on \(compiler.table.modelName) divides by zero (or the smallest integer by -1) on a stored record, where Swift stops the program.",
            reading: ("ROW(\(l.sql), \(r.sql))", l.values + r.values))
        return .sql(
            SQLFragment(
                "CASE WHEN \(r.sql) = 0 OR (\(r.sql) = -1 AND \(l.sql) = \(minimum)) THEN \(refusal.sql) ELSE \(plain.sql) END",
                r.values + r.values + l.values + refusal.values + plain.values))
    }
}

extension PredicateExpressions.IntRemainder: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        try translator.integerDivision(lhs, "%", rhs, LHS.Output.self, self)
    }
}

extension PredicateExpressions.IntDivision: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        try translator.integerDivision(lhs, "/", rhs, LHS.Output.self, self)
    }
}

extension PredicateExpressions.FloatDivision: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        try translator.checkArithmetic(LHS.Output.self, self)
        let (dividend, divisor) = (try translator.term(lhs), try translator.term(rhs))
        let l = try translator.sql(dividend, context: nil)
        let r = try translator.sql(divisor, context: nil)
        try translator.requireComputable(dividend, divisor)
        let quotient = SQLFragment(
            translator.compiler.dialect.predicates.realQuotient(l.sql, r.sql), l.values + r.values)
        guard !PredicateTranslator.isSafeDivisor(divisor) else { return .sql(quotient) }
        return .sql(translator.checked(quotient, LHS.Output.self, "divides by zero"))
    }
}

extension PredicateExpressions.UnaryMinus: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        try translator.checkArithmetic(Wrapped.Output.self, self)
        let term = try translator.term(wrapped)
        // A negative literal (`-9`) is a constant, bound in the form of what it meets (a value
        // inside a JSON-stored one compares with a key on a server, not with SQL arithmetic).
        if case .constant(let value) = term, let negated = PredicateTranslator.negatedConstant(value) { return .constant(negated) }
        try translator.requireComputable(term)
        let inner = try translator.sql(term, context: nil)
        let negated = SQLFragment("- \(inner.sql)", inner.values)
        guard PredicateTranslator.integerBounds(Wrapped.Output.self) != nil else { return .sql(negated) }
        return .sql(translator.checked(negated, Wrapped.Output.self, "negates the smallest integer"))
    }
}

extension PredicateExpressions.Conditional: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let test = try translator.condition(self.test)
        let yesTerm = try translator.term(trueBranch)
        let noTerm = try translator.term(falseBranch)
        try translator.requireSameForm(yesTerm, noTerm, "chooses between")
        try translator.requireComparable(yesTerm, noTerm, "chooses between")
        let context = PredicateTranslator.context(of: yesTerm) ?? PredicateTranslator.context(of: noTerm)
        // Two constants take the form of what the choice meets (a Decimal's, a date's).
        if context == nil, PredicateTranslator.isConstant(yesTerm), PredicateTranslator.isConstant(noTerm) {
            return .choice(test, yesTerm, noTerm)
        }
        let yes = try translator.sql(yesTerm, context: context)
        let no = try translator.sql(noTerm, context: context)
        let chosen = SQLFragment("CASE WHEN \(test.sql) THEN \(yes.sql) ELSE \(no.sql) END", test.values + yes.values + no.values)
        return context.map { .formed(chosen, $0) } ?? .sql(chosen)
    }
}

extension PredicateExpressions.CollectionContainsCollection: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        guard Base.Output.self == String.self, Other.Output.self == String.self else {
            throw translator.unsupported(self, "only a string containing a string translates")
        }
        return try translator.characterTest(base, other, starts: false, self)
    }
}

extension PredicateExpressions.SequenceStartsWith: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        guard Base.Output.self == String.self, Prefix.Output.self == String.self else {
            throw translator.unsupported(self, "only a string starting with a string translates")
        }
        return try translator.characterTest(base, prefix, starts: true, self)
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
            let present = bound.filter { !$0.isNull }
            let members: SQLFragment
            if let keyed = try translator.keyMembership(item, present) {
                members = keyed
            } else {
                members = try translator.compiler.membership(column.sql + translator.binaryCollation(item), present, negated: false)
            }
            // A nil in a Swift list of optionals is found by `contains`: `IS NULL` finds it too.
            let nulls = bound.contains(where: \.isNull) ? " OR \(column.sql) IS NULL" : ""
            return .condition(SQLFragment("coalesce(" + members.sql + nulls + ", FALSE)", members.values))
        case .column(let reference):
            let (source, element, text) = try translator.jsonEach(reference, self)
            try translator.requireComparable(.element(element, text: text), item, "compares an element of")
            let value = try translator.sql(item, context: .json)
            return .condition(
                SQLFragment(
                    "EXISTS (SELECT 1 FROM \(source) WHERE \(translator.compiler.dialect.identical(element, value.sql)))", value.values))
        default:
            throw translator.unsupported(self)
        }
    }
}

extension PredicateExpressions.SequenceContainsWhere: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let sequence = try translator.term(sequence)
        if case .relationship(let name) = sequence {
            return .condition(try translator.related(name, where: test, variable: variable.key, every: false, self))
        }
        guard case .column(let reference) = sequence else {
            throw translator.unsupported(self, "only a JSON-stored array can be searched with contains(where:)")
        }
        let (source, element, text) = try translator.jsonEach(reference, self)
        let outer = translator.bindings[variable.key]
        translator.bindings[variable.key] = .element(element, text: text)
        defer { translator.bindings[variable.key] = outer }
        let condition = try translator.condition(test)
        return .condition(SQLFragment("EXISTS (SELECT 1 FROM \(source) WHERE \(condition.sql))", condition.values))
    }
}

extension PredicateTranslator {
    /// The elements of a JSON-stored array (or of one at a path inside it), as a FROM item
    /// and the SQL of one element (`JSONPathSQL.elements`: `json_each` on SQLite).
    /// Aliased per use (`"modelstore_each_2"`), so its columns never hide the record's own
    /// (a property named `key` or `value`) nor an outer walk's `value`.
    mutating func jsonEach(_ reference: ColumnReference, _ expression: any PredicateExpression) throws -> (
        source: String, element: String, text: String
    ) {
        walks += 1
        let alias = "\"modelstore_each_\(compiler.depth)_\(walks)\""
        let base = try compiler.column(ColumnReference(name: reference.name))
        guard let position = compiler.table.layout.position(of: reference.name), compiler.table.columns[position].isJSON else {
            throw unsupported(expression, "\(reference.described) is not stored as a JSON array")
        }
        try QueryCompiler.checkJSONPath(reference.path, table: compiler.table, reference: reference)
        return compiler.dialect.json.elements(of: base, at: reference.path, as: alias)
    }

    /// What a text test (`contains`, `starts(with:)`, `isEmpty`) reads of a term: a value
    /// inside a JSON-stored property as its text (`JSONPathSQL.text`), anything else as it is.
    mutating func text(_ term: PredicateTerm) throws -> SQLFragment {
        if case .column(let reference) = term, !reference.path.isEmpty {
            return SQLFragment(try compiler.textExpression(reference))
        }
        if case .element(_, let text) = term { return SQLFragment(text) }
        if Self.isInsideJSON(term), !compiler.dialect.json.selectsValues {
            throw ModelStoreError(
                .invalidQuery,
                "A #Predicate on \(compiler.table.modelName) reads the text of a value inside a JSON-stored property this way, which \(compiler.dialect.name) does not. Nothing was run.",
                model: compiler.table.modelName,
                suggestion: "Filter with untranslated: .evaluateInMemory, or compare the value itself (==).")
        }
        return try sql(term, context: nil)
    }

    /// Whether a term is a constant, or a choice between constants.
    static func isConstant(_ term: PredicateTerm) -> Bool {
        switch term {
        case .constant: return true
        case .choice(_, let yes, let no): return isConstant(yes) && isConstant(no)
        default: return false
        }
    }

    /// Whether a term is a value inside a JSON-stored property (or computed from one).
    static func isInsideJSON(_ term: PredicateTerm) -> Bool {
        switch context(of: term) {
        case .json?: return true
        case .column(let reference)?, .related(_, let reference)?: return !reference.path.isEmpty
        case nil: return false
        }
    }

    /// `base.contains(part)` or `base.starts(with: part)` by Characters, as the backend spells
    /// it (`PredicateSQL.characterContains`, `characterStarts`), or a refusal naming it.
    mutating func characterTest(
        _ base: any PredicateExpression, _ part: any PredicateExpression, starts: Bool, _ expression: any PredicateExpression
    ) throws -> PredicateTerm {
        let text = try self.text(term(base))
        let partTerm = try constantFirst(part)
        let other = try self.text(partTerm)
        let predicates = compiler.dialect.predicates
        let constant = Self.constantText(partTerm)
        let found =
            starts
            ? predicates.characterStarts((text.sql, text.values), (other.sql, other.values), constant: constant)
            : predicates.characterContains((text.sql, text.values), (other.sql, other.values), constant: constant)
        guard let found else { throw noCharacters(expression, starts ? "starts(with:)" : "contains") }
        return .condition(SQLFragment(found.sql, found.values))
    }

    /// The text of a constant term, for a backend that tells Characters apart only in one.
    static func constantText(_ term: PredicateTerm) -> String? {
        guard case .constant(let value) = term else { return nil }
        return unwrapped(value) as? String
    }

    /// A Character-exact text test the backend cannot make (`PredicateSQL.characterContains`).
    func noCharacters(_ expression: any PredicateExpression, _ name: String) -> ModelStoreError {
        ModelStoreError(
            .invalidQuery,
            "A #Predicate on \(compiler.table.modelName) uses String.\(name), which Swift answers by Characters (\"👍\" is not in \"👍🏽\"); \(compiler.dialect.name) gives Swift's answer only for a constant text whose first and last Characters cannot join their neighbours in more than one way. Nothing was run.",
            model: compiler.table.modelName, value: name,
            suggestion:
                "Filter with untranslated: .evaluateInMemory (the rest of the predicate selects the records, Swift decides), or use the typed condition .contains(\\.property, text) or .hasPrefix, which compare code points on every backend."
        )
    }

    /// A constant list a value inside a JSON-stored property is looked for in, where the
    /// backend compares such values as keys: its own list (`JSONPathSQL.membership`), or one
    /// comparison per value for an array's element. nil where the usual `IN` list serves.
    mutating func keyMembership(_ item: PredicateTerm, _ values: [SQLValue]) throws -> SQLFragment? {
        guard !compiler.dialect.json.selectsValues, !values.isEmpty, Self.isInsideJSON(item) else { return nil }
        if case .column(let reference) = item { return try compiler.jsonMembership(reference, values) }
        let context = Self.context(of: item)
        let value = try sql(item, context: context)
        var parts: [String] = []
        var bound: [SQLValue] = []
        for member in values {
            let operand = try placed(member, context: context)
            parts.append("\(value.sql) = \(operand.sql)")
            bound += value.values + operand.values
        }
        return SQLFragment("(" + parts.joined(separator: " OR ") + ")", bound)
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

// MARK: Relationships, sizes and ranges

extension SQLFragment {
    /// `NOT (…)`.
    var negated: SQLFragment { SQLFragment("NOT (" + sql + ")", values) }
}

extension PredicateTranslator {
    /// `$0.team == nil` (or `!=`) as "links to a record": nil when neither side is a relationship.
    func linked(_ left: PredicateTerm, _ right: PredicateTerm, _ expression: any PredicateExpression) throws -> SQLFragment? {
        let name: String
        let other: PredicateTerm
        switch (left, right) {
        case (.relationship(let found), _): (name, other) = (found, right)
        case (_, .relationship(let found)): (name, other) = (found, left)
        default: return nil
        }
        guard case .constant(let value) = other, Self.unwrapped(value) == nil, try compiler.relationship(name).kind == .toOne else {
            throw unsupported(expression, "a related record ('\(name)') can only be compared with nil")
        }
        return try compiler.relatedKeys(name, matching: .constant(true))
    }

    /// Records with a related record for which `test` is true (`every: false`), or with none
    /// for which it is false (`every: true`), through the to-many relationship `name`: `test`
    /// is translated against the related table, as `.any` and `.every` do.
    mutating func related(
        _ name: String, where test: any PredicateExpression, variable: PredicateExpressions.VariableID, every: Bool,
        _ expression: any PredicateExpression
    ) throws -> SQLFragment {
        guard try compiler.relationship(name).kind == .toMany else {
            throw unsupported(expression, "'\(name)' is a to-one relationship; compare its properties ($0.\(name)?.…) instead")
        }
        var inner = PredicateTranslator(compiler: try compiler.relatedCompiler(name))
        // Captured values are shared; the outer record is not reachable from inside.
        inner.bindings[variable] = .model
        let condition = try inner.condition(test)
        guard every else { return try compiler.relatedKeys(name, matching: .sql(condition.sql, condition.values)) }
        // Every related record satisfies it: none fails it (an unknown counts as failing).
        let failing = try compiler.relatedKeys(name, matching: .sql("NOT coalesce((\(condition.sql)), FALSE)", condition.values))
        return failing.negated
    }

    /// `count` and `isEmpty` of a JSON-stored array or set, of a to-many relationship, and
    /// `isEmpty` of a string; nil for any other key path. `String.count` is refused: Swift
    /// counts characters (grapheme clusters), SQLite code points.
    mutating func measure(_ root: PredicateTerm, _ keyPath: AnyKeyPath, _ rootType: Any.Type, _ expression: any PredicateExpression) throws
        -> PredicateTerm?
    {
        // Swift describes these key paths as unnamed accessors; the root type's own key paths
        // are compared instead.
        switch root {
        case .relationship, .column, .relatedColumn, .element: break
        default: return nil
        }
        guard let sized = rootType as? any SizedCollection.Type else { return nil }
        let isEmpty: Bool
        if keyPath == sized.isEmptyKeyPath {
            isEmpty = true
        } else if keyPath == sized.countKeyPath {
            isEmpty = false
        } else {
            return nil
        }
        switch root {
        case .relationship(let name):
            guard try compiler.relationship(name).kind == .toMany else { return nil }
            if isEmpty { return .condition(try compiler.relatedKeys(name, matching: .constant(true)).negated) }
            return .sql(try compiler.relatedCount(RelatedCountExpression(relationship: name, predicate: nil)))
        case .column, .relatedColumn, .element:
            if rootType == String.self {
                guard isEmpty else {
                    throw unsupported(
                        expression,
                        "Swift counts a string's characters and SQLite its code points, which differ (\"é\" may be one or two); compare the string itself"
                    )
                }
                if case .element = root, !compiler.dialect.json.selectsValues {
                    // An element the backend only compares: compared with the empty string's key.
                    let value = try sql(root, context: .json)
                    let empty = try placed(.text(""), context: .json)
                    return .condition(SQLFragment("\(value.sql) = \(empty.sql)", value.values + empty.values))
                }
                let value = try text(root)
                return .condition(SQLFragment("\(value.sql) = ''", value.values))
            }
            let counted: SQLFragment
            if case .column(let reference) = root {
                counted = SQLFragment(try compiler.jsonArrayLength(reference))
            } else {
                let value = try sql(root, context: nil)
                guard let length = compiler.dialect.json.arrayLength(ofValue: value.sql) else {
                    throw ModelStoreError(
                        .invalidQuery,
                        "A #Predicate on \(compiler.table.modelName) counts an array inside a JSON-stored value this way, which \(compiler.dialect.name) does not. Nothing was run.",
                        model: compiler.table.modelName, suggestion: "Filter with untranslated: .evaluateInMemory.")
                }
                counted = SQLFragment(length, value.values)
            }
            let length = "coalesce(\(counted.sql), 0)"
            return isEmpty ? .condition(SQLFragment(length + " = 0", counted.values)) : .sql(SQLFragment(length, counted.values))
        default:
            return nil
        }
    }
}

/// A type whose `count` and `isEmpty` a predicate may ask for: a JSON-stored array or set, a
/// to-many relationship's array, or a string (`isEmpty` only).
protocol SizedCollection {
    static var countKeyPath: AnyKeyPath { get }
    static var isEmptyKeyPath: AnyKeyPath { get }
}

extension Array: SizedCollection {
    static var countKeyPath: AnyKeyPath { \Array.count }
    static var isEmptyKeyPath: AnyKeyPath { \Array.isEmpty }
}

extension Set: SizedCollection {
    static var countKeyPath: AnyKeyPath { \Set.count }
    static var isEmptyKeyPath: AnyKeyPath { \Set.isEmpty }
}

extension String: SizedCollection {
    static var countKeyPath: AnyKeyPath { \String.count }
    static var isEmptyKeyPath: AnyKeyPath { \String.isEmpty }
}

extension PredicateExpressions.SequenceAllSatisfy: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let sequence = try translator.term(sequence)
        if case .relationship(let name) = sequence {
            return .condition(try translator.related(name, where: test, variable: variable.key, every: true, self))
        }
        guard case .column(let reference) = sequence else {
            throw translator.unsupported(self, "only a JSON-stored array or a to-many relationship can be tested with allSatisfy")
        }
        let (source, element, text) = try translator.jsonEach(reference, self)
        let outer = translator.bindings[variable.key]
        translator.bindings[variable.key] = .element(element, text: text)
        defer { translator.bindings[variable.key] = outer }
        let condition = try translator.condition(test)
        return .condition(
            SQLFragment("NOT EXISTS (SELECT 1 FROM \(source) WHERE NOT coalesce((\(condition.sql)), FALSE))", condition.values))
    }
}

/// A range's bounds, read from a captured `ClosedRange` or `Range` of any bound type.
protocol PredicateRangeBounds {
    var bounds: (lower: Any, upper: Any, closed: Bool) { get }
}

extension ClosedRange: PredicateRangeBounds {
    var bounds: (lower: Any, upper: Any, closed: Bool) { (lowerBound, upperBound, true) }
}

extension Range: PredicateRangeBounds {
    var bounds: (lower: Any, upper: Any, closed: Bool) { (lowerBound, upperBound, false) }
}

extension PredicateExpressions.ClosedRange: SQLTranslatable {
    /// A range of values only (`(low...high).contains($0.x)`), built here rather than by
    /// evaluating it: Swift traps on `low...high` with `low > high`, which must not bring down
    /// the process that runs the query.
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let bounds = try PredicateTranslator.constantBounds(lower, upper, self, translator)
        return .constant(bounds.lower...bounds.upper)
    }
}

extension PredicateExpressions.Range: SQLTranslatable {
    /// As `ClosedRange`: `low..<high` with `low > high` traps in Swift.
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let bounds = try PredicateTranslator.constantBounds(lower, upper, self, translator)
        return .constant(bounds.lower..<bounds.upper)
    }
}

extension PredicateTranslator {
    /// Both bounds of a range built in a predicate, evaluated, or `.invalidQuery` when they
    /// use the record (then only `contains` translates the range) or are out of order.
    static func constantBounds<L: PredicateExpression, U: PredicateExpression>(
        _ lower: L, _ upper: U, _ expression: any PredicateExpression, _ translator: PredicateTranslator
    ) throws -> (lower: L.Output, upper: L.Output) where L.Output == U.Output, L.Output: Comparable {
        guard let low = try? lower.evaluate(PredicateBindings()), let high = try? upper.evaluate(PredicateBindings()) else {
            throw translator.unsupported(expression, "a range built from a record's values is only translated inside contains")
        }
        guard low <= high else {
            throw ModelStoreError(
                .invalidQuery,
                "A #Predicate on \(translator.compiler.table.modelName) builds a range from \(low) up to \(high); Swift cannot form a range whose lower bound is above its upper bound (evaluating it would stop the program).",
                model: translator.compiler.table.modelName, value: "\(low)...\(high)")
        }
        return (low, high)
    }
}

extension PredicateExpressions.RangeExpressionContains: SQLTranslatable {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let item = try translator.term(element)
        let context = PredicateTranslator.context(of: item)
        let bounds: (lower: PredicateTerm, upper: PredicateTerm, closed: Bool)
        if let built = range as? any PredicateRangeParts {
            // Built in the predicate: its bounds may be the record's values.
            let parts = built.parts
            bounds = (try translator.term(parts.lower), try translator.term(parts.upper), parts.closed)
            if case .constant = bounds.lower, case .constant = bounds.upper { _ = try translator.term(range) }  // refuses low > high
        } else if case .constant(let captured) = try translator.term(range), let range = captured as? any PredicateRangeBounds {
            let (lower, upper, closed) = range.bounds
            bounds = (.constant(lower), .constant(upper), closed)
        } else {
            throw translator.unsupported(self, "only a ClosedRange or Range translates")
        }
        try translator.requireComparable(item, bounds.lower, "compares")
        try translator.requireComparable(item, bounds.upper, "compares")
        let value = try translator.sql(item, context: context)
        let lower = try translator.sql(bounds.lower, context: context)
        let upper = try translator.sql(bounds.upper, context: context)
        let collation = try translator.orderingCollation(item)
        let sql =
            "(\(lower.sql) <= \(value.sql)\(collation) AND \(value.sql) \(bounds.closed ? "<=" : "<") \(upper.sql)\(collation))"
        return .condition(SQLFragment(sql, lower.values + value.values + value.values + upper.values))
    }
}

/// The bounds of a range built inside a predicate (`$0.low...$0.high`).
protocol PredicateRangeParts {
    var parts: (lower: any PredicateExpression, upper: any PredicateExpression, closed: Bool) { get }
}

extension PredicateExpressions.ClosedRange: PredicateRangeParts {
    var parts: (lower: any PredicateExpression, upper: any PredicateExpression, closed: Bool) { (lower, upper, true) }
}

extension PredicateExpressions.Range: PredicateRangeParts {
    var parts: (lower: any PredicateExpression, upper: any PredicateExpression, closed: Bool) { (lower, upper, false) }
}
