import Foundation
import ModelStore

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A migration that two processes race to run, and that a test kills at random moments:
/// three steps over the crash test's parcels, each logging that it ran (in its own
/// transaction, so a step rolled back by a kill leaves no log row).
public enum MigratingParcels {
    /// The parcel after the migration: the payload is replaced by a label and its size.
    public struct ParcelV2: StoredModel, Equatable {
        public var id: Int64
        public var batch: Int64
        public var label: String
        public var size: Int64
        public static let primaryKey = ["id"]
        public static let tableName = "Parcel"

        public init(_ parcel: Parcel) {
            id = parcel.id
            batch = parcel.batch
            label = String(parcel.payload.prefix(12)).uppercased()
            size = Int64(parcel.payload.utf8.count)
        }
    }

    public static let stepNames = ["log start", "parcels v2", "index labels"]

    private static func log(_ step: MigrationContext) throws {
        try step.execute("INSERT INTO step_log (name, pid) VALUES (?, ?)", arguments: [step.stepName, Int64(getpid())])
    }

    public static let steps: [MigrationStep] = [
        MigrationStep(stepNames[0]) { step in
            try step.execute("CREATE TABLE step_log (name TEXT NOT NULL, pid INTEGER NOT NULL)")
            try log(step)
        },
        MigrationStep(stepNames[1]) { step in
            try step.transform(Parcel.self, to: ParcelV2.self) { ParcelV2($0) }
            try log(step)
        },
        MigrationStep(stepNames[2]) { step in
            try step.execute("CREATE INDEX parcel_label ON Parcel (label)")
            try log(step)
        },
    ]
}
