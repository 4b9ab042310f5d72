// A command-line importer, the shape of tool ModelStore is made for: it reads a package index
// (CSV or JSON) given on the command line into models with relationships — maintainers, and
// each package's dependencies on other packages — in batches, with a progress line and a
// summary, then answers a few questions from the store.
//
//   swift run importer Examples/Data/packages.csv [--store PATH]
import Foundation
import ModelStore

struct Maintainer: StoredModel {
    var email: String
    var name: String?
    var packages: [Package]?
    static let primaryKey = ["email"]
    static let relationships: [Relationship<Maintainer>] = [.toMany(\.packages, inverse: \Package.maintainer)]
}

struct Package: StoredModel {
    var name: String
    var version: String?
    var section: String?
    var maintainer: Maintainer?
    var depends: [Package]?
    var importedAt: Date?
    static let primaryKey = ["name"]
    static let indexes: [TableIndex<Package>] = [.on(\.section)]
    static let timestamps = Timestamps<Package>(created: \.importedAt)
    // A package depends on packages: many-to-many, one-way, through a join table.
    static let relationships: [Relationship<Package>] = [
        .toOne(\.maintainer, inverse: \Maintainer.packages),
        .toMany(\.depends),
    ]

    func validate() throws {
        guard !name.isEmpty, !name.contains(" ") else { throw ValidationError("must be a non-empty name without spaces", property: "name") }
    }
}

/// One line of the index, as the file gives it.
struct Entry: Decodable {
    var name: String
    var version: String?
    var section: String?
    var maintainer: String?
    var email: String?
    var depends: [String]
}

enum ImportError: Error, CustomStringConvertible {
    case usage, unreadable(String), badLine(Int, String)
    var description: String {
        switch self {
        case .usage: return "usage: importer FILE.csv|FILE.json [--store PATH]"
        case .unreadable(let path): return "cannot read \(path)"
        case .badLine(let line, let text): return "line \(line) is not a package: \(text)"
        }
    }
}

/// RFC 4180 fields: commas inside quotes, doubled quotes for a quote.
func fields(_ line: Substring) -> [String] {
    var result: [String] = []
    var field = ""
    var quoted = false
    var index = line.startIndex
    while index < line.endIndex {
        let character = line[index]
        if quoted {
            if character == "\"" {
                let next = line.index(after: index)
                if next < line.endIndex, line[next] == "\"" {
                    field.append("\"")
                    index = next
                } else {
                    quoted = false
                }
            } else {
                field.append(character)
            }
        } else if character == "\"" {
            quoted = true
        } else if character == "," {
            result.append(field)
            field = ""
        } else {
            field.append(character)
        }
        index = line.index(after: index)
    }
    result.append(field)
    return result
}

func entries(at path: String) throws -> [Entry] {
    guard let data = FileManager.default.contents(atPath: path) else { throw ImportError.unreadable(path) }
    if path.hasSuffix(".json") { return try JSONDecoder().decode([Entry].self, from: data) }
    let lines = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
    return try lines.dropFirst().enumerated().map { offset, line in
        let columns = fields(line)
        guard columns.count == 6 else { throw ImportError.badLine(offset + 2, String(line)) }
        func optional(_ text: String) -> String? { text.isEmpty ? nil : text }
        return Entry(
            name: columns[0], version: optional(columns[1]), section: optional(columns[2]), maintainer: optional(columns[3]),
            email: optional(columns[4]), depends: columns[5].split(separator: ";").map(String.init))
    }
}

var arguments = CommandLine.arguments.dropFirst()
var input: String?
var storePath: String?
while let argument = arguments.popFirst() {
    if argument == "--store" { storePath = arguments.popFirst() } else { input = argument }
}
do {
    guard let input else { throw ImportError.usage }
    let started = Date()
    let list = try entries(at: input)
    let path =
        storePath
        ?? FileManager.default.temporaryDirectory.appendingPathComponent("importer-\(UUID().uuidString).sqlite").path
    let store = try ModelStore(path: path)
    defer { if storePath == nil { try? store.close(); try? FileManager.default.removeItem(atPath: path) } }

    // Maintainers first, one batch: a dependency or maintainer only links to a record.
    let maintainers = Dictionary(list.compactMap { entry in entry.email.map { ($0, entry.maintainer) } }) { first, _ in first }
    let maintainerOutcome = try Maintainer.save(maintainers.map { Maintainer(email: $0.key, name: $0.value) }, in: store)

    // Packages in batches of 100, with a progress line. A dependency named before its own line
    // is saved as a bare record (its name) and filled when its line comes.
    var inserted = 0
    var updated = 0
    let batchSize = 100
    for start in stride(from: 0, to: list.count, by: batchSize) {
        let batch = list[start..<min(start + batchSize, list.count)].map { entry in
            Package(
                name: entry.name, version: entry.version, section: entry.section,
                maintainer: entry.email.map { Maintainer(email: $0) }, depends: entry.depends.map { Package(name: $0) })
        }
        let outcome = try Package.save(batch, in: store)
        inserted += outcome.inserted
        updated += outcome.updated
        let done = min(start + batchSize, list.count)
        FileHandle.standardOutput.write(Data("\rimported \(done)/\(list.count) packages".utf8))
    }
    print()
    let seconds = Date().timeIntervalSince(started)

    // Answers from the store.
    let total = try Package.count(in: store)
    let bySection = try Package.all().countsGrouped(by: \.section, in: store)
        .sorted { $0.value > $1.value || ($0.value == $1.value && ($0.key ?? "") < ($1.key ?? "")) }
    let leaves = try Package.count(where: .none(\.depends), in: store)
    let busiest = try Maintainer.all().order(.descending(RelatedCount(\Maintainer.packages))).findFirst(in: store)

    print("Summary")
    print("  lines read:        \(list.count)")
    print("  maintainers:       \(maintainerOutcome.inserted) inserted")
    print("  packages:          \(total) stored (\(inserted) inserted, \(updated) updated, in batches of \(batchSize))")
    print("  without depends:   \(leaves)")
    print("  busiest maintainer: \(busiest?.name ?? "-") <\(busiest?.email ?? "-")>")
    print("  sections:          " + bySection.prefix(4).map { "\($0.key ?? "none") \($0.value)" }.joined(separator: ", "))
    print("  time:              \(String(format: "%.2f", seconds)) s")
} catch {
    FileHandle.standardError.write(Data("importer: \(error)\n".utf8))
    exit(1)
}
