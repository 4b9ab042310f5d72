import BenchCore
import Foundation

/// One workload's results, for the table and for JSON.
struct WorkloadResult: Codable {
    struct Contender: Codable {
        var name: String
        var median: Double
        var min: Double
        var max: Double
        var peakMemoryGrowthBytes: Int?
    }

    var workload: String
    var title: String
    var unit: String
    var contenders: [Contender]
    /// ModelStore ÷ C and ModelStore ÷ GRDB, as slowdowns (above 1: ModelStore is slower).
    var ratioToC: Double
    var ratioToGRDB: Double
    var grdbRatioToC: Double
    var goal: Double?
    var goalMet: Bool?
    var fasterThanGRDB: Bool
    /// Within 3% of GRDB: a tie, as when both run the same single SQL statement.
    var tiedWithGRDB: Bool
    var memoryNoHigherThanGRDB: Bool?
    /// Fluent ÷ C, when Fluent ran this workload.
    var fluentRatioToC: Double?
}

enum Report {
    static func result(_ workload: Workload, _ samples: [Samples], names: [String]) -> WorkloadResult {
        let (c, grdb, modelStore) = (samples[0], samples[1], samples[2])
        // For a rate (W10), slowdown is the inverse of the rate ratio.
        func slowdown(_ ours: Samples, _ theirs: Samples) -> Double {
            workload.isRate ? theirs.median / ours.median : ours.median / theirs.median
        }
        let ratioToC = slowdown(modelStore, c)
        let ratioToGRDB = slowdown(modelStore, grdb)
        var memory: Bool?
        if let ours = modelStore.medianMemory, let theirs = grdb.medianMemory { memory = ours <= theirs }
        return WorkloadResult(
            workload: workload.rawValue, title: workload.title, unit: workload.isRate ? "fetches/s" : "s",
            contenders: zip(names, samples).map {
                .init(name: $0, median: $1.median, min: $1.min, max: $1.max, peakMemoryGrowthBytes: $1.medianMemory)
            },
            ratioToC: ratioToC, ratioToGRDB: ratioToGRDB, grdbRatioToC: slowdown(grdb, c),
            goal: workload.goal, goalMet: workload.goal.map { ratioToC <= $0 }, fasterThanGRDB: ratioToGRDB < 1,
            tiedWithGRDB: abs(ratioToGRDB - 1) < 0.03,
            memoryNoHigherThanGRDB: memory,
            fluentRatioToC: samples.count > 3 && !samples[3].values.isEmpty ? slowdown(samples[3], c) : nil)
    }

