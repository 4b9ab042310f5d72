#if PostgreSQL
    import Foundation
    @testable import ModelStore
    import ModelStorePostgres
    import Testing

    private let tlsServerConfigured = Backend.postgresURL != nil || Backend.postgresRequired

    /// TLS from the URL, as libpq reads `sslmode` and `sslrootcert`, against a private cluster
    /// that listens on localhost with a certificate for "localhost" signed by a test authority.
    @Suite("PostgreSQL: TLS from the URL", .enabled(if: tlsServerConfigured), .serialized)
    struct PostgresTLSTests {
        private struct Row: Decodable, Sendable { var ssl: Bool }

        /// Whether the store's connection is encrypted, as the server sees it.
        private func encrypted(_ store: ModelStore) throws -> Bool {
            try store.findFirst(Row.self, sql: "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")?.ssl == true
        }

        private func open(_ url: String) throws -> ModelStore {
            try ModelStore(postgres: url)
        }

        @Test func everySSLModeConnectsAsLibpqWouldAndVerifiesWhatItPromises() throws {
            let cluster = try PrivateCluster(port: 54_347, tls: true)
            defer { cluster.stop() }
            let base = "postgres://modelstore@localhost:54347/modelstore"
            let authority = cluster.certificateAuthority

            // Encrypted, and verified where the mode verifies.
            for query in [
                "sslmode=verify-full&sslrootcert=\(authority)", "sslmode=verify-ca&sslrootcert=\(authority)",
                "sslmode=require", "sslmode=require&sslrootcert=\(authority)", "sslmode=prefer",
            ] {
                let store = try open(base + "?" + query)
                #expect(try encrypted(store), "\(query)")
                try store.close()
            }
            // Plain when asked, or by default.
            for query in ["sslmode=disable", ""] {
                let store = try open(base + (query.isEmpty ? "" : "?" + query))
                #expect(try !encrypted(store), "\(query)")
                try store.close()
            }
            // verify-full refuses a certificate no trusted authority signed (the system's roots
            // do not know the test authority), and one that names another host.
            for url in [
                base + "?sslmode=verify-full",
                "postgres://modelstore@127.0.0.1:54347/modelstore?sslmode=verify-full&sslrootcert=\(authority)",
            ] {
                let error = #expect(throws: ModelStoreError.self) { try open(url) }
                #expect(error?.code == .cannotOpen, "\(url)")
                #expect(error?.suggestion?.contains("certificate") == true, "\(url): \(error?.suggestion ?? "")")
                #expect(error?.suggestion?.contains("password") == false, "\(url): \(error?.suggestion ?? "")")
            }
            // verify-ca checks the authority, not the name.
            let byAddress = try open("postgres://modelstore@127.0.0.1:54347/modelstore?sslmode=verify-ca&sslrootcert=\(authority)")
            #expect(try encrypted(byAddress))
            try byAddress.close()
        }

        @Test func aModeOrCertificateFileTheURLGetsWrongIsRefusedNamingIt() throws {
            let unknown = #expect(throws: ModelStoreError.self) {
                try PostgresConfiguration(url: "postgres://app@localhost/shop?sslmode=always")
            }
            #expect(unknown?.code == .cannotOpen)
            #expect(unknown?.value == "always")
            #expect(unknown?.suggestion?.contains("verify-full") == true)
            let missing = "/nonexistent/ca-\(UUID().uuidString).pem"
            let file = #expect(throws: ModelStoreError.self) {
                try PostgresConfiguration(url: "postgres://app@localhost/shop?sslmode=verify-full&sslrootcert=\(missing)")
            }
            #expect(file?.code == .cannotOpen)
            #expect(file?.message.contains(missing) == true, "\(file?.message ?? "")")
            // A client certificate, or a misspelt TLS setting, would be ignored: refused.
            for item in ["sslcert=/tmp/client.pem", "ssl_mode=require", "sslkey=/tmp/k.pem"] {
                let ignored = #expect(throws: ModelStoreError.self) {
                    try PostgresConfiguration(url: "postgres://app@localhost/shop?" + item)
                }
                #expect(ignored?.code == .cannotOpen, "\(item)")
                #expect(ignored?.value == String(item.prefix { $0 != "=" }), "\(item)")
            }
        }

        @Test func aRepeatedModeTakesTheLastAsLibpqDoesAndSSLTrueRequiresTLS() throws {
            let cluster = try PrivateCluster(port: 54_348, tls: true)
            defer { cluster.stop() }
            let base = "postgres://modelstore@localhost:54348/modelstore"
            let upgraded = try open(base + "?sslmode=disable&sslmode=require")
            #expect(try encrypted(upgraded))
            try upgraded.close()
            let downgraded = try open(base + "?sslmode=require&sslmode=disable")
            #expect(try !encrypted(downgraded))
            try downgraded.close()
            let ssl = try open(base + "?ssl=true")
            #expect(try encrypted(ssl))
            try ssl.close()
            // sslrootcert=system: the system's authorities and the full check, which the test
            // authority's certificate does not pass.
            let system = #expect(throws: ModelStoreError.self) { try open(base + "?sslmode=require&sslrootcert=system") }
            #expect(system?.suggestion?.contains("certificate") == true, "\(system?.suggestion ?? "")")
        }

        @Test func aSocketConnectionIgnoresTheModeAsLibpqDoes() throws {
            let url = try #require(Backend.postgresURL)
            var server = try PostgresConfiguration(url: url + (url.contains("?") ? "&" : "?") + "sslmode=require")
            let schema = "t_tls_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(12)
            server.schema = String(schema)
            let store = try ModelStore(postgres: server)
            defer {
                _ = try? store.execute(SQLStatement(stringLiteral: "DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE"))
                try? store.close()
            }
            #expect(try !encrypted(store))
            #expect(try store.findFirst(Row.self, sql: "SELECT true AS ssl")?.ssl == true)
        }
    }
#endif
