// swift-tools-version: 6.1
import PackageDescription

// The libFuzzer driver for nse's parsers (docs/fuzzing.md). A package of its own so that the main build never sees
// `-sanitize=fuzzer`: build it with `make fuzz`, or
//   swift build -c release --package-path Fuzz --scratch-path .build-fuzz \
//     -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
// The entry points themselves live in the main package (`NSEFuzzTargets`), where the regression suite replays the
// corpora through them without libFuzzer.
let package = Package(
    name: "nse-fuzz",
    dependencies: [.package(name: "nse", path: "..")],
    targets: [
        // libFuzzer's driver entry point, declared for Swift (the library comes with -sanitize=fuzzer).
        .systemLibrary(name: "CFuzzer"),
        // One executable for every target (selected with NSE_FUZZ_TARGET): one sanitized build instead of seven.
        .executableTarget(
            name: "nse-fuzz",
            dependencies: ["CFuzzer", .product(name: "NSEFuzzTargets", package: "nse")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
