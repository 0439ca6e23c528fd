import Foundation
import NSEDevice
import NSEJSON
import NSETestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `nse serve --extension-process warm` (the built binary): one extension process per device serves the pushes; one
/// killed between pushes, or idle for longer than `--warm-idle`, is replaced by a fresh one; SIGTERM evicts it.
@Suite struct WarmServeTests {
    @Test func aWarmProcessServesUntilKilledOrIdleAndGoesWithTheServer() async throws {
        let root = try TestSupport.temporaryDirectory("nse-serve-warm")
        #expect(try TestSupport.nse(["device", "init", root + "/bob"]).status == 0)
        let token = try Device.open(at: root + "/bob").config.remoteToken
        // The leaky example with nothing to leak: its alert names the process that served the push.
        let leaky = "env LEAK_MB=0 python3 " + TestSupport.packageRoot + "/docs/examples/leaky_extension.py"
        let server = try ServeProcess([
            "--listen", "127.0.0.1:0", "--device", root + "/bob", "--extension", leaky, "--extension-process", "warm",
            "--warm-idle", "3",
        ])
        defer { server.stop() }

        var served = 0
        func push() async throws -> (pid: Int32, process: String, pushes: Int64) {
            served += 1
            return try await Self.push(server, token: token, results: served)
        }
        /// Whether `pid` is a live process (a zombie is a process nobody reaped: it counts).
        func exists(_ pid: Int32) -> Bool { FileManager.default.fileExists(atPath: "/proc/\(pid)") }

        let first = try await push()
        #expect(first.process == "fresh" && first.pushes == 1)
        let second = try await push()
        #expect(second.pid == first.pid && second.process == "warm" && second.pushes == 2, "\(first) \(second)")
        // Killed from outside while idle: the next push gets a new process.
        kill(first.pid, SIGKILL)
        let third = try await push()
        #expect(third.pid != first.pid && third.process == "fresh" && third.pushes == 1)
        // Idle for longer than --warm-idle: evicted (killed and reaped), and the next push starts another.
        try await Task.sleep(nanoseconds: 3_500_000_000)
        let fourth = try await push()
        #expect(fourth.pid != third.pid && fourth.process == "fresh")
        #expect(!exists(third.pid) && !exists(first.pid))
        // SIGTERM: the server exits 0 and takes its warm process with it.
        #expect(server.stop() == 0)
        #expect(!exists(fourth.pid))
    }

    /// Pushes once to `token` and waits for its `results`th result: which process served it (the leaky example's
    /// alert names it), and how.
    static func push(_ server: ServeProcess, token: String, results count: Int) async throws
        -> (pid: Int32, process: String, pushes: Int64)
    {
        let answer = try await runOffPool(
            "/usr/bin/curl",
            [
                "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--http2-prior-knowledge", "--max-time", "30", "-H",
                "apns-topic: org.example.app", "--data-binary", #"{"aps":{"alert":"hello","mutable-content":1}}"#,
                server.url + "/3/device/" + token,
            ], timeout: 40)
        #expect(answer.stdout == "200", "\(answer.stderr)")
        var results: [JSON] = []
        for _ in 0..<300 {
            let output = try await runOffPool(
                "/usr/bin/curl",
                ["-sS", "--max-time", "10", "\(server.url)/v1/devices/\(token)/notifications?limit=1000"],
                timeout: 20)
            results = (try? JSON.parse(output.stdout, options: .init(requireObject: false)))?.arrayValue ?? []
            if results.count >= count { break }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        let newest = try #require(
            results.max { ($0["recorded_at"]?.intValue ?? 0) < ($1["recorded_at"]?.intValue ?? 0) })
        #expect(newest["outcome"] == "rewritten", "\(newest)")
        let body = newest["display"]?["body"]?.stringValue ?? ""
        let pid = try #require(body.split(separator: " ").last.flatMap { Int32($0) }, "\(body)")
        return (
            pid, newest["extension"]?["process"]?.stringValue ?? "",
            newest["extension"]?["process_pushes"]?.intValue ?? 0
        )
    }

    /// A device's process idle for longer than `--warm-idle` is evicted by another device's push too, not only by its
    /// own next one (the pool looks at the others at most every eighth of the idle time).
    @Test func anotherDevicesPushEvictsAProcessIdleTooLong() async throws {
        let root = try TestSupport.temporaryDirectory("nse-serve-warm-others")
        for name in ["bob", "carol"] {
            #expect(try TestSupport.nse(["device", "init", root + "/" + name]).status == 0)
        }
        let bob = try Device.open(at: root + "/bob").config.remoteToken
        let carol = try Device.open(at: root + "/carol").config.remoteToken
        let leaky = "env LEAK_MB=0 python3 " + TestSupport.packageRoot + "/docs/examples/leaky_extension.py"
        let server = try ServeProcess([
            "--listen", "127.0.0.1:0", "--devices", root, "--extension", leaky, "--extension-process", "warm",
            "--warm-idle", "1",
        ])
        defer { server.stop() }
        let first = try await Self.push(server, token: bob, results: 1)
        #expect(first.process == "fresh")
        #expect(FileManager.default.fileExists(atPath: "/proc/\(first.pid)"))
        try await Task.sleep(nanoseconds: 1_400_000_000)
        let other = try await Self.push(server, token: carol, results: 1)
        #expect(other.pid != first.pid)
        #expect(!FileManager.default.fileExists(atPath: "/proc/\(first.pid)"), "bob's idle process is still there")
    }
}
