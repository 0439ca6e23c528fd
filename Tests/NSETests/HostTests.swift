import Foundation
import NSECrypto
import NSEDevice
import NSEJSON
import NSEPayload
import NSETestSupport
import Testing

@testable import NSEHost

/// The host's rules, run in-process against real extension processes (the reference one and misbehaving scripts).
@Suite struct HostTests {
    let device: Device
    let filteringDevice: Device

    init() throws {
        let root = try TestSupport.temporaryDirectory("nse-host")
        device = try Device.create(at: root + "/plain")
        var options = Device.Options()
        options.filtering = true
        filteringDevice = try Device.create(at: root + "/filtering", options: options)
    }

    func host(
        _ device: Device, extension script: String? = nil, budget: Double = 5, grace: Double = 0.3, memoryMB: Int = 24
    ) -> NotificationHost {
        let command = script.map { [TestSupport.fixtures + "/extensions/" + $0] } ?? [TestSupport.referenceExtension]
        return NotificationHost(
            device: device,
            limits: ExtensionLimits(budget: budget, grace: grace, memoryLimitKilobytes: memoryMB * 1024),
            extensionCommand: command)
    }

    func seal(_ plaintext: String, to device: Device) throws -> String {
        try Envelope.seal(Array(plaintext.utf8), to: device.publicKey()).text
    }

