import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// Where SIPp is installed, if it is.
private let sippBinary: String? = ["/usr/bin/sipp", "/usr/local/bin/sipp"].first {
    FileManager.default.isExecutableFile(atPath: $0)
}

/// Calls through the built `nse sip-server`, with a SIP implementation nse did not write at both ends: SIPp
/// (Debian's sip-tester) places the call (its built-in `uac` scenario, or one of fixtures/sipp/caller-*.xml) and
/// plays the sleeping phone (fixtures/sipp/device-*.xml: it registers with RFC 8599 push parameters, the server
/// holds the INVITE and pushes, the phone registers again and takes the call). Pushes go to an APNs-shaped
/// recorder (scripts/push-recorder.py). Loopback only; every wait is bounded.
@Suite(
    .serialized, .timeLimit(.minutes(5)),
    .enabled(if: sippBinary != nil, "sipp is not installed (make test installs sip-tester)"))
struct HeldCallTests {
    /// The SIPp binary, when installed.
    static var sipp: String? { sippBinary }

    /// Push parameters of a phone with a PushKit token (and an alert one), as liblinphone registers them.
    static let pushKit =
        "pn-provider=apns.dev;pn-prid=VOIPTOKEN:voip&ALERTTOKEN:remote;pn-param=ABCDE12345.org.example.app.voip&remote"
    /// Push parameters of a phone woken by alerts only.
    static let alertOnly = "pn-provider=apns.dev;pn-prid=ALERTTOKEN;pn-param=ABCDE12345.org.example.app"

    /// What one call left behind.
    struct Call {
        var caller: TestSupport.Output
        var deviceStatus: Int32
        /// The exit status of each other phone's scenario.
        var otherStatuses: [Int32] = []
        /// The server's `call` events for the call, in order.
        var steps: [JSON]
        /// The pushes the recorder received, in order.
        var pushes: [JSON]

        var stepNames: [String] { steps.compactMap { $0["step"]?.stringValue } }
    }

    /// Runs one call: the recorder, the server, the phone (`device`, a scenario in fixtures/sipp), then the caller
    /// (`caller`: a scenario there, or nil for SIPp's built-in `uac`), and waits for the call's `last` step.
    func call(
        transport: String, device: String, caller: String?, push: String = pushKit, last: String,
        serverArguments: [String] = [], callerKeys: [String: String] = [:], wake: Int = 1500,
        otherPhones: [(scenario: String, push: String, wake: Int)] = []
    ) throws -> Call {
        let sipp = try #require(Self.sipp)
        let recorder = try Recorder()
        defer { recorder.stop() }
        let server = try SIPServerProcess(
            ["--listen", "\(transport):127.0.0.1:0", "--push-url", "http://127.0.0.1:\(recorder.port)"]
                + serverArguments)
        defer { server.stop() }
        let port = try #require(server.ports[transport])
        // SIPp finds a received request's scenario by its Call-ID: the phone's REGISTERs and the caller's INVITE
        // share one, and the server keeps REGISTER and INVITE apart by method.
        let callID = "nse-held-\(UUID().uuidString.prefix(8))"
        let mode = transport == "tcp" ? "t1" : "u1"
        func arguments(_ scenario: String?, localPort: Int, pause: Int, push: String = push) -> [String] {
            let script = scenario.map { ["-sf", TestSupport.fixtures + "/sipp/" + $0] } ?? ["-sn", "uac"]
            return ["127.0.0.1:\(port)"] + script + [
                "-s", "bob", "-key", "pn", push, "-cid_str", callID, "-d", String(pause), "-m", "1",
                "-p", String(localPort), "-t", mode, "-nostdin", "-timeout", "20s", "-timeout_error",
            ]
        }
        var phones: [Process] = []
        defer {
            for phone in phones {
                if phone.isRunning { kill(phone.processIdentifier, SIGKILL) }
                phone.waitUntilExit()
            }
        }
        for (scenario, phonePush, phoneWake) in [(device, push, wake)] + otherPhones {
            let phone = Process()
            phone.executableURL = URL(fileURLWithPath: sipp)
            phone.arguments = arguments(
                scenario, localPort: try Self.freePort(transport), pause: phoneWake, push: phonePush)
            phone.standardOutput = FileHandle.nullDevice
            phone.standardError = FileHandle.nullDevice
            try phone.run()
            phones.append(phone)
            #expect(server.waitFor("registered", ["aor": "sip:bob@127.0.0.1"], timeout: 10) != nil)
        }
        let phone = phones[0]
        let keys = callerKeys.sorted { $0.key < $1.key }.flatMap { ["-key", $0.key, $0.value] }
        let callerOutput = try TestSupport.run(
            sipp, arguments(caller, localPort: try Self.freePort(transport), pause: 300) + keys, timeout: 30)
        let end = Date().addingTimeInterval(20)
        while phones.contains(where: \.isRunning), Date() < end { usleep(20_000) }
        var steps: [JSON] = []
        while let event = server.waitFor("call", ["call_id": callID], timeout: 10) {
            steps.append(event)
            if event["step"]?.stringValue == last { break }
        }
        // A notice follows the last step: give it the time a push takes on loopback.
        let pushes = recorder.records(settle: 0.5)
        return Call(
            caller: callerOutput, deviceStatus: phone.isRunning ? -1 : phone.terminationStatus,
            otherStatuses: phones.dropFirst().map { $0.isRunning ? -1 : $0.terminationStatus }, steps: steps,
            pushes: pushes)
    }

