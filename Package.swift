// swift-tools-version:6.0
import PackageDescription

// The library depends on nothing but the system SQLite (`libsqlite3-dev` on Linux).
let strictSwift: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "ModelStore",
    platforms: [.macOS(.v12), .iOS(.v15), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .library(name: "ModelStore", targets: ["ModelStore"]),
        .executable(name: "demo", targets: ["Demo"]),
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
        .executableTarget(
            name: "Demo",
            dependencies: ["ModelStore"],
            path: "Examples/Demo",
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
            dependencies: ["ModelStore", "ReliabilityFixtures"],
            path: "Tests/Helpers/ReliabilityHelper",
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "ModelStoreTests",
            dependencies: ["ModelStore", "ReliabilityFixtures", "ReliabilityHelper"],
            swiftSettings: strictSwift
        ),
    ],
    swiftLanguageModes: [.v6]
)
