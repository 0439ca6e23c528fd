import NSEJSON
import NSEPayload
import Testing

/// The call report an app handler prints: read back as written, defaults for what it leaves out, and the first
/// wrong member named in one line.
@Suite struct CallReportTests {
    static let uuid = "6F1C0000-0000-4000-8000-00000000000A"

    @Test func roundTripsAsDocumented() throws {
        let report = CallReport(
            uuid: Self.uuid, handleType: .phoneNumber, handleValue: "+33 1 23", localizedCallerName: nil,
            hasVideo: true, supportsHolding: false, supportsDTMF: true, supportsGrouping: true)
        #expect(
            report.json.serialized()
                == #"{"uuid":"6F1C0000-0000-4000-8000-00000000000A","remote_handle":{"type":"phoneNumber","value":"+33 1 23"},"localized_caller_name":null,"has_video":true,"supports_holding":false,"supports_dtmf":true,"supports_grouping":true,"supports_ungrouping":false,"framework":"CallKit"}"#
        )
        #expect(try CallReport(json: JSON.parse(report.json.serialized())) == report)
        var conversation = report
        conversation.framework = .liveCommunicationKit
        #expect(try CallReport(json: JSON.parse(conversation.json.serialized())) == conversation)
    }

    @Test func leftOutMembersTakeCallKitsDefaults() throws {
        let report = try CallReport(
            json: JSON.parse(#"{"uuid":"\#(Self.uuid)","remote_handle":{"type":"generic","value":"bob"}}"#))
        #expect(
            report
                == CallReport(
                    uuid: Self.uuid, handleType: .generic, handleValue: "bob", localizedCallerName: nil, hasVideo: false
                ))
    }

    @Test(arguments: [
        (#"[]"#, "the document must be an object, not an array"),
        (#"{"uuid":"not-a-uuid"}"#, #""uuid" must be a UUID"#),
        (#"{"uuid":"\#(uuid)"}"#, #""remote_handle" must be an object, and is missing"#),
        (
            #"{"uuid":"\#(uuid)","remote_handle":{"type":"sip","value":"bob"}}"#,
            #""remote_handle.type" must be generic, phoneNumber or emailAddress"#
        ),
        (
            #"{"uuid":"\#(uuid)","remote_handle":{"type":"generic","value":"bob"},"framework":"PushKit"}"#,
            #""framework" must be "CallKit" or "LiveCommunicationKit""#
        ),
        (
            #"{"uuid":"\#(uuid)","remote_handle":{"type":"generic","value":""}}"#,
            #""remote_handle.value" must be a non-empty string"#
        ),
        (
            #"{"uuid":"\#(uuid)","remote_handle":{"type":"generic","value":"bob"},"has_video":"yes"}"#,
            #""has_video" must be a boolean, not a string"#
        ),
        (
            #"{"uuid":"\#(uuid)","remote_handle":{"type":"generic","value":"b"},"localized_caller_name":7}"#,
            #""localized_caller_name" must be a string, not a number"#
        ),
    ])
    func errorsNameTheFirstWrongMember(document: String, message: String) throws {
        let json = try JSON.parse(document, options: JSONParseOptions(requireObject: false))
        #expect(throws: JSONFieldError.self) { try CallReport(json: json) }
        do { _ = try CallReport(json: json) } catch { #expect(error.description == message) }
    }
}