    @Test(arguments: ["udp", "tcp"])
    func aPushKitCallIsHeldPushedAnsweredAndHungUp(transport: String) throws {
        let call = try call(transport: transport, device: "device-answers.xml", caller: nil, last: "hung-up")
        #expect(call.caller.status == 0, "the caller (sipp uac) failed: \(call.caller.stderr.suffix(400))")
        #expect(call.deviceStatus == 0, "the phone's scenario failed")
        #expect(call.stepNames == ["held", "forwarded", "ringing", "answered", "hung-up"])
        #expect(call.steps.first { $0["step"] == "ringing" }?["status"] == 180)
        // One PushKit push, Flexisip's VoIP form.
        #expect(call.pushes.count == 1)
        let push = try #require(call.pushes.first)
        #expect(push["token"] == "VOIPTOKEN")
        #expect(push["headers"]?["apns-push-type"] == "voip")
        #expect(push["headers"]?["apns-topic"] == "org.example.app.voip")
        #expect(push["headers"]?["apns-expiration"] == "0")
        #expect(push["payload"]?["aps"]?["call-id"] == call.steps.first?["call_id"])
        #expect(push["payload"]?["aps"]?["loc-key"] == "IC_MSG")
        #expect(push["payload"]?["aps"]?["mutable-content"] == nil)
    }

    /// Flexisip's call fork over two phones of one AOR: both are pushed, both get the INVITE when they register,
    /// the first 2xx wins, and the other phone, still ringing, is sent a CANCEL.
    @Test func twoPhonesRingAndTheOtherIsCancelledWhenOneAnswers() throws {
        let second =
            "pn-provider=apns.dev;pn-prid=VOIPTOKEN2:voip&ALERTTOKEN2:remote;pn-param=ABCDE12345.org.example.app.voip&remote"
        let call = try call(
            transport: "udp", device: "device-answers.xml", caller: nil, last: "hung-up", wake: 2200,
            otherPhones: [("device-rings.xml", second, 1200)])
        #expect(call.caller.status == 0, "the caller (sipp uac) failed: \(call.caller.stderr.suffix(400))")
        #expect(call.deviceStatus == 0, "the answering phone's scenario failed")
        #expect(call.otherStatuses == [0], "the other phone never got the CANCEL")
        #expect(call.stepNames.first == "held")
        #expect(call.stepNames.filter { $0 == "forwarded" }.count == 2)
        #expect(call.stepNames.suffix(2) == ["answered", "hung-up"])
        #expect(Set(call.pushes.compactMap { $0["token"]?.stringValue }) == ["VOIPTOKEN", "VOIPTOKEN2"])
    }

    @Test func aDeviceOnlineWithoutPushParametersGetsTheCallAtOnce() throws {
        let call = try call(transport: "tcp", device: "device-online.xml", caller: nil, push: "ob", last: "hung-up")
        #expect(call.caller.status == 0, "the caller (sipp uac) failed: \(call.caller.stderr.suffix(400))")
        #expect(call.deviceStatus == 0, "the phone's scenario failed")
        #expect(call.stepNames == ["forwarded", "ringing", "answered", "hung-up"])
        #expect(call.pushes.isEmpty)
    }

