// The two ladders other projects publish, so a reader can place ModelStore beside them:
//
// - **Orders**: a Northwind-style `Orders` table (15,889 rows × 14 columns, generated here in
//   the shape of jpwhite3/northwind-SQLite3's) read whole into an array of models, 10 times to
//   warm up and then 500 times, timed: the ladder of Lighter's PerformanceTestSuite, on which
//   generated SQLite code, Lighter, GRDB and SQLite.swift (and, in Point-Free's rerun,
//   SharingGRDB) are published.
// - **Users**: 1,000,000 users (UUID key, first name, surname, age) created in one
//   transaction, then the users named "Jane" fetched sorted by age, renamed to "Wendy" (about
//   200 of them), and all deleted: the ladder of the SwiftData-versus-Realm comparison (Emerge
//   Tools, 2024) and its Core Data and Lighter additions.
//
// C (hand-written SQLite, the floor), GRDB (Codable records, as its documentation shows) and
// ModelStore (the calls the README teaches) in one run; every step cross-checks the three
// answers and exits with status 1 when they differ. The published figures are quoted in
// BENCHMARKS.md with their sources and hardware.
//
//   swift run -c release --package-path Benchmarks ladder-bench [--orders-reads 500] [--users 1000000] [--reps 3] [--only orders,users]
import BenchCore
import CLadder
import Foundation
import GRDB
import ModelStore

var ordersReads = 500
var userCount = 1_000_000
var reps = 3
var only: Set<String> = ["orders", "users"]
/// Which contenders run (`--contender c,grdb,modelstore,modelstore-blob`), for profiling one alone.
var chosen: Set<String> = ["c", "grdb", "modelstore", "modelstore-blob"]
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    switch flag {
    case "--orders-reads": ordersReads = Int(arguments.popFirst() ?? "") ?? ordersReads
    case "--users": userCount = Int(arguments.popFirst() ?? "") ?? userCount
    case "--reps": reps = max(1, Int(arguments.popFirst() ?? "") ?? reps)
    case "--only": only = Set((arguments.popFirst() ?? "").split(separator: ",").map { $0.lowercased() })
    case "--contender": chosen = Set((arguments.popFirst() ?? "").split(separator: ",").map { $0.lowercased() })
    default:
        print(
            "usage: ladder-bench [--orders-reads N] [--users N] [--reps K] [--only orders,users] [--contender c,grdb,modelstore,modelstore-blob]"
        )
        exit(2)
    }
}

