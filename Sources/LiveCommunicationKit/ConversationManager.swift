public import Foundation
import NSEExtensionKit
import NSEJSON
import NSEPayload

/// LiveCommunicationKit's conversation manager (iOS 17.4), as far as a Notification Service Extension uses it: the
/// class method that reports a decrypted call offer. Its errors are undocumented; nse throws CallKit's
/// (`CXErrorDomainNotificationServiceExtension` codes, as ``ConversationManager/Error``): docs/voip.md says why.
public final class ConversationManager: Sendable {
    /// Why a report was refused: the codes of CallKit's extension error (LiveCommunicationKit documents none).
    public struct Error: Swift.Error, Sendable, Equatable, CustomNSError {
        public enum Code: Int, Sendable {
            case unknown = 0
            case invalidClientProcess = 1
            case missingNotificationFilteringEntitlement = 2
        }

        public let code: Code
        public static var errorDomain: String { "com.apple.LiveCommunicationKit.notificationserviceextension" }
        public var errorCode: Int { code.rawValue }
    }

    /// Reports a new incoming conversation after the extension decrypted a VoIP request; throws when the system
    /// disallows it.
    public final class func reportNewIncomingVoIPPushPayload(_ payload: [AnyHashable: Any]) async throws {
        guard case .object(let object)? = PropertyListJSON.json(payload, datesAndData: .text) else {
            throw Error(code: .unknown)
        }
        let failure = await withCheckedContinuation { continuation in
            ExtensionHost.shared.reportVoIP(object, framework: .liveCommunicationKit) {
                continuation.resume(returning: $0)
            }
        }
        if let failure { throw Error(code: Error.Code(rawValue: failure.error.rawValue) ?? .unknown) }
    }
}
