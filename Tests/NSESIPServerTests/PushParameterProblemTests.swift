import Foundation
import NSEHTTP
import NSESIP
import Testing

@testable import NSESIPServer

/// The diagnosis of RFC 8599 push parameters that cannot work (issue #36 §3): Flexisip's parsing of Apple's
/// parameters (`RFC8599PushParams::parsePushParams`), then APNs's reading of each token.
@Suite("Push parameters that cannot work")
struct PushParameterProblemTests {
    static let remote = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
    static let voip = "0F0E0D0C0B0A09080706050403020100FFEEDDCCBBAA99887766554433221100"

    struct Row: Sendable, CustomTestStringConvertible {
        var provider: String
        var prid: String
        var param: String
        /// The problem's code, or nil for parameters a push can be built from.
        var code: String?
        var testDescription: String { "\(provider) \(param) → \(code ?? "fine")" }
    }

    static let rows: [Row] = [
        // What liblinphone registers, and its single-service forms.
        Row(provider: "apns", prid: "\(voip):voip&\(remote):remote", param: "ABCDE12345.org.example.app.voip&remote"),
        Row(provider: "apns", prid: "\(remote):remote&\(voip):voip", param: "ABCDE12345.org.example.app.remote&voip"),
        Row(provider: "apns.dev", prid: remote, param: "ABCDE12345.org.example.app"),
        Row(provider: "apns", prid: "\(remote):remote", param: "ABCDE12345.org.example.app.remote"),
        Row(provider: "apns", prid: voip, param: "ABCDE12345.org.example.app.voip"),
        Row(provider: "APNS", prid: remote, param: "ABCDE12345.org.example.app"),
        // A simulator's longer token, in the development environment only.
        Row(provider: "apns.dev", prid: remote + remote, param: "T.org.example.app"),
        Row(provider: "apns", prid: remote + remote, param: "T.org.example.app", code: "invalid_token"),
        // The number of services against the number of tokens (Flexisip's message for it).
        Row(provider: "apns", prid: remote, param: "T.org.example.app.voip&remote", code: "service_count_mismatch"),
        Row(
            provider: "apns", prid: "\(voip):voip&\(remote):remote", param: "T.org.example.app",
            code: "service_count_mismatch"),
        Row(
            provider: "apns", prid: "\(voip):voip&\(remote):remote&\(remote):remote", param: "T.b.voip&remote",
            code: "service_count_mismatch"),
        // Providers nse cannot push through.
        Row(provider: "fcm", prid: remote, param: "T.org.example.app", code: "unsupported_provider"),
        Row(provider: "apple", prid: remote, param: "T.org.example.app", code: "unsupported_provider"),
        // pn-param without a team id or a bundle id.
        Row(provider: "apns", prid: remote, param: "org", code: "malformed_param"),
        Row(provider: "apns", prid: remote, param: ".org.example.app", code: "malformed_param"),
        Row(provider: "apns", prid: remote, param: "TEAM.", code: "malformed_param"),
        // pn-prid's syntax and its services.
        Row(provider: "apns", prid: "\(voip)&\(remote)", param: "T.b.voip&remote", code: "malformed_prid"),
        Row(provider: "apns", prid: "\(voip):video&\(remote):remote", param: "T.b.voip&remote", code: "malformed_prid"),
        Row(
            provider: "apns", prid: "\(voip):remote&\(remote):remote", param: "T.b.voip&remote", code: "malformed_prid"),
        Row(provider: "apns", prid: ":remote&\(remote):voip", param: "T.b.voip&remote", code: "malformed_prid"),
        Row(provider: "apns", prid: "\(voip):voip", param: "T.org.example.app.remote", code: "undeclared_service"),
        // Tokens APNs would refuse.
        Row(provider: "apns", prid: "ALERTTOKEN", param: "T.org.example.app", code: "invalid_token"),
        Row(provider: "apns", prid: "0A1B2C3D4E5F", param: "T.org.example.app", code: "invalid_token"),
        Row(provider: "apns.dev", prid: "0A1B2C3D4E5F", param: "T.org.example.app", code: "invalid_token"),
        Row(provider: "apns", prid: String(remote.dropLast()), param: "T.org.example.app", code: "invalid_token"),
        Row(
            provider: "apns", prid: "\(voip):voip&nothex:remote", param: "T.org.example.app.voip&remote",
            code: "invalid_token"),
    ]