func note(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

/// A small deterministic generator (SplitMix64), so every run stores the same data.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ladder-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

/// Whether `--contender` chose the contender of this display name.
@MainActor func isChosen(_ name: String) -> Bool {
    let flag = ["C": "c", "GRDB": "grdb", "ModelStore": "modelstore", "ModelStore, UUID as blob": "modelstore-blob"][name] ?? name
    return chosen.contains(flag)
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
func seconds(since start: UInt64) -> Double { Double(now() - start) / 1e9 }
func format(_ seconds: Double) -> String {
    seconds >= 1 ? String(format: "%.3f s", seconds) : String(format: "%.2f ms", seconds * 1000)
}

var failed = false
@MainActor func agree(_ step: String, _ sums: [String: Checksum]) {
    let answers = Array(sums.values)
    guard answers.contains(where: { $0 != answers[0] }) else { return }
    note("\(step): the contenders' answers DIFFER: \(sums.map { "\($0.key): \($0.value)" }.sorted().joined(separator: "; "))")
    failed = true
}

extension Checksum {
    init(_ sum: cl_sum) {
        self.init()
        count = Int(sum.count)
        keys = sum.keys
        text = sum.text
        cents = sum.cents
    }
}

// MARK: Orders

/// The Orders table as ModelStore stores it (all three contenders read this one file).
struct Order: StoredModel, Codable, FetchableRecord, PersistableRecord {
    var id: Int64
    var customerID: String?
    var employeeID: Int64?
    var orderDate: String?
    var requiredDate: String?
    var shippedDate: String?
    var shipVia: Int64?
    var freight: Double?
    var shipName: String?
    var shipAddress: String?
    var shipCity: String?
    var shipRegion: String?
    var shipPostalCode: String?
    var shipCountry: String?
    static let primaryKey = ["id"]
    static let tableName = "orders"
    static let databaseTableName = "orders"

    func add(to sum: inout Checksum) {
        sum.count += 1
        // Weighted by column, so values read into the wrong property, and NULL read as 0 or
        // as "", change the sum (ladder.c's add_order computes the same).
        sum.keys &+= id + 2 * (employeeID ?? -1) + 3 * (shipVia ?? -1)
        // Each text property's length + 1 (0 for NULL) times its place, added one by one (an
        // array of them would allocate per row).
        func weighted(_ text: String?, _ place: Int) -> Int { text.map { ($0.utf8.count + 1) * place } ?? 0 }
        var length = weighted(customerID, 1) + weighted(orderDate, 2) + weighted(requiredDate, 3)
        length += weighted(shippedDate, 4) + weighted(shipName, 5) + weighted(shipAddress, 6)
        length += weighted(shipCity, 7) + weighted(shipRegion, 8) + weighted(shipPostalCode, 9)
        length += weighted(shipCountry, 10)
        sum.text &+= Int64(length)
        sum.cents &+= freight.map { Int64(($0 * 100).rounded()) } ?? -1
    }
}

/// 15,889 orders in the shape of Northwind's: five-letter customer codes, nine employees,
/// three shippers, `yyyy-MM-dd HH:mm:ss` dates as text, a few unshipped, regions and postal
/// codes sometimes missing.
func makeOrders() -> [Order] {
    var random = SeededGenerator(state: 15_889)
    let cities: [(String, String, String?)] = [
        ("Reims", "France", nil), ("Münster", "Germany", nil), ("Rio de Janeiro", "Brazil", "RJ"), ("Lyon", "France", nil),
        ("Charleroi", "Belgium", nil), ("Bern", "Switzerland", nil), ("Genève", "Switzerland", nil), ("Resende", "Brazil", "SP"),
        ("San Cristóbal", "Venezuela", "Táchira"), ("Graz", "Austria", nil), ("México D.F.", "Mexico", nil), ("Köln", "Germany", nil),
        ("Albuquerque", "USA", "NM"), ("Bräcke", "Sweden", nil), ("Strasbourg", "France", nil), ("Oulu", "Finland", nil),
        ("Madrid", "Spain", nil), ("London", "UK", nil), ("Seattle", "USA", "WA"), ("Boise", "USA", "ID"),
    ]
    let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    func word(_ length: Int) -> String { String((0..<length).map { _ in letters[Int.random(in: 0..<26, using: &random)] }) }
    let customers = (0..<93).map { _ in word(5) }
    let kinds = ["Markt", "Delikatessen", "Comidas", "Supremes", "Foods", "Imports"]
    let shipNames = customers.map { code -> String in
        let capitalized = String(code.prefix(1)) + code.dropFirst().lowercased()
        return capitalized + " " + kinds[Int(code.utf8.first! % 6)]
    }
    let streets = [
        "rue de l'Abbaye", "Luisenstr.", "Rua do Paço", "Boulevard Tirou", "Hauptstr.", "Carrera", "Kirchgasse", "Avda. de la Constitución",
    ]
    func date(_ day: Int, _ second: Int) -> String {
        let stamp = Date(timeIntervalSince1970: 1_262_304_000 + Double(day) * 86_400 + Double(second))
        let parts = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: stamp)
        return String(
            format: "%04d-%02d-%02d %02d:%02d:%02d", parts.year!, parts.month!, parts.day!, parts.hour!, parts.minute!, parts.second!)
    }
    return (0..<15_889).map { index in
        let customer = Int.random(in: 0..<customers.count, using: &random)
        let (city, country, region) = cities[Int.random(in: 0..<cities.count, using: &random)]
        let day = index * 3650 / 15_889
        let second = Int.random(in: 0..<86_400, using: &random)
        let shipped = Int.random(in: 0..<100, using: &random) < 97
        return Order(
            id: Int64(10_248 + index), customerID: customers[customer], employeeID: Int64.random(in: 1...9, using: &random),
            orderDate: date(day, second), requiredDate: date(day + 28, second),
            shippedDate: shipped ? date(day + Int.random(in: 1...30, using: &random), second) : nil,
            shipVia: Int64.random(in: 1...3, using: &random), freight: Double(Int.random(in: 2...100_000, using: &random)) / 100,
            shipName: shipNames[customer], shipAddress: "\(Int.random(in: 1...300, using: &random)) \(streets[customer % streets.count])",
            shipCity: city, shipRegion: region,
            shipPostalCode: Int.random(in: 0..<10, using: &random) == 0 ? nil : String(Int.random(in: 10_000...99_999, using: &random)),
            shipCountry: country)
    }
}

@MainActor func runOrders() throws {
    let file = directory.appendingPathComponent("orders.sqlite").path
    let orders = makeOrders()
    do {
        let store = try ModelStore(path: file)
        try Order.save(orders, in: store)
        try store.close()
    }
    // What every read must give: the generated orders themselves, not any reader's answer.
    let expected = checksum(of: orders)
    note("orders: \(expected.count) rows; \(ordersReads) reads after 10 to warm up, \(reps) repetitions")

    // Each contender opens its own connection once, as the published suite does, and reads
    // the whole table into an array of models per read.
    let c = cl_open(file, 1)!
    defer { cl_close(c) }
    var configuration = GRDB.Configuration()
    configuration.readonly = true
    let queue = try DatabaseQueue(path: file, configuration: configuration)
    let store = try ModelStore(path: file)
    defer { try? store.close() }

    let contenders: [(String, () throws -> Checksum)] = [
        (
            "C",
            {
                var sum = cl_sum()
                guard cl_read_orders(c, &sum) == 0 else { throw CocoaError(.fileReadUnknown) }
                return Checksum(sum)
            }
        ),
        ("GRDB", { try checksum(of: readWithGRDB(queue)) }),
        ("ModelStore", { try checksum(of: readWithModelStore(store)) }),
    ].filter { isChosen($0.0) }
    var times: [String: [Double]] = [:]
    for rep in 1...reps {
        for (name, read) in contenders {
            for _ in 0..<10 { _ = try read() }
            var last = Checksum()
            let start = now()
            for _ in 0..<ordersReads { last = try read() }
            let elapsed = seconds(since: start)
            times[name, default: []].append(elapsed)
            agree("orders, \(name)", ["file": expected, name: last])
            note("rep \(rep) \(name): \(format(elapsed)) for \(ordersReads) reads")
        }
    }
    let floor = times["C"].map(median) ?? .nan
    print("\nOrders ladder: read \(expected.count) rows × 14 columns into models, \(ordersReads) times (median of \(reps))")
    print("| contender | \(ordersReads) reads | one read | ÷ C |")
    print("|---|---:|---:|---:|")
    for (name, _) in contenders {
        let total = median(times[name]!)
        print("| \(name) | \(format(total)) | \(format(total / Double(ordersReads))) | \(String(format: "%.2f", total / floor)) |")
    }
}

// One read each, in functions of their own so a profiler can count them alone
// (`valgrind --tool=callgrind --toggle-collect='*readWithModelStore*'`).
@inline(never) func readWithGRDB(_ queue: DatabaseQueue) throws -> [Order] { try queue.read { try Order.fetchAll($0) } }
@inline(never) func readWithModelStore(_ store: ModelStore) throws -> [Order] { try Order.findAll(in: store) }

func checksum(of orders: [Order]) -> Checksum {
    var sum = Checksum()
    for order in orders { order.add(to: &sum) }
    return sum
}

// MARK: Users

/// The user of the SwiftData/Realm comparison: a UUID key, a first name, a surname and an age.
struct User: StoredModel, Codable, FetchableRecord, PersistableRecord {
    var id: UUID
    var firstName: String
    var surname: String
    var age: Int
    static let primaryKey = ["id"]
    static let tableName = "user"
    static let databaseTableName = "user"
    static let indexes: [TableIndex<User>] = [.on(\.firstName)]
}

/// The same user with its key declared in the 16-byte form C and GRDB store (ModelStore's own
/// form is text): what a declaration of `columnStorage` buys on this ladder.
struct BlobUser: StoredModel {
    var id: UUID
    var firstName: String
    var surname: String
    var age: Int
    static let primaryKey = ["id"]
    static let tableName = "user"
    static let indexes: [TableIndex<BlobUser>] = [.on(\.firstName)]
    static let columnStorage: [ColumnStorage<BlobUser>] = [.uuid(\.id, as: .blob)]
}

/// Names drawn like the comparison's (a first name and a surname picked at random from long
/// lists, an age in 0..<99): about 1 user in 4,600 is a Jane, about 217 in a million.
struct UserData {
    var ids: [UInt8] = []
    var firstNames: [String] = []
    var surnames: [String] = []
    var ages: [Int64] = []

    init(count: Int) {
        var random = SeededGenerator(state: 1_000_000)
        let syllables = [
            "ba", "be", "ca", "da", "de", "el", "fa", "ga", "ha", "il", "jo", "ka", "la", "li", "ma", "mi", "na", "no", "or", "pa", "ra",
            "ri", "sa", "ta", "to", "va", "wi", "ya", "za", "lu",
        ]
        var names: [String] = ["Jane"]
        outer: for a in syllables {
            for b in syllables {
                for c in ["", "n", "r", "s", "na", "ne", "ra"] {
                    let word = a + b + c
                    let name = String(word.prefix(1)).uppercased() + String(word.dropFirst())
                    if name != "Jane" && name != "Wendy" { names.append(name) }
                    if names.count == 4_600 { break outer }
                }
            }
        }
        let families = (0..<1_000).map { (index: Int) -> String in
            let middle: String = syllables[index % 30] + syllables[(index / 30) % 30]
            return "Sur" + middle + "son"
        }
        ids.reserveCapacity(count * 16)
        for _ in 0..<count {
            for _ in 0..<2 { withUnsafeBytes(of: random.next()) { ids.append(contentsOf: $0) } }
            ids[ids.count - 10] = (ids[ids.count - 10] & 0x0F) | 0x40  // version 4
            ids[ids.count - 8] = (ids[ids.count - 8] & 0x3F) | 0x80  // variant
            firstNames.append(names[Int.random(in: 0..<names.count, using: &random)])
            surnames.append(families[Int.random(in: 0..<families.count, using: &random)])
            ages.append(Int64.random(in: 0..<99, using: &random))
        }
    }

    func uuid(_ index: Int) -> UUID {
        UUID(uuid: ids.withUnsafeBytes { $0.load(fromByteOffset: index * 16, as: uuid_t.self) })
    }

    var users: [User] {
        (0..<ages.count).map { User(id: uuid($0), firstName: firstNames[$0], surname: surnames[$0], age: Int(ages[$0])) }
    }
}

extension [BlobUser] {
    func checksum(ordered: Bool) -> Checksum {
        map { User(id: $0.id, firstName: $0.firstName, surname: $0.surname, age: $0.age) }.checksum(ordered: ordered)
    }
}

extension [User] {
    /// Count, ages, name lengths and every key's 16 bytes (as two 64-bit words, summed: a
    /// key read back wrong changes it). `ordered`: each age weighted by its place, so a
    /// result sorted by age gives the largest sum its ages can give, and any other order less.
    func checksum(ordered: Bool) -> Checksum {
        var sum = Checksum()
        for (place, user) in enumerated() {
            sum.count += 1
            sum.keys &+= Int64(user.age) * (ordered ? Int64(place + 1) : 1)
            sum.text &+= Int64(user.firstName.utf8.count + user.surname.utf8.count)
            sum.cents &+= Swift.withUnsafeBytes(of: user.id.uuid) {
                Int64(bitPattern: $0.loadUnaligned(as: UInt64.self) &+ $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            }
        }
        return sum
    }
}

/// One pass of the users ladder for one contender: the time of each step, and the answers.
struct UsersPass {
    var create = 0.0, fetch = 0.0, rename = 0.0, delete = 0.0
    var bytes: Int64 = 0
    var fetched = Checksum()
    /// After the rename, counted in the file: users named Wendy, named Jane, and in all.
    var wendys = -1, janesLeft = -1, total = -1
    /// Users left after deleting all.
    var left = -1

    mutating func count(_ db: OpaquePointer) {
        wendys = Int(cl_count_users(db, "Wendy"))
        janesLeft = Int(cl_count_users(db, "Jane"))
        total = Int(cl_count_users(db, nil))
    }
}

// In functions of their own so a profiler can count them alone
// (`valgrind --tool=callgrind --toggle-collect='*createWithModelStore*'`).
@inline(never) func createWithModelStore<M: StoredModel>(_ users: [M], in store: ModelStore) throws { try M.save(users, in: store) }
@inline(never) func readAllWithModelStore<M: StoredModel>(_ type: M.Type, in store: ModelStore) throws -> [M] { try M.findAll(in: store) }

/// One pass of the users ladder with ModelStore, the calls the README teaches.
func modelStorePass<M: StoredModel>(
    _ users: [M], file: String, janes: Query<M>, byAge: [Ordering<M>], rename: (inout M) -> Void,
    checksum: ([M], Bool) -> Checksum
) throws -> UsersPass {
    var pass = UsersPass()
    let store = try ModelStore(path: file)
    defer { try? store.close() }
    var start = now()
    try createWithModelStore(users, in: store)
    pass.create = seconds(since: start)
    // Untimed: every user reads back as it was saved (the UUID keys included).
    guard checksum(try readAllWithModelStore(M.self, in: store), false) == checksum(users, false) else {
        throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "\(M.self): the users read back differ"])
    }
    start = now()
    let fetched = try janes.order(byAge).findAll(in: store)
    pass.fetch = seconds(since: start)
    pass.fetched = checksum(fetched, true)
    // Rename as the comparison does: fetch, modify, save.
    start = now()
    var renamed = try janes.findAll(in: store)
    for index in renamed.indices { rename(&renamed[index]) }
    try M.save(renamed, in: store)
    pass.rename = seconds(since: start)
    try store.checkpoint(.truncate)
    let db = cl_open(file, 1)!
    pass.bytes = cl_database_bytes(db)
    pass.count(db)
    cl_close(db)
    start = now()
    try M.all().deleteAll(in: store)
    pass.delete = seconds(since: start)
    pass.left = try M.count(in: store)
    return pass
}

