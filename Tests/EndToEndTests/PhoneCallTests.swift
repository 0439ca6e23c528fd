import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// The phone's side of a call, end to end with the built binaries: SIPp places the call through `nse sip-server`,
/// which holds the INVITE and sends a PushKit push (to scripts/push-recorder.py); `nse run --push-type voip` on
/// that push launches the app, which reports the call, re-REGISTERs (`nse-app`), takes the held INVITE, rings and
/// does what the device's user does; the result's `call` tells the story. Loopback only; every wait is bounded.
@Suite(
    .serialized, .timeLimit(.minutes(5)),
    .enabled(if: HeldCallTests.sipp != nil, "sipp is not installed (make test installs sip-tester)"))
struct PhoneCallTests {
    struct Call {
        var result: JSON
        var caller: (status: Int32, stderr: String)
        var steps: [String]

        var call: JSON? { result["call"] }
        var timeline: [String] { call?["timeline_ms"]?.objectValue?.keys.map { $0 } ?? [] }
    }

    /// Bob's phone (an nse device registered with its push parameters) gets a call from SIPp (`caller`: a
    /// scenario in fixtures/sipp, or nil for SIPp's built-in `uac`, which hangs up `pause` ms after the answer).
    /// With `placeCall: false` nobody calls: the push names a call the server never held.
    func call(
        transport: String = "tcp", caller: String? = nil, pause: Int = 300, deviceSettings: [String] = [],
        runOptions: [String] = [], last: String, placeCall: Bool = true
    ) throws -> Call {
        let sipp = try #require(HeldCallTests.sipp)
        let root = try TestSupport.temporaryDirectory("nse-phone-call")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let recorder = try HeldCallTests.Recorder()
        defer { recorder.stop() }
        let server = try SIPServerProcess(
            ["--listen", "\(transport):127.0.0.1:0", "--push-url", "http://127.0.0.1:\(recorder.port)"])
        defer { server.stop() }
        let port = try #require(server.ports[transport])
        let proxy = try #require(server.uris[transport])
        let bob = root + "/bob"
        let created = try TestSupport.nse(
            ["device", "init", bob, "--sip-account", "sip:bob@127.0.0.1", "--sip-proxy", proxy])
        #expect(created.status == 0, "\(created.stderr)")
        if !deviceSettings.isEmpty {
            let set = try TestSupport.nse(["device", "set", bob] + deviceSettings)
            #expect(set.status == 0, "\(set.stderr)")
        }
        let registered = try TestSupport.nse(["device", "register", bob])
        #expect(registered.status == 0, "\(registered.stderr)")

        // The caller: SIPp, in the background until the call is over.
        let callID = "nse-phone-\(UUID().uuidString.prefix(8))"
        let script = caller.map { ["-sf", TestSupport.fixtures + "/sipp/" + $0] } ?? ["-sn", "uac"]
        let callerProcess = Process()
        callerProcess.executableURL = URL(fileURLWithPath: sipp)
        callerProcess.arguments =
            ["127.0.0.1:\(port)"] + script + [
                "-s", "bob", "-cid_str", callID, "-d", String(pause), "-m", "1",
                "-p", String(try HeldCallTests.freePort(transport)), "-t", transport == "tcp" ? "t1" : "u1",
                "-nostdin", "-timeout", "30s", "-timeout_error",
            ]
        let callerErrors = Pipe()
        callerProcess.standardOutput = FileHandle.nullDevice
        callerProcess.standardError = callerErrors
        if placeCall { try callerProcess.run() }
        defer {
            if callerProcess.isRunning { kill(callerProcess.processIdentifier, SIGKILL) }
            if placeCall { callerProcess.waitUntilExit() }
        }

        // The server holds the INVITE and pushes: that push is what iOS hands the app.
        var steps: [String] = []
        let payload: JSON
        if placeCall {
            var pushes: [JSON] = []
            let end = Date().addingTimeInterval(10)
            while pushes.isEmpty, Date() < end { pushes = recorder.records(settle: 0.1) }
            let push = try #require(pushes.first, "no push for the held call")
            #expect(push["headers"]?["apns-push-type"] == "voip")
            payload = try #require(push["payload"])
            // A caller that cancels while the call is held: its CANCEL is in before the app wakes.
            if caller == "caller-cancels-held.xml" {
                while let event = server.waitFor("call", ["call_id": callID], timeout: 10) {
                    steps.append(event["step"]?.stringValue ?? "")
                    if steps.last == "cancelled" { break }
                }
                #expect(steps.last == "cancelled", "the server did not see the CANCEL: \(steps)")
            }
        } else {
            payload = [
                "aps": ["sound": "", "loc-key": "IC_MSG", "loc-args": ["Alice"], "call-id": .string(callID)],
                "from-uri": "sip:alice@127.0.0.1", "display-name": "Alice",
            ]
        }
        let payloadFile = root + "/push.json"
        try TestSupport.write(payload.serialized(), to: payloadFile)
        let run = try TestSupport.run(
            TestSupport.nse, ["run", "--push-type", "voip", "--device", bob] + runOptions + [payloadFile], timeout: 90)
        #expect(run.status == 0, "\(run.stderr)")
        let result = try JSON.parse(run.stdout)

        let deadline = Date().addingTimeInterval(30)
        while placeCall, callerProcess.isRunning, Date() < deadline { usleep(20_000) }
        while placeCall, steps.last != last, let event = server.waitFor("call", ["call_id": callID], timeout: 5) {
            steps.append(event["step"]?.stringValue ?? "")
            if steps.last == last { break }
        }
        // Read only from a caller that ran: the pipe of one that never did has its write end open here.
        let stderr =
            placeCall
            ? String(decoding: callerErrors.fileHandleForReading.availableData.suffix(400), as: UTF8.self) : ""
        return Call(
            result: result,
            caller: (!placeCall ? 0 : callerProcess.isRunning ? -1 : callerProcess.terminationStatus, stderr),
            steps: steps)
    }

