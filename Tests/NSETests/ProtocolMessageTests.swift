import NSEJSON
import NSEPayload
import NSEProtocol
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The host/extension protocol's messages: each one written as one line and read back the same, on the wire as
/// docs/protocol.md shows it, and a line that is not what the protocol says refused in one line naming the member.
@Suite struct ProtocolMessageTests {
    static let request = ServiceRequest(
        requestID: "6F1C0000-0000-4000-8000-000000000000", pushType: .voip,
        payload: ["aps": ["alert": ["loc-key": "IM_MSG"], "mutable-content": 1], "enc": "nse1.x"],
        container: "/tmp/device", budgetMilliseconds: 1500, deadlineUnixMilliseconds: 1_795_300_000_000)

    static let hostMessages: [HostMessage] = [
        .request(request), .timeWillExpire, .contentAccepted, .reportVoIPResult(nil),
        .reportVoIPResult(VoIPReportFailure(.unknown)), .reportVoIPResult(VoIPReportFailure(.invalidClientProcess)),
        .reportVoIPResult(VoIPReportFailure(.missingNotificationFilteringEntitlement)),
        .reportVoIPResult(VoIPReportFailure(.invalidClientProcess, framework: .liveCommunicationKit)),
        .reportVoIPResult(
            VoIPReportFailure(.missingNotificationFilteringEntitlement, framework: .liveCommunicationKit)),
        .addNotificationResult(nil), .addNotificationResult(.notificationInvalidNoContent),
        .addNotificationResult(.notificationInvalidNoDate), .addNotificationResult(.notificationsNotAllowed),
    ]

    static let extensionMessages: [ExtensionMessage] = [
        .content(DeliveredContent(content: [:])),
        .content(
            DeliveredContent(
                content: ["aps": ["alert": ["title": "Alice", "body": "Lunch at 1?"]], "from": "sip:a@example.org"],
                isFallback: true, reason: "envelope-wrong-key: no", info: ["source": "enc"])),
        .reportVoIP(["call_uuid": "6F1C0000-0000-4000-8000-000000000000", "video": true]),
        .reportVoIP(["call_uuid": "6F1C0000-0000-4000-8000-000000000000"], framework: .liveCommunicationKit),
        .addNotification(NotificationAddition(identifier: "m1", content: ["aps": ["alert": ["body": "Lunch?"]]])),
        .addNotification(
            NotificationAddition(
                identifier: "reminder", content: ["aps": ["alert": "Unread"], "k": 1],
                trigger: .init(kind: .timeInterval, repeats: true, fireAt: 1_800_000_000_000, seconds: 60))),
        .addNotification(
            NotificationAddition(
                identifier: "daily", content: ["aps": ["alert": "Good morning"]],
                trigger: .init(
                    kind: .calendar, repeats: true, fireAt: 1_800_000_000_000, dateComponents: ["hour": 9]))),
        .addNotification(
            NotificationAddition(
                identifier: "weekly", content: ["aps": ["alert": "Stand-up"]],
                trigger: .init(
                    kind: .calendar, repeats: true, fireAt: 1_800_000_000_000, dateComponents: ["weekday": 2],
                    firings: [1_800_000_000_000, 1_800_604_800_000]))),
    ]

    @Test(arguments: hostMessages)
    func hostMessageRoundTrips(message: HostMessage) throws {
        let line = message.line
        #expect(line.last == 0x0A && line.dropLast().allSatisfy { $0 != 0x0A })
        #expect(try HostMessage.decode(line: line.dropLast()) == message)
    }

    /// A refusal with a code this build does not know (a newer host's) is still a refusal, not a broken link.
    @Test func anUnknownAdditionErrorIsStillARefusal() throws {
        let line = #"{"type":"add-notification-result","ok":false,"error":{"domain":"UNErrorDomain","code":1402}}"#
        #expect(try HostMessage.decode(line: Array(line.utf8)) == .addNotificationResult(.notificationsNotAllowed))
        let ok = #"{"type":"add-notification-result","ok":true,"error":null}"#
        #expect(try HostMessage.decode(line: Array(ok.utf8)) == .addNotificationResult(nil))
    }

    @Test(arguments: extensionMessages)
    func extensionMessageRoundTrips(message: ExtensionMessage) throws {
        #expect(try ExtensionMessage.decode(line: message.line.dropLast()) == message)
    }

