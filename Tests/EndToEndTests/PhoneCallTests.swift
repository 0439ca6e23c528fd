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
    func call(
        transport: String = "tcp", caller: String? = nil, pause: Int = 300, deviceSettings: [String] = [],
        last: String
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
        try callerProcess.run()
        defer {
            if callerProcess.isRunning { kill(callerProcess.processIdentifier, SIGKILL) }
            callerProcess.waitUntilExit()
        }

        // The server holds the INVITE and pushes: that push is what iOS hands the app.
        var pushes: [JSON] = []
        let end = Date().addingTimeInterval(10)
        while pushes.isEmpty, Date() < end { pushes = recorder.records(settle: 0.1) }
        let push = try #require(pushes.first, "no push for the held call")
        #expect(push["headers"]?["apns-push-type"] == "voip")
        let payloadFile = root + "/push.json"
        try TestSupport.write(try #require(push["payload"]).serialized(), to: payloadFile)
        let run = try TestSupport.run(
            TestSupport.nse, ["run", "--push-type", "voip", "--device", bob, payloadFile], timeout: 90)
        #expect(run.status == 0, "\(run.stderr)")
        let result = try JSON.parse(run.stdout)

        let deadline = Date().addingTimeInterval(30)
        while callerProcess.isRunning, Date() < deadline { usleep(20_000) }
        var steps: [String] = []
        while let event = server.waitFor("call", ["call_id": callID], timeout: 5) {
            steps.append(event["step"]?.stringValue ?? "")
            if steps.last == last { break }
        }
        let stderr = String(decoding: callerErrors.fileHandleForReading.availableData.suffix(400), as: UTF8.self)
        return Call(
            result: result, caller: (callerProcess.isRunning ? -1 : callerProcess.terminationStatus, stderr),
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
        let order = ["reported", "registered", "invite_received", "ringing", "answered", "confirmed", "ended"]
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
}
