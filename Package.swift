// swift-tools-version: 6.1
import PackageDescription

// One set of settings for every Swift target: Swift 6 mode, explicit `any`, and imports that stay
// internal unless a module's public API really exposes them (keeps C types out of public API).
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    // A warning in the project's own code fails its build (debug and release); dependencies are not affected.
    .unsafeFlags(["-warnings-as-errors"]),
]

// How the two per-notification executables (`nse`, `nse-extension`) are linked in release builds: fully static (no
// dynamic loader, no relocations), by lld, with the functions a notification runs placed first, in the order
// `Sources/<target>/hot-functions.order` lists them (made by `make order-functions`). Their resident memory is mostly
// the pages of code a run touches; grouped, those are a few MB fewer (docs/performance.md).
func perNotificationLinking(_ target: String) -> [LinkerSetting] {
    let order = "\(Context.packageDirectory)/Sources/\(target)/hot-functions.order"
    return [
        .unsafeFlags(
            [
                "-static-executable", "-use-ld=lld", "-Xlinker", "--symbol-ordering-file=\(order)",
                "-Xlinker", "--no-warn-symbol-ordering",
            ],
            .when(configuration: .release))
    ]
}

let argumentParser = Target.Dependency.product(name: "ArgumentParser", package: "swift-argument-parser")
let logging = Target.Dependency.product(name: "Logging", package: "swift-log")
let nioCore = Target.Dependency.product(name: "NIOCore", package: "swift-nio")
let nioPosix = Target.Dependency.product(name: "NIOPosix", package: "swift-nio")
let nioSSL = Target.Dependency.product(name: "NIOSSL", package: "swift-nio-ssl")
let coreMetrics = Target.Dependency.product(name: "CoreMetrics", package: "swift-metrics")

