// swift-tools-version: 6.1
import PackageDescription

// An extension target as a SwiftPM package, with unit tests that construct Apple's types. In a project of your own,
// nse is checked out beside it: `.package(path: "../nse")` (docs/sdk.md).
let package = Package(
    name: "MyNotificationService",
    dependencies: [.package(name: "nse", path: "../..")],
    targets: [
        .executableTarget(
            name: "NotificationServiceExtension",
            dependencies: [
                .product(name: "UserNotifications", package: "nse"),
                .product(name: "Intents", package: "nse"),
                .product(name: "NSEOSLog", package: "nse"),
            ],
            // Xcode's language mode for an extension target. This one downloads nothing, so it needs no
            // FoundationNetworking (docs/sdk.md, "Foundation and URLSession").
            swiftSettings: [.swiftLanguageMode(.v5)]),
        .testTarget(
            name: "NotificationServiceExtensionTests",
            dependencies: ["NotificationServiceExtension", .product(name: "UserNotifications", package: "nse")],
            swiftSettings: [.swiftLanguageMode(.v5)]),
    ])
