#if PostgreSQL
    import Foundation
    import Logging
    import Metrics
    import ModelStore
    import NIOSSL
    import PostgresNIO

    /// Where a PostgreSQL server is and how to log in: what `ModelStore(postgres:)` connects to.
    ///
    /// ```swift
    /// let local = try PostgresConfiguration(url: "postgres://app@localhost:5432/shop")
    /// let socket = PostgresConfiguration(socketPath: "/run/postgresql/.s.PGSQL.5432", username: "app", database: "shop")
    /// ```
    ///
    /// TLS is off unless asked for: by the URL's `sslmode` (and `sslrootcert`), as libpq reads
    /// them, or `useTLS(_:rootCertificates:)`. A server across an open network needs
    /// `verify-full`. `PostgresConfiguration(connection:)` takes postgres-nio's own
    /// configuration as it is.
    public struct PostgresConfiguration: Sendable {
        /// How connections use TLS, as libpq's `sslmode` names it. On a Unix-domain socket
        /// there is no TLS, and the mode is ignored, as libpq ignores it.
        public enum TLSMode: String, Sendable, CaseIterable {
            /// No TLS.
            case disable
            /// TLS when the server offers it, without checking its certificate (libpq's
            /// `allow`, which tries without TLS first, is taken as `prefer`).
            case allow, prefer
            /// TLS always; the certificate is checked only against `rootCertificates` when
            /// given (as libpq does with `sslrootcert`), else not at all.
            case require
            /// TLS always, with a certificate signed by a trusted authority, for any host name.
            case verifyCA = "verify-ca"
            /// TLS always, with a certificate signed by a trusted authority and naming the host
            /// connected to: the mode for a server across a network you do not control.
            case verifyFull = "verify-full"
        }

        /// postgres-nio's configuration of each connection.
        public var connection: PostgresConnection.Configuration
        /// Where the server is, for messages (never the password).
        public var description: String
        /// The schema the store's tables live in, created when missing; nil for the login's
        /// default (`public`). Several stores, or applications, can share one database this way.
        public var schema: String?
        /// The longest a statement may run on the server (PostgreSQL's `statement_timeout`); nil,
        /// the default, for no limit. A statement past it fails and its call throws; the client
        /// also gives up on a connection that stays silent this long and a little more, so a
        /// network that drops a server without closing the connection cannot hold a call forever.
        ///
        /// ```swift
        /// var server = try PostgresConfiguration(url: "postgres://app@db.internal/shop")
        /// server.statementTimeout = 30
        /// ```
        public var statementTimeout: TimeInterval?

        /// The name the server shows for the store's connections (`application_name` in
        /// `pg_stat_activity`). Default: "ModelStore".
        public var applicationName = "ModelStore"

        /// Where the store's connections log (swift-log): each connect, reconnect and lost
        /// connection at `.info`; every statement with its time, and each that fails with its
        /// SQLSTATE, at `.debug`. A statement is logged as its SQL, never its bound values (bind
        /// secrets as values: a literal written into raw SQL is part of the SQL). Failures are
        /// not logged above `.debug`: the engine handles many itself (a conflict retried, a
        /// batch's merge on a unique index), and the caller receives every other one. Default:
        /// a logger that logs nothing.
        ///
        /// ```swift
        /// server.logger = Logger(label: "shop.database")
        /// ```
        public var logger = Logger(label: "ModelStorePostgres", factory: { _ in SwiftLogNoOpLogHandler() })

        /// Where the store's connections report metrics (swift-metrics); nil, the default, for
        /// the process's (`MetricsSystem.bootstrap`, which must run before the store opens).
        /// Reported: the timer `modelstore_statement_duration_seconds` (dimension `statement`:
        /// the SQL's first word, `SELECT`, `INSERT`, `BEGIN`, …), the counter
        /// `modelstore_statement_errors_total` (dimension `sqlstate`: the server's SQLSTATE,
        /// `23505`, `40001`, …; a cancelled call is not counted), and the counters
        /// `modelstore_connections_opened_total` and `modelstore_connections_lost_total`.
        public var metricsFactory: (any MetricsFactory)?

        /// Whether `ModelStore(postgres:)` connects at once (the default), so that a wrong
        /// address or password fails there. When false, the store opens without reaching the
        /// server — for a service that may start before its database (containers started
        /// side by side): each call until the server answers throws `.connectionLost`, and the
        /// first that reaches it connects and runs the migration steps.
        ///
        /// ```swift
        /// var server = try PostgresConfiguration(url: "postgres://app@db/shop")
        /// server.connectsAtOpen = false
        /// let store = try ModelStore(postgres: server)   // even while db is starting
        /// ```
        public var connectsAtOpen = true

        /// Whether the connection goes through a Unix-domain socket, which has no TLS.
        private var usesSocket = false

        /// How long connecting may take before it fails (`.cannotOpen` while a store opens,
        /// `.connectionLost` later). Default: 10 seconds.
        public var connectTimeout: TimeInterval {
            get { TimeInterval(connection.options.connectTimeout.nanoseconds) / 1e9 }
            set { connection.options.connectTimeout = .milliseconds(Int64((newValue * 1000).rounded())) }
        }

        /// Connects as `username` to `database` on `host` and `port`, without TLS.
        public init(host: String, port: Int = 5432, username: String, password: String? = nil, database: String) {
            self.connection = .init(host: host, port: port, username: username, password: password, database: database, tls: .disable)
            self.description = "postgres://\(username)@\(host):\(port)/\(database)"
        }

        /// Connects through the server's Unix-domain socket file (`…/.s.PGSQL.5432`).
        public init(socketPath: String, username: String, password: String? = nil, database: String) {
            self.connection = .init(unixSocketPath: socketPath, username: username, password: password, database: database)
            self.description = "postgres://\(username)@\(socketPath)/\(database)"
            self.usesSocket = true
        }

        /// Sets how the store's connections use TLS. `rootCertificates` is a PEM file of the
        /// authorities to trust (libpq's `sslrootcert`); without it, the system's.
        ///
        /// ```swift
        /// var server = try PostgresConfiguration(url: "postgres://app@db.example.com/shop")
        /// try server.useTLS(.verifyFull, rootCertificates: "/etc/ssl/certs/db-ca.pem")
        /// ```
        /// - Throws: `ModelStoreError` `.cannotOpen` when `rootCertificates` cannot be read
        ///   as PEM certificates.
        public mutating func useTLS(_ mode: TLSMode, rootCertificates: String? = nil) throws {
            guard mode != .disable, !usesSocket else {
                connection.tls = .disable
                return
            }
            var tls = TLSConfiguration.makeClientConfiguration()
            switch mode {
            case .verifyFull: tls.certificateVerification = .fullVerification
            case .verifyCA: tls.certificateVerification = .noHostnameVerification
            default: tls.certificateVerification = rootCertificates == nil ? .none : .noHostnameVerification
            }
            if let rootCertificates {
                do {
                    tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(rootCertificates))
                } catch {
                    throw ModelStoreError(
                        .cannotOpen, "The root certificates at \(rootCertificates) cannot be read as PEM certificates: \(error).",
                        value: rootCertificates,
                        suggestion: "Name a PEM file of the certificate authorities that sign the server's certificate.")
                }
            }
            let context: NIOSSLContext
            do {
                context = try NIOSSLContext(configuration: tls)
            } catch {
                throw ModelStoreError(.cannotOpen, "TLS cannot be set up for \(description): \(error).", value: mode.rawValue)
            }
            connection.tls = mode == .allow || mode == .prefer ? .prefer(context) : .require(context)
        }

        /// Takes postgres-nio's configuration as it is (TLS, timeouts, options).
        public init(connection: PostgresConnection.Configuration, description: String) {
            self.connection = connection
            self.description = description
        }

        /// Parses a connection URL: `postgres://user:password@host:port/database`. A `host`
        /// query item naming a directory connects through the socket in it, as libpq does
        /// (`postgres://app@localhost:5432/shop?host=/var/run/postgresql`). `sslmode` and
        /// `sslrootcert` set TLS as libpq reads them (see `TLSMode`; without `sslmode`, no
        /// TLS), and `connect_timeout` the seconds connecting may take.
        ///
        /// ```swift
        /// let server = try PostgresConfiguration(url: "postgres://app@db.example.com/shop?sslmode=verify-full&sslrootcert=/etc/ssl/db-ca.pem")
        /// ```
        /// - Throws: `ModelStoreError` `.cannotOpen` naming what the URL lacks, an `sslmode`
        ///   it does not know, or root certificates it cannot read.
        public init(url: String) throws {
            guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? "") else {
                throw ModelStoreError(
                    .cannotOpen, "\(url) is not a PostgreSQL URL.", suggestion: "Write it as postgres://user:password@host:port/database.")
            }
            let database = String(components.path.drop(while: { $0 == "/" }))
            guard let username = components.user, !username.isEmpty, !database.isEmpty else {
                throw ModelStoreError(
                    .cannotOpen, "The PostgreSQL URL \(Self.hidingPassword(url)) names no user or no database.",
                    suggestion: "Write it as postgres://user:password@host:port/database.")
            }
            let port = components.port ?? 5432
            let password = components.password
            if let directory = components.queryItems?.first(where: { $0.name == "host" })?.value, directory.hasPrefix("/") {
                self.init(socketPath: directory + "/.s.PGSQL.\(port)", username: username, password: password, database: database)
            } else {
                self.init(host: components.host ?? "localhost", port: port, username: username, password: password, database: database)
            }
            // libpq's spelling: seconds.
            if let seconds = components.queryItems?.first(where: { $0.name == "connect_timeout" })?.value.flatMap(Double.init), seconds > 0
            {
                connectTimeout = seconds
            }
            // As libpq: the last of a repeated parameter wins (a URL that ends in
            // sslmode=verify-full is not downgraded by an earlier sslmode=disable).
            var items: [String: String] = [:]
            for item in components.queryItems ?? [] { items[item.name] = item.value ?? "" }
            // A TLS setting this parser would otherwise ignore (a client certificate, a typo)
            // must not leave the connection less protected than the URL says.
            let understood: Set<String> = ["sslmode", "sslrootcert", "ssl"]
            if let unknown = items.keys.sorted().first(where: { $0.hasPrefix("ssl") && !understood.contains($0) }) {
                throw ModelStoreError(
                    .cannotOpen,
                    "The PostgreSQL URL \(Self.hidingPassword(url)) sets \(unknown), which ModelStore does not support (client certificates, revocation lists); it would connect without it.",
                    value: unknown,
                    suggestion:
                        "Remove it, or configure TLS in code: PostgresConfiguration(connection:) takes postgres-nio's configuration with NIOSSL's."
                )
            }
            if let name = items["application_name"], !name.isEmpty { applicationName = name }
            var root = items["sslrootcert"]
            var mode: TLSMode?
            if let value = items["sslmode"] {
                guard let parsed = TLSMode(rawValue: value) else {
                    throw ModelStoreError(
                        .cannotOpen,
                        "The PostgreSQL URL \(Self.hidingPassword(url)) asks for sslmode=\(value), which is not one of libpq's modes.",
                        value: value, suggestion: "Use one of " + TLSMode.allCases.map(\.rawValue).joined(separator: ", ") + ".")
                }
                mode = parsed
            } else if items["ssl"] == "true" {
                mode = .require  // libpq's spelling of sslmode=require
            }
            if root == "system" {
                // libpq 16: the system's authorities, and the full check they imply.
                root = nil
                mode = .verifyFull
            }
            if let mode {
                try useTLS(mode, rootCertificates: root)
            } else if let root {
                // libpq: a root certificate file alone verifies the authority when TLS is used.
                try useTLS(.prefer, rootCertificates: root)
            }
        }

        private static func hidingPassword(_ url: String) -> String {
            guard var components = URLComponents(string: url), components.password != nil else { return url }
            components.password = "•••"
            return components.string ?? url
        }
    }

    extension ModelStore {
        /// Opens a store on a PostgreSQL server: the same models and calls as on SQLite.
        ///
        /// ```swift
        /// ModelStore.default = try ModelStore(postgres: "postgres://app@localhost:5432/shop")
        /// try Snack(snackId: 1, name: "Plum").save()     // unchanged
        /// ```
        ///
        /// The store keeps up to `configuration.maximumReaders` reading connections and one
        /// writing connection, opened as they are needed; it connects once at once, so a wrong
        /// address or password fails here.
        ///
        /// - Throws: `ModelStoreError` `.cannotOpen` when the URL is malformed or the server
        ///   cannot be reached or refuses the login.
        public convenience init(postgres url: String, configuration: Configuration = Configuration()) throws {
            try self.init(postgres: PostgresConfiguration(url: url), configuration: configuration)
        }

        /// Opens a store on the PostgreSQL server `server` describes.
        /// - Throws: `ModelStoreError` `.cannotOpen` when the server cannot be reached or refuses the login.
        public convenience init(postgres server: PostgresConfiguration, configuration: Configuration = Configuration()) throws {
            try self.init(remote: PostgresOpener(server: server), configuration: configuration, connectsNow: server.connectsAtOpen)
        }

        /// What opening the server's schema with `configuration` and then using `models` would
        /// do — the migration steps still to run, and every statement the steps and the models
        /// would run — worked out by doing it all in one transaction that is rolled back
        /// (PostgreSQL's DDL rolls back too). For a deployment's check before it starts a new
        /// release. The steps' locks are held until the rollback, as they would be while
        /// migrating: plan against a copy, or at a quiet moment.
        ///
        /// ```swift
        /// let plan = try ModelStore.migrationPlan(postgres: server, configuration: .app, for: [Athlete.self, Team.self])
        /// print(plan)
        /// ```
        /// - Throws: `ModelStoreError` `.cannotOpen` when the server cannot be reached,
        ///   `.migrationFailed` naming a step that fails, `.invalidModel` for steps another
        ///   release ran, and the model errors of `migrationPlan(for:)`.
        public static func migrationPlan(
            postgres server: PostgresConfiguration, configuration: Configuration = Configuration(), for models: [any StoredModel.Type]
        ) throws -> MigrationPlan {
            try migrationPlan(remote: PostgresOpener(server: server), configuration: configuration, for: models)
        }
    }

    /// Opens the connections of a PostgreSQL store.
    struct PostgresOpener: RemoteOpener {
        let server: PostgresConfiguration

        var description: String { server.description }
        var dialect: any SQLDialect { PostgresDialect() }

        func open(_ settings: RemoteConnectionSettings) throws -> any RemoteConnection {
            try PostgresDriverConnection(server: server, settings: settings)
        }

        func changeFeedOpener(_ settings: RemoteConnectionSettings, tick: TimeInterval) -> ChangeFeedOpener? {
            let server = server
            return { publish in try PostgresChangeFeed(server: server, settings: settings, tick: tick, publish: publish) }
        }
    }
#endif
