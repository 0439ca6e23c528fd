import FoundationEssentials

/// What `nse extension build` reads of an extension's `Info.plist`: its extension point and principal class.
public struct InfoPlist: Sendable, Equatable {
    /// A Notification Service Extension's point.
    public static let serviceExtensionPoint = "com.apple.usernotifications.service"

    public var extensionPoint: String?
    /// The principal class as written (`$(PRODUCT_MODULE_NAME).NotificationService`).
    public var principalClass: String?
    public var executableName: String?
    /// As written (`$(PRODUCT_BUNDLE_IDENTIFIER)`), nil when the file has none (Xcode's templates).
    public var bundleIdentifier: String?

    private struct Document: Decodable {
        struct Extension: Decodable {
            // swift-format-ignore: AlwaysUseLowerCamelCase
            var NSExtensionPointIdentifier: String?
            // swift-format-ignore: AlwaysUseLowerCamelCase
            var NSExtensionPrincipalClass: String?
        }
        // swift-format-ignore: AlwaysUseLowerCamelCase
        var NSExtension: Extension?
        // swift-format-ignore: AlwaysUseLowerCamelCase
        var CFBundleExecutable: String?
        // swift-format-ignore: AlwaysUseLowerCamelCase
        var CFBundleIdentifier: String?
    }

    /// Reads an XML or binary property list.
    public init(contentsOf path: String) throws(ExtensionBuildError) {
        let document = try PropertyListFile.decode(Document.self, at: path) { _ in
            "not a property list with NSExtension"
        }
        extensionPoint = document.NSExtension?.NSExtensionPointIdentifier
        principalClass = document.NSExtension?.NSExtensionPrincipalClass
        executableName = document.CFBundleExecutable
        bundleIdentifier = document.CFBundleIdentifier
    }

    /// The principal class's name in Swift: Xcode's `$(PRODUCT_MODULE_NAME).` (or any module) prefix removed.
    public var principalClassName: String? {
        guard let principalClass, !principalClass.isEmpty else { return nil }
        return principalClass.split(separator: ".").last.map(String.init)
    }
}
