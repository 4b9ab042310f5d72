import Foundation
import Testing

@testable import ModelStore

#if PostgreSQL
    @testable import ModelStorePostgres
#endif

#if PostgreSQL
    /// PostgreSQL's SQL as the engine writes it, checked without a server.
    struct DialectTests {
        let postgres = PostgresDialect()

        @Test func placeholdersAreNumberedAsPostgreSQLsOutsideQuotesAndComments() {
            #expect(postgres.finish("SELECT a FROM t WHERE a = ? AND b = ?").sql == "SELECT a FROM t WHERE a = $1 AND b = $2")
            #expect(
                postgres.finish("UPDATE t SET a = ?1 WHERE a IS DISTINCT FROM ?1 AND k = ?").sql
                    == "UPDATE t SET a = $1 WHERE a IS DISTINCT FROM $1 AND k = $2")
            #expect(postgres.finish("SELECT ?3, ?").parameterCount == 4)
            let untouched = "SELECT '?', \"a?\", E'\\'?', $$ ? $$, $tag$ ? $tag$ -- ?\n FROM t /* ? /* ? */ ? */ WHERE x = ?"
            let finished = postgres.finish(untouched)
            #expect(finished.parameterCount == 1)
            #expect(finished.sql.hasSuffix("WHERE x = $1"))
            #expect(finished.sql.contains("'?'") && finished.sql.contains("\"a?\"") && finished.sql.contains("$$ ? $$"))
            #expect(finished.sql.contains("/* ? /* ? */ ? */") && finished.sql.contains("-- ?"))
            #expect(postgres.finish("SELECT $1::int").sql == "SELECT $1::int")
        }

        @Test func sqlitesEmptyListBecomesAComparisonWithAnEmptyArray() {
            #expect(postgres.finish("SELECT a FROM t WHERE a IN ()").sql == "SELECT a FROM t WHERE a = ANY ('{}')")
            #expect(
                postgres.finish("SELECT a FROM t WHERE a not in ( ) AND b = ?").sql == "SELECT a FROM t WHERE a <> ALL ('{}') AND b = $1")
            #expect(
                postgres.finish("SELECT f() FROM t WHERE \"IN\"() = 'IN ()' AND begin() > 0").sql
                    == "SELECT f() FROM t WHERE \"IN\"() = 'IN ()' AND begin() > 0")
        }

        @Test func sqliteTransactionStatementsBecomePostgreSQLs() {
            #expect(postgres.finish("BEGIN IMMEDIATE").sql == "BEGIN ISOLATION LEVEL SERIALIZABLE")
            #expect(postgres.finish("BEGIN DEFERRED").sql == "BEGIN ISOLATION LEVEL REPEATABLE READ")
            #expect(SQLiteDialect().finish("BEGIN IMMEDIATE").sql == "BEGIN IMMEDIATE")
        }

        @Test func scriptsSplitAtSemicolonsOutsideQuotesAndComments() {
            let script = """
                CREATE TABLE a (x TEXT DEFAULT 'a;b'); -- it's a comment; with a semicolon
                CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql;
                /* only a comment; */
                INSERT INTO a VALUES ('it''s');
                """
            let parts = postgres.split(script).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            #expect(parts.count == 3)
            #expect(parts[0] == "CREATE TABLE a (x TEXT DEFAULT 'a;b')")
            #expect(parts[1].hasSuffix("$$ SELECT 1; $$ LANGUAGE sql"))
            #expect(parts[2].hasSuffix("INSERT INTO a VALUES ('it''s')"))
            #expect(SQLiteDialect().split("A; B") == ["A; B"])
        }

        @Test func typesFollowTheStoredFormOnEachBackend() {
            #expect(postgres.columnType("INTEGER", isDecimal: false) == "BIGINT")
            #expect(postgres.columnType("REAL", isDecimal: false) == "DOUBLE PRECISION")
            #expect(postgres.columnType("TEXT", isDecimal: true) == "NUMERIC")
            #expect(postgres.columnType("TEXT", isDecimal: false) == "TEXT")
            #expect(postgres.columnType("BLOB", isDecimal: false) == "BYTEA")
            #expect(postgres.columnType("", isDecimal: false) == "TEXT")
            #expect(postgres.affinity(ofDeclaredType: "bigint") == "INTEGER")
            #expect(postgres.affinity(ofDeclaredType: "double precision") == "REAL")
            #expect(postgres.affinity(ofDeclaredType: "numeric") == "TEXT")
            #expect(postgres.affinity(ofDeclaredType: "bytea") == "BLOB")
            #expect(postgres.affinity(ofDeclaredType: "point") == "")
            #expect(SQLiteDialect().columnType("REAL", isDecimal: false) == "REAL")
            #expect(postgres.identical("a", "b") == "a IS NOT DISTINCT FROM b")
            #expect(SQLiteDialect().distinct("a", "b") == "a IS NOT b")
        }

    }
#endif

#if PostgreSQL
    /// What a failed connection tells the user to check, by what failed.
    struct OpeningSuggestionTests {
        @Test func aTLSFailureSuggestsCheckingTheCertificateNotThePassword() {
            for failure in [
                "sslUnsupported", "handshakeFailed(NIOSSL.BoringSSLError.sslError)", "certificate verify failed",
            ] {
                let suggestion = PostgresDriverConnection.openingSuggestion(for: failure)
                #expect(suggestion.contains("TLS") && !suggestion.contains("password"), "\(failure): \(suggestion)")
            }
            #expect(PostgresDriverConnection.openingSuggestion(for: "password authentication failed for user \"x\"").contains("password"))
            #expect(PostgresDriverConnection.openingSuggestion(for: "connection refused").contains("server runs"))
        }
    }
#endif

/// Names of ModelStore's own making on a backend that limits their length.
struct NameLimitTests {
    @Test func namesOfModelStoresOwnMakingStayWithinTheLimitAndApart() {
        let long = String(repeating: "a", count: 70)
        let first = SchemaMigrator.shortened("fk_" + long + "_0", to: 63)
        let second = SchemaMigrator.shortened("fk_" + long + "_1", to: 63)
        #expect(first.utf8.count <= 63)
        #expect(first != second)
        #expect(SchemaMigrator.shortened("fk_short_0", to: 63) == "fk_short_0")
    }
}
