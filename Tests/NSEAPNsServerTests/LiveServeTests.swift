import Foundation
import Logging
import NSEAPNsServer
import NSEDevice
import NSEJSON
import NSETestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A running `nse serve` (the built binary), stopped with SIGTERM.
final class ServeProcess: @unchecked Sendable {
    let command: CommandProcess

    init(_ arguments: [String]) throws {
        command = try CommandProcess(["serve"] + arguments, timeout: 60, what: "nse serve")
    }

    var process: Process { command.process }
    var listening: JSON { command.firstLine }
    var url: String { command.url }

    /// SIGTERM, then waits (bounded) for a graceful exit; the exit status.
    @discardableResult func stop() -> Int32 { command.stop(grace: 30).status }
}

/// `PushServer` in this process (the same code `nse serve` runs), stopped by cancelling its task, which
/// still finishes and records every accepted push.
final class InProcessServer: @unchecked Sendable {
    let service: PushService
    let listening: JSON
    private let task: Task<Void, any Error>

    init(
        _ configuration: PushServerConfiguration, device: Device, concurrency: Int = 4, queue: Int = 64,
        extensionCommand: [String] = [TestSupport.referenceExtension]
    ) async throws {
        // Cancelling the task is an abrupt stop for Hummingbird, which logs it as errors: keep the test output quiet.
        var logger = Logger(label: "nse.serve.test")
        logger.logLevel = .critical
        let service = PushService(
            devices: [device], concurrency: concurrency, queueCapacity: queue,
            extensionCommand: extensionCommand, logger: logger)
        self.service = service
        let (stream, continuation) = AsyncStream.makeStream(of: JSON.self)
        task = Task {
            defer { continuation.finish() }
            try await PushServer.run(configuration, service: service, logger: logger) { urls in
                continuation.yield(.object(JSONObject(urls.map { (key: $0.0, value: JSON.string($0.1)) })))
            }
        }
        let timeout = Task {
            try await Task.sleep(nanoseconds: 30_000_000_000)
            continuation.finish()
        }
        var first: JSON = .null
        for await line in stream {
            first = line
            break
        }
        timeout.cancel()
        listening = first
    }

    var url: String { listening["listening"]?.stringValue ?? "" }

    func stop() async {
        task.cancel()
        _ = await task.result
    }
}

/// Every result recorded of a device, newest first (read after the server stopped): in its folder's
/// `.nse-results.db` when its folder was served (`--devices`), else in its own `notifications/results.db`.
func recordedResults(_ directory: String) throws -> [JSON] {
    var logger = Logger(label: "nse.serve.test")
    logger.logLevel = .critical
    let store = ResultStore(logger: logger)
    let device = try Device.open(at: directory)
    let folder = (device.directory as NSString).deletingLastPathComponent
    if FileManager.default.fileExists(atPath: ResultStore.folderPath(folder)) { store.serve(folders: [folder]) }
    return try store.results(for: device, limit: 1_000_000)
}

struct LiveTestError: Error, CustomStringConvertible { var description: String }

/// Runs a program on a Dispatch thread, so a blocking wait never holds one of the few cooperative threads the
/// in-process server needs.
func runOffPool(_ executable: String, _ arguments: [String], timeout: TimeInterval) async throws -> TestSupport.Output {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result { try TestSupport.run(executable, arguments, timeout: timeout) })
        }
    }
}

/// The server on loopback, driven by the real curl: h2c with prior knowledge, HTTP/1.1, h2 over TLS, and load.
@Suite(.serialized) struct LiveServeTests {
    let root: String
    let device: Device
    let token: String
    let payloadPath: String

    init() throws {
        root = try TestSupport.temporaryDirectory("nse-serve-live")
        let created = try TestSupport.nse([
            "device", "init", root + "/bob", "--bundle-id", "org.example.app", "--filtering",
        ])
        #expect(created.status == 0, "\(created.stderr)")
        device = try Device.open(at: root + "/bob")
        token = device.config.remoteToken
        let plaintext = try String(
            contentsOfFile: TestSupport.fixtures + "/plaintexts/alice-lunch.json", encoding: .utf8)
        let sealed = try TestSupport.nse(["seal", "--device", root + "/bob"], stdin: plaintext)
        #expect(sealed.status == 0, "\(sealed.stderr)")
        let envelope = sealed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        payloadPath = root + "/payload.json"
        try TestSupport.write(
            #"{"aps":{"alert":{"loc-key":"IM_MSG","loc-args":["Alice"]},"sound":"msg.caf","mutable-content":1,"badge":1},"from-uri":"sip:alice@example.org","display-name":"Alice","call-id":"2a3b4c5d@192.0.2.10","enc":"\#(envelope)"}"#,
            to: payloadPath)
    }

