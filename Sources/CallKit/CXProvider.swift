public import Foundation
import NSEExtensionKit
import NSEJSON
import NSEPayload

/// CallKit's provider, as far as a Notification Service Extension uses it: the class method that hands a decrypted
/// call offer to the app (iOS 14.5). nse's host answers it as iOS does (its rules, the app's launch and its report,
/// strikes: docs/voip.md). A provider of the app's own (calls reported, actions) is the app's, not the extension's,
/// and is not here.
open class CXProvider: NSObject {
    /// Asks the system to launch the containing app with `dictionaryPayload`, as a VoIP push would; `completion` is
    /// called on a private queue with nil, or with a ``CXErrorCodeNotificationServiceExtensionError``.
    // @preconcurrency, as Swift imports Apple's Objective-C: the handler's @Sendable binds in Swift 6 mode only.
    @preconcurrency
    open class func reportNewIncomingVoIPPushPayload(
        _ dictionaryPayload: [AnyHashable: Any], completion: (@Sendable ((any Error)?) -> Void)? = nil
    ) {
        VoIPReport.send(dictionaryPayload, framework: .callKit) { failure in
            completion?(failure.map { CXErrorCodeNotificationServiceExtensionError(Self.code($0.error)) })
        }
    }

    /// The async form, as Swift imports it on iOS.
    open class func reportNewIncomingVoIPPushPayload(_ dictionaryPayload: [AnyHashable: Any]) async throws {
        let failure = await withCheckedContinuation { continuation in
            VoIPReport.send(dictionaryPayload, framework: .callKit) { continuation.resume(returning: $0) }
        }
        if let failure { throw CXErrorCodeNotificationServiceExtensionError(Self.code(failure.error)) }
    }

    static func code(_ error: VoIPReportError) -> CXErrorCodeNotificationServiceExtensionError.Code {
        CXErrorCodeNotificationServiceExtensionError.Code(rawValue: error.rawValue) ?? .unknown
    }
}

/// One report to the host: the payload as JSON, the answer on a private queue.
enum VoIPReport {
    static let queue = DispatchQueue(label: "nse.callkit.report")

    static func send(
        _ payload: [AnyHashable: Any], framework: VoIPFramework,
        completion: @escaping @Sendable (VoIPReportFailure?) -> Void
    ) {
        guard case .object(let object)? = PropertyListJSON.json(payload, datesAndData: .text) else {
            // Apple: every key and value must be a property-list type; this one cannot travel.
            queue.async { completion(VoIPReportFailure(.unknown, framework: framework)) }
            return
        }
        ExtensionHost.shared.reportVoIP(object, framework: framework) { failure in
            queue.async { completion(failure) }
        }
    }
}
