import Foundation
import InMemoryLogging
import Logging
import NSESIP
import NSESIPServer
import Testing

enum TestError: Error, CustomStringConvertible {
    case timeout(String)
    case setup(String)

    var description: String {
        switch self {
        case .timeout(let what): return "timed out waiting for \(what)"
        case .setup(let what): return "setup failed: \(what)"
        }
    }
}

/// A fresh temporary directory removed by `cleanup()`.
final class TempDir: Sendable {
    let path: String

    init() throws {
        let base = NSTemporaryDirectory() + "nse-sipserver-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        path = base
    }

    func file(_ name: String) -> String { path + "/" + name }

    func cleanup() { try? FileManager.default.removeItem(atPath: path) }
}

/// Polls `condition` every 20 ms until it holds or `seconds` pass.
func eventually(_ what: String, seconds: Double = 10, _ condition: @Sendable () async throws -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    if try await condition() { return }
    throw TestError.timeout(what)
}

/// Runs `body` with a time limit.
func withTimeout<T: Sendable>(_ seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> T)
    async throws -> T
{
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            throw TestError.timeout(what)
        }
        let first = try await group.next()!
        group.cancelAll()
        return first
    }
}

/// Collects every MESSAGE a user agent receives.
final class MessageCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [SIPReceivedMessage] = []
    private var task: Task<Void, Never>?

    init(_ agent: SIPUserAgent) {
        let stream = agent.messages
        task = Task { [weak self] in
            for await message in stream {
                self?.append(message)
            }
        }
    }

    private func append(_ message: SIPReceivedMessage) {
        lock.lock()
        items.append(message)
        lock.unlock()
    }

    var messages: [SIPReceivedMessage] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }

    func waitForCount(_ n: Int, seconds: Double = 10) async throws -> [SIPReceivedMessage] {
        try await eventually("\(n) received MESSAGE(s)", seconds: seconds) { self.messages.count >= n }
        return messages
    }
}

/// Captures every log line (swift-log's `InMemoryLogHandler`, at trace level) so tests can check that bodies are
/// never logged.
struct LogCapture: Sendable {
    private let handler: InMemoryLogHandler

    init() {
        var handler = InMemoryLogHandler()
        handler.logLevel = .trace
        self.handler = handler
    }

    /// Each line as level, message and metadata (the logger's and the line's).
    var all: [String] {
        handler.entries.map { "\($0.level) \($0.message) \($0.metadata)" }
    }

    func logger(label: String = "test.sipserver") -> Logger {
        Logger(label: label) { _ in handler }
    }
}

let quietLogger = Logger(label: "test.quiet") { _ in SwiftLogNoOpLogHandler() }

/// A Python `http.server` recording each request as one JSON line (stands in for APNs).
final class PushReceiver: @unchecked Sendable {
    let process: Process
    let port: Int
    let logPath: String

    struct Record: Sendable {
        var method: String
        var path: String
        var headers: [String: String]
        var body: String
        var version: String
    }

    static let script = """
        import http.server, json, os, sys
        port_file, log_file, status = sys.argv[1], sys.argv[2], int(sys.argv[3])
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n).decode("utf-8")
                rec = {"method": "POST", "path": self.path, "version": self.request_version,
                       "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
                with open(log_file, "a") as f:
                    f.write(json.dumps(rec) + "\\n")
                out = b"" if status == 200 else json.dumps({"reason": "BadDeviceToken"}).encode()
                self.send_response(status)
                self.send_header("apns-id", "test-apns-id")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)
            def send_error(self, code, message=None, explain=None):
                # HTTP/2 prior-knowledge prefaces ("PRI * HTTP/2.0") end here with 505: note them.
                with open(log_file + ".refused", "a") as f:
                    f.write(self.raw_requestline.decode("latin-1").strip() + "\\n")
                super().send_error(code, message, explain)
            def log_message(self, *args):
                pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        with open(port_file + ".tmp", "w") as f:
            f.write(str(server.server_address[1]))
        os.rename(port_file + ".tmp", port_file)
        server.serve_forever()
        """

    init(directory: TempDir, status: Int = 200) async throws {
        let scriptPath = directory.file("push_receiver.py")
        let portPath = directory.file("push_port")
        logPath = directory.file("push_log.jsonl")
        try PushReceiver.script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: logPath, contents: Data())
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", scriptPath, portPath, logPath, String(status)]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        var found: Int? = nil
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: portPath, encoding: .utf8),
                let p = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
            {
                found = p
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        guard let found else {
            kill(process.processIdentifier, SIGKILL)
            throw TestError.setup("push receiver did not start")
        }
        port = found
    }

    var url: String { "http://127.0.0.1:\(port)" }

    var records: [Record] {
        guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                return nil
            }
            return Record(
                method: object["method"] as? String ?? "", path: object["path"] as? String ?? "",
                headers: object["headers"] as? [String: String] ?? [:], body: object["body"] as? String ?? "",
                version: object["version"] as? String ?? "")
        }
    }

    /// Request lines the HTTP/1.1 receiver refused (HTTP/2 prior-knowledge attempts).
    var refusedRequestLines: [String] {
        guard let text = try? String(contentsOfFile: logPath + ".refused", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").map(String.init)
    }

    func waitForRecords(_ n: Int, seconds: Double = 15) async throws -> [Record] {
        try await eventually("\(n) push request(s)", seconds: seconds) { self.records.count >= n }
        return records
    }

    /// SIGKILL (the test runner's blocked-signal mask may be inherited, so SIGTERM can stay pending), then a bounded wait.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning, Date() < deadline { usleep(10_000) }
    }
}