let package = Package(
    name: "nse",
    products: [
        .executable(name: "nse", targets: ["nse"]),
        .executable(name: "nse-tool", targets: ["nse-tool"]),
        .executable(name: "nse-extension", targets: ["nse-extension"]),
        // The SDK (docs/sdk.md): Apple's extension APIs under Apple's module names, for a user's own extension target.
        .library(name: "UserNotifications", targets: ["UserNotifications"]),
        .library(name: "Intents", targets: ["Intents"]),
        .library(name: "WidgetKit", targets: ["WidgetKit"]),
        .library(name: "UserNotificationsUI", targets: ["UserNotificationsUI"]),
        .library(name: "CallKit", targets: ["CallKit"]),
        .library(name: "LiveCommunicationKit", targets: ["LiveCommunicationKit"]),
        .library(name: "CryptoKit", targets: ["CryptoKit"]),
        .library(name: "UniformTypeIdentifiers", targets: ["UniformTypeIdentifiers"]),
        .library(name: "MobileCoreServices", targets: ["MobileCoreServices"]),
        // Apple's Security for a SwiftPM target (`import NSESecurity`); `nse extension build` gives extensions `import
        // Security` over it (SDK/, docs/sdk.md).
        .library(name: "NSESecurity", targets: ["NSESecurity"]),
        .library(name: "UIKit", targets: ["UIKit"]),
        // Apple's os.log for a SwiftPM target (`import NSEOSLog`); `nse extension build` gives extensions `import os`,
        // `import os.log` and `import OSLog` over it (SDK/, docs/sdk.md).
        .library(name: "NSEOSLog", targets: ["NSEOSLog"]),
        // All of the SDK and what it uses in one static library: what `nse extension build` links into a user's
        // extension (one copy of every module, on the toolchain's Swift runtime).
        .library(
            name: "NSESDK", type: .static,
            targets: [
                "UserNotifications", "UserNotificationsUI", "Intents", "WidgetKit", "CallKit", "LiveCommunicationKit",
                "CryptoKit",
                "UniformTypeIdentifiers", "MobileCoreServices", "UIKit", "NSESecurity", "NSEOSLog", "CCommonCrypto",
            ]),
        // The fuzz entry points, for the libFuzzer package in Fuzz/ (docs/fuzzing.md).
        .library(name: "NSEFuzzTargets", targets: ["NSEFuzzTargets"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Already in the graph through hummingbird and swift-nio-extras (at 1.8.0); declared because NSEAPNsServer imports
        // HTTPTypes itself (the `apns-unique-id` field its answer observer reads).
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        // Already in the graph through jwt-kit: test certificates are made in process with them (NSECertificates).
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto", "4.1.0"..<"6.0.0"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        // Runs swiftc for `nse extension build` (its Foundation trait off: the command line stays on
        // FoundationEssentials).
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2", traits: []),
        // Already in the graph through swift-subprocess: its FileDescriptor names where swiftc's output goes.
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        // Metrics at /metrics (docs/serve.md, "Metrics"): the servers count through swift-metrics' API, and only
        // NSEMetrics, which the executable gives them, knows Prometheus (its registry and text format).
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // `nse serve --database postgres://…` (docs/serve.md, "A fleet on PostgreSQL"): what a fleet of nodes shares.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // MARK: - C libraries (each touched by exactly one Swift file)
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CJansson", pkgConfig: "jansson", providers: [.apt(["libjansson-dev"])]),
        // libcurl is not linked but loaded on first use (see Sources/CCurl/shim.h): no pkg-config link flags.
        .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // Not a library: the Swift runtime's global-executor hook, declared for the extension's one event loop.
        .systemLibrary(name: "CConcurrencyHook"),
        // Not a library: the pidfd_open system call, for the host's wait on a child's exit.
        .systemLibrary(name: "CProcessHandle"),
        // Not a library: glibc's malloc tuning (mallopt), for how an extension process keeps its heap.
        .systemLibrary(name: "CMallocTuning"),
        // Not a library: the fork server's loop and the descriptors passed to it (`--extension-launch fork`), in C
        // because it runs between fork()s. One Swift file on each side: NSEProtocol's ForkServer (the extension's),
        // NSEHost's ForkServerLink (the host's).
        .target(name: "CForkServer"),
        // Not a library: the C functions of Apple's `os` module (os_unfair_lock, os_proc_available_memory), which
        // extensions call by Apple's names; NSEOSLog re-exports it.
        .target(name: "CAppleOS"),
        // Not a library: Apple's CommonCrypto (CC_SHA256, CCHmac, CCCrypt…) on libcrypto, for extensions'
        // `import CommonCrypto` (SDK/CommonCrypto); in the SDK's library, used by no module of nse's.
        .target(name: "CCommonCrypto", linkerSettings: [.linkedLibrary("crypto")]),

        // MARK: - Foundations
        .target(name: "NSESystem"),
        .target(name: "NSEJSON", dependencies: ["CJansson"]),
        .target(name: "NSECrypto", dependencies: ["CSodium", "NSESystem"]),
        .target(name: "NSEHTTP", dependencies: ["CCurl", "NSESystem"]),
        // An extension's attachments: downloaded on its event loop, decrypted as they arrive (docs/media.md).
        .target(
            name: "NSEMedia",
            dependencies: [
                "NSECrypto", "NSEPayload", "NSESystem", nioCore, nioPosix, nioSSL,
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]),
        .target(name: "NSEChat", dependencies: ["NSESystem"]),
        // Self-signed certificates for loopback TLS (replay's TLS cases, the tests): swift-certificates, no openssl.
        .target(
            name: "NSECertificates",
            dependencies: [
                "NSESystem", .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // Durable state (the App Group store, the SIP server's bindings and held messages, serve's results):
        // SQLite behind one file, `SQLite.swift`.
        .target(name: "NSEDatabase", dependencies: ["CSQLite", "NSESystem"]),
        .target(
            name: "NSESIP",
            dependencies: ["CConcurrencyHook", "NSEChat", "NSECrypto", "NSESystem", nioCore, nioPosix, nioSSL, logging]),
        .target(
            name: "NSESIPServer",
            dependencies: [
                "NSEAPNs", "NSEChat", "NSESIP", "NSEDatabase", "NSEDevice", "NSEHTTP", "NSEJSON", "NSECrypto",
                "NSEPayload", "NSESystem",
                nioCore, nioPosix, nioSSL, logging, coreMetrics,
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),

        // MARK: - The notification path: intake → device → extension → host
        .target(name: "NSEPayload", dependencies: ["NSEJSON", "NSESystem"]),
        // The host/extension protocol: its messages and the one line framing both sides (and the app launcher) use.
        // No Foundation, no NIO: the extension links it.
        .target(
            name: "NSEProtocol", dependencies: ["CForkServer", "CMallocTuning", "NSEJSON", "NSEPayload", "NSESystem"]),
        .target(name: "NSEDevice", dependencies: ["NSECrypto", "NSEDatabase", "NSEJSON", "NSEPayload", "NSESystem"]),
        // How the app registers its SIP account (RFC 8599 push parameters): the extension's SIP fetch, replay and
        // `nse device register` all register as the app would.
        .target(name: "NSEAppRegistration", dependencies: ["NSEDevice", "NSESIP"]),
        .target(
            name: "NSEExtension",
            dependencies: [
                "NSEAppRegistration", "NSEChat", "NSECrypto", "NSEDevice", "NSEJSON", "NSEMedia",
                "NSEPayload", "NSEProtocol",
                "NSESIP", "NSESystem", logging, nioCore,
            ]
        ),
        // The two ends of a call as their users drive them: the caller (`nse call`) and the app that takes the
        // call after its VoIP push (`nse-app`): re-REGISTER, the INVITE by Call-ID, ring, answer or decline, BYE.
        .target(
            name: "NSECall",
            dependencies: [
                "NSEAppRegistration", "NSECrypto", "NSEDevice", "NSEJSON", "NSEPayload", "NSESIP", "NSESystem", logging,
            ]
        ),
        // The main app in the foreground (`nse app`): it takes the shared core from the extensions, registers and
        // shows the messages that come to it itself, then goes to the background.
        .target(
            name: "NSEMainApp",
            dependencies: [
                "NSEAppRegistration", "NSEDevice", "NSEExtension", "NSEJSON", "NSEPayload", "NSESIP", "NSESystem",
                logging,
            ]
        ),
        .target(
            name: "NSEReplay",
            dependencies: [
                "NSEAppRegistration", "NSECall", "NSECertificates", "NSEChat", "NSECrypto", "NSEDevice", "NSEHost",
                "NSEJSON",
                "NSEPayload", "NSESIP", "NSESIPServer", "NSESystem", "NSEExtensionBuild", logging, nioCore, nioPosix,
                nioSSL,
            ]
        ),
        .target(
            name: "NSEHost",
            dependencies: [
                "CForkServer", "CProcessHandle", "NSECrypto", "NSEDevice", "NSEHTTP", "NSEJSON", "NSEPayload",
                "NSEProtocol",
                "NSESystem",
            ]
        ),
        // APNs's provider side shared by `nse serve` and `nse push`: ES256 provider tokens (jwt-kit, in one file)
        // and the push request/answer of the provider API.
        .target(
            name: "NSEAPNs",
            dependencies: [
                "NSECrypto", "NSEHTTP", "NSEJSON", "NSEPayload", "NSESystem",
                .product(name: "JWTKit", package: "jwt-kit"), .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // `nse serve`: the APNs-shaped HTTP endpoint (HTTP/1.1, h2 over TLS, h2c) that runs the host per push.
        .target(
            name: "NSEAPNsServer",
            dependencies: [
                "NSEAPNs", "NSEHost", "NSEDatabase", "NSEDevice", "NSEHTTP", "NSEJSON", "NSEPayload", "NSECrypto",
                "NSESystem", logging, coreMetrics,
                nioCore, nioPosix, nioSSL, .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP2", package: "swift-nio-extras"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
            ]
        ),

        // A fleet of `nse serve` nodes on one PostgreSQL (postgres-nio): the request log, fault rules and results
        // every node reads and writes (docs/serve.md, "A fleet on PostgreSQL"). Only `nse serve --database` links it in.
        .target(
            name: "NSEFleet",
            dependencies: [
                "NSEAPNsServer", "NSEJSON", "NSESystem", logging, nioCore, nioPosix,
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // `nse files`: the file-transfer server attachments go through (Flexisip's is its own HTTP server too):
        // uploads committed to disk before their 201, downloads streamed with ranges, faults on cue (docs/files.md).
        .target(
            name: "NSEFileServer",
            dependencies: [
                "NSECrypto", "NSEJSON", "NSESystem", logging, nioCore, nioPosix, nioSSL,
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
            ]
        ),

        // The servers' metrics in Prometheus's text format: one registry per server, made by the executable and
        // handed to the server as a swift-metrics factory; `/metrics` on a listener of its own for `nse sip-server`.
        .target(
            name: "NSEMetrics",
            dependencies: [
                "NSESystem", logging, coreMetrics, nioCore, .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
            ]
        ),

        // MARK: - The SDK: Apple's extension APIs on Linux (docs/sdk.md)
        // What a user's own Notification Service Extension imports, under Apple's module names. NSEExtensionKit is
        // their runtime: the link to the host, the device of the request.
        .target(
            name: "NSEExtensionKit",
            dependencies: ["NSEDevice", "NSEJSON", "NSEPayload", "NSEProtocol", "NSESystem"]),
        .target(
            name: "UserNotifications",
            dependencies: ["NSEDevice", "NSEExtensionKit", "NSEJSON", "NSEPayload", "NSEProtocol", "NSESystem"]),
        .target(name: "Intents", dependencies: ["UserNotifications"]),
        .target(name: "WidgetKit", dependencies: ["Intents", "NSEExtensionKit"]),
        .target(name: "UserNotificationsUI", dependencies: ["UserNotifications"]),
        .target(name: "CallKit", dependencies: ["NSEExtensionKit", "NSEJSON", "NSEPayload"]),
        .target(name: "LiveCommunicationKit", dependencies: ["NSEExtensionKit", "NSEJSON", "NSEPayload"]),
        .target(name: "CryptoKit", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
        .target(name: "UniformTypeIdentifiers"),
        // CoreFoundation's types as the SDK's C-style APIs speak them (bridging with `as`), declared once.
        .target(name: "NSECoreFoundation"),
        .target(name: "MobileCoreServices", dependencies: ["NSECoreFoundation", "UniformTypeIdentifiers"]),
        // Apple's Security: the keychain. Not named `Security` (SDK/README.md says why).
        .target(
            name: "NSESecurity",
            dependencies: ["NSECoreFoundation", "NSECrypto", "NSEDevice", "NSEExtensionKit", "NSESystem"]),
        .target(name: "UIKit", dependencies: ["NSECrypto", "NSEDevice", "NSEExtensionKit"]),
        // Apple's os: Logger, os_log, OSLog. Not named `os` (SDK/README.md says why).
        .target(name: "NSEOSLog", dependencies: ["CAppleOS", "NSECrypto", "NSESystem"]),

        // `nse extension build`: a user's extension sources, checked and compiled against the SDK, cached.
        .target(
            name: "NSEExtensionBuild",
            dependencies: [
                "NSECrypto", "NSESystem", .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]),

        // MARK: - Executables
        // What both front doors share for `nse run` (its options and `RunLimits`, the host's verdict printed, input,
        // exit statuses): command-line code, kept out of the NSEHost library.
        .target(
            name: "NSECommandLine",
            dependencies: ["NSECrypto", "NSEDevice", "NSEHost", "NSEJSON", "NSEPayload", "NSESystem"]),
        // `nse`: the front door. Runs `nse run` itself (it links the host alone, so it starts fast) and hands every
        // other command to `nse-tool` beside it by exec.
        // Linked as the extension (perNotificationLinking): every notification starts it, and a dynamically linked
        // front door spent more time in the loader than the extension spends in its whole run (docs/performance.md).
        .executableTarget(
            name: "nse", dependencies: ["NSECommandLine", "NSEDevice", "NSEHost", "NSEPayload", "NSESystem"],
            exclude: ["hot-functions.order"],
            linkerSettings: perNotificationLinking("nse")
        ),
        // The full command line (swift-argument-parser): every subcommand, servers included.
        .executableTarget(
            name: "nse-tool",
            dependencies: [
                argumentParser, logging, "NSEAPNs", "NSEAppRegistration", "NSECall", "NSEChat", "NSECommandLine",
                "NSECrypto",
                "NSEDevice", "NSEHTTP",
                "NSEHost", "NSEJSON", "NSEMainApp", "NSEPayload", "NSEReplay", "NSESIP", "NSESIPServer", "NSESystem",
                "NSEAPNsServer", "NSEExtensionBuild", "NSEFileServer", "NSEFleet", "NSEMetrics",
            ]
        ),
        // The per-notification process: links the reference extension alone, so it starts fast and stays small.
        // In release builds it is a fully static executable: no dynamic loader, no relocations, about half the
        // start-up time and RSS of a dynamically linked one, and its hot functions grouped (docs/performance.md).
        .executableTarget(
            name: "nse-extension", dependencies: ["NSEExtension", "NSEProtocol", "NSESIP", logging],
            exclude: ["hot-functions.order"],
            linkerSettings: perNotificationLinking("nse-extension")
        ),
        // The app's process for one call (`nse-app`), started by the host after the app reported the call.
        .executableTarget(name: "nse-app", dependencies: ["NSECall", "NSESystem", logging]),

        // MARK: - Fuzzing
        // The parsers' fuzz entry points: driven by libFuzzer from Fuzz/, replayed by FuzzRegressionTests.
        .target(
            name: "NSEFuzzTargets",
            dependencies: [
                "NSEChat", "NSECrypto", "NSEDevice", "NSEJSON", "NSEMedia", "NSEPayload", "NSEProtocol", "NSEReplay",
                "NSESIP", "NSEAPNsServer", "NSESystem", nioCore,
            ]
        ),

        // MARK: - Tests
        .target(name: "NSETestSupport", dependencies: ["NSECertificates", "NSEJSON"], path: "Tests/Support"),
        .testTarget(
            name: "NSETests",
            dependencies: [
                "NSEChat", "NSECrypto", "NSEDatabase", "NSEDevice", "NSEExtension", "NSEHost", "NSEJSON", "NSEMainApp",
                "NSEMedia", "NSEPayload",
                "NSEProtocol", "NSESIP", "NSESystem",
                "NSETestSupport",
            ]
        ),
        .testTarget(name: "NSEHTTPTests", dependencies: ["NSEHTTP", "NSETestSupport"]),
        // `nse extension build`'s own parts, in process (the builds themselves run in EndToEndTests).
        .testTarget(name: "NSEExtensionBuildTests", dependencies: ["NSEExtensionBuild"]),
        // The SDK's own types, in process (the extensions built with it run in EndToEndTests).
        .testTarget(
            name: "SDKTests",
            dependencies: [
                "UniformTypeIdentifiers", "MobileCoreServices", "UIKit", "UserNotifications", "Intents", "NSEOSLog",
                "NSESecurity", "NSEDevice", "NSEExtensionKit", "NSEJSON", "NSEPayload", "NSEProtocol",
            ]),
        // The front door's own `nse run` parser (the `nse` executable target, tested in-process).
        .testTarget(name: "FrontDoorTests", dependencies: ["nse", "NSECommandLine", "NSEHost", "NSEPayload"]),
        .testTarget(name: "FuzzRegressionTests", dependencies: ["NSEFuzzTargets"]),
        .testTarget(
            name: "NSESIPServerTests",
            dependencies: [
                "NSECall", "NSEDevice", "NSEMetrics", "NSESIPServer", "NSESIP", "NSEHTTP", "NSETestSupport", logging,
                nioCore,
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "NSESIPTests",
            dependencies: [
                "NSECertificates", "NSESIP", "NSETestSupport", nioCore, nioPosix, nioSSL, logging,
                .product(name: "NIOTestUtils", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "NSECrypto", "NSEDevice", "NSEHost", "NSEJSON", "NSEPayload", "NSEProtocol", "NSEReplay", "NSESIP",
                "NSESIPServer", "NSETestSupport", logging,
            ]),
        .testTarget(
            name: "NSEAPNsServerTests",
            dependencies: [
                "NSEAPNs", "NSEAPNsServer", "NSEDatabase", "NSEDevice", "NSEHost", "NSEHTTP", "NSEJSON", "NSEMetrics",
                "NSEPayload", "NSEProtocol", "NSETestSupport", logging, nioCore,
                // APNs keys for the provider-token tests, made in process.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ]
        ),
        // A fleet of `nse serve` nodes on a throw-away PostgreSQL cluster: the built binary, end to end.
        .testTarget(
            name: "NSEFleetTests",
            dependencies: [
                "NSEFleet", "NSEAPNsServer", "NSEJSON", "NSESystem", "NSETestSupport", logging,
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        // `nse files` end to end: the built binary on loopback, driven by curl.
        .testTarget(
            name: "NSEFileServerTests",
            dependencies: ["NSECrypto", "NSEFileServer", "NSEJSON", "NSESystem", "NSETestSupport"]
        ),
    ]
)

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + swiftSettings
}
