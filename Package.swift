// swift-tools-version:6.0
import PackageDescription

// The library depends on nothing but the system SQLite (`libsqlite3-dev` on Linux).
let strictSwift: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
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
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(
            name: "ModelStore",
            dependencies: ["CSQLite"],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "Demo",
            dependencies: ["ModelStore"],
            path: "Examples/Demo",
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "ModelStoreTests",
            dependencies: ["ModelStore"],
            swiftSettings: strictSwift
        ),
    ],
    swiftLanguageModes: [.v6]
)
