import BenchCore
import Foundation

/// Samples of one contender on one workload.
struct Samples {
    var values: [Double] = []
    var memory: [Int] = []
    var checksum: Checksum?

    var median: Double { Self.median(values) }
    var min: Double { values.min() ?? .nan }
    var max: Double { values.max() ?? .nan }
    var medianMemory: Int? { memory.isEmpty ? nil : memory.sorted()[memory.count / 2] }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}

/// Runs workloads on every contender, repetitions interleaved so drift hits all alike.
struct Harness {
    let contenders: [any Contender]
    let data: Dataset
    let reps: Int
    let directory: URL
    /// Cross-check failures: a contender whose result differed from the others'.
    var mismatches: [String] = []

    init(contenders: [any Contender], data: Dataset, reps: Int) throws {
        self.contenders = contenders
        self.data = data
        self.reps = reps
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("modelstore-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Seconds per run for timed workloads; operations per second for rate workloads.
    mutating func run(_ workload: Workload, progress: (String) -> Void) throws -> [Samples] {
        var samples = Array(repeating: Samples(), count: contenders.count)
        for rep in 0..<reps {
            for (index, contender) in contenders.enumerated() where contender.supports(workload) {
                let path = directory.appendingPathComponent("\(workload.rawValue)-\(contender.name)-\(rep).sqlite").path
                defer {
                    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
                }
                let run = try contender.prepare(workload, data: data, path: path)
                let start = now()
                try run.timed()
                let seconds = Double(now() - start) / 1e9
                samples[index].values.append(workload.isRate ? Double(run.operations()) / seconds : seconds)
                let checksum = try run.verify()
                if workload == .w3 || workload == .w3r {
                    // Memory is sampled on a separate run, so sampling never slows a timed one.
                    if let growth = try PeakMemory.growth(during: run.timed) { samples[index].memory.append(growth) }
                }
                if samples[index].checksum == nil { samples[index].checksum = checksum }
                if let reference = samples[0].checksum, checksum != reference {
                    mismatches.append(
                        "\(workload.rawValue): \(contender.name) produced \(checksum), \(contenders[0].name) produced \(reference)")
                }
            }
            progress("\(workload.rawValue) rep \(rep + 1)/\(reps)")
        }
        return samples
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: directory)
    }
}
