import Foundation
import Hummingbird
import Logging
import ModelStore
import ServiceLifecycle

/// What `GET /snacks` accepts in its query string.
struct SnackQuery: Decodable {
    var maxPrice: Double?
    var page: Int?
    var rows: Int?
}

/// A batch import's answer.
struct ImportResult: ResponseEncodable {
    var inserted: Int
    var updated: Int
    var unchanged: Int
}

/// The routes, all through `store`.
func routes(_ store: ModelStore) -> Router<BasicRequestContext> {
    let router = Router()
    router.get("health") { _, _ in "ok" }

    // A page of snacks by name, optionally up to a price.
    router.get("snacks") { request, context -> [Snack] in
        let query = try request.uri.decodeQuery(as: SnackQuery.self, context: context)
        let rows = query.rows ?? 50
        guard (1...500).contains(rows), (query.page ?? 0) >= 0 else {
            throw HTTPError(.badRequest, message: "rows is 1…500 and page is 0 or more")
        }
        var snacks = Snack.all()
        if let maxPrice = query.maxPrice { snacks = snacks.filter(\.price <= maxPrice) }
        return try await storeCall { try await snacks.order(.ascending(\.name)).page(query.page ?? 0, rows: rows).findAll(in: store) }
    }

    router.get("snacks/:id") { _, context -> Snack in
        let id = try context.parameters.require("id", as: Int64.self)
        guard let snack = try await storeCall({ try await Snack.find(key: id, in: store) }) else {
            throw HTTPError(.notFound, message: "no snack \(id)")
        }
        return snack
    }

    // A new snack: the database assigns its id; the answer is the record as stored.
    router.post("snacks") { request, context -> EditedResponse<Snack> in
        var snack = try await request.decode(as: Snack.self, context: context)
        snack.id = nil
        let saved = try await storeCall { try await snack.saved(in: store) }
        return EditedResponse(status: .created, response: saved)
    }

    // Merges into a stored snack: a property left out (nil) keeps its stored value. Only
    // the database assigns ids (POST): a client choosing one could take ids far ahead, and
    // every id the sequence would hand out after it.
    router.put("snacks/:id") { request, context -> Snack in
        var snack = try await request.decode(as: Snack.self, context: context)
        let id = try context.parameters.require("id", as: Int64.self)
        snack.id = id
        let changes = snack
        let stored = try await storeCall {
            try await store.transaction {
                try changes.update(in: store)  // `.notFound` (404) when no snack has the id
                return try Snack.find(key: id, in: store)
            }
        }
        guard let stored else { throw HTTPError(.notFound, message: "no snack \(id)") }
        return stored
    }

    router.delete("snacks/:id") { _, context -> HTTPResponse.Status in
        let id = try context.parameters.require("id", as: Int64.self)
        return try await storeCall { try await Snack.delete(key: id, in: store) } == 0 ? .notFound : .noContent
    }

    // A JSON array saved in one transaction: all of it, or (on any error) none of it.
    router.post("snacks/import") { request, context -> ImportResult in
        let snacks = try await request.decode(as: [Snack].self, context: context)
        let outcome = try await storeCall { try await Snack.save(snacks, in: store) }
        return ImportResult(inserted: outcome.inserted, updated: outcome.updated, unchanged: outcome.unchanged)
    }

    router.get("snacks/changes") { request, _ -> Response in
        try await changes(request, store: store)
    }
    return router
}

