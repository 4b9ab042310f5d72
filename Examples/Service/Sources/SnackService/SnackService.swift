// A JSON service over a ModelStore PostgreSQL store, with Hummingbird 2: CRUD on snacks, a
// batch import, and a live endpoint (Server-Sent Events) fed by the store's change stream
// and its durable history, so a client that reconnects resumes where it stopped.
//
//   export MODELSTORE_POSTGRES_URL="$(scripts/postgres-cluster.sh start /tmp/pg)"
//   swift run --package-path Examples/Service snack-service          # PORT=8080 by default
//
//   curl -X POST localhost:8080/snacks -d '{"name":"Plum","price":1.5}'
//   curl localhost:8080/snacks?maxPrice=2
//   curl -N localhost:8080/snacks/changes                           # follows every change
//
// Several instances may run against one database: each hears the others' writes.
import Foundation
import Hummingbird
import Logging
import ModelStore
import ModelStorePostgres
import ServiceLifecycle

/// The stored model: a plain `Codable` struct. The database assigns `id` when it is nil.
struct Snack: StoredModel, Equatable, ResponseCodable {
    var id: Int64?
    var name: String
    /// Nil in a save keeps the stored price (ModelStore's merge rule).
    var price: Double?
    var maker: String?
    static let primaryKey = ["id"]
    static let indexes: [TableIndex<Snack>] = [.on(\.name)]
    /// Every committed change is kept with a token, for `GET /snacks/changes`.
    static let keepsHistory = true
}

@main
struct SnackService {
    static func main() async throws {
        var logger = Logger(label: "snack-service")
        logger.logLevel = .info
        guard let url = ProcessInfo.processInfo.environment["MODELSTORE_POSTGRES_URL"] else {
            logger.critical("Set MODELSTORE_POSTGRES_URL (scripts/postgres-cluster.sh start /tmp/pg prints one).")
            exit(2)
        }
        var server = try PostgresConfiguration(url: url)
        server.logger = logger
        server.applicationName = "snack-service"
        // A service may start before its database: calls fail with `.connectionLost` until the
        // server answers, then the store connects.
        server.connectsAtOpen = false
        let store = try ModelStore(postgres: server)

        let port = Int(ProcessInfo.processInfo.environment["PORT"] ?? "") ?? 8080
        var app = Application(
            router: routes(store),
            configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "snack-service"),
            onServerRunning: { channel in
                // The smoke test waits for this line (PORT=0 picks a free port).
                FileHandle.standardOutput.write(Data("listening on \(channel.localAddress?.port ?? port)\n".utf8))
            },
            logger: logger
        )
        // Shut down in reverse: the HTTP server drains its requests, then the store closes.
        app.addServices(ModelStoreService(store))
        try await app.runService()
        logger.info("stopped")
    }
}
