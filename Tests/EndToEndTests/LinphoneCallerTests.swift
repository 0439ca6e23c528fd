import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// Where Debian's linphone-cli puts the daemon, if it is installed.
enum LinphoneDaemon {
    static let path: String? = ["/usr/bin/linphone-daemon", "/usr/local/bin/linphone-daemon"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
}

/// A real SIP peer nse did not write, at either end of a call: liblinphone's `linphone-daemon` (Debian's
/// linphone-cli; `make test` installs it). As the caller, it calls through `nse sip-server` a sleeping nse phone: the
/// server holds the INVITE and pushes; the phone's app, woken by `nse run` on that push, takes the call, answers and
/// later hangs up; the daemon's call goes through its states to the end. As the callee, it answers `nse call`. No
/// audio hardware is needed: liblinphone runs its streams without a sound card.
@Suite(
    .serialized, .timeLimit(.minutes(3)),
    .enabled(if: LinphoneDaemon.path != nil, "linphone-daemon is not installed (make test installs linphone-cli)"))
struct LinphoneCallerTests {
    @Test func linphoneCallsAnNsePhoneThatAnswers() throws {
        let root = try TestSupport.temporaryDirectory("nse-linphone-call")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let recorder = try HeldCallTests.Recorder()
        defer { recorder.stop() }
        let server = try SIPServerProcess(
            ["--listen", "tcp:127.0.0.1:0", "--push-url", "http://127.0.0.1:\(recorder.port)"])
        defer { server.stop() }
        let port = try #require(server.ports["tcp"])
        let proxy = try #require(server.uris["tcp"])

        // Bob's phone: registered with its push parameters, then asleep; its user answers and hangs up.
        let bob = root + "/bob"
        #expect(
            try TestSupport.nse(["device", "init", bob, "--sip-account", "sip:bob@127.0.0.1", "--sip-proxy", proxy])
                .status == 0)
        #expect(
            try TestSupport.nse(["device", "set", bob, "--answer-after", "0.3", "--hangup-after", "0.5"]).status == 0)
        #expect(try TestSupport.nse(["device", "register", bob]).status == 0)

        // Alice: linphone-daemon in its own HOME, registered over TCP on loopback, no video.
        let alice = try Daemon(root: root, identity: #""Alice" <sip:alice@127.0.0.1>"#, port: port)
        defer { alice.stop() }
        #expect(
            server.waitFor("registered", ["aor": "sip:alice@127.0.0.1"], timeout: 15) != nil, "Alice never registered")
        alice.send("call sip:bob@127.0.0.1")

        // The server holds the call and pushes; the phone gets that push.
        var pushes: [JSON] = []
        let end = Date().addingTimeInterval(15)
        while pushes.isEmpty, Date() < end { pushes = recorder.records(settle: 0.1) }
        let push = try #require(pushes.first, "no push for linphone's call")
        #expect(push["headers"]?["apns-push-type"] == "voip")
        let payload = root + "/push.json"
        try TestSupport.write(try #require(push["payload"]).serialized(), to: payload)
        let ran = try TestSupport.run(
            TestSupport.nse, ["run", "--push-type", "voip", "--device", bob, payload], timeout: 60)
        #expect(ran.status == 0, "\(ran.stderr)")
        let record = try #require(try JSON.parse(ran.stdout)["call"], "no call in \(ran.stdout)")
        #expect(record["end_reason"] == "hungUp")
        #expect(record["sip_status"] == 200)
        #expect(record["report"]?["localized_caller_name"] == "Alice")

        // linphone's side: its call went from ringing to connected to ended.
        let states = [
            "LinphoneCallOutgoingRinging", "LinphoneCallConnected", "LinphoneCallStreamsRunning", "LinphoneCallEnd",
        ]
        let text = alice.waitForEvent("LinphoneCallEnd", timeout: 15)
        let positions = states.map { text.range(of: "Event: " + $0)?.lowerBound }
        #expect(positions.allSatisfy { $0 != nil }, "linphone-daemon's events: \(text.suffix(1500))")
        let found = positions.compactMap { $0 }
        #expect(found == found.sorted())
        let steps = (0..<5).compactMap { _ in server.waitFor("call", [:], timeout: 2)?["step"]?.stringValue }
        #expect(steps.contains("answered") && steps.contains("hung-up"), "\(steps)")
    }

