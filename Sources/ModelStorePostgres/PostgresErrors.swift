#if PostgreSQL
    import ModelStore

    /// PostgreSQL's SQLSTATEs, mapped to the codes the engine and callers match on.
    extension ModelStoreError {
        /// An error a server database reported: `state` is its SQLSTATE, mapped to the code the
        /// engine and callers match on (what SQLite's result codes map to, where they agree).
        /// The name the server quoted after `prefix` in its message (`relation "x" does not exist`).
        private static func name(after prefix: String, in message: String) -> String? {
            guard let start = message.range(of: prefix) else { return nil }
            let rest = message[start.upperBound...]
            return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
        }

        static func server(state: String?, message: String, sql: String?, column: String? = nil) -> ModelStoreError {
            let code: Code
            var summary = message
            switch state ?? "" {
            case "23503":
                // Said as SQLite's refusal is said, naming the referring model: the server names
                // the tables (`update or delete on table "P" … on table "C"`, or `insert or
                // update on table "C"` with `… is not present in table "P"`).
                let deleting = message.hasPrefix("update or delete")
                let first = name(after: "on table \"", in: message)
                let second = message.range(of: "\" on table \"").flatMap {
                    name(after: "\" on table \"", in: String(message[$0.lowerBound...]))
                }
                let child = deleting ? second : first
                let parent = deleting ? first : name(after: "present in table \"", in: message)
                if let child, let parent {
                    return .backend(
                        .constraintViolation,
                        "A foreign key refused the change: \(child) records would refer to missing \(parent) records (\(message)).",
                        message: message, state: state, sql: sql, column: column, model: child,
                        suggestion:
                            "Delete or unlink the referring records in the same transaction, or use the delete rule nullify or cascade.")
                }
                code = .constraintViolation
                summary = "A constraint refused the change: \(message)."
            case "23505", "23502", "23514", "23P01", "23000":
                code = .constraintViolation
                summary = "A constraint refused the change: \(message)."
            case "40001", "40P01":
                code = .busy
                summary = "The server could not order this transaction with another one (\(message)); it was rolled back."
            case "55P03":
                // lock_timeout, which a store sets to its busy timeout.
                code = .busy
                summary =
                    "Another connection held a lock this call needed for longer than the busy timeout (\(message)); the call was rolled back."
            case "53100":
                code = .storeFull
            case "54000" where message.contains("tsvector"):
                // A searchable text whose words pass the server's limit for one `tsvector`.
                let table = sql.flatMap {
                    Self.name(after: "INTO \"", in: $0) ?? Self.name(after: "UPDATE \"", in: $0) ?? Self.name(after: " ON \"", in: $0)
                }
                return .backend(
                    .unsupported,
                    "A searchable text\(table.map { " of \($0)" } ?? "") is too long for PostgreSQL's full-text index, whose words may take at most 1 MB for one record (\(message)). Nothing was written.",
                    message: message, state: state, sql: sql, column: column,
                    suggestion: "Store the text in a property that is not searchable, or search a shorter part of it.")
            case "54000", "54001", "54011", "54023":
                code = .invalidQuery
            case "42P01", "42703":
                // A table or column the store checked is gone: renamed or dropped behind its back.
                let drift =
                    state == "42703"
                    ? SchemaDrift(column: column, table: nil)
                    : SchemaDrift(column: nil, table: Self.name(after: "relation \"", in: message))
                return .backend(
                    .schemaMismatch, drift.explanation + " (\(message))", message: message, state: state, sql: sql, column: drift.column,
                    suggestion: drift.suggestion)
            case "22P05" where message.contains("Unicode escape"):
                // A JSON-stored value holds a string with a NUL (`\u0000`), which the server
                // stores but its JSON functions cannot read: refused by name.
                return .backend(
                    .unsupported,
                    "A JSON-stored value holds a string with a NUL character (\\u0000), which PostgreSQL's JSON functions cannot read (\(message)): a condition or ordering inside that property cannot run on the server. Nothing was changed.",
                    message: message, state: state, sql: sql, column: column,
                    suggestion: "Filter on other properties, or remove the NUL characters from the stored strings.")
            case "22P02" where message.contains(PostgresPredicates.refusalPrefix):
                // A translated #Predicate met a record on which Swift's evaluation would trap:
                // its refusal, a cast of the refusal's text (`PostgresPredicates.refusal`).
                var text = message[message.range(of: PostgresPredicates.refusalPrefix)!.upperBound...]
                if text.hasSuffix("\"") { text = text.dropLast() }
                return .backend(
                    .invalidQuery, text + " Nothing was changed.", message: message, state: state, sql: sql, column: column,
                    suggestion: "Guard the operation in the predicate (b != 0 ? a / b : 0), or fix the stored values.")
            case "22012":
                return .backend(
                    .invalidQuery,
                    "The query divides by zero on a stored record (\(message)), where Swift stops the program or gives infinity or NaN. Nothing was changed.",
                    message: message, state: state, sql: sql, column: column,
                    suggestion: "Guard the division in the condition (b != 0 ? a / b : 0), or fix the stored values.")
            case "22003" where message.contains("underflow"):
                return .backend(
                    .invalidQuery,
                    "The query computes a Double too small for the server on a stored record (\(message)), where Swift gives 0 or a subnormal number. Nothing was changed.",
                    message: message, state: state, sql: sql, column: column,
                    suggestion: "Compare the stored value itself, or filter with untranslated: .evaluateInMemory.")
            case "22003" where message.contains("bigint out of range") || message.contains("value out of range"):
                return .backend(
                    .invalidQuery,
                    "The query computes beyond the range of its type on a stored record (\(message)), where Swift stops the program or gives infinity. Nothing was changed.",
                    message: message, state: state, sql: sql, column: column,
                    suggestion: "Compare the stored value itself, or fix the stored values.")
            case "22P02" where message.contains("type json"):
                return .backend(
                    .decodingFailed, ModelStoreError.notJSON(message), message: message, state: state, sql: sql, column: column,
                    suggestion: ModelStoreError.notJSONSuggestion)
            case "22P02" where message.contains("pg_snapshot"):
                // Only a history token carries a snapshot: one this store's history never gave.
                return .backend(
                    .historyPurged,
                    "The history token is not one this store's history gave (its snapshot is not the server's: \(message)); nothing was read.",
                    message: message, state: state, sql: sql, column: column,
                    suggestion: "Read the consumer's data again from the records, then go on from historyToken().")
            case "42804", "22P02":
                // A table, column or type that is not what the store checked: changed behind its back.
                code = .schemaMismatch
                summary =
                    "The stored table is not what the model expects (\(message)): it was changed behind the store's back. Nothing was written."
            case "25006":
                code = .readOnly
            case "57014":
                // query_canceled: the statement timeout a time limit set, or a cancel request.
                code = message.contains("statement timeout") ? .timedOut : .cancelled
            case let other where other.hasPrefix("08") || other == "57P01" || other == "57P02" || other == "57P03":
                code = .connectionLost
                summary =
                    "The connection to the database server was lost: \(message). The server rolled back any open transaction; nothing of the call was written."
            default:
                code = .server
            }
            return .backend(
                code, summary, message: message, state: state, sql: sql, column: column,
                retryable: state == "40001" || state == "40P01")
        }
    }
#endif
