import Foundation
import Testing

/// The `ReliabilityHelper` executable running as a second process on a store: a writer to kill,
/// or a holder of the write lock.
final class HelperProcess {
    private let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private let input = Pipe()
    private var printed = ""

    convenience init(_ mode: String, path: String) throws {
        try self.init(mode, arguments: [path])
    }

    init(_ mode: String, arguments: [String]) throws {
        process.executableURL = try Self.executable()
        process.arguments = [mode] + arguments
        // Under `swift test --enable-code-coverage` a helper inherits the profile path and
        // writes its profile when it exits. The tests kill helpers, and a kill that lands
        // during that write leaves a truncated file, after which SwiftPM can merge no profile
        // at all: helpers write theirs elsewhere (the library's coverage is the tests' own).
        var environment = ProcessInfo.processInfo.environment
        if environment["LLVM_PROFILE_FILE"] != nil {
            environment["LLVM_PROFILE_FILE"] = NSTemporaryDirectory() + "modelstore-helper-%p.profraw"
        }
        process.environment = environment
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input
        try process.run()
    }

    deinit {
        // A helper that was told to finish may still be exiting — under coverage, writing
        // its profile at exit, which a kill would leave truncated (and then no profile of
        // the run can be merged). Give it a few seconds before killing it.
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning { stop() }
    }

    /// Blocks until the helper has printed `line`; fails with its error output if it exits first.
    func waitFor(_ line: String) throws {
        while !printed.split(separator: "\n").contains(Substring(line)) {
            let data = output.fileHandleForReading.availableData
            guard !data.isEmpty else {
                process.waitUntilExit()
                let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                throw HelperFailure(description: "the helper exited (\(process.terminationStatus)) before printing \(line): \(stderr)")
            }
            printed += String(decoding: data, as: UTF8.self)
        }
    }

    /// Every line the helper printed; waits for it to close its output (to exit).
    func allLines() -> [String] {
        printed += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return printed.split(separator: "\n").map(String.init)
    }

    /// Blocks until the helper has printed `line`, for at most `limit` seconds: a helper that
    /// has not by then is killed and reported as hung (a wait in the library that never
    /// ended), with what it printed.
    func waitFor(_ line: String, within limit: TimeInterval) throws {
        let descriptor = output.fileHandleForReading.fileDescriptor
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        defer { _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK) }
        let deadline = Date().addingTimeInterval(limit)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !printed.split(separator: "\n").contains(Substring(line)) {
            let count = read(descriptor, &buffer, buffer.count)
            if count > 0 {
                printed += String(decoding: buffer[0..<count], as: UTF8.self)
                continue
            }
            if count == 0 || !process.isRunning {
                throw HelperFailure(description: "the helper exited (\(process.terminationStatus)) before printing \(line): \(printed)")
            }
            if Date() >= deadline {
                stop()
                throw HelperFailure(description: "the helper did not print \(line) within \(limit) s (hung); it printed: \(printed)")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// Sends one line to the helper's standard input.
    func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Kills the helper with SIGKILL — no chance to clean up — and waits until it is gone.
    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Waits for the helper to exit by itself and returns its exit status.
    func waitForExit() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Waits up to `limit` seconds for the helper to exit and returns everything it printed;
    /// a helper still running then is killed and reported as hung, with what it printed so
    /// far. The time limit is the test: nothing may wait forever.
    func finish(within limit: TimeInterval) throws -> String {
        let deadline = Date().addingTimeInterval(limit)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        let hung = process.isRunning
        if hung { stop() }
        printed += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        if hung {
            throw HelperFailure(description: "the helper was still running after \(limit) s (hung); it printed: \(printed) \(stderr)")
        }
        guard process.terminationStatus == 0 else {
            throw HelperFailure(
                description: "the helper exited with status \(process.terminationStatus); it printed: \(printed) \(stderr)")
        }
        return printed
    }

    /// The values of the `name value` lines the helper printed.
    static func values(in printed: String) -> [String: String] {
        var values: [String: String] = [:]
        for line in printed.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
        }
        return values
    }

    struct HelperFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// The helper binary sits in the build directory beside the test binary or bundle.
    private static func executable() throws -> URL {
        var directories: [URL] = []
        if let main = Bundle.main.executableURL { directories.append(main.deletingLastPathComponent()) }
        directories += Bundle.allBundles.filter { $0.bundlePath.hasSuffix(".xctest") }
            .map { $0.bundleURL.deletingLastPathComponent() }
        directories.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        for directory in directories {
            let candidate = directory.appendingPathComponent("ReliabilityHelper")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw HelperFailure(
            description:
                "ReliabilityHelper was not found beside the tests in \(directories.map(\.path)); build it with `swift build --build-tests`."
        )
    }
}
