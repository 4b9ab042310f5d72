/// The statements the engine runs on a model's table, cached per connection by
/// `StatementKey` so SQL text is built once per shape and never hashed on hot paths.
enum StatementCatalog: Int {
    case findByKey, findAll, count, existsByKey
    case deleteByKey, deleteAll
    /// UPDATE of the columns in the shape, by key.
    case updateByKey
    /// INSERT of the columns in the shape.
    case insert
    /// INSERT of the columns in the shape that does nothing when the key exists.
    case insertIfAbsent

    static func sql(_ operation: StatementCatalog, _ table: TableDescription, shape: ColumnMask = ColumnMask()) -> String {
        let from = " FROM \(table.quotedTable)"
        switch operation {
        case .findByKey:
            return "SELECT \(table.selectList)\(from) WHERE \(table.keyCondition)"
        case .findAll:
            return "SELECT \(table.selectList)\(from) ORDER BY \(table.keyOrder)"
        case .count:
            return "SELECT count(*)\(from)"
        case .existsByKey:
            return "SELECT 1\(from) WHERE \(table.keyCondition) LIMIT 1"
        case .deleteByKey:
            return "DELETE\(from) WHERE \(table.keyCondition)"
        case .deleteAll:
            return "DELETE\(from)"
        case .updateByKey:
            let assignments = table.columns.indices.filter(shape.contains)
                .map { quoted(table.columns[$0].name) + " = ?" }.joined(separator: ", ")
            return "UPDATE \(table.quotedTable) SET \(assignments) WHERE \(table.keyCondition)"
        case .insert, .insertIfAbsent:
            let positions = table.columns.indices.filter(shape.contains)
            let names = positions.map { quoted(table.columns[$0].name) }.joined(separator: ", ")
            let marks = Array(repeating: "?", count: positions.count).joined(separator: ", ")
            var sql = "INSERT INTO \(table.quotedTable) (\(names)) VALUES (\(marks))"
            if operation == .insertIfAbsent {
                sql += " ON CONFLICT (\(table.keyNames.map(quoted).joined(separator: ", "))) DO NOTHING"
            }
            return sql
        }
    }
}

extension Session {
    /// The cached statement for `operation` on `table` (of model `owner`) and `shape`.
    @inline(__always)
    func statement(
        _ operation: StatementCatalog, _ table: TableDescription, owner: ObjectIdentifier,
        shape: ColumnMask = ColumnMask()
    ) throws -> Statement {
        try connection.cachedStatement(StatementKey(owner: owner, operation: operation.rawValue, shape: shape)) {
            StatementCatalog.sql(operation, table, shape: shape)
        }
    }
}

extension TableDescription {
    /// `"snackId"` or `"a", "b"`: the primary key, for ORDER BY.
    var keyOrder: String {
        keyNames.map(quoted).joined(separator: ", ")
    }
}
