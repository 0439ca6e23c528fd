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

/// A real SIP caller nse did not write: liblinphone's `linphone-daemon` (Debian's linphone-cli; `make test` installs
/// it) places a call through `nse sip-server` to a sleeping nse phone. The server holds the INVITE and pushes; the
/// phone's app, woken by `nse run` on that push, takes the call, answers and later hangs up; the daemon's call goes
/// through its states to the end. No audio hardware is needed: liblinphone runs its streams without a sound card.
@Suite(
    .serialized, .timeLimit(.minutes(3)),
    .enabled(if: LinphoneDaemon.path != nil, "linphone-daemon is not installed (make test installs linphone-cli)"))
struct LinphoneCallerTests {
    @Test func linphoneCallsAnNsePhoneThatAnswers() throws {
        let daemon = try #require(LinphoneDaemon.path)
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
        let home = root + "/home"
        try FileManager.default.createDirectory(
            atPath: home + "/.local/share/linphone", withIntermediateDirectories: true)
        let config = root + "/linphonerc"
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
            reg_identity="Alice" <sip:alice@127.0.0.1>
            reg_expires=3600
            reg_sendregister=1
            publish=0

            [video]
            capture=0
            display=0

            """, to: config)
        let alice = Process()
        alice.executableURL = URL(fileURLWithPath: daemon)
        alice.arguments = ["--config", config]
        alice.currentDirectoryURL = URL(fileURLWithPath: root)
        alice.environment = ProcessInfo.processInfo.environment.merging(["HOME": home]) { $1 }
        let commands = Pipe()
        let output = root + "/daemon.out"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        alice.standardInput = commands
        alice.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        alice.standardError = FileHandle.nullDevice
        try alice.run()
        defer {
            if alice.isRunning { kill(alice.processIdentifier, SIGKILL) }
            alice.waitUntilExit()
        }
        #expect(
            server.waitFor("registered", ["aor": "sip:alice@127.0.0.1"], timeout: 15) != nil, "Alice never registered")
        commands.fileHandleForWriting.write(Data("call sip:bob@127.0.0.1\n".utf8))

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
        var text = ""
        let until = Date().addingTimeInterval(15)
        while !text.contains("LinphoneCallEnd"), Date() < until {
            usleep(50_000)
            text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        }
        let positions = states.map { text.range(of: "Event: " + $0)?.lowerBound }
        #expect(positions.allSatisfy { $0 != nil }, "linphone-daemon's events: \(text.suffix(1500))")
        let found = positions.compactMap { $0 }
        #expect(found == found.sorted())
        let steps = (0..<5).compactMap { _ in server.waitFor("call", [:], timeout: 2)?["step"]?.stringValue }
        #expect(steps.contains("answered") && steps.contains("hung-up"), "\(steps)")
        commands.fileHandleForWriting.write(Data("quit\n".utf8))
    }
}
