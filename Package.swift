// swift-tools-version:6.0
import PackageDescription

// bitpal has no package dependencies on purpose: Foundation, Dispatch, Glibc, XCTest and
// Swift Testing only (a tool with zero supply chain). HTTP goes through the system's libcurl,
// loaded at run time, so FoundationNetworking is not linked and a static build needs nothing more.
let package = Package(
    name: "bitpal",
    products: [
        .library(name: "PortfolioCore", targets: ["PortfolioCore"]),
        .executable(name: "bitpal", targets: ["bitpal"]),
        .executable(name: "bitpal-bench", targets: ["bitpal-bench"]),
    ],
    targets: [
        // Models, exact accounting, the JSON file store and the price client.
        // Knows nothing of argv, stdout or exit codes.
        .target(name: "PortfolioCore"),
        // The command table, argument parsing, rendering and exit codes.
        .target(name: "BitpalCLI", dependencies: ["PortfolioCore"]),
        // Glue only. A release build links the Swift runtime and Foundation into the binary (what
        // `--static-swift-stdlib` does, named here so that `swift build -c release` does it): a command
        // then starts in about 2.5 ms instead of 6 (the dynamic loader's symbol lookups were most of a
        // small report's time), and the binary runs on a machine without the toolchain.
        .executableTarget(name: "bitpal", dependencies: ["BitpalCLI"],
                          linkerSettings: [.unsafeFlags(["-static-stdlib", "-lCoreFoundation", "-l_FoundationICU", "-l_FoundationCShims", "-l_FoundationCollections", "-lswiftSynchronization"], .when(configuration: .release))]),
        // Times the release bitpal binary on synthetic portfolios.
        .executableTarget(name: "bitpal-bench", dependencies: ["PortfolioCore"]),
        // Fixture and golden files are read from the source tree (#filePath), not bundled.
        .testTarget(name: "PortfolioCoreTests", dependencies: ["PortfolioCore"], exclude: ["Fixtures"]),
        .testTarget(name: "BitpalCLITests", dependencies: ["BitpalCLI", "PortfolioCore"], exclude: ["Golden"]),
    ]
)