    /// A line to a reader that is gone (an extension that exited before `content-accepted`) is `false`: the process
    /// writing it is not ended by SIGPIPE, though this test process leaves SIGPIPE at its default.
    @Test func aLineToAReaderThatIsGoneIsRefusedWithoutSIGPIPE() {
        var descriptors: [Int32] = [-1, -1]
        #expect(pipe(&descriptors) == 0)
        close(descriptors[0])
        let channel = LineChannel(input: -1, output: descriptors[1], maxLineBytes: 64)
        #expect(!channel.send(HostMessage.contentAccepted))
        #expect(!channel.send(HostMessage.contentAccepted))
        channel.closeOutput()
    }

    @Test func linesAreWrittenAsDocumented() {
        #expect(
            String(decoding: HostMessage.request(Self.request).line, as: UTF8.self)
                == #"{"type":"request","protocol":2,"request_id":"6F1C0000-0000-4000-8000-000000000000","identifier":"6F1C0000-0000-4000-8000-000000000000","push_type":"voip","container":"/tmp/device","budget_ms":1500,"deadline_unix_ms":1795300000000,"payload":{"aps":{"alert":{"loc-key":"IM_MSG"},"mutable-content":1},"enc":"nse1.x"}}"#
                + "\n")
        #expect(
            String(decoding: HostMessage.reportVoIPResult(VoIPReportFailure(.invalidClientProcess)).line, as: UTF8.self)
                == #"{"type":"report-voip-result","ok":false,"error":{"framework":"CallKit","domain":"CXErrorDomainNotificationServiceExtension","code":1,"name":"invalidClientProcess"}}"#
                + "\n")
        #expect(
            String(
                decoding: HostMessage.reportVoIPResult(
                    VoIPReportFailure(.missingNotificationFilteringEntitlement, framework: .liveCommunicationKit)
                ).line, as: UTF8.self)
                == #"{"type":"report-voip-result","ok":false,"error":{"framework":"LiveCommunicationKit","domain":null,"code":null,"name":"missingNotificationFilteringEntitlement"}}"#
                + "\n")
        // CallKit's report is written as before LiveCommunicationKit; the other names its framework.
        #expect(
            String(decoding: ExtensionMessage.reportVoIP(["video": true]).line, as: UTF8.self)
                == #"{"type":"report-voip","payload":{"video":true}}"# + "\n")
        #expect(
            String(
                decoding: ExtensionMessage.reportVoIP(["video": true], framework: .liveCommunicationKit).line,
                as: UTF8.self)
                == #"{"type":"report-voip","payload":{"video":true},"framework":"LiveCommunicationKit"}"# + "\n")
        #expect(
            String(decoding: HostMessage.contentAccepted.line, as: UTF8.self) == #"{"type":"content-accepted"}"# + "\n")
        #expect(
            String(decoding: ExtensionMessage.content(DeliveredContent(content: [:], reason: "r")).line, as: UTF8.self)
                == #"{"type":"content","content":{},"reason":"r"}"# + "\n")
        #expect(
            String(decoding: ExtensionMessage.hello(ExtensionHello(servesMany: true)).line, as: UTF8.self)
                == #"{"type":"hello","protocol":2,"requests":"many"}"# + "\n")
        #expect(String(decoding: ExtensionMessage.ready.line, as: UTF8.self) == #"{"type":"ready"}"# + "\n")
    }

    @Test func versionTwoReadsVersionOneAndLater() throws {
        // A version-1 request (no hello was ever sent) and a later version read the same way.
        for version in [1, 2, 7] {
            let line = #"{"type":"request","protocol":\#(version),"request_id":"r","container":"/c","payload":{}}"#
            #expect(try HostMessage.decode(line: Array(line.utf8)) != nil)
        }
        // A hello without `requests` serves one request.
        #expect(
            try ExtensionMessage.decode(line: Array(#"{"type":"hello","protocol":2}"#.utf8))
                == .hello(ExtensionHello(protocolVersion: 2, servesMany: false)))
    }

    @Test func optionalMembersTakeTheirDefaults() throws {
        let minimal = try HostMessage(
            json: JSON.parse(#"{"type":"request","request_id":"r","container":"/c","payload":{},"info":null}"#))
        #expect(
            minimal
                == .request(
                    ServiceRequest(
                        requestID: "r", pushType: .alert, payload: [:], container: "/c", budgetMilliseconds: 30_000,
                        deadlineUnixMilliseconds: 0)))
        // A host before the collapse id wrote no identifier: the request id is the notification's.
        if case .request(let request) = minimal { #expect(request.identifier == "r") }
        let line = #"{"type":"request","request_id":"r","identifier":"lunch-7","container":"/c","payload":{}}"#
        let identified = try HostMessage(json: JSON.parse(line))
        if case .request(let request) = identified { #expect(request.identifier == "lunch-7") } else { Issue.record() }
        #expect(
            try HostMessage(json: JSON.parse(#"{"type":"report-voip-result","ok":false,"error":{"code":99}}"#))
                == .reportVoIPResult(VoIPReportFailure(.unknown)))
        // A host before LiveCommunicationKit wrote no framework: CallKit's; a name without a code is read by name.
        #expect(
            try HostMessage(
                json: JSON.parse(
                    #"{"type":"report-voip-result","ok":false,"error":{"framework":"LiveCommunicationKit","name":"invalidClientProcess"}}"#
                )) == .reportVoIPResult(VoIPReportFailure(.invalidClientProcess, framework: .liveCommunicationKit)))
        #expect(
            try HostMessage(json: JSON.parse(#"{"type":"report-voip-result","ok":false,"error":{"code":1}}"#))
                == .reportVoIPResult(VoIPReportFailure(.invalidClientProcess)))
        #expect(
            try ExtensionMessage(json: JSON.parse(#"{"type":"content","content":{},"reason":null,"info":null}"#))
                == .content(DeliveredContent(content: [:])))
    }

    @Test(arguments: [
        (
            #"{"type":"content"}"#,
            #"the extension sent an invalid message: "content" must be an object, and is missing"#
        ),
        (
            #"{"type":"content","content":"Lunch at 1?"}"#,
            #"the extension sent an invalid message: "content" must be an object, not a string"#
        ),
        (
            #"{"type":"content","content":{},"fallback":"yes"}"#,
            #"the extension sent an invalid message: "fallback" must be a boolean, not a string"#
        ),
        (
            #"{"type":"report-voip","payload":[1]}"#,
            #"the extension sent an invalid message: "payload" must be an object, not an array"#
        ),
        (
            #"{"type":"say\u001b[31mhello-and-a-much-longer-name-than-that"}"#,
            #"the extension sent an invalid message: "type" must be content, report-voip, add-notification, hello or ready, not "say?[31mhello-and-a-much-longer-""#
        ),
        (
            #"{"type":"hello","protocol":2,"requests":"all"}"#,
            #"the extension sent an invalid message: "requests" must be "one" or "many", not "all""#
        ),
        (
            #"{"type":"hello","requests":"many"}"#,
            #"the extension sent an invalid message: "protocol" must be an integer, and is missing"#
        ),
        (
            #"{"type":"add-notification","identifier":"m1","content":{},"trigger":{"type":"location"}}"#,
            #"the extension sent an invalid message: "trigger.type" must be time-interval or calendar"#
        ),
        (
            #"{"type":"add-notification","identifier":"d","content":{},"trigger":{"type":"calendar","repeats":true,"fire_at":1,"firings":[1,"2"]}}"#,
            #"the extension sent an invalid message: "trigger.firings.1" must be an integer, not a string"#
        ),
        (
            #"{"type":"add-notification","content":{}}"#,
            #"the extension sent an invalid message: "identifier" must be a string, and is missing"#
        ),
        (
            #"{"kind":"content"}"#,
            #"the extension sent an invalid message: "type" must be content, report-voip, add-notification, hello or ready, and is missing"#
        ),
    ])
    func extensionLineErrorsNameTheMember(line: String, message: String) {
        #expect(throws: ProtocolError(message)) { try ExtensionMessage.decode(line: Array(line.utf8)) }
    }

    @Test(arguments: [
        (
            #"{"type":"request","protocol":0,"request_id":"r","container":"/c","payload":{}}"#,
            #"the host sent an invalid message: "protocol" must be a version, 1 or more, not 0"#
        ),
        (
            #"{"type":"request","request_id":"r","container":"/c","payload":{},"push_type":"sms"}"#,
            #"the host sent an invalid message: "push_type" must be alert, background, voip or liveactivity"#
        ),
        (
            #"{"type":"request","request_id":"r","payload":{}}"#,
            #"the host sent an invalid message: "container" must be a string, and is missing"#
        ),
        (
            #"{"type":"report-voip-result","ok":false,"error":{"code":"1"}}"#,
            #"the host sent an invalid message: "error.code" must be an integer, not a string"#
        ),
    ])
    func hostLineErrorsNameTheMember(line: String, message: String) {
        #expect(throws: ProtocolError(message)) { try HostMessage.decode(line: Array(line.utf8)) }
    }
}