@MainActor func runUsers() throws {
    note("users: making \(userCount) users…")
    let data = UserData(count: userCount)
    let users = data.users
    // C binds what it holds: C strings made once per distinct name.
    var cStrings: [String: UnsafeMutablePointer<CChar>] = [:]
    func cString(_ text: String) -> UnsafePointer<CChar> {
        if let pointer = cStrings[text] { return UnsafePointer(pointer) }
        let pointer = strdup(text)!
        cStrings[text] = pointer
        return UnsafePointer(pointer)
    }
    let firstPointers: [UnsafePointer<CChar>?] = data.firstNames.map { cString($0) }
    let surnamePointers: [UnsafePointer<CChar>?] = data.surnames.map { cString($0) }
    defer { cStrings.values.forEach { free($0) } }
    let janes = users.filter { $0.firstName == "Jane" }.sorted { $0.age < $1.age }.checksum(ordered: true)
    note("users: \(janes.count) are named Jane; \(reps) repetitions")

    let contenders = ["C", "GRDB", "ModelStore", "ModelStore, UUID as blob"].filter(isChosen)
    let blobUsers = users.map { BlobUser(id: $0.id, firstName: $0.firstName, surname: $0.surname, age: $0.age) }
    var passes: [String: [UsersPass]] = [:]
    for rep in 1...reps {
        for name in contenders {
            let file = directory.appendingPathComponent("users-\(name)-\(rep).sqlite").path
            var pass = UsersPass()
            switch name {
            case "C":
                let db = cl_open(file, 0)!
                defer { cl_close(db) }
                var start = now()
                guard cl_create_users(db, data.ids, firstPointers, surnamePointers, data.ages, Int32(userCount)) == 0 else {
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: String(cString: cl_error(db))])
                }
                pass.create = seconds(since: start)
                start = now()
                var sum = cl_sum()
                guard cl_fetch_users_named(db, "Jane", &sum) == 0 else { throw CocoaError(.fileReadUnknown) }
                pass.fetch = seconds(since: start)
                pass.fetched = Checksum(sum)
                start = now()
                guard cl_rename_users(db, "Jane", "Wendy") >= 0 else { throw CocoaError(.fileWriteUnknown) }
                pass.rename = seconds(since: start)
                pass.bytes = cl_database_bytes(db)
                pass.count(db)
                start = now()
                guard cl_delete_users(db) == 0 else { throw CocoaError(.fileWriteUnknown) }
                pass.delete = seconds(since: start)
                pass.left = Int(cl_count_users(db, nil))
            case "GRDB":
                var configuration = GRDB.Configuration()
                configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
                let pool = try DatabasePool(path: file, configuration: configuration)
                try pool.write { db in
                    try db.create(table: "user") { table in
                        table.primaryKey("id", .blob)
                        table.column("firstName", .text).notNull()
                        table.column("surname", .text).notNull()
                        table.column("age", .integer).notNull()
                    }
                    try db.create(index: "user_firstName", on: "user", columns: ["firstName"])
                }
                var start = now()
                try pool.write { db in for user in users { try user.insert(db) } }
                pass.create = seconds(since: start)
                start = now()
                let fetched = try pool.read { try User.filter(Column("firstName") == "Jane").order(Column("age")).fetchAll($0) }
                pass.fetch = seconds(since: start)
                pass.fetched = fetched.checksum(ordered: true)
                // Rename as the comparison does: fetch, modify, save.
                start = now()
                try pool.write { db in
                    var renamed = try User.filter(Column("firstName") == "Jane").fetchAll(db)
                    for index in renamed.indices {
                        renamed[index].firstName = "Wendy"
                        try renamed[index].update(db)
                    }
                }
                pass.rename = seconds(since: start)
                _ = try pool.writeWithoutTransaction { try $0.checkpoint(.truncate) }
                do {
                    let db = cl_open(file, 1)!
                    pass.bytes = cl_database_bytes(db)
                    pass.count(db)
                    cl_close(db)
                }
                start = now()
                _ = try pool.write { try User.deleteAll($0) }
                pass.delete = seconds(since: start)
                pass.left = try pool.read { try User.fetchCount($0) }
            case "ModelStore, UUID as blob":
                pass = try modelStorePass(
                    blobUsers, file: file, janes: BlobUser.filter(\.firstName == "Jane"), byAge: [.ascending(\.age)],
                    rename: { $0.firstName = "Wendy" }, checksum: { $0.checksum(ordered: $1) })
            default:
                pass = try modelStorePass(
                    users, file: file, janes: User.filter(\.firstName == "Jane"), byAge: [.ascending(\.age)],
                    rename: { $0.firstName = "Wendy" }, checksum: { $0.checksum(ordered: $1) })
            }
            agree("users fetch, \(name)", ["generated": janes, name: pass.fetched])
            if pass.wendys != janes.count || pass.janesLeft != 0 || pass.total != userCount || pass.left != 0 {
                note(
                    "users, \(name): after the rename \(pass.wendys) Wendys of \(janes.count), \(pass.janesLeft) Janes, "
                        + "\(pass.total) users of \(userCount); \(pass.left) left after deleting all")
                failed = true
            }
            passes[name, default: []].append(pass)
            note(
                "rep \(rep) \(name): create \(format(pass.create)), fetch \(format(pass.fetch)), rename \(format(pass.rename)), "
                    + "\(pass.bytes / 1_048_576) MB, delete \(format(pass.delete))")
            try? FileManager.default.removeItem(atPath: file)
        }
    }
    print("\nUsers ladder: \(userCount) users (median of \(reps))")
    print("| contender | create in one transaction | fetch \(janes.count) Janes by age | rename them | file | delete all |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in contenders {
        let samples = passes[name]!
        print(
            "| \(name) | \(format(median(samples.map(\.create)))) | \(format(median(samples.map(\.fetch)))) | "
                + "\(format(median(samples.map(\.rename)))) | \(String(format: "%.1f MB", Double(samples[0].bytes) / 1_048_576)) | "
                + "\(format(median(samples.map(\.delete)))) |")
    }
    guard let floor = passes["C"] else { return }
    for name in contenders.dropFirst() {
        let samples = passes[name]!
        print(
            "| \(name) ÷ C | \(String(format: "%.2f", median(samples.map(\.create)) / median(floor.map(\.create)))) | "
                + "\(String(format: "%.2f", median(samples.map(\.fetch)) / median(floor.map(\.fetch)))) | "
                + "\(String(format: "%.2f", median(samples.map(\.rename)) / median(floor.map(\.rename)))) | "
                + "\(String(format: "%.2f", Double(samples[0].bytes) / Double(floor[0].bytes))) | "
                + "\(String(format: "%.2f", median(samples.map(\.delete)) / median(floor.map(\.delete)))) |")
    }
}

if only.contains("orders") { try runOrders() }
if only.contains("users") { try runUsers() }
if failed {
    note("a contender's answer differed from the others: see above")
    exit(1)
}
