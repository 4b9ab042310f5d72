/// Quotes a table or column name for SQL, so names with quotes, spaces or SQL keywords are
/// safe: `my "odd" name` becomes `"my ""odd"" name"`.
@inline(__always)
func quoted(_ identifier: String) -> String {
    "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}
