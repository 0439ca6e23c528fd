import Foundation
import NSEJSON
import NSETestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `--extension-process warm` with the built `nse run` and real extension processes: one process per device serves
/// the pushes of a sequence, its memory carries from push to push, and an extension that did not say it serves
/// several requests is started fresh every time. Also iOS 11's start rule (`nse device set --ios-version`).
@Suite struct WarmProcessTests {
    let root: String
    let device: String

    init() throws {
        root = try TestSupport.temporaryDirectory("nse-warm")
        device = root + "/bob"
        let created = try TestSupport.nse(["device", "init", device])
        #expect(created.status == 0, "\(created.stderr)")
    }

    /// `count` payloads sealed to the device, each with its own text; their paths.
    func sealedPayloads(_ count: Int) throws -> [String] {
        try (1...count).map { index in
            let plaintext =
                #"{"type":"message","from":"sip:alice@example.org","display_name":"Alice","text":"note \#(index)"}"#
            let sealed = try TestSupport.nse(["seal", "--device", device], stdin: plaintext)
            #expect(sealed.status == 0, "\(sealed.stderr)")
            let path = root + "/push-\(index).json"
            let envelope = sealed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            try TestSupport.write(
                #"{"aps":{"alert":{"loc-key":"IM_MSG"},"mutable-content":1},"enc":"\#(envelope)"}"#, to: path)
            return path
        }
    }

    /// Runs `nse run` on payloads; the results (several: one compact document per line; one: a pretty document).
    func run(_ options: [String], _ payloads: [String]) throws -> [JSON] {
        let run = try TestSupport.nse(["run", "--device", device] + options + payloads)
        #expect(run.status == 0, "\(run.stderr)")
        if payloads.count == 1 { return [try JSON.parse(run.stdout)] }
        return try run.stdout.split(separator: "\n").map { try JSON.parse(String($0)) }
    }

    @Test func theReferenceExtensionServesFivePushesInOneProcess() throws {
        let payloads = try sealedPayloads(5)
        let warm = try run(["--extension-process", "warm"], payloads)
        try #require(warm.count == 5)
        for (index, result) in warm.enumerated() {
            #expect(result["outcome"] == "rewritten", "\(result)")
            #expect(result["display"]?["body"]?.stringValue == "note \(index + 1)")
            #expect(result["extension"]?["process"]?.stringValue == (index == 0 ? "fresh" : "warm"))
            #expect(result["extension"]?["process_pushes"]?.intValue == Int64(index + 1))
            #expect(result["extension"]?["process_kept"] == true)
            // A warm process ends nothing: no exit status until it is evicted.
            #expect(result["extension"]?["exit"] == .object([:]))
        }
        // Its peak is the process's: it never goes down from push to push.
        let peaks = warm.compactMap { $0["extension"]?["peak_rss_kb"]?.intValue }
        #expect(peaks.count == 5 && peaks == peaks.sorted())
        let fresh = try run([], payloads)
        for result in fresh {
            #expect(result["outcome"] == "rewritten")
            #expect(result["extension"]?["process"] == "fresh" && result["extension"]?["process_pushes"] == 1)
            #expect(result["extension"]?["process_kept"] == false && result["extension"]?["exit"]?["code"] == 0)
        }
    }

    /// docs/examples/leaky_extension.py keeps what every request allocates. The memory limit is set from its first
    /// push's footprint, so that two leaks fit and three do not whatever Python's own size on this machine.
    @Test func aLeakKillsALaterPushOfAWarmProcessOnly() throws {
        let payloads = try sealedPayloads(4)
        let leakMegabytes = 12
        let leaky =
            "env LEAK_MB=\(leakMegabytes) python3 " + TestSupport.packageRoot + "/docs/examples/leaky_extension.py"
        let probe = try run(["--extension", leaky], [payloads[0]])
        let firstPeak = try #require(probe.first?["extension"]?["peak_footprint_kb"]?.intValue)
        let limitMegabytes = Double(firstPeak) / 1024 + Double(leakMegabytes) * 1.5
        let options = ["--extension", leaky, "--memory-limit", String(format: "%.1f", limitMegabytes)]

        let warm = try run(options + ["--extension-process", "warm"], payloads)
        try #require(warm.count == 4)
        #expect(warm[0]["outcome"] == "rewritten" && warm[1]["outcome"] == "rewritten", "\(warm)")
        #expect(warm[1]["display"]?["body"]?.stringValue?.hasPrefix("push 2 served by process") == true)
        // The same process served both.
        let process = { (result: JSON) in result["display"]?["body"]?.stringValue?.split(separator: " ").last }
        #expect(process(warm[0]) != nil && process(warm[0]) == process(warm[1]))
        // The third push finds the process over the limit: killed as jetsam does, the original shown.
        #expect(warm[2]["outcome"] == "original")
        #expect(warm[2]["reason"]?.stringValue?.hasPrefix("memory-limit:") == true)
        #expect(warm[2]["extension"]?["killed"] == "memory" && warm[2]["extension"]?["process"] == "warm")
        #expect(warm[2]["extension"]?["process_pushes"] == 3 && warm[2]["extension"]?["process_kept"] == false)
        #expect(warm[2]["display"]?["body"] == "You have received a message")
        // The next push starts a new process, which serves it.
        #expect(warm[3]["outcome"] == "rewritten" && warm[3]["extension"]?["process"] == "fresh")
        #expect(process(warm[3]) != process(warm[0]))

        // A fresh process per push never accumulates: every push is served.
        let fresh = try run(options, payloads)
        #expect(fresh.allSatisfy { $0["outcome"] == "rewritten" }, "\(fresh)")
    }

    @Test func anExtensionThatDoesNotSayItServesSeveralRequestsIsAlwaysFresh() throws {
        let payloads = try sealedPayloads(3)
        let shout = TestSupport.packageRoot + "/docs/examples/shout_extension.py"
        let results = try run(["--extension", shout, "--extension-process", "warm"], payloads)
        #expect(results.count == 3)
        for result in results {
            #expect(result["outcome"] == "rewritten", "\(result)")
            #expect(result["extension"]?["process"] == "fresh" && result["extension"]?["process_pushes"] == 1)
            #expect(result["extension"]?["process_kept"] == false)
        }
    }

    @Test func belowIOS12AnExtensionHasOneSecondToStart() throws {
        let payload = try sealedPayloads(1)
        // Silent for 1.5 s, then a content: fine on iOS 12 and later.
        let slow = root + "/slow.sh"
        try TestSupport.write(
            """
            #!/bin/sh
            sleep 1.5
            read -r request
            echo '{"type":"content","content":{"aps":{"alert":{"body":"late but here"}}}}'
            read -r rest
            """, to: slow)
        chmod(slow, 0o755)
        // The same, but it says hello at once: that is an answer.
        let greeting = root + "/greeting.sh"
        try TestSupport.write(
            """
            #!/bin/sh
            echo '{"type":"hello","protocol":2,"requests":"one"}'
            sleep 1.5
            read -r request
            echo '{"type":"content","content":{"aps":{"alert":{"body":"late but here"}}}}'
            read -r rest
            """, to: greeting)
        chmod(greeting, 0o755)
        #expect(try run(["--extension", slow], payload).first?["outcome"] == "rewritten")

        let set = try TestSupport.nse(["device", "set", device, "--ios-version", "11.4"])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try JSON.parse(set.stdout)["ios_version"] == "11.4")
        let killed = try #require(try run(["--extension", slow], payload).first)
        #expect(killed["outcome"] == "original" && killed["extension"]?["killed"] == "start", "\(killed)")
        #expect(killed["reason"]?.stringValue?.hasPrefix("slow-start:") == true)
        #expect(killed["display"]?["body"] == "You have received a message")
        #expect(try run(["--extension", greeting], payload).first?["outcome"] == "rewritten")
        // The reference extension says hello as it starts.
        #expect(try run([], payload).first?["outcome"] == "rewritten")
    }

    @Test func badOptionsAreOneLineUsageErrors() throws {
        for (arguments, message) in [
            (["run", "--extension-process", "lukewarm"], "--extension-process must be fresh or warm"),
            (["run", "--warm-idle", "0"], "--warm-idle must be more than 0 and at most 86400 seconds"),
            (["device", "set", device, "--ios-version", "9.3"], "--ios-version 9.3: expected a release"),
            (["device", "set", device, "--ios-version", "eleven"], "--ios-version eleven: expected a release"),
        ] {
            let run = try TestSupport.nse(arguments, stdin: "{}")
            #expect(run.status == 64, "\(arguments): \(run.stderr)")
            #expect(run.stderr.contains(message), "\(arguments): \(run.stderr)")
            #expect(run.stdout.isEmpty)
        }
    }
}
