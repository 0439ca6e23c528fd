import NSEJSON
import NSEPayload
import Testing

@testable import NSEHost

/// The result's `call_report` and `voip` as docs/result.md and docs/voip.md show them: the same keys in the same
/// order, `call_report` always there (`null` without a call), `voip` only when a call offer took a path.
@Suite struct ResultVoIPTests {
    static let report = CallReport(
        uuid: "6F1C0000-0000-4000-8000-00000000000A", handleType: .generic, handleValue: "sip:bob@example.org",
        localizedCallerName: "Bob", hasVideo: true)

    static func launch(_ outcome: AppLaunch.Outcome, report: CallReport? = nil, storeError: String? = nil) -> AppLaunch
    {
        AppLaunch(
            outcome: outcome, handler: "command", report: report, failure: outcome == .terminated ? "no report" : nil,
            wallMilliseconds: 1.23456, strikes: outcome == .reported ? 0 : 3, maxStrikes: 3, storeError: storeError)
    }

    /// The members after `display` up to `extension`, as written.
    static func voipMembers(_ callReport: CallReport?, _ voip: NotificationResult.VoIPPath?) -> String {
        var result = NotificationResult(outcome: .suppressed, reason: "r", requestID: "id", pushType: .alert)
        result.callReport = callReport
        result.voip = voip
        let text = result.json.serialized()
        let start = text.firstRange(of: #""call_report":"#)!.lowerBound
        let end = text.firstRange(of: #","extension":"#)!.lowerBound
        return String(text[start..<end])
    }

    @Test func noCallWritesANullReportAndNoVoIP() {
        #expect(Self.voipMembers(nil, nil) == #""call_report":null"#)
    }

    @Test func theExtensionsReportWithTheAppsLaunch() {
        let launch = Self.launch(.reported, report: Self.report)
        #expect(
            Self.voipMembers(launch.report, .notificationServiceExtension(error: nil, framework: .callKit, app: launch))
                == #""call_report":{"uuid":"6F1C0000-0000-4000-8000-00000000000A","remote_handle":{"type":"generic","value":"sip:bob@example.org"},"localized_caller_name":"Bob","has_video":true,"supports_holding":true,"supports_dtmf":true,"supports_grouping":false,"supports_ungrouping":false,"framework":"CallKit"},"voip":{"path":"notification-service-extension","framework":"CallKit","error":null,"app":{"handler":"command","outcome":"reported","failure":null,"wall_ms":1.235,"strikes":0,"max_strikes":3,"must_report":true}}"#
        )
    }

    @Test func aRefusedReportHasItsErrorAndNoApp() {
        #expect(
            Self.voipMembers(
                nil,
                .notificationServiceExtension(
                    error: VoIPReportFailure(.missingNotificationFilteringEntitlement), framework: .callKit, app: nil))
                == #""call_report":null,"voip":{"path":"notification-service-extension","framework":"CallKit","error":{"framework":"CallKit","domain":"CXErrorDomainNotificationServiceExtension","code":2,"name":"missingNotificationFilteringEntitlement"}}"#
        )
    }

    /// LiveCommunicationKit documents no error domain or codes: its refusal names the condition and leaves them null.
    @Test func liveCommunicationKitsRefusalHasNoDomainOrCode() {
        #expect(
            Self.voipMembers(
                nil,
                .notificationServiceExtension(
                    error: VoIPReportFailure(.invalidClientProcess, framework: .liveCommunicationKit),
                    framework: .liveCommunicationKit, app: nil))
                == #""call_report":null,"voip":{"path":"notification-service-extension","framework":"LiveCommunicationKit","error":{"framework":"LiveCommunicationKit","domain":null,"code":null,"name":"invalidClientProcess"}}"#
        )
    }

    @Test func aConversationReportedThroughPushKitSaysItsFramework() {
        var report = Self.report
        report.framework = .liveCommunicationKit
        let members = Self.voipMembers(report, .pushKit(Self.launch(.reported, report: report)))
        #expect(
            members.contains(
                #""supports_ungrouping":false,"framework":"LiveCommunicationKit"},"voip":{"path":"pushkit","app":"#))
        #expect(members.hasSuffix(#""must_report":true},"framework":"LiveCommunicationKit"}"#))
        #expect(
            Self.launch(.reported, report: report).summary
                == "the app reported the conversation to LiveCommunicationKit")
    }

    @Test func pushKitWithATerminatedApp() {
        #expect(
            Self.voipMembers(nil, .pushKit(Self.launch(.terminated, storeError: "store")))
                == #""call_report":null,"voip":{"path":"pushkit","app":{"handler":"command","outcome":"terminated","failure":"no report","wall_ms":1.235,"strikes":3,"max_strikes":3,"must_report":true,"store_error":"store"}}"#
        )
    }

    @Test func textNamesTheCaller() {
        var result = NotificationResult(outcome: .notInvoked, reason: "r", requestID: "id", pushType: .voip)
        result.callReport = Self.report
        #expect(result.text.contains("call:     Bob rings (CallKit uuid 6F1C0000-0000-4000-8000-00000000000A)\n"))
        result.callReport?.localizedCallerName = nil
        #expect(result.text.contains("call:     sip:bob@example.org rings"))
    }
}
