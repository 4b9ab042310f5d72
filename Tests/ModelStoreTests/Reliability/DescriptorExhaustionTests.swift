import Foundation
import Testing

// SQLite-only: opening SQLite files without file descriptors.
/// No crash when the process is out of file descriptors: a store that cannot open throws
/// `.cannotOpen`, and releasing what it made never needs a new descriptor. Descriptors are a
/// process-wide resource, so a helper process runs out of them, never the test process.
@Suite("Reliability: out of file descriptors")
struct DescriptorExhaustionTests {
    @Test func openingAStoreWithEveryDescriptorTakenThrowsCannotOpenEveryTimeAndNeverCrashes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nofile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Several runs: the crash this guards against came in about half of them.
        for run in 0..<4 {
            let helper = try HelperProcess("no-descriptors", path: directory.appendingPathComponent("store-\(run).sqlite").path)
            let printed = try helper.finish(within: 120)
            let values = HelperProcess.values(in: printed)
            let failures = printed.split(separator: "\n").filter { $0.hasPrefix("failed ") }
            #expect(!failures.isEmpty, "\(printed)")
            #expect(failures.allSatisfy { $0.hasPrefix("failed cannotOpen ") }, "every failed open is .cannotOpen: \(printed)")
            #expect(values["after"] == "1", "a store opens and writes once descriptors are free: \(printed)")
        }
    }
}