/// Starts a server, runs `body` with it and its bound addresses, then closes `agents` and shuts the server down,
/// whatever happens.
func withSIPServer<T>(
    _ configuration: SIPServerConfiguration, logger: Logger = quietLogger,
    closing agents: [SIPUserAgent] = [],
    _ body: (SIPServer, [SIPServerBoundAddress]) async throws -> T
) async throws -> T {
    let server = SIPServer(configuration: configuration, logger: logger)
    let result: Result<T, any Error>
    do {
        let addresses = try await server.start()
        result = .success(try await body(server, addresses))
    } catch {
        result = .failure(error)
    }
    for agent in agents { await agent.close() }
    await server.shutdown()
    return try result.get()
}

// MARK: - fixtures

let bobAOR = try! SIPURI(parsing: "sip:bob@example.org")
let aliceAOR = try! SIPURI(parsing: "sip:alice@example.org")
let bobInstance = "\"<urn:uuid:6f2b1c3a-0000-4000-8000-00000000b0b0>\""
let remoteToken = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
let voipToken = "0f0e0d0c0b0a09080706050403020100ffeeddccbbaa99887766554433221100"

let pushContactParameters: [SIPParameter] = [
    SIPParameter("pn-provider", "apns.dev"),
    SIPParameter("pn-prid", "\(remoteToken):remote&\(voipToken):voip"),
    SIPParameter("pn-param", "ABCD1234.org.example.nse.voip&remote"),
]

func fastUA() -> SIPUserAgent {
    SIPUserAgent(
        configuration: SIPUserAgentConfiguration(
            timers: SIPTimers(t1: .milliseconds(100), t2: .milliseconds(400)),
            tls: SIPTLSOptions(), connectTimeout: .seconds(5)),
        logger: quietLogger)
}

func tlsUA(cert: String) -> SIPUserAgent {
    SIPUserAgent(
        configuration: SIPUserAgentConfiguration(
            timers: SIPTimers(t1: .milliseconds(100), t2: .milliseconds(400)),
            tls: SIPTLSOptions(trust: .pinnedCertificateFile(cert), verifyHostname: false),
            connectTimeout: .seconds(5)),
        logger: quietLogger)
}

func registerDevice(
    _ agent: SIPUserAgent, proxy: SIPURI, expires: Int = 3600, password: String? = nil,
    push: Bool = true
) async throws -> SIPRegistrationResult {
    try await agent.register(
        aor: bobAOR, password: password, proxy: proxy, expires: expires,
        contactURIParameters: push ? pushContactParameters : [],
        contactHeaderParameters: [SIPParameter("+sip.instance", bobInstance)])
}

func sendFromAlice(
    _ agent: SIPUserAgent, proxy: SIPURI, body: String, callID: String,
    contentType: String = "text/plain"
) async throws -> SIPSendResult {
    try await agent.sendMessage(
        to: bobAOR, from: aliceAOR, proxy: proxy, contentType: contentType,
        body: Array(body.utf8), callID: callID)
}

func serverConfiguration(
    _ transports: [SIPTransportKind], push: PushReceiver? = nil,
    acceptTimeout: Duration = .milliseconds(500)
) -> SIPServerConfiguration {
    var c = SIPServerConfiguration(
        listeners: transports.map { SIPServerConfiguration.Listener(transport: $0, host: "127.0.0.1", port: 0) })
    c.messageAcceptTimeout = acceptTimeout
    c.timers = SIPTimers(t1: .milliseconds(100), t2: .milliseconds(400))
    if let push {
        c.push.apnsURL = push.url
        c.push.apnsDevelopmentURL = push.url
    } else {
        c.push.enabled = false
    }
    c.push.timeout = 5
    c.expirySweepInterval = .milliseconds(200)
    return c
}

extension Array where Element == SIPServerBoundAddress {
    func proxy(_ kind: SIPTransportKind) -> SIPURI { first { $0.transport == kind }!.proxyURI }
}

func count(_ events: [SIPServerEvent], _ predicate: (SIPServerEvent) -> Bool) -> Int {
    events.filter(predicate).count
}