    func push(enc: String? = nil, extra: String = "") -> [UInt8] {
        let encKey = enc.map { #","enc":"\#($0)""# } ?? ""
        return Array(
            #"{"aps":{"alert":{"loc-key":"IM_MSG","loc-args":["Alice"]},"mutable-content":1,"sound":"msg.caf","badge":2},"call-id":"c1@example.org"\#(encKey)\#(extra)}"#
                .utf8)
    }

    let message =
        #"{"type":"message","from":"sip:alice@example.org","display_name":"Alice","text":"Lunch at 1?","subject":"Plans","chat_room":"sip:room1@example.org"}"#

    /// The sanitizer memory factor applies to the reference extension however its path is spelled: through a folder
    /// that is a symbolic link (as `.build/debug` and `.build-asan/debug` are) it is still the reference extension.
    @Test func theReferenceExtensionIsKnownThroughASymbolicLink() throws {
        let reference = NotificationHost.referenceExtensionCommand()
        try #require(reference.count == 1 && FileManager.default.fileExists(atPath: reference[0]))
        let link = try TestSupport.temporaryDirectory() + "/bin"
        try FileManager.default.createSymbolicLink(
            atPath: link, withDestinationPath: (reference[0] as NSString).deletingLastPathComponent)
        #expect(NotificationHost.isReferenceExtension([link + "/nse-extension"]))
        #expect(NotificationHost.isReferenceExtension(reference))
        #expect(!NotificationHost.isReferenceExtension(["/bin/true"]))
        #expect(!NotificationHost.isReferenceExtension([reference[0], "--flag"]))
    }

    @Test func rewritesADecryptedMessage() throws {
        let result = host(device).deliver(
            push(enc: try seal(message, to: device), extra: #","custom":{"k":1}"#), pushType: .alert, source: .stdin)
        #expect(result.outcome == .rewritten, "\(result.reason)")
        #expect(result.display == Display(title: "Alice", subtitle: "Plans", body: "Lunch at 1?"))
        let aps = result.notification?["aps"]
        #expect(aps?["thread-id"] == "sip:room1@example.org")
        #expect(aps?["category"] == "msg_cat")
        #expect(aps?["badge"] == 2 && aps?["sound"] == "msg.caf")
        #expect(result.notification?["custom"] == ["k": 1])
        #expect(result.notification?["enc"] == nil)
        let report = try #require(result.extensionReport)
        #expect(report.exitCode == 0 && report.killed == nil && (report.peakRSSKilobytes ?? 0) > 0)
    }

    @Test func senderURIUserIsTheTitleWithoutADisplayName() throws {
        let plaintext = #"{"type":"message","from":"sip:carol@example.org","text":"yo"}"#
        let result = host(device).deliver(push(enc: try seal(plaintext, to: device)), pushType: .alert, source: .stdin)
        #expect(result.display == Display(title: "carol", body: "yo"))
    }

    @Test func undecryptableContentFallsBackToTheLocKeyText() throws {
        let other = try Device.create(at: try TestSupport.temporaryDirectory() + "/other")
        let cases: [(String, String)] = [
            (try seal(message, to: other), "envelope-wrong-key"),
            ("nse1.x25519-sealedbox.\(device.config.keyID).AAAA", "envelope-truncated"),
            ("nse9.x.y.z", "envelope-unsupported-version"),
            ("garbage", "envelope-malformed"),
            (try Envelope.seal(Array("not json".utf8), to: device.publicKey()).text, "plaintext-not-json"),
            (try seal(#"{"type":"fax","from":"x"}"#, to: device), "plaintext-schema"),
        ]
        for (envelope, reason) in cases {
            let result = host(device).deliver(push(enc: envelope), pushType: .alert, source: .stdin)
            #expect(result.outcome == .fallback)
            #expect(result.reason.hasPrefix(reason), "\(result.reason)")
            #expect(result.display == Display(title: "Message received", body: "You have received a message"))
            #expect(!result.reason.contains("Lunch"))
        }
    }

    @Test func tamperedEnvelopeFallsBack() throws {
        var envelope = try Envelope(text: try seal(message, to: device))
        envelope.sealed[40] ^= 0x20
        let result = host(device).deliver(push(enc: envelope.text), pushType: .alert, source: .stdin)
        #expect(result.outcome == .fallback && result.reason.hasPrefix("envelope-authentication-failed"))
    }

    @Test func callIDWithoutAnAccountFallsBackWithLocArgs() throws {
        var payload = #"{"aps":{"alert":{"loc-key":"CUSTOM","loc-args":["Bob"]},"mutable-content":1},"call_id":"x@y"}"#
        var result = host(device).deliver(Array(payload.utf8), pushType: .alert, source: .stdin)
        #expect(result.outcome == .fallback && result.reason.hasPrefix("fetch-unavailable"))
        #expect(result.display?.body == "CUSTOM")
        try TestSupport.write(
            "\"CUSTOM\" = \"%1$@ wrote\";", to: device.stringsDirectory + "/Base.lproj/Custom.strings")
        result = host(device).deliver(Array(payload.utf8), pushType: .alert, source: .stdin)
        #expect(result.display?.body == "Bob wrote")
        payload = #"{"aps":{"alert":{"loc-key":"GC_MSG"},"mutable-content":1},"chat-room-addr":"sip:r@y"}"#
        result = host(device).deliver(Array(payload.utf8), pushType: .alert, source: .stdin)
        #expect(result.display?.body == "You have been added to a chat room")
        #expect(result.notification?["aps"]?["thread-id"] == "sip:r@y")
    }

    @Test func callOfferIsRecognised() throws {
        let call =
            #"{"type":"call","call_uuid":"6F1C6D3A-3F0B-4C59-9E55-0B7D4E0E8A11","from":"sip:alice@example.org","display_name":"Alice"}"#
        let result = host(device).deliver(push(enc: try seal(call, to: device)), pushType: .alert, source: .stdin)
        #expect(result.display == Display(title: "Alice", body: "Incoming call"))
        #expect(result.extensionReport?.info?["content_type"] == "call")
    }

    @Test(arguments: [
        (#"{"aps":{"alert":"hi"}}"#, PushType.alert, true, "mutable-content"),
        (#"{"aps":{"alert":"hi","mutable-content":0}}"#, .alert, true, "mutable-content"),
        (#"{"aps":{"content-available":1}}"#, .alert, false, "background"),
        (#"{"aps":{"badge":1,"sound":"a.caf","mutable-content":1}}"#, .alert, false, "badge/sound"),
        (#"{"aps":{"alert":{"title":""},"mutable-content":1}}"#, .alert, false, "no visible text"),
        (#"{"aps":{"content-available":1},"x":1}"#, .background, false, "background push"),
        (#"{"aps":{"alert":"hi","mutable-content":1}}"#, .voip, false, "PushKit"),
    ])
    func notInvoked(payload: String, pushType: PushType, shown: Bool, reason: String) {
        let result = host(device).deliver(Array(payload.utf8), pushType: pushType, source: .stdin)
        #expect(result.outcome == .notInvoked)
        #expect(result.reason.contains(reason), "\(result.reason)")
        #expect((result.display != nil) == shown)
        #expect(result.extensionReport == nil)
    }

    @Test func rejectionCarriesAPNsReason() {
        let result = host(device).deliver(
            Array(#"{"aps":{"alert":"x"},"aps":1}"#.utf8), pushType: .alert, source: .stdin)
        #expect(result.outcome == .rejected && result.rejectionReason == "MalformedPayload" && result.isRejected)
        #expect(result.json["apns_reason"] == "MalformedPayload")
    }

    @Test func hangingExtensionShowsTheOriginalAfterBudgetAndGrace() throws {
        let started = Date()
        let result = host(device, extension: "hang.sh", budget: 0.3, grace: 0.2).deliver(
            push(), pushType: .alert, source: .stdin)
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.outcome == .original && result.reason.hasPrefix("budget-expired"))
        #expect(result.display == Display(body: "You have received a message"))
        #expect(result.extensionReport?.timeWillExpireSent == true)
        #expect(result.extensionReport?.killed == "budget" && result.extensionReport?.exitSignal == 9)
        #expect(elapsed >= 0.5 && elapsed < 5)
    }

    @Test func bestAttemptAfterExpiryIsAFallback() {
        let result = host(device, extension: "best-attempt.py", budget: 0.3, grace: 2).deliver(
            push(), pushType: .alert, source: .stdin)
        #expect(result.outcome == .fallback, "\(result.reason)")
        #expect(result.reason.hasPrefix("time-will-expire"))
        #expect(result.display == Display(title: "Best attempt", body: "partial"))
        #expect(result.extensionReport?.timeWillExpireSent == true && result.extensionReport?.killed == nil)
    }

    @Test(arguments: [("crash.sh", "exited with status 3"), ("segfault.sh", "signal 11")])
    func crashingExtensionShowsTheOriginal(script: String, how: String) {
        let result = host(device, extension: script).deliver(push(), pushType: .alert, source: .stdin)
        #expect(result.outcome == .original)
        #expect(result.reason.hasPrefix("extension-crashed") && result.reason.contains(how), "\(result.reason)")
        #expect(!result.reason.contains("a trap"), "\(result.reason)")
    }

    /// A trap that says nothing (libdispatch's refusals on Linux write no message) is named as one, with what
    /// usually raises it; a crash with a message keeps its plain reason (above).
    @Test func aSilentTrapSaysWhatUsuallyRaisesOne() {
        let result = host(device, extension: "trap.sh").deliver(push(), pushType: .alert, source: .stdin)
        #expect(result.outcome == .original)
        #expect(result.reason.hasPrefix("extension-crashed"), "\(result.reason)")
        #expect(result.reason.contains("signal 4 (a trap with nothing on stderr"), "\(result.reason)")
        #expect(result.reason.contains("DispatchQueue.main.sync"), "\(result.reason)")
    }

    @Test func memoryHogIsKilledLikeJetsam() {
        let result = host(device, extension: "hog.py", budget: 8).deliver(push(), pushType: .alert, source: .stdin)
        #expect(result.outcome == .original && result.reason.hasPrefix("memory-limit"), "\(result.reason)")
        #expect(result.extensionReport?.killed == "memory")
        #expect((result.extensionReport?.wallMilliseconds ?? 1e9) < 8000)
    }

    @Test func emptyContentSuppressesOnlyWithTheFilteringEntitlement() {
        let filtered = host(filteringDevice, extension: "empty.sh").deliver(push(), pushType: .alert, source: .stdin)
        #expect(filtered.outcome == .suppressed && filtered.display == nil && filtered.notification == nil)
        let plain = host(device, extension: "empty.sh").deliver(push(), pushType: .alert, source: .stdin)
        #expect(plain.outcome == .original && plain.reason.hasPrefix("no-alert-text"))
        #expect(plain.display?.body == "You have received a message")
    }

    @Test func contentWithoutAlertTextIsNotShownAsIs() {
        let plain = host(device, extension: "badge-only.sh").deliver(push(), pushType: .alert, source: .stdin)
        #expect(plain.outcome == .original)
        let filtered = host(filteringDevice, extension: "badge-only.sh").deliver(
            push(), pushType: .alert, source: .stdin)
        #expect(filtered.outcome == .suppressed && filtered.warnings.contains { $0.contains("badge") })
    }

    @Test func protocolViolationShowsTheOriginal() {
        let result = host(device, extension: "garbage.sh").deliver(push(), pushType: .alert, source: .stdin)
        #expect(result.outcome == .original && result.reason.hasPrefix("extension-protocol-error"))
        #expect(result.extensionReport?.killed == "protocol")
    }

    @Test func lingeringExtensionKeepsItsDeliveryAndIsEnded() {
        let result = host(device, extension: "linger.sh").deliver(push(), pushType: .alert, source: .stdin)
        #expect(result.outcome == .rewritten && result.display?.title == "Lingering")
        #expect((result.extensionReport?.wallMilliseconds ?? 1e9) < 3000)
    }

    @Test func missingExtensionShowsTheOriginal() {
        let host = NotificationHost(device: device, extensionCommand: ["/nonexistent/extension"])
        let result = host.deliver(push(), pushType: .alert, source: .stdin)
        #expect(result.outcome == .original && result.reason.hasPrefix("extension-not-started"))
    }

    @Test func documentedExampleExtensionRuns() {
        let host = NotificationHost(
            device: device,
            extensionCommand: NotificationHost.shellCommand(
                TestSupport.packageRoot + "/docs/examples/shout_extension.py"))
        let result = host.deliver(
            Array(#"{"aps":{"alert":{"title":"T","body":"quiet please"},"mutable-content":1}}"#.utf8), pushType: .alert,
            source: .stdin)
        #expect(result.outcome == .rewritten && result.display?.body == "QUIET PLEASE" && result.reason == "shouted")
        #expect(result.notification?["aps"]?["thread-id"] == "shouted")
    }

    @Test func hostLogHasNoContent() throws {
        _ = host(device).deliver(push(enc: try seal(message, to: device)), pushType: .alert, source: .stdin)
        let log = try String(contentsOfFile: device.logsDirectory + "/host.jsonl", encoding: .utf8)
        #expect(log.contains("\"outcome\":\"rewritten\""))
        #expect(!log.contains("Lunch") && !log.contains("Alice"))
    }
}

@Suite struct ProcStatusTests {
    @Test func readsOneFieldWithoutStrings() {
        let status = Array("Name:\tnse-extension\nVmPeak:\t  9000 kB\nVmHWM:\t    6512 kB\nVmRSS:\t 6000 kB\n".utf8)
        #expect(ChildProcess.field("VmHWM:", in: status[...]) == 6512)
        #expect(ChildProcess.field("VmRSS:", in: status[...]) == 6000)
        #expect(ChildProcess.field("VmSwap:", in: status[...]) == nil)
        // A field name inside another line's value is not the field.
        #expect(ChildProcess.field("VmHWM:", in: Array("Name:\tVmHWM: 5\n".utf8)[...]) == nil)
        #expect(ChildProcess.field("VmHWM:", in: Array("VmHWM:\t kB".utf8)[...]) == nil)
    }

    @Test func aRunningChildReportsItsOwnPeakNotTheHosts() throws {
        let child = try ChildProcess.spawn(["/bin/sleep", "2"])
        var peak: Int?
        for _ in 0..<200 where peak == nil {
            peak = child.peakRSSKilobytes()
            usleep(1000)
        }
        // sleep's peak is well under a megabyte or two; the test host's is tens of megabytes.
        #expect((peak ?? .max) < 8 * 1024, "\(peak ?? -1) kB")
        child.signalGroup(SIGKILL)
        _ = child.reap(blocking: true)
    }
}

/// Which commands get a fork server (`--extension-launch fork`): told from the binary's bytes, never by running it.
@Suite struct ForkServerChoiceTests {
    @Test func theBinaryACommandRunsIsItsFirstWordOrWhatItsShellLineExecs() {
        #expect(ExtensionForkServers.executable(of: ["/opt/x/nse-extension"]) == "/opt/x/nse-extension")
        #expect(ExtensionForkServers.executable(of: NotificationHost.shellCommand("./build/Ext")) == "./build/Ext")
        // A command line with arguments or quoting is the shell's business: no single binary to read.
        #expect(ExtensionForkServers.executable(of: NotificationHost.shellCommand("python3 ext.py")) == nil)
        #expect(ExtensionForkServers.executable(of: NotificationHost.shellCommand("'my ext'")) == nil)
    }

    @Test func onlyABinaryWithAForkServerIsStartedAsOne() throws {
        #expect(ExtensionForkServers.hasForkServer([TestSupport.referenceExtension]))
        // An ELF file without the marker, and a script whose text names the variable: neither.
        #expect(!ExtensionForkServers.hasForkServer(["/bin/sh"]))
        let script = try TestSupport.temporaryDirectory("nse-fork-choice") + "/ext.sh"
        try TestSupport.write("#!/bin/sh\n# NSE_EXTENSION_FORK_SERVER\nread -r request\n", to: script)
        #expect(!ExtensionForkServers.hasForkServer([script]))
        #expect(!ExtensionForkServers.hasForkServer(NotificationHost.shellCommand(script)))
        // Relative to the working folder, as the shell takes it.
        let here = FileManager.default.currentDirectoryPath.split(separator: "/")
        let target = TestSupport.referenceExtension.split(separator: "/")
        let shared = zip(here, target).prefix { $0 == $1 }.count
        let relative = (["."] + Array(repeating: "..", count: here.count - shared) + target[shared...].map(String.init))
            .joined(separator: "/")
        #expect(ExtensionForkServers.hasForkServer(NotificationHost.shellCommand(relative)), "\(relative)")
    }
}

/// The host's link to a real fork server (the reference extension's).
@Suite struct ForkServerLinkTests {
    /// A child is the leader of its own process group by the time the server says it was forked, so the host's
    /// first signal to the group reaches it (the memory rule may kill a process at its first sample). The child
    /// also makes itself one, but it may not have run yet when the host reads the reply.
    @Test func aForkedChildCanBeSignalledAsAGroupAsSoonAsItIsSpawned() throws {
        let link = try ForkServerLink.start([TestSupport.referenceExtension], environment: [:], timeout: 10).get()
        defer { link.stop() }
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(null) }
        for _ in 0..<20 {
            var input: [Int32] = [-1, -1]
            try #require(pipe(&input) == 0)
            let pid = try link.spawn(onto: [input[0], null, null], environment: [:]).get()
            close(input[0])
            #expect(getpgid(pid) == pid)
            #expect(kill(-pid, SIGKILL) == 0, "errno \(errno)")
            // Missed, it would wait for its request: its end of input ends it.
            close(input[1])
            let ended = try #require(link.exit(of: pid, blocking: true))
            #expect(ended.signal == SIGKILL)
        }
    }
}
