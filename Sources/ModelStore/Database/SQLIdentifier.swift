/// Quotes a table or column name for SQL, so names with quotes, spaces or SQL keywords are
/// safe: `my "odd" name` becomes `"my ""odd"" name"`.
@inline(__always)
package func quoted(_ identifier: String) -> String {
    // Queries quote every column they name; names almost never hold a quote, and Foundation's
    // replacingOccurrences would dominate building a query's SQL.
    guard identifier.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + identifier + "\"" }
    var escaped = "\""
    for character in identifier {
        if character == "\"" { escaped.append("\"") }
        escaped.append(character)
    }
    return escaped + "\""
}
