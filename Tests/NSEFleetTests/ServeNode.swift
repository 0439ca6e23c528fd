import Foundation
import NSEJSON
import NSETestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// One `nse serve` node (the built binary) on a free loopback port, serving one device folder, on a fleet's
/// database; stopped with SIGTERM (killed when a test forgot). Its log is kept in a file.
final class ServeNode: @unchecked Sendable {
    let command: CommandProcess
    let name: String
    let stderrFile: String

    /// - Parameter extra: more `nse serve` arguments (an extension, a lease).
    init(name: String, device: String, database: String, extra: [String] = []) throws {
        self.name = name
        stderrFile = try TestSupport.temporaryDirectory("nse-fleet-node") + "/stderr"
        _ = FileManager.default.createFile(atPath: stderrFile, contents: nil)
        command = try CommandProcess(
            ["serve", "--listen", "127.0.0.1:0", "--device", device, "--database", database, "--node-name", name]
                + extra,
            stderr: FileHandle(forWritingAtPath: stderrFile) ?? .nullDevice, what: "nse serve \(name)")
        guard command.firstLine["listening"]?.stringValue != nil else {
            throw TestSupport.SetupError(description: "nse serve \(name) did not start: \(log)")
        }
    }

    var process: Process { command.process }
    var url: String { command.url }

    @discardableResult func stop() -> (status: Int32, seconds: Double) { command.stop() }

    /// What this node logged on stderr so far.
    var log: String { (try? String(contentsOfFile: stderrFile, encoding: .utf8)) ?? "" }
}

/// One HTTP exchange through curl: the status and the body.
struct Exchange {
    var status: Int
    var body: String
    var json: JSON? { try? JSON.parse(Array(body.utf8), options: JSONParseOptions(requireObject: false)) }

    /// `curl` with `arguments` (the URL among them), bounded to 20 s.
    static func curl(_ arguments: [String]) throws -> Exchange {
        let output = try TestSupport.run(
            "/usr/bin/curl", ["-sS", "--max-time", "20", "-w", "\n%{http_code}"] + arguments, timeout: 30)
        guard let split = output.stdout.lastIndex(of: "\n"), let status = Int(output.stdout[split...].dropFirst())
        else { throw TestSupport.SetupError(description: "curl \(arguments): \(output.stderr)") }
        return Exchange(status: status, body: String(output.stdout[..<split]))
    }

    static func get(_ url: String) throws -> Exchange { try curl([url]) }

    static func send(_ method: String, _ url: String, json: String? = nil) throws -> Exchange {
        try curl(["-X", method] + (json.map { ["-H", "content-type: application/json", "-d", $0] } ?? []) + [url])
    }

    /// An alert push to `token`, as a provider sends it (HTTP/1.1, no authentication: `nse serve` runs without).
    static func push(_ node: ServeNode, token: String, topic: String = "org.example.app") throws -> Exchange {
        try curl([
            "-H", "apns-topic: \(topic)", "-H", "apns-push-type: alert", "-d", #"{"aps":{"alert":"hello"}}"#,
            "\(node.url)/3/device/\(token)",
        ])
    }
}

/// `GET /v1/events` read by curl in the background for a bounded time, into a file.
final class EventCapture: @unchecked Sendable {
    let process = Process()
    let file: String

    /// Starts reading `url` for `seconds`; returns once the stream's opening comment has arrived.
    init(_ url: String, seconds: Int) throws {
        file = try TestSupport.temporaryDirectory("nse-fleet-events") + "/events"
        _ = FileManager.default.createFile(atPath: file, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-sN", "--max-time", String(seconds), url]
        process.standardOutput = FileHandle(forWritingAtPath: file)
        process.standardError = FileHandle.nullDevice
        try process.run()
        for _ in 0..<100 where !text.contains(": nse serve events") { usleep(50_000) }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    var text: String { (try? String(contentsOfFile: file, encoding: .utf8)) ?? "" }

    /// Waits for curl's end (its --max-time); everything the stream carried.
    func finish() -> String {
        process.waitUntilExit()
        return text
    }
}
