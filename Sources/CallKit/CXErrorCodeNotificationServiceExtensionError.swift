public import Foundation

/// The domain of the errors `reportNewIncomingVoIPPushPayload` reports, as seen on devices.
// swift-format-ignore: AlwaysUseLowerCamelCase
public let CXErrorDomainNotificationServiceExtension: String = "com.apple.CallKit.error.notificationserviceextension"

/// Why `CXProvider.reportNewIncomingVoIPPushPayload(_:completion:)` refused a report (iOS 14.5), with Apple's codes:
/// `catch CXErrorCodeNotificationServiceExtensionError.missingNotificationFilteringEntitlement` and
/// `(error as NSError).code == 2` both work.
public struct CXErrorCodeNotificationServiceExtensionError: CustomNSError, Hashable, Error, Sendable {
    public enum Code: Int, Sendable, Hashable {
        case unknown = 0
        /// Called from a process that is not an extension handling a notification request, or a second time.
        case invalidClientProcess = 1
        /// The extension lacks `com.apple.developer.usernotifications.filtering`.
        case missingNotificationFilteringEntitlement = 2
    }

    public let code: Code

    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
    }

    public static var errorDomain: String { CXErrorDomainNotificationServiceExtension }
    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] { [:] }

    public static var unknown: Code { .unknown }
    public static var invalidClientProcess: Code { .invalidClientProcess }
    public static var missingNotificationFilteringEntitlement: Code { .missingNotificationFilteringEntitlement }
}

extension CXErrorCodeNotificationServiceExtensionError.Code {
    /// `catch CXErrorCodeNotificationServiceExtensionError.missingNotificationFilteringEntitlement { … }`.
    public static func ~= (code: Self, error: any Error) -> Bool {
        (error as? CXErrorCodeNotificationServiceExtensionError)?.code == code
    }
}
