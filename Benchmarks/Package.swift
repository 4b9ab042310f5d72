// swift-tools-version:6.1
import Foundation
import PackageDescription

// A path dependency is identified by its directory's name, which depends on where the
// repository was cloned.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// Fluent joins the run when MODELSTORE_BENCH_FLUENT is set (`MODELSTORE_BENCH_FLUENT=1 swift run
// -c release --package-path Benchmarks modelstore-bench`). It is opt-in because Fluent, SwiftNIO
// and SQLiteNIO (which compiles its own SQLite) add minutes to a clean build, and CI's smoke run
// does not need them.
let withFluent = Context.environment["MODELSTORE_BENCH_FLUENT"] != nil
// Fluent on PostgreSQL (fluent-postgres-driver) for postgres-bench, opt-in for the same reason.
let withFluentPostgres = Context.environment["MODELSTORE_BENCH_FLUENT_POSTGRES"] != nil

// The benchmark suite: ModelStore against hand-written SQLite C and GRDB (and Fluent), in one
// run. A package of its own, so the library gains no dependency.
let package = Package(
    name: "ModelStoreBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // The PostgreSQL trait brings ModelStorePostgres, for postgres-bench.
        .package(path: "..", traits: ["PostgreSQL"]),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ]
        + (withFluent
            ? [
                .package(url: "https://github.com/vapor/fluent-kit", exact: "1.57.0"),
                .package(url: "https://github.com/vapor/fluent-sqlite-driver", exact: "4.9.0"),
            ] : [])
        + (withFluentPostgres
            ? [
                .package(url: "https://github.com/vapor/fluent-kit", exact: "1.57.0"),
                .package(url: "https://github.com/vapor/fluent-postgres-driver", exact: "2.14.0"),
            ] : []),
    targets: [
        .target(name: "BenchCore", dependencies: ["CBaseline"]),
        .target(
            name: "CBaseline",
            linkerSettings: [.linkedLibrary("sqlite3")]
        ),
        .target(name: "CContender", dependencies: ["BenchCore", "CBaseline"]),
        .target(name: "GRDBContender", dependencies: ["BenchCore", .product(name: "GRDB", package: "GRDB.swift")]),
        .target(name: "ModelStoreContender", dependencies: ["BenchCore", .product(name: "ModelStore", package: root)]),
        // The time to migrate a million records, next to the same work as plain SQL or C.
        .executableTarget(
            name: "migration-bench",
            dependencies: ["CBaseline", .product(name: "ModelStore", package: root)]
        ),
        // Writer throughput under live queries, and delivery latency, next to GRDB's ValueObservation.
        .executableTarget(
            name: "observation-bench",
            dependencies: [.product(name: "ModelStore", package: root), .product(name: "GRDB", package: "GRDB.swift")]
        ),
        // Queries across relationships and grouped aggregates, next to C and GRDB.
        .target(name: "CQueries", linkerSettings: [.linkedLibrary("sqlite3")]),
        .executableTarget(
            name: "query-bench",
            dependencies: ["CQueries", .product(name: "ModelStore", package: root), .product(name: "GRDB", package: "GRDB.swift")]
        ),
        // Full-text search (FTS5): ranked searches with snippets, next to C and GRDB's FTS5.
        .executableTarget(
            name: "search-bench",
            dependencies: [
                "BenchCore", "CBaseline", .product(name: "ModelStore", package: root), .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Iterating a million records without holding them: time and peak memory growth of
        // ModelStore's forEach and stream, next to a C sqlite3_step loop and GRDB's cursor.
        .executableTarget(
            name: "streaming-bench",
            dependencies: [
                "BenchCore", "CBaseline", .product(name: "ModelStore", package: root), .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // W1 and W2 with validation and timestamps, next to the same model without.
        .executableTarget(
            name: "lifecycle-bench",
            dependencies: ["BenchCore", .product(name: "ModelStore", package: root)]
        ),
        // W5's pages as Foundation's #Predicate and SortDescriptor, next to typed conditions.
        .executableTarget(
            name: "predicate-bench",
            dependencies: ["BenchCore", .product(name: "ModelStore", package: root)]
        ),
        // W1–W9 on a PostgreSQL server: ModelStore next to hand-written postgres-nio (and Fluent).
        .executableTarget(
            name: "postgres-bench",
            dependencies: [
                "BenchCore", .product(name: "ModelStore", package: root), .product(name: "ModelStorePostgres", package: root),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
                + (withFluentPostgres
                    ? [
                        .product(name: "FluentKit", package: "fluent-kit"),
                        .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
                    ] : []),
            swiftSettings: withFluentPostgres ? [.define("FLUENT_POSTGRES")] : []
        ),
        // The two published ladders (Lighter's Northwind Orders read, the 1,000,000-users
        // workload of the SwiftData/Realm comparison): C, GRDB and ModelStore in one run.
        .target(name: "CLadder", linkerSettings: [.linkedLibrary("sqlite3")]),
        .executableTarget(
            name: "ladder-bench",
            dependencies: [
                "BenchCore", "CLadder", .product(name: "ModelStore", package: root), .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .executableTarget(
            name: "modelstore-bench",
            dependencies: ["BenchCore", "CContender", "GRDBContender", "ModelStoreContender"]
                + (withFluent ? ["FluentContender"] : []),
            swiftSettings: withFluent ? [.define("FLUENT")] : []
        ),
    ]
        + (withFluent
            ? [
                .target(
                    name: "FluentContender",
                    dependencies: [
                        "BenchCore",
                        .product(name: "FluentKit", package: "fluent-kit"),
                        .product(name: "FluentSQLiteDriver", package: "fluent-sqlite-driver"),
                    ])
            ] : []),
    swiftLanguageModes: [.v6]
)
