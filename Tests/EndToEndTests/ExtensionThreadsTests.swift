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

        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestSupport.referenceExtension)
        let (input, output) = (Pipe(), Pipe())
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
        let deadline = Int64(Date().timeIntervalSince1970 * 1000) + 10_000
        let payload =
            #"{"aps":{"alert":{"loc-key":"IM_MSG","loc-args":["Alice"]},"mutable-content":1},"call-id":"\#(callID)"}"#
        let request =
            #"{"type":"request","protocol":1,"request_id":"r-1","push_type":"alert","container":"\#(bob)","#
            + #""budget_ms":10000,"deadline_unix_ms":\#(deadline),"payload":\#(payload)}"# + "\n"
        input.fileHandleForWriting.write(Data(request.utf8))
        // The hello, then the content; the process then waits for the host to accept it.
        var received = Data()
        let readUntil = Date().addingTimeInterval(15)
        while received.split(separator: 0x0A).count < 2 || received.last != 0x0A, Date() < readUntil {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            received.append(chunk)
        }
        let lines = received.split(separator: 0x0A).map { String(decoding: $0, as: UTF8.self) }
        let content = try JSON.parse(lines.count > 1 ? lines[1] : "")
        #expect(content["content"]?["aps"]?["alert"]?["body"] == "on my way", "\(content)")

        let tasks = "/proc/\(process.processIdentifier)/task"
        let names = try FileManager.default.contentsOfDirectory(atPath: tasks).map { tid in
            (try? String(contentsOfFile: "\(tasks)/\(tid)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        }
        #expect(names.contains { $0.hasPrefix("NIO-ELT") }, "\(names)")
        #expect(!names.contains { $0.hasSuffix("default-qos") }, "threads: \(names)")
        #expect(names.count <= 4, "threads: \(names)")
    }
}
