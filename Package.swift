// swift-tools-version:6.1
import PackageDescription

// The library depends on nothing but the system SQLite (`libsqlite3-dev` on Linux). PostgreSQL is
// the package trait `PostgreSQL`, off by default: without it SwiftPM resolves, fetches and builds
// nothing of postgres-nio (a program that depends on `ModelStore` pays nothing for the server).
// Turn it on with `.package(url: …, from: …, traits: ["PostgreSQL"])`, or `--traits PostgreSQL`
// on the command line (`swift test --traits PostgreSQL` runs the suite's PostgreSQL half).
let strictSwift: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "ModelStore",
    platforms: [.macOS(.v12), .iOS(.v15), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .library(name: "ModelStore", targets: ["ModelStore"]),
        // The same models on a PostgreSQL server, through vapor/postgres-nio. Empty unless the
        // `PostgreSQL` trait is on.
        .library(name: "ModelStorePostgres", targets: ["ModelStorePostgres"]),
        .executable(name: "demo", targets: ["Demo"]),
        .executable(name: "importer", targets: ["Importer"]),
        .executable(name: "async-tour", targets: ["AsyncTour"]),
    ],
    traits: [
        .trait(
            name: "PostgreSQL",
            description: "The ModelStorePostgres product: the same models on a PostgreSQL server, through postgres-nio."
        )
    ],
    // Only for `swift package generate-documentation` (the DocC catalog); no target depends on
    // it, so a program using ModelStore compiles nothing of it.
    dependencies: [
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // Only ModelStorePostgres depends on it, and only with the PostgreSQL trait on.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // postgres-nio's own dependencies (no further download): TLS for `sslmode` in a URL, a
        // store's logger and metrics, and the store as a service of a service group.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.27.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "ModelStoreCSQLite",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(
            name: "ModelStore",
            dependencies: ["ModelStoreCSQLite"],
            swiftSettings: strictSwift
        ),
        .target(
            name: "ModelStorePostgres",
            dependencies: [
                "ModelStore",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["PostgreSQL"])),
            ],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "Demo",
            dependencies: ["ModelStore"],
            path: "Examples/Demo",
            swiftSettings: strictSwift
        ),
        // A command-line importer: a package index (CSV or JSON) into related models.
        .executableTarget(
            name: "Importer",
            dependencies: ["ModelStore"],
            path: "Examples/Importer",
            swiftSettings: strictSwift
        ),
        // The async API end to end.
        .executableTarget(
            name: "AsyncTour",
            dependencies: ["ModelStore"],
            path: "Examples/AsyncTour",
            swiftSettings: strictSwift
        ),
        // Models shared by the reliability tests and the second process they start.
        .target(
            name: "ReliabilityFixtures",
            dependencies: ["ModelStore"],
            path: "Tests/Helpers/ReliabilityFixtures",
            swiftSettings: strictSwift
        ),
        // The process the crash and lock tests kill or block; built with the tests.
        .executableTarget(
            name: "ReliabilityHelper",
            dependencies: ["ModelStore", "ModelStorePostgres", "ReliabilityFixtures"],
            path: "Tests/Helpers/ReliabilityHelper",
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "ModelStoreTests",
            dependencies: [
                "ModelStore", "ModelStorePostgres", "ReliabilityFixtures", "ReliabilityHelper",
                .product(name: "MetricsTestKit", package: "swift-metrics", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["PostgreSQL"])),
            ],
            swiftSettings: strictSwift
        ),
    ],
    swiftLanguageModes: [.v6]
)
