import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// The built extension runs its SIP fetch on its one event-loop thread (`EventLoopGlobalExecutor`): after a fetch,
/// the process has its main thread, the thread reading its host, the event loop's and libdispatch's one thread for
/// the SIGUSR1 source (`CoreStopSignal`, on its overcommit queue), and no thread of the Swift cooperative pool
/// (libdispatch's workers of `com.apple.root.default-qos`).
@Suite(.serialized, .timeLimit(.minutes(2))) struct ExtensionThreadsTests {
    @Test func aFetchStartsNoThreadOfTheCooperativePool() throws {
        let root = try TestSupport.temporaryDirectory("nse-threads")
        let server = try SIPServerProcess(["--listen", "tcp:127.0.0.1:0", "--no-push"])
        let proxy = try #require(server.uris["tcp"])
        let bob = root + "/bob"
        #expect(
            try TestSupport.nse([
                "device", "init", bob, "--sip-account", "sip:bob@example.org", "--sip-proxy", proxy,
            ]).status == 0)
        #expect(try TestSupport.nse(["device", "register", bob]).status == 0)
        let sent = try TestSupport.nse([
            "send", "--proxy", proxy, "--from", "sip:alice@example.org", "--to", "sip:bob@example.org", "--text",
            "on my way", "--seal-to", bob, "--timeout", "10",
        ])
        #expect(sent.status == 0, "\(sent.stderr)")
        let callID = try #require(try JSON.parse(sent.stdout)["call_id"]?.stringValue)

        let running = try ExtensionUnderTest()
        defer { running.end() }
        running.request(
            container: bob,
            payload:
                #"{"aps":{"alert":{"loc-key":"IM_MSG","loc-args":["Alice"]},"mutable-content":1},"call-id":"\#(callID)"}"#
        )
        // The hello, then the content; the process then waits for the host to accept it.
        let lines = try running.lines(2)
        let content = try #require(lines.count == 2 ? lines[1] : nil)
        #expect(content["content"]?["aps"]?["alert"]?["body"] == "on my way", "\(content)")

        let tasks = "/proc/\(running.pid)/task"
        let names = try FileManager.default.contentsOfDirectory(atPath: tasks).map { tid in
            (try? String(contentsOfFile: "\(tasks)/\(tid)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        }
        #expect(names.contains { $0.hasPrefix("NIO-ELT") }, "\(names)")
        #expect(!names.contains { $0.hasSuffix("default-qos") }, "threads: \(names)")
        #expect(names.count <= 4, "threads: \(names)")
    }
}