    static func table(_ results: [WorkloadResult], rows: Int, reps: Int) -> String {
        let withFluent = results.contains { $0.contenders.count > 3 }
        var lines = [
            "| workload | C median (min–max) | GRDB median (min–max) | ModelStore median (min–max) | MS÷C | MS÷GRDB | GRDB÷C | goal MS÷C | vs GRDB |"
                + (withFluent ? " Fluent median (min–max) | Fluent÷C |" : ""),
            "|---|---|---|---|---|---|---|---|---|" + (withFluent ? "---|---|" : ""),
        ]
        for result in results {
            func cell(_ contender: WorkloadResult.Contender) -> String {
                "\(format(contender.median, result.unit)) (\(format(contender.min, result.unit))–\(format(contender.max, result.unit)))"
            }
            let goal = result.goal.map { "≤ \(String(format: "%.1f", $0)): " + (result.goalMet! ? "met" : "**missed**") } ?? "—"
            lines.append(
                "| \(result.workload) \(result.title) | \(cell(result.contenders[0])) | \(cell(result.contenders[1])) | \(cell(result.contenders[2])) | "
                    + "\(ratio(result.ratioToC)) | \(ratio(result.ratioToGRDB)) | \(ratio(result.grdbRatioToC)) | \(goal) | "
                    + (result.tiedWithGRDB ? "tie (±3%)" : result.fasterThanGRDB ? "faster" : "**slower**") + " |"
                    + (withFluent
                        ? (result.fluentRatioToC.map { " \(cell(result.contenders[3])) | \(ratio($0)) |" } ?? " not expressed | — |") : ""))
        }
        var text = lines.joined(separator: "\n")
        let memory = results.filter { $0.contenders.contains { $0.peakMemoryGrowthBytes != nil } }
        for result in memory {
            let parts = result.contenders.filter { !$0.median.isNaN }.map { "\($0.name) \(megabytes($0.peakMemoryGrowthBytes))" }
            text +=
                "\n\nPeak memory growth during \(result.workload): " + parts.joined(separator: ", ")
                + (result.memoryNoHigherThanGRDB.map {
                    $0 ? " — goal (no higher than GRDB) met." : " — goal (no higher than GRDB) **missed**."
                } ?? "")
        }
        if let w1r = results.first(where: { $0.workload == "W1r" }), let w1 = results.first(where: { $0.workload == "W1" }) {
            let ratio = w1r.contenders[2].median / w1.contenders[2].median
            text +=
                "\n\nW1r ÷ W1 for ModelStore (the same batch insert of a model that declares a relationship none of its elements holds): "
                + String(format: "%.2f", ratio) + (ratio <= 1.1 ? " — goal (≤ 1.1) met." : " — goal (≤ 1.1) **missed**.")
        }
        if let w3r = results.first(where: { $0.workload == "W3r" }), let w3 = results.first(where: { $0.workload == "W3" }) {
            let ratio = w3r.contenders[2].median / w3.contenders[2].median
            text +=
                "\n\nW3r ÷ W3 for ModelStore (the same finder on a model that declares a relationship it does not load): "
                + String(format: "%.2f", ratio) + (ratio <= 1.1 ? " — goal (≤ 1.1) met." : " — goal (≤ 1.1) **missed**.")
        }
        for (dated, plain) in [("W1d", "W1"), ("W3d", "W3")] {
            guard let with = results.first(where: { $0.workload == dated }), let without = results.first(where: { $0.workload == plain })
            else { continue }
            let ratio = with.contenders[2].median / without.contenders[2].median
            text +=
                "\n\n\(dated) ÷ \(plain) for ModelStore (the same call with the creation time a `Date` instead of a `Double`): "
                + String(format: "%.2f", ratio) + (ratio <= 1.1 ? " — goal (≤ 1.1) met." : " — goal (≤ 1.1) **missed**.")
        }
        if let w8r = results.first(where: { $0.workload == "W8r" }), let w8 = results.first(where: { $0.workload == "W8" }) {
            let ratio = w8r.contenders[2].median / w8.contenders[2].median
            text +=
                "\n\nW8r ÷ W8 for ModelStore (the same delete on a model whose many-to-many's nullify only drops join rows): "
                + String(format: "%.2f", ratio) + (ratio <= 1.1 ? " — goal (≤ 1.1) met." : " — goal (≤ 1.1) **missed**.")
        }
        if let w12 = results.first(where: { $0.workload == "W12" }), let w2 = results.first(where: { $0.workload == "W2" }) {
            let ratio = w12.contenders[2].median / w2.contenders[2].median
            text +=
                "\n\nW12 ÷ W2 for ModelStore (a batch matched by name against the same batch by key): "
                + String(format: "%.2f", ratio) + (ratio <= 2.5 ? " — goal (≤ 2.5) met." : " — goal (≤ 2.5) **missed**.")
        }
        text +=
            "\n\nRatios are slowdowns (ModelStore ÷ C: 1.00 means as fast as hand-written C). W10 is a rate "
            + "(fetches per second by two readers while a third thread batch-saves), so its ratios invert the rates. "
            + "\(rows) rows, \(reps) repetitions per contender, interleaved."
        return text
    }

    private static func format(_ value: Double, _ unit: String) -> String {
        guard unit == "s" else { return String(format: "%.0f/s", value) }
        return value < 1 ? String(format: "%.1f ms", value * 1000) : String(format: "%.2f s", value)
    }

    private static func ratio(_ value: Double) -> String { String(format: "%.2f", value) }

    private static func megabytes(_ bytes: Int?) -> String {
        bytes.map { String(format: "%.1f MB", Double($0) / 1_048_576) } ?? "n/a"
    }
}