    @Test func aDeviceThatDeclinesBusyIsHeardByTheCaller() throws {
        let call = try call(
            transport: "udp", device: "device-declines.xml", caller: "caller-expects-486.xml", last: "declined")
        #expect(call.caller.status == 0, "the caller did not get 486: \(call.caller.stderr.suffix(400))")
        #expect(call.deviceStatus == 0, "the phone did not get the ACK of its 486")
        #expect(call.stepNames == ["held", "forwarded", "ringing", "declined"])
        #expect(call.steps.last?["status"] == 486)
    }

    @Test func aCallerWhoCancelsWhileItRingsCancelsTheDevice() throws {
        let call = try call(
            transport: "udp", device: "device-rings.xml", caller: "caller-cancels-ringing.xml", last: "cancelled")
        #expect(call.caller.status == 0, "the caller did not get 200 and 487: \(call.caller.stderr.suffix(400))")
        #expect(call.deviceStatus == 0, "the phone never got the server's CANCEL")
        #expect(call.stepNames == ["held", "forwarded", "ringing", "cancelled"])
        #expect(call.steps.last?["status"] == 487)
    }

    @Test func aCallCancelledWhileHeldEndsWithTheMissedCallNotice() throws {
        let call = try call(
            transport: "tcp", device: "device-registers.xml", caller: "caller-cancels-held.xml", push: Self.alertOnly,
            last: "cancelled")
        #expect(call.caller.status == 0, "the caller did not get 200 and 487: \(call.caller.stderr.suffix(400))")
        #expect(call.stepNames == ["held", "cancelled"])
        // The IC_MSG alert, then Flexisip's "Missing call" notice under the same collapse id, which replaces it.
        #expect(call.pushes.count == 2)
        let callID = try #require(call.steps.first?["call_id"]?.stringValue)
        for push in call.pushes {
            #expect(push["token"] == "ALERTTOKEN")
            #expect(push["headers"]?["apns-push-type"] == "alert")
            #expect(push["headers"]?["apns-topic"] == "org.example.app")
            #expect(push["headers"]?["apns-collapse-id"] == .string(callID))
            #expect(push["payload"]?["call-id"] == .string(callID))
        }
        #expect(call.pushes.first?["payload"]?["aps"]?["alert"]?["loc-key"] == "IC_MSG")
        #expect(call.pushes.last?["payload"]?["aps"]?["alert"]?["loc-key"] == "Missing call")
    }

