import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// Nothing lost in the App Group store, end to end with the built binaries: a message is answered 200 only once it
/// is durably kept, and one shown is never kept and shown again (issue #10, defects 4 and 8).
@Suite(.serialized, .timeLimit(.minutes(5))) struct StoreDurabilityTests {
    let root: String
    init() throws { root = try TestSupport.temporaryDirectory("nse-store-e2e") }

    func makeDevice(_ path: String, proxy: String) throws {
        let created = try TestSupport.nse(
            ["device", "init", path, "--filtering", "--sip-account", "sip:bob@example.org", "--sip-proxy", proxy])
        #expect(created.status == 0, "\(created.stderr)")
        let registered = try TestSupport.nse(["device", "register", path])
        #expect(registered.status == 0, "\(registered.stderr)")
    }

    func send(_ text: String, via proxy: String, to device: String) throws -> String {
        let sent = try TestSupport.nse([
            "send", "--proxy", proxy, "--from", "sip:alice@example.org", "--to", "sip:bob@example.org", "--text", text,
            "--seal-to", device, "--display-name", "Alice", "--timeout", "10",
        ])
        #expect(sent.status == 0, "\(sent.stderr)")
        return try JSON.parse(sent.stdout)["call_id"]?.stringValue ?? ""
    }

    func push(_ callID: String) -> String {
        #"{"aps":{"alert":{"loc-key":"IM_MSG","loc-args":["Alice"]},"mutable-content":1},"call-id":"\#(callID)"}"#
    }

    /// Runs `nse run` once per Call-ID, all at once, as iOS would for pushes arriving together.
    func runConcurrently(_ device: String, _ callIDs: [String], budget: String) throws -> [(String, JSON)] {
        let outputs = try TestSupport.nseAtOnce(
            ["run", "--device", device, "--budget", budget], stdins: callIDs.map(push))
        return try zip(callIDs, outputs).map { ($0, try JSON.parse($1)) }
    }

    @Test func concurrentFetchesShowEveryMessageExactlyOnce() throws {
        let server = try SIPServerProcess(["--listen", "tcp:127.0.0.1:0", "--no-push", "--accept-timeout", "0.3"])
        let proxy = try #require(server.uris["tcp"])
        let bob = root + "/bob"
        try makeDevice(bob, proxy: proxy)
        var texts: [String: String] = [:]
        var order: [String] = []
        for index in 0..<40 {
            let callID = try send("message \(index)", via: proxy, to: bob)
            texts[callID] = "message \(index)"
            order.append(callID)
        }
        // 20 extensions at once, each pushed for one of the first 20: each REGISTER flushes every held message, so
        // the processes receive each other's messages.
        var shown: [String: Int] = [:]
        for (callID, result) in try runConcurrently(bob, Array(order.prefix(20)), budget: "15") {
            #expect(result["outcome"] == "rewritten", "\(callID): \(result["reason"] ?? .null)")
            #expect(result["display"]?["body"] == .string(texts[callID] ?? ""))
            if let body = result["display"]?["body"]?.stringValue, result["outcome"] == "rewritten" {
                shown[body, default: 0] += 1
            }
        }
        // The other 20 are still somewhere (held by the server or kept in the store): each is shown once. The first
        // 20 pushed again are shown by nobody: they are neither held nor kept any more.
        for (callID, result) in try runConcurrently(bob, Array(order.suffix(20)) + Array(order.prefix(20)), budget: "2")
        {
            if result["outcome"] == "rewritten", let body = result["display"]?["body"]?.stringValue {
                shown[body, default: 0] += 1
                #expect(body == texts[callID])
            } else {
                #expect(order.prefix(20).contains(callID), "\(callID) was lost: \(result["reason"] ?? .null)")
            }
        }
        #expect(shown.count == 40)
        #expect(
            shown.values.allSatisfy { $0 == 1 }, "shown more than once: \(shown.filter { $0.value > 1 }.keys.sorted())")
    }

    @Test func aFullContainerRefusesWhatItCannotKeep() throws {
        guard let small = try SmallFileSystem.mount(kilobytes: 1024) else {
            Issue.record("needs root to mount a small tmpfs: the full-container check did not run")
            return
        }
        defer { withExtendedLifetime(small) {} }  // mounted until the end of the test
        let server = try SIPServerProcess(["--listen", "tcp:127.0.0.1:0", "--no-push", "--accept-timeout", "0.3"])
        let proxy = try #require(server.uris["tcp"])
        let bob = small.path + "/bob"
        try makeDevice(bob, proxy: proxy)
        let first = try send("the pushed one", via: proxy, to: bob)
        let others = [
            try send("kept by the server 1", via: proxy, to: bob),
            try send("kept by the server 2", via: proxy, to: bob),
        ]
        let filler = small.fill()
        let output = try TestSupport.nse(["run", "--device", bob, "--budget", "5"], stdin: push(first))
        let result = try JSON.parse(output.stdout)
        // Its own message is shown; the others could not be kept, so they were refused (500), not acknowledged.
        #expect(result["outcome"] == "rewritten", "\(result["reason"] ?? .null)")
        #expect(result["display"]?["body"] == "the pushed one")
        let info = result["extension"]?["info"]
        #expect(info?["stored_for_later"] == 0)
        #expect(info?["store_error"]?.stringValue?.isEmpty == false)
        #expect(info?["store_error"]?.stringValue?.contains("kept by") == false)
        // With room again, each refused message is still there to fetch: nothing was lost.
        try FileManager.default.removeItem(atPath: filler)
        for (callID, text) in zip(others, ["kept by the server 1", "kept by the server 2"]) {
            let again = try JSON.parse(
                try TestSupport.nse(["run", "--device", bob, "--budget", "5"], stdin: push(callID)).stdout)
            #expect(again["outcome"] == "rewritten", "\(again["reason"] ?? .null)")
            #expect(again["display"]?["body"] == .string(text))
        }
    }

    /// The extension lets go of a fetched message only once its host says it keeps the content (`content-accepted`):
    /// a host that reads the content and dies before keeping it (a server crash) leaves the message to the next push.
    @Test func aMessageIsLetGoOnlyOnceTheHostKeepsItsContent() throws {
        let server = try SIPServerProcess(["--listen", "tcp:127.0.0.1:0", "--no-push"])
        let proxy = try #require(server.uris["tcp"])
        let bob = root + "/bob-accept"
        try makeDevice(bob, proxy: proxy)
        let callID = try send("see you at 8", via: proxy, to: bob)

        // A host that reads the content, then goes away without accepting it.
        let extensionProcess = try ExtensionUnderTest()
        extensionProcess.request(container: bob, payload: push(callID))
        // Its first line is its hello (protocol version 2); the content follows.
        let lines = try extensionProcess.lines(2)
        #expect(lines.first?["type"] == "hello")
        let content = try #require(lines.count == 2 ? lines[1] : nil)
        #expect(content["type"] == "content")
        #expect(content["content"]?["aps"]?["alert"]?["body"] == "see you at 8")
        extensionProcess.end()

        // The next push for it finds the message in the App Group store, and this host keeps the content.
        let again = try JSON.parse(
            try TestSupport.nse(["run", "--device", bob, "--budget", "5"], stdin: push(callID)).stdout)
        #expect(again["outcome"] == "rewritten", "\(again["reason"] ?? .null)")
        #expect(again["display"]?["body"] == "see you at 8")
        #expect(again["extension"]?["info"]?["from_store"] == true)
        // Accepted this time: it is not shown a third time.
        let third = try JSON.parse(
            try TestSupport.nse(["run", "--device", bob, "--budget", "1"], stdin: push(callID)).stdout)
        #expect(third["outcome"] != "rewritten")
    }
}
