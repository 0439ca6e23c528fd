import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// Push parameters that cannot work (issue #36 §3), end to end with the built `nse sip-server`: a REGISTER carrying
/// each bad set over UDP is answered as Flexisip answers it (200: its registrar stores the binding whatever the
/// push parameters), with one warning line on stderr and a `bad_push_parameters` event; a MESSAGE for the AOR then
/// shows what the parameters allow: no push at all (the `pushed` event says why), or a push APNs will judge.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct PushParameterDiagnosisTests {
    static let remote = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
    static let voip = "0f0e0d0c0b0a09080706050403020100ffeeddccbbaa99887766554433221100"

    /// `nse sip-server --events` with its log (stderr) kept in a file.
    final class Server {
        let process = Process()
        let output = Pipe()
        let logPath: String
        var port = 0
        private(set) var events: [JSON] = []
        private var pending = Data()

        init(_ arguments: [String], logPath: String) throws {
            self.logPath = logPath
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
            process.executableURL = URL(fileURLWithPath: TestSupport.nse)
            process.arguments = ["sip-server", "--events"] + arguments
            process.standardOutput = output
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
            try process.run()
            let end = Date().addingTimeInterval(15)
            while port == 0, Date() < end {
                read(timeoutMs: 100)
                port = events.first?["listening"]?.arrayValue?.first?["port"]?.intValue.map { Int($0) } ?? 0
            }
            if port == 0 { stop() }
        }

        deinit { stop() }

        func stop() {
            guard process.isRunning else { return }
            process.terminate()
            process.waitUntilExit()
        }

        var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

        /// The first event named `name` whose fields match, waiting at most `timeout` seconds.
        func event(_ name: String, _ fields: [String: String] = [:], timeout: TimeInterval = 10) -> JSON? {
            let end = Date().addingTimeInterval(timeout)
            repeat {
                if let found = events.first(where: { event in
                    event["event"]?.stringValue == name && fields.allSatisfy { event[$0.key]?.stringValue == $0.value }
                }) {
                    return found
                }
                read(timeoutMs: 50)
            } while Date() < end
            return nil
        }

        private func read(timeoutMs: Int32) {
            var descriptor = pollfd(fd: output.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, timeoutMs) > 0 { pending.append(output.fileHandleForReading.availableData) }
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = pending[pending.startIndex..<newline]
                pending.removeSubrange(pending.startIndex...newline)
                if let json = try? JSON.parse(Array(line)) { events.append(json) }
            }
        }
    }

    /// Sends one REGISTER for `user`@example.org over UDP with these Contact URI parameters; returns the status line.
    func register(_ user: String, parameters: String, port: Int) throws -> String {
        try UDPRegisterClient().register(user, contactParameters: parameters, port: port)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var user: String
        var parameters: String
        var problem: String
        /// Whether the MESSAGE's push still goes out (a token only APNs can judge).
        var pushed: Bool
        var testDescription: String { problem }
    }

    static let cases: [Case] = [
        Case(
            user: "count",
            parameters: "pn-provider=apns;pn-prid=\(remote):remote;pn-param=ABCDE12345.org.example.app.voip%26remote",
            problem: "service_count_mismatch", pushed: false),
        Case(
            user: "provider", parameters: "pn-provider=fcm;pn-prid=\(remote);pn-param=ABCDE12345.org.example.app",
            problem: "unsupported_provider", pushed: false),
        Case(
            user: "token", parameters: "pn-provider=apns;pn-prid=0A1B2C3D4E5F;pn-param=ABCDE12345.org.example.app",
            problem: "invalid_token", pushed: true),
        Case(
            user: "service",
            parameters: "pn-provider=apns;pn-prid=\(voip):voip;pn-param=ABCDE12345.org.example.app.remote",
            problem: "undeclared_service", pushed: false),
        Case(
            user: "partial", parameters: "pn-provider=apns;pn-prid=\(remote)", problem: "missing_parameter",
            pushed: false),
    ]

    @Test func eachBadSetIsAcceptedLoggedShownAndPushedAsItCanBe() throws {
        let root = try TestSupport.temporaryDirectory("nse-pn-diagnosis")
        let recorder = try HeldCallTests.Recorder()
        defer { recorder.stop() }
        let server = try Server(
            [
                "--listen", "udp:127.0.0.1:0", "--push-url", "http://127.0.0.1:\(recorder.port)",
                "--accept-timeout", "0.3",
            ], logPath: root + "/sip-server.log")
        defer { server.stop() }
        try #require(server.port != 0, "sip-server did not start: \(server.log)")
        // Parameters that work: registered, and not a word about them.
        #expect(
            try register(
                "good",
                parameters:
                    "pn-provider=apns;pn-prid=\(Self.voip):voip%26\(Self.remote):remote;pn-param=ABCDE12345.org.example.app.voip%26remote",
                port: server.port) == "SIP/2.0 200 OK")
        #expect(server.event("registered", ["aor": "sip:good@example.org"]) != nil)
        for bad in Self.cases {
            let aor = "sip:\(bad.user)@example.org"
            let answer = try register(bad.user, parameters: bad.parameters, port: server.port)
            #expect(answer == "SIP/2.0 200 OK", "\(bad.problem): \(answer)")
            #expect(server.event("registered", ["aor": aor]) != nil)
            let event = try #require(server.event("bad_push_parameters", ["aor": aor]), "no event for \(bad.problem)")
            #expect(event["problem"] == .string(bad.problem))
            #expect(event["push"] == (bad.pushed ? "sent" : "none"))
            let detail = try #require(event["detail"]?.stringValue)
            #expect(!detail.contains(Self.remote) && !detail.contains(Self.voip) && !detail.contains("0A1B2C3D4E5F"))
            // One warning line, with the AOR and the problem in its metadata, and no token.
            let lines = server.log.split(separator: "\n").filter { $0.contains("sip.aor=\(aor)") }
            #expect(lines.count == 1, "\(server.log)")
            let line = String(lines.first ?? "")
            #expect(line.contains("warning") && line.contains("push parameters that cannot work"), "\(line)")
            #expect(
                line.contains("push.problem=\(bad.problem)")
                    && line.contains("push.action=\(event["push"]?.stringValue ?? "")"))
            #expect(!line.contains(Self.remote) && !line.contains(Self.voip) && !line.contains("0A1B2C3D4E5F"))
        }
        #expect(server.event("bad_push_parameters", ["aor": "sip:good@example.org"], timeout: 0.5) == nil)
        // A MESSAGE for each binding that kept its push parameters: held, then pushed as the parameters allow (a
        // binding without them, the partial set's, is an online device's: it gets the MESSAGE, no push).
        for bad in Self.cases where bad.problem != "missing_parameter" {
            let aor = "sip:\(bad.user)@example.org"
            let sent = try TestSupport.nse([
                "send", "--proxy", "sip:127.0.0.1:\(server.port)", "--from", "sip:alice@example.org", "--to", aor,
                "--text", "hello", "--no-cpim", "--timeout", "10",
            ])
            #expect(sent.status == 0, "\(sent.stderr)")
            let callID = try #require(try JSON.parse(sent.stdout)["call_id"]?.stringValue)
            #expect(server.event("held", ["call_id": callID]) != nil)
            let pushed = try #require(server.event("pushed", ["call_id": callID]), "no pushed event for \(bad.problem)")
            if bad.pushed {
                #expect(pushed["status"] == 200)
            } else {
                #expect(pushed["status"] == .null)
                let detail = server.event("bad_push_parameters", ["aor": aor])?["detail"]
                #expect(pushed["reason"] == detail)
            }
        }
        let tokens = recorder.records(settle: 0.5).compactMap { $0["token"]?.stringValue }
        #expect(tokens == ["0A1B2C3D4E5F"])
    }
}
