// swift-tools-version:6.1
import Foundation
import PackageDescription

// A path dependency is identified by its directory's name, which depends on where the
// repository was cloned.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// The benchmark suite: ModelStore against hand-written SQLite C and GRDB, in one run.
// A package of its own, so the library gains no dependency.
let package = Package(
    name: "ModelStoreBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        .target(name: "BenchCore", dependencies: ["CBaseline"]),
        .target(
            name: "CBaseline",
            linkerSettings: [.linkedLibrary("sqlite3")]
        ),
        .target(name: "CContender", dependencies: ["BenchCore", "CBaseline"]),
        .target(name: "GRDBContender", dependencies: ["BenchCore", .product(name: "GRDB", package: "GRDB.swift")]),
        .target(name: "ModelStoreContender", dependencies: ["BenchCore", .product(name: "ModelStore", package: root)]),
        .executableTarget(
            name: "modelstore-bench",
            dependencies: ["BenchCore", "CContender", "GRDBContender", "ModelStoreContender"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
