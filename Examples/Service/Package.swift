// swift-tools-version:6.1
import Foundation
import PackageDescription

// A path dependency is identified by its directory's name, which depends on where the
// repository was cloned.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().lastPathComponent

// A JSON service over a ModelStore PostgreSQL store, with Hummingbird 2. A package of its own,
// so the library gains no dependency: only this example resolves and builds Hummingbird.
//
//   MODELSTORE_POSTGRES_URL=postgres://… swift run --package-path Examples/Service snack-service
let package = Package(
    name: "SnackService",
    platforms: [.macOS(.v14)],
    products: [.executable(name: "snack-service", targets: ["SnackService"])],
    dependencies: [
        .package(path: "../..", traits: ["PostgreSQL"]),
        // Without its default traits: no swift-configuration, which this example does not use.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.5.0"),
    ],
    targets: [
        .executableTarget(
            name: "SnackService",
            dependencies: [
                .product(name: "ModelStore", package: root),
                .product(name: "ModelStorePostgres", package: root),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        )
    ],
    swiftLanguageModes: [.v6]
)
