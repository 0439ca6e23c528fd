import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// The built extension runs its SIP fetch on its one event-loop thread (`EventLoopGlobalExecutor`): after a fetch,
/// the process has its main thread (which reads the host, also while the fetch runs: `HostLink`), the event loop's
/// and libdispatch's one thread for the SIGUSR1 source (`CoreStopSignal`, on its overcommit queue), and no thread of
/// the Swift cooperative pool (libdispatch's workers of `com.apple.root.default-qos`) nor one reading the host.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ExtensionThreadsTests {
    @Test func aFetchStartsNoThreadOfTheCooperativePool() throws {
        let (server, proxy, bob) = try registeredBob("nse-threads")
        defer { server.stop() }
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
        #expect(names.count <= 3, "threads: \(names)")
    }

    /// The host's expiry notice reaches a fetch still waiting for its message, read by the main thread while it
    /// waits for the event loop: the fetch ends on it, not at its own deadline (25/30 of the budget). Sent at once,
    /// the notice is read before the fetch sets its handler, which must find it waiting.
    @Test(arguments: [0.0, 0.5])
    func theExpiryNoticeEndsAFetchStillWaitingForItsMessage(after seconds: Double) throws {
        let (server, _, bob) = try registeredBob("nse-threads-expiry")
        defer { server.stop() }

        let running = try ExtensionUnderTest()
        defer { running.end() }
        // A Call-ID the server holds nothing for: the fetch registers and waits.
        running.request(
            container: bob,
            payload:
                #"{"aps":{"alert":{"loc-key":"IM_MSG","loc-args":["Alice"]},"mutable-content":1},"call-id":"none@x"}"#
        )
        if seconds > 0 {
            #expect(try running.lines(1).first?["type"] == "hello")
            Thread.sleep(forTimeInterval: seconds)
        }
        running.send(#"{"type":"time-will-expire"}"#)
        let content = try running.lines(2).last
        #expect(content?["type"] == "content", "\(String(describing: content))")
        #expect(
            content?["reason"]?.stringValue?.hasPrefix("time-will-expire") == true, "\(String(describing: content))")
    }

    /// A call offer in a fetched MESSAGE is reported to the host, and the extension waits for the answer on its main
    /// thread: its event loop meanwhile sits in `epoll_wait`, free, not in a lock's wait.
    @Test func aCallReportWaitsOffTheEventLoop() throws {
        let (server, proxy, bob) = try registeredBob("nse-threads-call")
        defer { server.stop() }
        let offer =
            #"{"type":"call","call_uuid":"6F1C6D3A-3F0B-4C59-9E55-0B7D4E0E8A11","from":"sip:alice@example.org","#
            + #""display_name":"Alice","video":false}"#
        let sealed = try TestSupport.nse(["seal", "--device", bob], stdin: offer)
        #expect(sealed.status == 0, "\(sealed.stderr)")
        let sent = try TestSupport.nse([
            "send", "--proxy", proxy, "--from", "sip:alice@example.org", "--to", "sip:bob@example.org", "--text",
            sealed.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "--timeout", "10",
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
        // The hello, then the report; the process then waits for the host's answer.
        let lines = try running.lines(2)
        #expect(lines.count == 2 ? lines[1]["type"] == "report-voip" : false, "\(lines)")
        Thread.sleep(forTimeInterval: 0.2)
        let tasks = "/proc/\(running.pid)/task"
        func read(_ path: String) -> String {
            (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        }
        let loop = try FileManager.default.contentsOfDirectory(atPath: tasks).first {
            read("\(tasks)/\($0)/comm").hasPrefix("NIO-ELT")
        }
        let waitsIn = read("\(tasks)/\(try #require(loop))/wchan")
        // "0" where the kernel hides where a thread waits.
        #expect(waitsIn == "0" || waitsIn.contains("epoll"), "the event loop waits in \(waitsIn)")

        running.send(#"{"type":"report-voip-result","ok":true,"error":null}"#)
        let content = try running.lines(3).last
        #expect(content?["reason"]?.stringValue?.hasPrefix("voip-escalated") == true, "\(String(describing: content))")
    }

    /// A SIP server over TCP and the device `bob` registered with it.
    private func registeredBob(_ label: String) throws -> (server: SIPServerProcess, proxy: String, bob: String) {
        let root = try TestSupport.temporaryDirectory(label)
        let server = try SIPServerProcess(["--listen", "tcp:127.0.0.1:0", "--no-push"])
        let proxy = try #require(server.uris["tcp"])
        let bob = root + "/bob"
        #expect(
            try TestSupport.nse([
                "device", "init", bob, "--sip-account", "sip:bob@example.org", "--sip-proxy", proxy,
            ]).status == 0)
        #expect(try TestSupport.nse(["device", "register", bob]).status == 0)
        return (server, proxy, bob)
    }
}