    @Test(arguments: ["tcp", "udp"])
    func thePhoneAnswersAndTheCallerHangsUp(transport: String) throws {
        let call = try call(transport: transport, last: "hung-up")
        #expect(call.caller.status == 0, "the caller (sipp uac) failed: \(call.caller.stderr)")
        let record = try #require(call.call, "no call in \(call.result.serialized())")
        #expect(record["route"] == "pushkit")
        #expect(record["end_reason"] == "remoteEnded")
        #expect(record["sip_status"] == 200)
        #expect(record["registration_status"] == 200)
        #expect(record["video"] == false)
        #expect(record["report"]?["remote_handle"]?["value"]?.stringValue?.hasPrefix("sip:sipp@127.0.0.1") == true)
        // Each step after the one before it.
        let timeline = try #require(record["timeline_ms"]?.objectValue)
        // (The REGISTER's 200 may be read before or after the INVITE it releases: both orders are right.)
        #expect(timeline["registered"] != nil)
        let order = ["reported", "invite_received", "ringing", "answered", "confirmed", "ended"]
        let times = order.compactMap { timeline[$0]?.doubleValue }
        #expect(times.count == order.count, "timeline: \(timeline)")
        #expect(times == times.sorted())
        // The user answers after a second (the default answer delay).
        if let ringing = timeline["ringing"]?.doubleValue, let answered = timeline["answered"]?.doubleValue {
            #expect(answered - ringing >= 900)
        }
        #expect(call.result["outcome"] == "not-invoked")
        #expect(call.steps == ["held", "forwarded", "ringing", "answered", "hung-up"])
    }

    @Test(arguments: [("decline", "caller-expects-603.xml", 603), ("busy", "caller-expects-486.xml", 486)])
    func theUserDeclines(action: String, caller: String, status: Int) throws {
        let call = try call(
            caller: caller, deviceSettings: ["--call-action", action, "--answer-after", "0.2"], last: "declined")
        #expect(call.caller.status == 0, "the caller did not hear \(status): \(call.caller.stderr)")
        let record = try #require(call.call, "no call in \(call.result.serialized())")
        #expect(record["end_reason"] == "declined")
        #expect(record["sip_status"] == .int(Int64(status)))
        #expect(record["timeline_ms"]?["answered"] == nil)
        #expect(call.steps == ["held", "forwarded", "ringing", "declined"])
    }

