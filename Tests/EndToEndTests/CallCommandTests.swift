import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// `nse call`, the caller's phone, end to end with the built binaries: against SIPp's built-in callee, and through
/// `nse sip-server` to an nse device woken by its push (PushKit, and the end-to-end-encrypted alert the extension
/// escalates). Loopback only; every wait is bounded.
@Suite(
    .serialized, .timeLimit(.minutes(5)),
    .enabled(if: HeldCallTests.sipp != nil, "sipp is not installed (make test installs sip-tester)"))
struct CallCommandTests {
    /// A command running in the background, its output in files (no pipe to fill up).
    final class Background {
        let process = Process()
        let stdout: String
        let stderr: String

        init(_ executable: String, _ arguments: [String], in directory: String, name: String) throws {
            stdout = directory + "/\(name).out"
            stderr = directory + "/\(name).err"
            _ = FileManager.default.createFile(atPath: stdout, contents: nil)
            _ = FileManager.default.createFile(atPath: stderr, contents: nil)
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdout))
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderr))
            try process.run()
        }

        /// Waits up to `timeout` seconds for the exit; its status, or nil (then it is killed).
        func wait(timeout: TimeInterval) -> Int32? {
            let end = Date().addingTimeInterval(timeout)
            while process.isRunning, Date() < end { usleep(20_000) }
            guard !process.isRunning else {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                return nil
            }
            return process.terminationStatus
        }

        var output: String { (try? String(contentsOfFile: stdout, encoding: .utf8)) ?? "" }
        var errors: String { (try? String(contentsOfFile: stderr, encoding: .utf8)) ?? "" }

        /// The URL a server prints first (`{"listening": URL}`: nse serve, nse files), once it has (at most
        /// `timeout` seconds).
        func listeningURL(timeout: TimeInterval = 15) throws -> String {
            var url: String?
            let until = Date().addingTimeInterval(timeout)
            while url == nil, Date() < until {
                let first = output.split(separator: "\n").first.map(String.init) ?? ""
                url = (try? JSON.parse(first))?["listening"]?.stringValue
                if url == nil { usleep(50_000) }
            }
            return try #require(url, "the server did not start: \(errors)")
        }
    }

    let root: String
    init() throws { root = try TestSupport.temporaryDirectory("nse-call") }

    func nseCall(_ arguments: [String], name: String = "call") throws -> Background {
        try Background(TestSupport.nse, ["call"] + arguments, in: root, name: name)
    }

    /// SIPp's built-in `uas` answers at once and waits for the BYE: nse hangs up after `--hangup-after`.
    @Test(arguments: ["udp", "tcp"])
    func sippAnswersAndTheCallerHangsUp(transport: String) throws {
        let sipp = try #require(HeldCallTests.sipp)
        let port = try HeldCallTests.freePort(transport)
        let callee = try Background(
            sipp,
            [
                "-sn", "uas", "-i", "127.0.0.1", "-p", String(port), "-t", transport == "tcp" ? "t1" : "u1", "-m", "1",
                "-nostdin", "-timeout", "30s", "-timeout_error", "-trace_msg", "-message_file",
                root + "/sipp-\(transport).log",
            ], in: root, name: "sipp")
        defer { _ = callee.wait(timeout: 0) }
        #expect(HeldCallTests.waitUntilBound(port, transport), "sipp did not start listening: \(callee.errors)")
        let call = try nseCall([
            "--proxy", "sip:127.0.0.1:\(port);transport=\(transport)", "--from", "sip:alice@127.0.0.1",
            "--to", "sip:service@127.0.0.1:\(port)", "--display-name", "Alice", "--hangup-after", "0.2",
        ])
        #expect(call.wait(timeout: 30) == 0, "\(call.errors)")
        let report = try JSON.parse(call.output)
        #expect(report["answered"] == true)
        #expect(report["final_status"] == 200)
        #expect(report["ended_by"] == "caller")
        #expect(report["sealed"] == false)
        #expect(report["failure"] == .null)
        let timeline = try #require(report["timeline_ms"]?.objectValue)
        let order = ["invited", "ringing", "answered", "ended"]
        let times = order.compactMap { timeline[$0]?.doubleValue }
        #expect(times.count == order.count && times == times.sorted(), "\(timeline)")
        if let answered = timeline["answered"]?.doubleValue, let ended = timeline["ended"]?.doubleValue {
            #expect(ended - answered >= 190)
        }
        // SIPp saw the whole call, and answered the BYE. (Over TCP it counts the call failed all the same: nse's
        // connection closes during the 4 s SIPp's `uas` lingers after the BYE, and SIPp aborts calls on a closed
        // socket.)
        let status = callee.wait(timeout: 10)
        if transport == "udp" { #expect(status == 0, "\(callee.errors.suffix(400))") }
        let messages = (try? String(contentsOfFile: root + "/sipp-\(transport).log", encoding: .utf8)) ?? ""
        let bye = try #require(messages.range(of: "\nBYE sip:"), "SIPp never got the BYE")
        #expect(messages[bye.upperBound...].contains("SIP/2.0 200 OK"), "SIPp did not answer the BYE")
    }

    /// A callee device through nse sip-server: the call is held and pushed, and nobody wakes the phone; the caller
    /// cancels (its own choice, or its timeout) and hears 487.
    @Test(arguments: [(["--cancel-after", "0.5"], "caller", 0), (["--timeout", "0.5"], "timeout", 1)])
    func aCallNobodyAnswersIsCancelled(options: [String], endedBy: String, exit: Int32) throws {
        let calls = try HeldCalls("udp")
        defer { calls.stop() }
        let (recorder, server) = (calls.recorder, calls.server)
        let bob = try device("bob", proxy: try #require(server.uris["udp"]))
        _ = bob
        let call = try nseCall(
            ["--proxy", try #require(server.uris["udp"]), "--from", "sip:alice@127.0.0.1", "--to", "sip:bob@127.0.0.1"]
                + options)
        // Cancelled as asked is what the caller wanted (0); given up at the timeout is not (1).
        #expect(call.wait(timeout: 30) == exit, "\(call.errors)")
        let report = try JSON.parse(call.output)
        #expect(report["answered"] == false)
        #expect(report["final_status"] == 487)
        #expect(report["ended_by"] == .string(endedBy))
        #expect(report["timeline_ms"]?["cancelled"] != nil && report["timeline_ms"]?["trying"] != nil)
        let callID = try #require(report["call_id"]?.stringValue)
        #expect(server.waitFor("call", ["call_id": callID, "step": "cancelled"], timeout: 5) != nil)
        #expect(recorder.records(settle: 0.2).contains { $0["headers"]?["apns-push-type"] == "voip" })
    }

    /// The whole call with nse at both ends: `nse call` → `nse sip-server` holds it and pushes → `nse run` on the
    /// push → the app re-REGISTERs, takes the INVITE, and the user answers or declines.
    @Test(arguments: [("answer", 0, 200, "callee"), ("decline", 1, 603, "callee")])
    func nseCallsAnNseDevice(action: String, exit: Int32, status: Int, endedBy: String) throws {
        let calls = try HeldCalls("tcp")
        defer { calls.stop() }
        let (recorder, proxy) = (calls.recorder, calls.proxy)
        let bob = try device(
            "bob", proxy: proxy, settings: ["--call-action", action, "--answer-after", "0.2", "--hangup-after", "0.3"])
        let call = try nseCall([
            "--proxy", proxy, "--from", "sip:alice@127.0.0.1", "--to", "sip:bob@127.0.0.1", "--display-name", "Alice",
            "--hangup-after", "20",
        ])
        let push = try #require(waitForPush(recorder), "no push for the held call")
        #expect(push["headers"]?["apns-push-type"] == "voip")
        #expect(push["payload"]?["display-name"] == "Alice")
        let ran = try phoneRuns(push, device: bob)
        #expect(call.wait(timeout: 30) == exit, "\(call.errors)")
        let report = try JSON.parse(call.output)
        #expect(report["final_status"] == .int(Int64(status)))
        #expect(report["ended_by"] == .string(endedBy))
        let record = try #require(ran["call"])
        #expect(record["call_id"] == report["call_id"])
        #expect(record["route"] == "pushkit")
        #expect(record["end_reason"] == (action == "answer" ? "hungUp" : "declined"))
    }

    /// Apple's end-to-end-encrypted route: `nse call --seal-to` puts a sealed offer beside the SDP; the server,
    /// which cannot read it, pushes it as an alert; the phone's extension opens it and escalates the call to the
    /// app, which takes the INVITE named in the offer and answers.
    @Test func aSealedCallGoesThroughTheExtensionToTheApp() throws {
        let calls = try HeldCalls("tcp", ["--e2ee-calls"])
        defer { calls.stop() }
        let (recorder, proxy) = (calls.recorder, calls.proxy)
        let bob = try device("bob", proxy: proxy, settings: ["--answer-after", "0.1", "--hangup-after", "5"])
        let call = try nseCall([
            "--proxy", proxy, "--from", "sip:alice@127.0.0.1", "--to", "sip:bob@127.0.0.1", "--display-name", "Alice",
            "--seal-to", bob, "--hangup-after", "0.3", "--video",
        ])
        let push = try #require(waitForPush(recorder), "no push for the held call")
        #expect(push["headers"]?["apns-push-type"] == "alert")
        #expect(push["payload"]?["aps"]?["mutable-content"] == 1)
        let ran = try phoneRuns(push, device: bob)
        #expect(call.wait(timeout: 30) == 0, "\(call.errors)")
        let report = try JSON.parse(call.output)
        #expect(report["sealed"] == true && report["answered"] == true && report["ended_by"] == "caller")
        #expect(ran["outcome"] == "suppressed", "\(ran["reason"] ?? .null)")
        #expect(ran["call_report"]?["localized_caller_name"] == "Alice")
        #expect(ran["call_report"]?["has_video"] == true)
        let record = try #require(ran["call"], "no call in \(ran.serialized())")
        #expect(record["route"] == "nse-escalation")
        #expect(record["call_id"] == report["call_id"])
        #expect(record["end_reason"] == "remoteEnded")
        #expect(record["video"] == true)
    }

    /// TLS on both legs, and the app's re-REGISTER answering the server's digest challenge with the device's
    /// password; with a wrong password the app cannot register, the INVITE stays held, and the phone ends the call
    /// it reported as failed while the caller gives up.
    @Test(arguments: [("s3cret", true), ("wrong", false)])
    func overTLSWithDigestOnTheReRegister(password: String, registers: Bool) throws {
        let files = try TestSupport.selfSignedCertificate(in: root)
        try TestSupport.write("bob s3cret\n", to: root + "/users")
        let calls = try HeldCalls(
            "tls", ["--tls-cert", files.certificate, "--tls-key", files.key, "--users", root + "/users"])
        defer { calls.stop() }
        let (recorder, server) = (calls.recorder, calls.server)
        let proxy = try #require(server.uris["tls"])
        let path = root + "/bob"
        let created = try TestSupport.nse([
            "device", "init", path, "--sip-account", "sip:bob@127.0.0.1", "--sip-proxy", proxy, "--sip-ca-file",
            files.certificate, "--sip-password", "s3cret",
        ])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(try TestSupport.nse(["device", "register", path]).status == 0)
        let set = try TestSupport.nse([
            "device", "set", path, "--sip-password", password, "--answer-after", "0.1", "--invite-timeout", "1.5",
        ])
        #expect(set.status == 0, "\(set.stderr)")
        let call = try nseCall([
            "--proxy", proxy, "--ca-file", files.certificate, "--from", "sip:alice@127.0.0.1", "--to",
            "sip:bob@127.0.0.1", "--hangup-after", "0.2", "--timeout", "4",
        ])
        let push = try #require(waitForPush(recorder), "no push for the held call")
        let ran = try phoneRuns(push, device: path)
        let record = try #require(ran["call"], "no call in \(ran.serialized())")
        #expect(call.wait(timeout: 30) == (registers ? 0 : 1), "\(call.errors)")
        let report = try JSON.parse(call.output)
        if registers {
            #expect(record["registration_status"] == 200)
            #expect(record["end_reason"] == "remoteEnded")
            #expect(report["answered"] == true && report["ended_by"] == "caller")
        } else {
            let status = record["registration_status"]?.intValue ?? 0
            #expect(status == 401 || status == 403, "\(record.serialized())")
            #expect(record["end_reason"] == "failed")
            #expect(report["final_status"] == 487 && report["ended_by"] == "timeout")
        }
    }

    /// The 3-strike rule still holds on the call path: an app that does not report is terminated, takes no call,
    /// and after its strikes gets no more VoIP pushes, the calls held for it go unanswered.
    @Test func anAppThatDoesNotReportTakesNoCall() throws {
        let calls = try HeldCalls("tcp")
        defer { calls.stop() }
        let (recorder, proxy) = (calls.recorder, calls.proxy)
        let bob = try device(
            "bob", proxy: proxy,
            settings: ["--app-handler", TestSupport.fixtures + "/apps/exit-silently.sh", "--max-strikes", "1"])
        for attempt in 1...2 {
            let call = try nseCall(
                ["--proxy", proxy, "--from", "sip:alice@127.0.0.1", "--to", "sip:bob@127.0.0.1", "--timeout", "1"],
                name: "call-\(attempt)")
            let push = try #require(waitForPush(recorder), "no push for call \(attempt)")
            let ran = try phoneRuns(push, device: bob)
            #expect(ran["voip"]?["app"]?["outcome"] == (attempt == 1 ? "terminated" : "refused"))
            #expect(ran["call"] == nil || ran["call"] == .null)
            #expect(call.wait(timeout: 30) == 1, "\(call.errors)")
            #expect(try JSON.parse(call.output)["ended_by"] == "timeout")
        }
    }

    /// The app-handler protocol's version 2: beside the report, the handler says what its user does with this
    /// call (here: decline), over the device's setting (answer). A version-1 handler's answer is the report alone.
    @Test func aVersion2HandlerSaysWhatTheUserDoes() throws {
        let calls = try HeldCalls("tcp")
        defer { calls.stop() }
        let (recorder, proxy) = (calls.recorder, calls.proxy)
        let bob = try device(
            "bob", proxy: proxy,
            settings: [
                "--app-handler", TestSupport.fixtures + "/apps/report-v2.py --decline", "--call-action", "answer",
            ])
        let call = try nseCall(["--proxy", proxy, "--from", "sip:alice@127.0.0.1", "--to", "sip:bob@127.0.0.1"])
        let push = try #require(waitForPush(recorder), "no push for the held call")
        let ran = try phoneRuns(push, device: bob)
        #expect(ran["voip"]?["app"]?["handler_version"] == 2, "\(ran.serialized())")
        #expect(ran["call"]?["end_reason"] == "declined")
        #expect(ran["call"]?["sip_status"] == 603)
        #expect(call.wait(timeout: 30) == 1, "\(call.errors)")
        #expect(try JSON.parse(call.output)["final_status"] == 603)
        // Told the call ended, the app ended its CallKit call.
        #expect(ran["call"]?["callkit"] == ["ended": true, "reason": "declined", "failure": .null])
    }

    /// The app must end the CallKit call it reported when the INVITE never comes; a version-2 handler that
    /// forgets to is flagged (`call.callkit.ended` false, and a warning).
    @Test(arguments: [false, true])
    func anAppThatForgetsToEndTheCallIsFlagged(forgets: Bool) throws {
        let calls = try HeldCalls("tcp")
        defer { calls.stop() }
        let handler = TestSupport.fixtures + "/apps/report-v2.py" + (forgets ? " --forget-to-end" : "")
        let bob = try device(
            "bob-\(forgets)", proxy: calls.proxy, settings: ["--app-handler", handler, "--invite-timeout", "0.5"])
        let voip =
            #"{"aps":{"sound":"","loc-key":"IC_MSG","loc-args":["Alice"],"call-id":"never@example.org"},"from-uri":"sip:alice@127.0.0.1","display-name":"Alice"}"#
        let ran = try phoneRuns(["payload": try JSON.parse(voip), "headers": ["apns-push-type": "voip"]], device: bob)
        let record = try #require(ran["call"], "no call in \(ran.serialized())")
        #expect(record["end_reason"] == "failed")
        #expect(record["callkit"]?["ended"] == .bool(!forgets))
        let warnings = ran["warnings"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(warnings.contains { $0.hasPrefix("the app did not end the CallKit call") } == forgets, "\(warnings)")
    }

    /// `nse serve` running a push whose call is still ringing stops within 5 s of SIGTERM: the app is told to end
    /// the call (480 to the caller), and the result is recorded before the exit, so a restarted server shows it.
    @Test func serveStopsWithinFiveSecondsDuringACall() throws {
        let bob = root + "/bob"
        #expect(try TestSupport.nse(["device", "init", bob]).status == 0)
        func startServe(_ name: String) throws -> (Background, String) {
            let serve = try Background(
                TestSupport.nse, ["serve", "--listen", "127.0.0.1:0", "--device", bob], in: root, name: name)
            return (serve, try serve.listeningURL())
        }
        let (serve, url) = try startServe("serve")
        defer { _ = serve.wait(timeout: 0) }
        let server = try SIPServerProcess(["--listen", "tcp:127.0.0.1:0", "--push-url", url])
        defer { server.stop() }
        let proxy = try #require(server.uris["tcp"])
        let set = try TestSupport.nse([
            "device", "set", bob, "--sip-account", "sip:bob@127.0.0.1", "--sip-proxy", proxy, "--call-action", "ignore",
        ])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try TestSupport.nse(["device", "register", bob]).status == 0)
        let call = try nseCall(["--proxy", proxy, "--from", "sip:alice@127.0.0.1", "--to", "sip:bob@127.0.0.1"])
        #expect(server.waitFor("call", ["step": "ringing"], timeout: 15) != nil, "the phone never rang")
        let stopping = Date()
        kill(serve.process.processIdentifier, SIGTERM)
        #expect(serve.wait(timeout: 5) == 0, "\(serve.errors.suffix(400))")
        #expect(Date().timeIntervalSince(stopping) < 5)
        #expect(call.wait(timeout: 10) == 1, "\(call.errors)")
        #expect(try JSON.parse(call.output)["final_status"] == 480)
        // The push's result was recorded with the call as it ended.
        let (again, againURL) = try startServe("serve-again")
        defer {
            kill(again.process.processIdentifier, SIGTERM)
            _ = again.wait(timeout: 5)
        }
        let token = try #require(
            try JSON.parse(String(contentsOfFile: bob + "/device.json", encoding: .utf8))["tokens"]?["remote"]?
                .stringValue)
        let fetched = try TestSupport.run(
            "/usr/bin/curl", ["-s", "\(againURL)/v1/devices/\(token)/notifications?limit=1"], timeout: 10)
        let list = try JSON.parse(fetched.stdout, options: JSONParseOptions(requireObject: false))
        let latest = try #require(list.arrayValue?.first, "no result: \(fetched.stdout)")
        #expect(latest["call"]?["end_reason"] == "failed", "\(latest["call"] ?? .null)")
        #expect(latest["call"]?["sip_status"] == 480)
    }

    /// `--e2ee-calls-for AOR`: the encrypted route for that device only; another device's sealed call still goes by
    /// PushKit.
    @Test func theEncryptedRouteCanBePerDevice() throws {
        let calls = try HeldCalls("tcp", ["--e2ee-calls-for", "sip:bob@127.0.0.1"])
        defer { calls.stop() }
        for (name, type) in [("bob", "alert"), ("carol", "voip")] {
            let phone = try device(name, proxy: calls.proxy)
            let call = try nseCall(
                [
                    "--proxy", calls.proxy, "--from", "sip:alice@127.0.0.1", "--to", "sip:\(name)@127.0.0.1",
                    "--seal-to", phone, "--cancel-after", "1",
                ], name: "call-\(name)")
            let push = try #require(waitForPush(calls.recorder), "no push for \(name)")
            #expect(push["headers"]?["apns-push-type"] == .string(type), "\(name)")
            #expect((push["payload"]?["enc"] != nil) == (type == "alert"))
            #expect(call.wait(timeout: 30) == 0, "\(call.errors)")
        }
    }

    @Test func noServerIsAnIOErrorOnOneLine() throws {
        let port = try HeldCallTests.freePort("tcp")
        let call = try nseCall([
            "--proxy", "sip:127.0.0.1:\(port);transport=tcp", "--from", "sip:alice@127.0.0.1", "--to",
            "sip:bob@127.0.0.1",
        ])
        #expect(call.wait(timeout: 30) == 74)
        let lines = call.errors.split(separator: "\n")
        #expect(lines.count == 1 && lines.first?.hasPrefix("nse: call failed: ") == true, "\(call.errors)")
        #expect(try JSON.parse(call.output)["ended_by"] == "failure")
    }

    @Test func aSealToFolderThatIsNoDeviceIsAConfigurationError() throws {
        let result = try TestSupport.nse([
            "call", "--proxy", "sip:127.0.0.1:9;transport=tcp", "--from", "sip:a@127.0.0.1", "--to", "sip:b@127.0.0.1",
            "--seal-to", root + "/nobody",
        ])
        #expect(result.status == 78)
        #expect(result.stderr.hasPrefix("nse: ") && result.stderr.contains("is not a device"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test(arguments: [
        (["--timeout", "0"], "--timeout must be from 0.1 to 3600 seconds, not 0.0"),
        (["--hangup-after=-1"], "--hangup-after must be from 0 to 3600 seconds, not -1.0"),
        (["--to", "bob"], nil),
    ])
    func badOptionsAreUsageErrors(options: [String], message: String?) throws {
        let result = try TestSupport.nse(
            [
                "call", "--proxy", "sip:127.0.0.1:9;transport=tcp", "--from", "sip:a@127.0.0.1", "--to",
                "sip:b@127.0.0.1",
            ]
                + options)
        #expect(result.status == 64)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines.first?.hasPrefix("nse: ") == true, "\(result.stderr)")
        if let message { #expect(result.stderr.contains(message), "\(result.stderr)") }
        #expect(result.stdout.isEmpty)
    }

    // MARK: - helpers

    /// `nse sip-server` listening on `transport` and pushing to scripts/push-recorder.py.
    final class HeldCalls {
        let recorder: HeldCallTests.Recorder
        let server: SIPServerProcess

        init(_ transport: String, _ extra: [String] = []) throws {
            recorder = try HeldCallTests.Recorder()
            do {
                server = try SIPServerProcess(
                    ["--listen", "\(transport):127.0.0.1:0", "--push-url", "http://127.0.0.1:\(recorder.port)"] + extra)
            } catch {
                recorder.stop()
                throw error
            }
        }

        /// The proxy URI of its one listener.
        var proxy: String { server.uris.values.first ?? "" }

        func stop() {
            server.stop()
            recorder.stop()
        }
    }

    /// An nse device for `name`@127.0.0.1 registered at `proxy` with its push parameters.
    func device(_ name: String, proxy: String, settings: [String] = []) throws -> String {
        let path = root + "/" + name
        let created = try TestSupport.nse(
            ["device", "init", path, "--filtering", "--sip-account", "sip:\(name)@127.0.0.1", "--sip-proxy", proxy])
        #expect(created.status == 0, "\(created.stderr)")
        if !settings.isEmpty {
            let set = try TestSupport.nse(["device", "set", path] + settings)
            #expect(set.status == 0, "\(set.stderr)")
        }
        let registered = try TestSupport.nse(["device", "register", path])
        #expect(registered.status == 0, "\(registered.stderr)")
        return path
    }

    func waitForPush(_ recorder: HeldCallTests.Recorder) -> JSON? {
        var pushes: [JSON] = []
        let end = Date().addingTimeInterval(10)
        while pushes.isEmpty, Date() < end { pushes = recorder.records(settle: 0.1) }
        return pushes.first
    }

    /// The phone gets the push: `nse run` with its payload and push type; returns the result.
    func phoneRuns(_ push: JSON, device: String) throws -> JSON {
        let payload = root + "/push-\(UUID().uuidString.prefix(6)).json"
        try TestSupport.write(try #require(push["payload"]).serialized(), to: payload)
        let type = push["headers"]?["apns-push-type"]?.stringValue ?? "alert"
        let run = try TestSupport.run(
            TestSupport.nse, ["run", "--push-type", type, "--device", device, payload], timeout: 90)
        #expect(run.status == 0, "\(run.stderr)")
        return try JSON.parse(run.stdout)
    }
}