/// `GET /snacks/changes`: Server-Sent Events, one event per page of the durable history. Each
/// event's id is the history token after it, so a client that reconnects with `Last-Event-ID`
/// (browsers' `EventSource` does by itself) gets exactly the changes it missed, from any
/// instance of the service. Without one, it starts from now; `?from=beginning` replays all.
///
/// The change stream only wakes the loop: the history is what is read, so a notification
/// lost while nobody listened loses nothing.
func changes(_ request: Request, store: ModelStore) async throws -> Response {
    let start: HistoryToken
    if let lastID = request.headers.first(where: { $0.name.canonicalName == "last-event-id" })?.value {
        guard let data = Data(base64Encoded: lastID), let token = try? JSONDecoder().decode(HistoryToken.self, from: data) else {
            throw HTTPError(.badRequest, message: "Last-Event-ID is not a token this service sent")
        }
        start = token
    } else if request.uri.queryParameters["from"] == "beginning" {
        start = .beginning
    } else {
        start = try await storeCall { try await store.historyToken() }
    }
    // Read the first page now, so a purged or foreign token is a 410 or 400, not a stream
    // that ends at once.
    _ = try await storeCall { try await store.history(since: start, limit: 1) }
    let body = ResponseBody { writer in
        // The loop waits on `wake`: the store's change stream pokes it after each commit to
        // the table (by any process or machine), a timer every 15 s (a comment line keeps
        // proxies from closing an idle stream and finds a client that went away), and a
        // graceful shutdown finishes it (the HTTP server waits for open requests before the
        // store closes).
        let (wake, poke) = AsyncStream<Wake>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // Subscribed before the first read, so no commit falls between a read and the wait.
        let changes = store.changes(of: Snack.self).makeAsyncIterator()
        let feed = Task {
            var changes = changes
            while await changes.next() != nil { poke.yield(.changed) }
            poke.finish()  // the store closed
        }
        let heartbeat = Task {
            while (try? await Task.sleep(for: .seconds(15))) != nil { poke.yield(.idle) }
        }
        defer {
            feed.cancel()
            heartbeat.cancel()
        }
        try await withGracefulShutdownHandler {
            var token = start
            var wakes = wake.makeAsyncIterator()
            // Read at once: what committed after `start` and before the subscription.
            var reason: Wake? = .changed
            while reason != nil {
                // Every wake reads the history, a heartbeat's too: the buffer keeps only the
                // newest wake, so a heartbeat may have taken a change's place.
                var page: HistoryPage
                var sent = false
                repeat {
                    page = try await store.history(since: token, limit: 500)
                    token = page.token
                    let events = page.changes.filter { $0.isChange(of: Snack.self) }.map(ChangeEvent.init)
                    guard !events.isEmpty else { continue }
                    let id = try JSONEncoder().encode(token).base64EncodedString()
                    let data = String(decoding: try JSONEncoder().encode(events), as: UTF8.self)
                    try await writer.write(ByteBuffer(string: "id: \(id)\nevent: changes\ndata: \(data)\n\n"))
                    sent = true
                } while !page.isComplete
                if reason == .idle, !sent { try await writer.write(ByteBuffer(string: ": idle\n\n")) }
                reason = await wakes.next()
            }
        } onGracefulShutdown: {
            poke.finish()
        }
        try await writer.finish(nil)
    }
    var headers = HTTPFields()
    headers[.contentType] = "text/event-stream"
    headers[.cacheControl] = "no-cache"
    return Response(status: .ok, headers: headers, body: body)
}

/// Why the live loop woke.
enum Wake: Sendable {
    case changed, idle
}

/// One change in an event: `{"op":"insert","id":7}` (`"reload"`: rows changed that the server
/// did not name, such as a `TRUNCATE`; read the list again).
struct ChangeEvent: Encodable {
    var op: String
    var id: Int64?

    init(_ change: HistoryChange) {
        switch change.operation {
        case .insert: op = "insert"
        case .update: op = "update"
        case .delete: op = "delete"
        case .unknownRows: op = "reload"
        }
        id = try? change.key(as: Int64.self)
    }
}

/// Runs a store call, turning its `ModelStoreError` into the HTTP status a client can act on,
/// with the error's sentence (it names the model, the property and the value) as the message.
func storeCall<T>(_ call: () async throws -> T) async throws -> T {
    do {
        return try await call()
    } catch let error as ModelStoreError {
        let status: HTTPResponse.Status
        switch error.code {
        case .notFound: status = .notFound
        case .alreadyExists, .constraintViolation: status = .conflict
        case .invalidKey, .invalidQuery, .encodingFailed, .validationFailed: status = .badRequest
        case .historyPurged: status = .gone
        case .connectionLost, .busy, .timedOut, .closed, .readOnly: status = .serviceUnavailable
        default: status = .internalServerError
        }
        // The client gets the sentence (it names the model, the property and the value); the
        // log gets the whole error, with its SQL.
        if status == .internalServerError || status == .serviceUnavailable {
            Logger(label: "snack-service").error("\(error)")
        }
        throw HTTPError(status, message: error.message)
    }
}