    /// `nse run --call-action` decides for one run, over the device's setting (here: answer).
    @Test func oneRunCanSayWhatTheUserDoes() throws {
        let call = try call(
            caller: "caller-expects-486.xml", deviceSettings: ["--answer-after", "0.2"],
            runOptions: ["--call-action", "busy"], last: "declined")
        #expect(call.caller.status == 0, "the caller did not hear 486: \(call.caller.stderr)")
        #expect(call.call?["sip_status"] == 486)
        let unknown = try TestSupport.nse(["run", "--push-type", "voip", "--call-action", "maybe", "-"], stdin: "{}")
        #expect(unknown.status == 64)
        #expect(
            unknown.stderr == "nse: --call-action must be answer, decline, busy, ignore or answer-before-invite\n",
            "\(unknown.stderr)")
    }

    @Test func theCallerCancelsWhileThePhoneRings() throws {
        let call = try call(
            caller: "caller-cancels-ringing.xml", deviceSettings: ["--call-action", "ignore"], last: "cancelled")
        #expect(call.caller.status == 0, "the caller did not get 200 and 487: \(call.caller.stderr)")
        let record = try #require(call.call, "no call in \(call.result.serialized())")
        #expect(record["end_reason"] == "unanswered")
        #expect(record["sip_status"] == 487)
        #expect(record["timeline_ms"]?["ringing"] != nil)
    }

    /// The caller gives up while the call is still held: the server answers 487 and the app, once it has
    /// registered, never gets an INVITE; it ends the CallKit call it reported as `failed`.
    @Test func theCallerCancelsBeforeTheInviteIsFetched() throws {
        let call = try call(
            caller: "caller-cancels-held.xml", deviceSettings: ["--invite-timeout", "1.5"], last: "cancelled")
        #expect(call.caller.status == 0, "the caller did not get 200 and 487: \(call.caller.stderr)")
        let record = try #require(call.call, "no call in \(call.result.serialized())")
        #expect(record["end_reason"] == "failed")
        #expect(record["registration_status"] == 200)
        #expect(record["timeline_ms"]?["invite_received"] == nil)
        let ended = try #require(record["timeline_ms"]?["ended"]?.doubleValue)
        let registered = try #require(record["timeline_ms"]?["registered"]?.doubleValue)
        #expect(ended >= 1400 && ended > registered)
        #expect(call.steps == ["held", "cancelled"])
    }

    @Test func thePushNamesACallThatNeverComes() throws {
        let call = try call(deviceSettings: ["--invite-timeout", "1"], last: "", placeCall: false)
        let record = try #require(call.call, "no call in \(call.result.serialized())")
        #expect(record["end_reason"] == "failed")
        #expect(record["sip_status"] == .null)
        #expect(call.result["voip"]?["app"]?["outcome"] == "reported")
    }

    /// Linphone's rule: the user accepts in CallKit before the INVITE is in; the app answers it the moment it
    /// comes, without the answer delay.
    @Test func theUserAnswersBeforeTheInviteArrives() throws {
        let call = try call(
            deviceSettings: ["--call-action", "answer-before-invite", "--answer-after", "5"], last: "hung-up")
        #expect(call.caller.status == 0, "the caller (sipp uac) failed: \(call.caller.stderr)")
        let record = try #require(call.call, "no call in \(call.result.serialized())")
        let timeline = try #require(record["timeline_ms"]?.objectValue)
        let accepted = try #require(timeline["answered_in_callkit"]?.doubleValue)
        let invite = try #require(timeline["invite_received"]?.doubleValue)
        let answered = try #require(timeline["answered"]?.doubleValue)
        #expect(accepted < invite && answered >= invite && answered - invite < 1000)
        #expect(record["end_reason"] == "remoteEnded")
    }

    /// The emulated user hangs up first: the BYE goes from the phone, and SIPp's caller, waiting long after the
    /// answer, hears it (its built-in `uac` then fails on the unexpected BYE, which is not what is checked).
    @Test func theUserHangsUp() throws {
        let call = try call(
            pause: 10000, deviceSettings: ["--answer-after", "0", "--hangup-after", "0.3"], last: "hung-up")
        let record = try #require(call.call, "no call in \(call.result.serialized())")
        #expect(record["end_reason"] == "hungUp")
        #expect(record["sip_status"] == 200)
        #expect(call.steps.suffix(2) == ["answered", "hung-up"])
    }
}