    @Test(arguments: rows)
    func diagnosis(_ row: Row) {
        let push = PushParameters(provider: row.provider, prid: row.prid, param: row.param)
        #expect(push.problem?.code == row.code, "\(push.problem?.description ?? "no problem")")
        // Only a token APNs would refuse leaves the pushes going.
        #expect((push.pushStopper != nil) == (row.code != nil && row.code != "invalid_token"))
    }

    @Test func descriptionsAreOneLineAndNeverHoldAWholeToken() {
        for row in Self.rows {
            guard let problem = PushParameters(provider: row.provider, prid: row.prid, param: row.param).problem else {
                continue
            }
            let text = problem.description
            #expect(!text.contains("\n") && !text.isEmpty && text.count < 200, "\(text)")
            for token in [Self.remote, Self.voip, "ALERTTOKEN", "0A1B2C3D4E5F"] {
                #expect(!text.contains(token), "\(text)")
            }
        }
        let mismatch = PushParameters(provider: "apns", prid: Self.remote, param: "T.org.example.app.voip&remote")
        #expect(
            mismatch.problem?.description
                == "pn-param declares 2 services but pn-prid has 1 token: no push is sent")
        let short = PushParameters(provider: "apns", prid: "0A1B2C3D4E5F", param: "T.org.example.app")
        #expect(
            short.problem?.description
                == "the remote token \"0A1B…\" (12 characters) is not the 64 hex digits of a device token (production): pushes to it are sent and APNs answers BadDeviceToken"
        )
        // A provider's name is shown cut short and printable.
        let provider = PushParameters(
            provider: "x\u{1B}[31m" + String(repeating: "y", count: 100), prid: Self.remote, param: "T.b")
        let text = provider.problem?.description ?? ""
        #expect(!text.contains("\u{1B}") && text.count < 120, "\(text)")
    }

    @Test func aContactWithPartOfTheParametersIsDiagnosed() throws {
        func problem(_ uri: String) throws -> PushParameterProblem? {
            let parsed = try SIPURI(parsing: uri)
            if let push = PushParameters(contactURI: parsed) { return push.problem }
            return PushParameters.incompleteProblem(contactURI: parsed)
        }
        #expect(try problem("sip:bob@h;pn-provider=apns;pn-prid=\(Self.remote)") == .missing(["pn-param"]))
        #expect(try problem("sip:bob@h;pn-provider=apns") == .missing(["pn-prid", "pn-param"]))
        #expect(try problem("sip:bob@h;pn-provider=;pn-prid=x;pn-param=T.b") == .missing(["pn-provider"]))
        #expect(try problem("sip:bob@h;pn-prid=\(Self.remote)") == .missing(["pn-provider", "pn-param"]))
        #expect(try problem("sip:bob@h;transport=tcp") == nil)
        #expect(try problem("sip:bob@h;pn-provider=apns;pn-prid=\(Self.remote);pn-param=T.org.example.app") == nil)
        // Escaped separators are read as the characters they stand for.
        #expect(
            try problem(
                "sip:bob@h;pn-provider=apns;pn-prid=\(Self.voip)%3Avoip%26\(Self.remote)%3Aremote;pn-param=T.b.voip%26remote"
            ) == nil)
    }

    @Test func aPushTheParametersCannotMakeIsSkippedWithTheDiagnosis() throws {
        var message = SIPRequest(method: "MESSAGE", uri: try SIPURI(parsing: "sip:bob@example.org"))
        message.headers.add("From", "<sip:alice@example.org>;tag=1")
        message.headers.add("Call-ID", "cid")
        let record = HeldMessage(
            request: message, id: "1", aor: "sip:bob@example.org", now: 1000, lifetime: 60, order: 1)
        let sender = PushSender(settings: SIPServerConfiguration.Push(apnsURL: "http://127.0.0.1:9"))
        let mismatch = PushParameters(provider: "apns", prid: Self.remote, param: "T.org.example.app.voip&remote")
        guard case .skipped(let outcome) = sender.plan(record: record, request: message, push: mismatch, instance: nil)
        else {
            Issue.record("a push was planned for parameters Flexisip cannot parse")
            return
        }
        #expect(outcome.status == nil && outcome.reason == mismatch.problem?.description)
        let fcm = PushParameters(provider: "fcm", prid: Self.remote, param: "T.org.example.app")
        guard case .skipped(let fcmOutcome) = sender.plan(record: record, request: message, push: fcm, instance: nil)
        else {
            Issue.record("a push was planned for an fcm binding")
            return
        }
        #expect(fcmOutcome.url == "" && fcmOutcome.reason.hasPrefix("pn-provider \"fcm\""))
        // A call is not pushed either, and is not rung by repeated alerts.
        var invite = SIPRequest(method: "INVITE", uri: try SIPURI(parsing: "sip:bob@example.org"))
        invite.headers.add("From", "<sip:alice@example.org>;tag=1")
        invite.headers.add("Call-ID", "call")
        guard case .skipped = sender.planCall(.incoming, aor: "a", invite: invite, push: mismatch, instance: nil) else {
            Issue.record("a call push was planned for parameters Flexisip cannot parse")
            return
        }
        #expect(!sender.ringsByAlert(mismatch))
        // A token APNs would refuse still gets its push: APNs's answer says what is wrong.
        let badToken = PushParameters(provider: "apns", prid: "ALERTTOKEN", param: "T.org.example.app")
        guard case .send(let job) = sender.plan(record: record, request: message, push: badToken, instance: nil) else {
            Issue.record("no push planned for a token only APNs can judge")
            return
        }
        #expect(job.request.url == "http://127.0.0.1:9/3/device/ALERTTOKEN")
    }

    @Test("REGISTER with parameters that cannot work: 200, an event and one warning line")
    func theRegistrarAcceptsAndSaysSo() async throws {
        let capture = LogCapture()
        let device = fastUA()
        try await withSIPServer(serverConfiguration([.tcp]), logger: capture.logger(), closing: [device]) {
            server, addresses in
            let contact = [
                SIPParameter("pn-provider", "apns"), SIPParameter("pn-prid", Self.remote),
                SIPParameter("pn-param", "ABCD1234.org.example.nse.voip&remote"),
            ]
            let result = try await device.register(
                aor: bobAOR, password: nil, proxy: addresses.proxy(.tcp), expires: 600,
                contactURIParameters: contact, contactHeaderParameters: [SIPParameter("+sip.instance", bobInstance)])
            #expect(result.statusCode == 200)
            #expect(await server.bindingCount(aor: "sip:bob@example.org") == 1)
            let events = await server.eventLog()
            let problems = events.compactMap { event -> PushParameterProblem? in
                if case .badPushParameters("sip:bob@example.org", let problem) = event { return problem }
                return nil
            }
            #expect(problems == [.serviceCountMismatch(services: 2, tokens: 1)])
            let lines = capture.all.filter { $0.contains("push parameters that cannot work") }
            #expect(lines.count == 1)
            let line = lines.first ?? ""
            #expect(line.hasPrefix("warning "))
            #expect(line.contains("service_count_mismatch") && line.contains("sip:bob@example.org"))
            #expect(line.contains("\"push.action\": none") || line.contains("push.action\": \"none"), "\(line)")
            #expect(!line.contains(Self.remote))
        }
    }
}