    /// Apple's end-to-end-encrypted route: the server cannot read the offer, so it pushes it as an alert for the
    /// extension, which opens it and escalates the call to the app (`reportNewIncomingVoIPPushPayload`).
    @Test func aSealedCallOfferIsPushedForTheExtensionToEscalate() throws {
        let bob = NSTemporaryDirectory() + "nse-held-bob-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: bob) }
        #expect(try TestSupport.nse(["device", "init", bob, "--filtering"]).status == 0)
        let uuid = "0C7D5E9A-8D7B-4E0E-A3B8-2B9B2A1D4C11"
        let sealed = try TestSupport.nse(
            ["seal", "--device", bob],
            stdin: #"{"type":"call","call_uuid":"\#(uuid)","from":"sip:alice@example.org","display_name":"Alice"}"#)
        #expect(sealed.status == 0, "\(sealed.stderr)")
        let envelope = sealed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let call = try call(
            transport: "udp", device: "device-registers.xml", caller: "caller-sealed-cancels-held.xml",
            push: Self.pushKit, last: "cancelled", serverArguments: ["--e2ee-calls"], callerKeys: ["env": envelope])
        #expect(call.caller.status == 0, "the caller did not get 200 and 487: \(call.caller.stderr.suffix(400))")
        // The sealed offer goes as an alert to the remote token, not PushKit, even though the phone has a voip one.
        let push = try #require(call.pushes.first)
        #expect(push["token"] == "ALERTTOKEN")
        #expect(push["headers"]?["apns-push-type"] == "alert")
        #expect(push["payload"]?["enc"] == .string(envelope))
        #expect(push["payload"]?["aps"]?["mutable-content"] == 1)
        #expect(push["payload"]?["aps"]?["alert"]?["loc-key"] == "IC_MSG")
        // On the phone, the extension opens it and the built-in app reports the call.
        let payload = try #require(push["payload"]).serialized()
        let ran = try TestSupport.nse(["run", "--device", bob], stdin: payload)
        #expect(ran.status == 0, "\(ran.stderr)")
        let result = try JSON.parse(ran.stdout)
        #expect(result["outcome"] == "suppressed", "\(result["reason"] ?? .null)")
        #expect(result["call_report"]?["uuid"] == .string(uuid))
        #expect(result["call_report"]?["localized_caller_name"] == "Alice")
    }

    /// Flexisip's call-remote-push-interval: a phone woken by alerts gets the ringing alert again while the call
    /// waits for it, then the missed-call notice; each under the call's collapse id.
    @Test func theAlertIsRepeatedWhileTheCallIsHeld() throws {
        let call = try call(
            transport: "udp", device: "device-registers.xml", caller: "caller-expects-408.xml", push: Self.alertOnly,
            last: "timed-out", serverArguments: ["--call-fork-timeout", "1.6", "--call-remote-push-interval", "0.5"])
        #expect(call.caller.status == 0, "the caller did not get 408: \(call.caller.stderr.suffix(400))")
        let keys = call.pushes.map { $0["payload"]?["aps"]?["alert"]?["loc-key"]?.stringValue ?? "" }
        // At 0, 0.5, 1.0 and 1.5 s: four rings, then the notice once the call is over; never a ring after it.
        #expect(keys.count >= 4 && keys.count <= 5, "\(keys)")
        #expect(keys.last == "Missing call")
        #expect(keys.dropLast().allSatisfy { $0 == "IC_MSG" })
        let callID = try #require(call.steps.first?["call_id"]?.stringValue)
        #expect(call.pushes.allSatisfy { $0["headers"]?["apns-collapse-id"] == .string(callID) })
    }

    @Test func noAnswerWithinTheCallForkTimeoutIs408() throws {
        let call = try call(
            transport: "udp", device: "device-registers.xml", caller: "caller-expects-408.xml", last: "timed-out",
            serverArguments: ["--call-fork-timeout", "1"])
        #expect(call.caller.status == 0, "the caller did not get 408: \(call.caller.stderr.suffix(400))")
        #expect(call.stepNames == ["held", "timed-out"])
        #expect(call.steps.last?["status"] == 408)
        // A PushKit phone gets no notice: its app ends the CallKit call when the INVITE never comes.
        #expect(call.pushes.map { $0["headers"]?["apns-push-type"] } == ["voip"])
    }

    // MARK: - helpers

    /// A port free now on 127.0.0.1 for `transport` (SIPp binds it next).
    static func freePort(_ transport: String) throws -> Int {
        let fd = socket(AF_INET, transport == "udp" ? Int32(SOCK_DGRAM.rawValue) : Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Waits (at most `timeout` seconds) until something has bound `port` on 127.0.0.1: a peer started in the
    /// background is listening once the port can no longer be bound here. A fixed pause loses that race on a
    /// loaded machine.
    @discardableResult
    static func waitUntilBound(_ port: Int, _ transport: String, timeout: Double = 10) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            let fd = socket(AF_INET, transport == "udp" ? Int32(SOCK_DGRAM.rawValue) : Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { return false }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            let free = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            close(fd)
            if !free { return true }
            usleep(50_000)
        }
        return false
    }

    /// scripts/push-recorder.py: an APNs-shaped endpoint printing a JSON line per push.
    final class Recorder {
        let process = Process()
        let output = Pipe()
        let port: Int
        private var pending = Data()

        init() throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = [TestSupport.packageRoot + "/scripts/push-recorder.py"]
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            var port: Int?
            var first = Data()
            let end = Date().addingTimeInterval(10)
            while port == nil, Date() < end {
                port = Self.lines(&first).first.flatMap { Int($0) }
                if port == nil { Self.read(output, into: &first, timeoutMs: 100) }
            }
            guard let port else {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw POSIXError(.ETIMEDOUT)
            }
            self.port = port
        }

        /// Every push recorded so far, after waiting `settle` seconds for more.
        func records(settle: TimeInterval) -> [JSON] {
            let end = Date().addingTimeInterval(settle)
            while Date() < end { Self.read(output, into: &pending, timeoutMs: 50) }
            return Self.lines(&pending).compactMap { try? JSON.parse($0) }
        }

        func stop() {
            guard process.isRunning else { return }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        private static func read(_ pipe: Pipe, into data: inout Data, timeoutMs: Int32) {
            var descriptor = pollfd(fd: pipe.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, timeoutMs) > 0 { data.append(pipe.fileHandleForReading.availableData) }
        }

        private static func lines(_ data: inout Data) -> [String] {
            var lines: [String] = []
            while let newline = data.firstIndex(of: 0x0A) {
                lines.append(String(decoding: data[data.startIndex..<newline], as: UTF8.self))
                data.removeSubrange(data.startIndex...newline)
            }
            return lines
        }
    }
}