    /// One push with curl; status, HTTP version and apns-id.
    func push(_ base: String, _ options: [String]) async throws -> (status: String, version: String, apnsID: String) {
        let output = try await runOffPool(
            "/usr/bin/curl",
            ["-sS", "-o", "/dev/null", "-w", "%{http_code} %{http_version} %header{apns-id}", "--max-time", "30"]
                + options + [
                    "-H", "apns-topic: org.example.app", "-H", "apns-push-type: alert", "--data-binary",
                    "@" + payloadPath,
                    base + "/3/device/" + token,
                ], timeout: 40)
        let parts = output.stdout.split(separator: " ").map(String.init)
        #expect(parts.count == 3, "curl: \(output.stdout) \(output.stderr)")
        return (parts.first ?? "", parts.count > 1 ? parts[1] : "", parts.count > 2 ? parts[2] : "")
    }

    /// The recorded results, read back with curl until `count` are there (bounded).
    func results(_ base: String, count: Int, options: [String] = []) async throws -> [JSON] {
        var results: [JSON] = []
        for _ in 0..<300 {
            let output = try await runOffPool(
                "/usr/bin/curl",
                ["-sS", "--max-time", "10"] + options + ["\(base)/v1/devices/\(token)/notifications?limit=1000"],
                timeout: 20)
            results = (try? JSON.parse(output.stdout, options: .init(requireObject: false)))?.arrayValue ?? []
            if results.count >= count { break }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        return results
    }

    @Test func sealedPushOverH2cHTTP1AndTLSIsRewrittenAndReadBack() async throws {
        let server = try await InProcessServer(
            PushServerConfiguration(host: "127.0.0.1", port: 0, h2cPort: 0), device: device)
        #expect(server.url.hasPrefix("http://127.0.0.1:"))
        let h2c = try #require(server.listening["h2c"]?.stringValue)
        #expect(!server.url.hasSuffix(":0") && !h2c.hasSuffix(":0"))

        let overH2c = try await push(h2c, ["--http2-prior-knowledge"])
        #expect(overH2c.status == "200" && overH2c.version == "2")
        let overHTTP1 = try await push(server.url, ["--http1.1"])
        #expect(overHTTP1.status == "200" && overHTTP1.version == "1.1")
        // The main listener also takes HTTP/2 with prior knowledge (the preface decides).
        let overMainH2c = try await push(server.url, ["--http2-prior-knowledge"])
        #expect(overMainH2c.status == "200" && overMainH2c.version == "2")

        let files = try TestSupport.selfSignedCertificate(in: root)
        let (certificate, key) = (files.certificate, files.key)
        let tlsServer = try await InProcessServer(
            PushServerConfiguration(host: "127.0.0.1", port: 0, tlsCertificatePath: certificate, tlsKeyPath: key),
            device: device)
        #expect(tlsServer.url.hasPrefix("https://127.0.0.1:"))
        let overTLS = try await push(tlsServer.url, ["--http2", "--cacert", certificate])
        #expect(overTLS.status == "200" && overTLS.version == "2")
        let tlsHTTP1 = try await push(tlsServer.url, ["--http1.1", "--cacert", certificate])
        #expect(tlsHTTP1.status == "200" && tlsHTTP1.version == "1.1")

        let ids = [overH2c.apnsID, overHTTP1.apnsID, overMainH2c.apnsID, overTLS.apnsID, tlsHTTP1.apnsID]
        let recorded = try await results(server.url, count: 5)
        #expect(Set(recorded.compactMap { $0["apns_id"]?.stringValue }) == Set(ids))
        for result in recorded {
            #expect(result["outcome"]?.stringValue == "rewritten", "\(result.serialized())")
            #expect(result["display"]?["title"]?.stringValue == "Alice")
            #expect(result["display"]?["body"]?.stringValue == "Lunch at 1?")
            #expect(result["token"]?.stringValue == token.lowercased())
        }
        #expect(try await results(tlsServer.url, count: 5, options: ["--http2", "--cacert", certificate]).count == 5)
        #expect(try await results(server.url, count: 5, options: ["--http2-prior-knowledge"]).count == 5)
        await server.stop()
        await tlsServer.stop()
    }

    /// 200 connections over HTTP/1.1, or 200 streams multiplexed on one h2 (TLS) connection. (Not h2c: curl 7.88
    /// cannot reuse a prior-knowledge connection, curl/curl#10634, fixed in 8.0.)
    @Test(arguments: ["--http1.1", "--http2"])
    func twoHundredPushesAtOnceAreAcceptedOrRefusedAndNoneIsLost(_ protocolOption: String) async throws {
        var configuration = PushServerConfiguration(host: "127.0.0.1", port: 0)
        var tlsOptions: [String] = []
        if protocolOption == "--http2" {
            let files = try TestSupport.selfSignedCertificate(in: root)
            configuration.tlsCertificatePath = files.certificate
            configuration.tlsKeyPath = files.key
            tlsOptions = ["--cacert", files.certificate]
        }
        let server = try await InProcessServer(configuration, device: device, concurrency: 2, queue: 8)
        let config = root + "/load.curlrc"
        var lines: [String] = []
        let pushes = 200
        for _ in 0..<pushes {
            lines.append("url = \"\(server.url)/3/device/\(token)\"")
            lines.append("output = \"/dev/null\"")
        }
        try TestSupport.write(lines.joined(separator: "\n") + "\n", to: config)
        let output = try await runOffPool(
            "/usr/bin/curl",
            ["-sS", protocolOption] + tlsOptions + [
                "--parallel", "--parallel-max", "\(pushes)", "--max-time", "60", "-K", config, "-w",
                "%{http_code} %{http_version} %header{apns-id}\\n",
                "-H", "apns-topic: org.example.app", "--data-binary", "@" + payloadPath,
            ], timeout: 120)
        let answers = output.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        if protocolOption == "--http2" { #expect(output.stdout.contains("200 2") || output.stdout.contains("429 2")) }
        #expect(answers.count == pushes, "\(output.stderr)")
        let accepted = answers.filter { $0.first == "200" }.compactMap { $0.count > 2 ? $0[2] : nil }
        let refused = answers.filter { $0.first == "429" }.count
        #expect(accepted.count + refused == pushes)
        #expect(!accepted.isEmpty)
        print("load \(protocolOption): \(accepted.count) accepted, \(refused) refused with 429")
        // Stop right away: the server still finishes and records every accepted push.
        await server.stop()
        #expect(server.service.queue.pending == 0)
        let recorded = try recordedResults(root + "/bob").compactMap { $0["apns_id"]?.stringValue }
        #expect(Set(recorded) == Set(accepted))
        #expect(recorded.count == accepted.count)
    }
}

/// The `nse serve` command itself: the listening line, a push, and a graceful SIGTERM.
@Suite struct ServeCommandTests {
    @Test func serveCommandListensDeliversAndStopsOnSIGTERM() async throws {
        let root = try TestSupport.temporaryDirectory("nse-serve-cli")
        #expect(try TestSupport.nse(["device", "init", root + "/bob"]).status == 0)
        let token = try Device.open(at: root + "/bob").config.remoteToken
        let server = try ServeProcess([
            "--listen", "127.0.0.1:0", "--listen-h2c", "127.0.0.1:0", "--device", root + "/bob",
        ])
        defer { server.stop() }
        let h2c = try #require(server.listening["h2c"]?.stringValue, "\(server.listening)")
        #expect(server.url.hasPrefix("http://127.0.0.1:"))
        let pushed = try await runOffPool(
            "/usr/bin/curl",
            [
                "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--http2-prior-knowledge", "--max-time", "30", "-H",
                "apns-topic: org.example.app",
                "--data-binary", #"{"aps":{"alert":"hello","mutable-content":1}}"#, h2c + "/3/device/" + token,
            ], timeout: 40)
        #expect(pushed.stdout == "200", "\(pushed.stderr)")
        let overMain = try await runOffPool(
            "/usr/bin/curl",
            [
                "-sS", "-o", "/dev/null", "-w", "%{http_code} %{http_version}", "--http2-prior-knowledge", "--max-time",
                "30", "-H",
                "apns-topic: org.example.app", "--data-binary", #"{"aps":{"alert":"hello"}}"#,
                server.url + "/3/device/" + token,
            ], timeout: 40)
        #expect(overMain.stdout == "200 2", "\(overMain.stderr)")
        #expect(server.stop() == 0)
        #expect(try recordedResults(root + "/bob").count == 2)
    }

    /// An extension gets its three pipes and nothing else of the server's: before, the listener, client connections
    /// and event loops' descriptors (opened by libraries without close-on-exec) lived on in every extension, and in
    /// one that outlived a killed server its listener still took connections nobody answered.
    @Test func anExtensionInheritsNoDescriptorButItsPipes() async throws {
        let root = try TestSupport.temporaryDirectory("nse-serve-descriptors")
        #expect(try TestSupport.nse(["device", "init", root + "/bob"]).status == 0)
        let token = try Device.open(at: root + "/bob").config.remoteToken
        let listing = root + "/fds"
        let probe = root + "/probe.sh"
        try TestSupport.write("#!/bin/sh\nread -r request\nls -l /proc/$$/fd > \(listing)\n", to: probe)
        chmod(probe, 0o755)
        let server = try ServeProcess(["--listen", "127.0.0.1:0", "--device", root + "/bob", "--extension", probe])
        let pushed = try await runOffPool(
            "/usr/bin/curl",
            [
                "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--http2-prior-knowledge", "--max-time", "30",
                "-H", "apns-topic: org.example.app", "--data-binary", #"{"aps":{"alert":"hello","mutable-content":1}}"#,
                server.url + "/3/device/" + token,
            ], timeout: 40)
        #expect(pushed.stdout == "200")
        var text = ""
        for _ in 0..<100 where !text.contains(" 2 -> ") {
            try await Task.sleep(nanoseconds: 100_000_000)
            text = (try? String(contentsOfFile: listing, encoding: .utf8)) ?? ""
        }
        #expect(server.stop() == 0)
        let descriptors = text.split(separator: "\n").filter { $0.contains(" -> ") }
        #expect(
            descriptors.contains { $0.contains(" 0 -> pipe:") } && descriptors.contains { $0.contains(" 2 -> pipe:") },
            "\(text)")
        #expect(!descriptors.contains { $0.contains("socket:") || $0.contains("anon_inode") }, "\(text)")
    }

    /// `nse serve` killed (SIGKILL) after answering 200 and before the push ran: the next start runs it, as APNs
    /// delivers what it accepted, and judges its expiration at that moment.
    @Test func aPushAnswered200BeforeACrashRunsWhenTheServerStartsAgain() async throws {
        let root = try TestSupport.temporaryDirectory("nse-serve-crash")
        #expect(try TestSupport.nse(["device", "init", root + "/bob"]).status == 0)
        let token = try Device.open(at: root + "/bob").config.remoteToken
        // An extension that takes 30 s: the server is killed long before either push has run.
        let slow = root + "/slow.sh"
        try TestSupport.write("#!/bin/sh\nread -r request\nexec sleep 30\n", to: slow)
        chmod(slow, 0o755)
        let first = try ServeProcess([
            "--listen", "127.0.0.1:0", "--device", root + "/bob", "--extension", slow, "--concurrency", "1",
        ])
        func push(_ base: String, id: String, expiration: Int) async throws -> String {
            try await runOffPool(
                "/usr/bin/curl",
                [
                    "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--http2-prior-knowledge", "--max-time", "30",
                    "-H", "apns-topic: org.example.app", "-H", "apns-id: \(id)", "-H", "apns-expiration: \(expiration)",
                    "--data-binary", #"{"aps":{"alert":"hello","mutable-content":1}}"#, base + "/3/device/" + token,
                ], timeout: 40
            ).stdout
        }
        let now = Int(Date().timeIntervalSince1970)
        let kept = "00000000-0000-4000-8000-00000000000a"
        let expiring = "00000000-0000-4000-8000-00000000000b"
        #expect(try await push(first.url, id: kept, expiration: now + 3600) == "200")
        #expect(try await push(first.url, id: expiring, expiration: now + 2) == "200")
        kill(first.process.processIdentifier, SIGKILL)
        first.process.waitUntilExit()
        #expect(try recordedResults(root + "/bob").isEmpty)
        // Started again (with the reference extension) after the second push's expiration date.
        try await Task.sleep(nanoseconds: 3_000_000_000)
        let second = try ServeProcess(["--listen", "127.0.0.1:0", "--device", root + "/bob"])
        var results: [JSON] = []
        for _ in 0..<100 where results.count < 2 {
            try await Task.sleep(nanoseconds: 100_000_000)
            results = try recordedResults(root + "/bob")
        }
        #expect(second.stop() == 0)
        let byID = Dictionary(results.map { ($0["apns_id"]?.stringValue ?? "", $0) }, uniquingKeysWith: { $1 })
        #expect(results.count == 2)
        #expect(byID[kept]?["outcome"]?.stringValue == "rewritten" || byID[kept]?["outcome"]?.stringValue == "fallback")
        #expect(byID[kept]?["redelivered"]?.boolValue == true)
        #expect(byID[expiring]?["outcome"]?.stringValue == "expired")
        #expect(byID[expiring]?["reason"]?.stringValue?.contains("ran it again") == true)
        // Nothing is run a third time.
        let third = try ServeProcess(["--listen", "127.0.0.1:0", "--device", root + "/bob"])
        try await Task.sleep(nanoseconds: 500_000_000)
        #expect(third.stop() == 0)
        #expect(try recordedResults(root + "/bob").count == 2)
    }
}