    /// The other way round: `nse call` places a call through `nse sip-server` to liblinphone registered without push
    /// parameters (rung at once), which answers (`--auto-answer`); nse hangs up, and the daemon's call ends.
    @Test func nseCallsLinphoneWhichAnswers() throws {
        let root = try TestSupport.temporaryDirectory("nse-linphone-callee")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let server = try SIPServerProcess(["--listen", "tcp:127.0.0.1:0", "--no-push"])
        defer { server.stop() }
        let port = try #require(server.ports["tcp"])
        let carol = try Daemon(root: root, identity: "sip:carol@127.0.0.1", port: port, autoAnswer: true)
        defer { carol.stop() }
        #expect(
            server.waitFor("registered", ["aor": "sip:carol@127.0.0.1"], timeout: 15) != nil, "Carol never registered")
        let call = try TestSupport.run(
            TestSupport.nse,
            [
                "call", "--proxy", try #require(server.uris["tcp"]), "--from", "sip:alice@127.0.0.1", "--to",
                "sip:carol@127.0.0.1", "--hangup-after", "0.5", "--timeout", "10",
            ], timeout: 30)
        #expect(call.status == 0, "\(call.stderr)")
        let report = try JSON.parse(call.stdout)
        #expect(report["answered"] == true && report["final_status"] == 200 && report["ended_by"] == "caller")
        let text = carol.waitForEvent("LinphoneCallEnd", timeout: 15)
        let states = ["LinphoneCallIncomingReceived", "LinphoneCallConnected", "LinphoneCallEnd"]
        let positions = states.compactMap { text.range(of: "Event: " + $0)?.lowerBound }
        #expect(positions.count == states.count && positions == positions.sorted(), "\(text.suffix(1500))")
    }

    /// One linphone-daemon in its own HOME and folder, registered over TCP to 127.0.0.1:`port`, no video; its
    /// events go to a file; stopped by its PID.
    final class Daemon {
        let process = Process()
        let commands = Pipe()
        let output: String

        init(root: String, identity: String, port: Int, autoAnswer: Bool = false) throws {
            let daemon = try #require(LinphoneDaemon.path)
            let directory = root + "/linphone-\(UUID().uuidString.prefix(6))"
            let home = directory + "/home"
            try FileManager.default.createDirectory(
                atPath: home + "/.local/share/linphone", withIntermediateDirectories: true)
            let config = directory + "/linphonerc"
            try TestSupport.write(
                """
                [sip]
                sip_port=0
                sip_tcp_port=-1
                sip_tls_port=0
                bind_address=127.0.0.1

                [proxy_0]
                reg_proxy=<sip:127.0.0.1:\(port);transport=tcp>
                reg_route=<sip:127.0.0.1:\(port);transport=tcp>
                reg_identity=\(identity)
                reg_expires=3600
                reg_sendregister=1
                publish=0

                [video]
                capture=0
                display=0

                """, to: config)
            output = directory + "/daemon.out"
            _ = FileManager.default.createFile(atPath: output, contents: nil)
            process.executableURL = URL(fileURLWithPath: daemon)
            process.arguments = ["--config", config] + (autoAnswer ? ["--auto-answer"] : [])
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
            process.environment = ProcessInfo.processInfo.environment.merging(["HOME": home]) { $1 }
            process.standardInput = commands
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        /// Writes a command line to the daemon.
        func send(_ command: String) {
            commands.fileHandleForWriting.write(Data((command + "\n").utf8))
        }

        /// Its output so far, once `event` is in it or after `timeout` seconds.
        func waitForEvent(_ event: String, timeout: TimeInterval) -> String {
            var text = ""
            let until = Date().addingTimeInterval(timeout)
            while !text.contains(event), Date() < until {
                usleep(50_000)
                text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            }
            return text
        }

        func stop() {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }
}
