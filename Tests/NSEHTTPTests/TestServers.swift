import Foundation
import Glibc
import NSETestSupport
import Testing

/// Helpers that run real servers on loopback for the NSEHTTP tests.
enum TestServers {
    /// A port that had nothing listening a moment ago (bind to 0, read it back, close).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw TestFailure("bind() failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw TestFailure("getsockname() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    static func isListening(_ port: Int) -> Bool {
        guard let fd = TestSupport.connectLoopbackTCP(port: port) else { return false }
        close(fd)
        return true
    }

    static func which(_ tool: String) -> String? {
        for directory in ["/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin", "/sbin", "/bin"] {
            let path = directory + "/" + tool
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    static var hasNghttpd: Bool { which("nghttpd") != nil }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("nsehttp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs `executable` to completion (bounded), throwing on a non-zero exit.
    static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            process.terminate()
            throw TestFailure("\(executable) hung")
        }
        guard process.terminationStatus == 0 else {
            throw TestFailure("\(executable) \(arguments) exited \(process.terminationStatus)")
        }
    }

    /// Starts `executable`, waits (≤ 10 s) for `port` to accept connections, runs `body`, then kills it.
    static func withProcess<T>(
        _ executable: String, _ arguments: [String], port: Int, _ body: () async throws -> T
    ) async throws -> T {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
        let deadline = Date().addingTimeInterval(10)
        while !isListening(port) {
            guard process.isRunning else {
                throw TestFailure("\(executable) exited early (\(process.terminationStatus))")
            }
            guard Date() < deadline else {
                throw TestFailure("\(executable) did not listen on port \(port) within 10 s")
            }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        return try await body()
    }

    /// Runs `body` with a Python echo server on a fresh loopback port; with `mutualTLS`
    /// (server cert, server key, trusted client CA) it serves HTTPS and requires a client certificate.
    static func withEchoServer<T>(
        mutualTLS: (cert: String, key: String, clientCA: String)? = nil,
        _ body: (_ base: String) async throws -> T
    ) async throws -> T {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("server.py")
        try echoServerScript.write(to: script, atomically: true, encoding: .utf8)
        let port = try freePort()
        guard
            let python = which("python3")
                ?? ProcessInfo.processInfo.environment["PATH"]?
                .split(separator: ":").map({ String($0) + "/python3" })
                .first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else { throw TestFailure("python3 not found") }
        var arguments = [script.path, String(port)]
        if let mutualTLS { arguments += [mutualTLS.cert, mutualTLS.key, mutualTLS.clientCA] }
        let scheme = mutualTLS == nil ? "http" : "https"
        return try await withProcess(python, arguments, port: port) {
            try await body("\(scheme)://127.0.0.1:\(port)")
        }
    }

    static let echoServerScript = #"""
        import json, sys, time
        from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def reply(self, status, body, headers=(), length=True):
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                if length:
                    self.send_header("Content-Length", str(len(body)))
                else:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def handle_any(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                path = self.path
                if path.startswith("/status/"):
                    code = int(path.split("/")[2])
                    self.reply(code, b"status body", [("Content-Type", "text/plain")])
                elif path == "/headers":
                    self.reply(200, b"ok", [("Set-Cookie", "a=1"), ("X-Mixed-Case", "Yes"), ("Set-Cookie", "b=2")])
                elif path.startswith("/sleep"):
                    time.sleep(10)
                    self.reply(200, b"late")
                elif path.startswith("/big/"):
                    self.reply(200, b"x" * int(path.split("/")[2]))
                elif path.startswith("/bigclose/"):
                    self.reply(200, b"y" * int(path.split("/")[2]), length=False)
                else:
                    echo = {
                        "method": self.command,
                        "path": path,
                        "headers": [[k, v] for k, v in self.headers.items()],
                        "body": body.decode("utf-8", "replace"),
                    }
                    self.reply(200, json.dumps(echo).encode(), [("Content-Type", "application/json")])

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = handle_any

        server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
        server.daemon_threads = True
        if len(sys.argv) > 2:
            import ssl
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(sys.argv[2], sys.argv[3])
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(sys.argv[4])
            server.socket = context.wrap_socket(server.socket, server_side=True)
        server.serve_forever()
        """#

    /// Runs `body` with nghttpd serving `docroot` (TLS when `certificate` is given).
    static func withNghttpd<T>(
        docroot: URL, certificate: TestSupport.CertificateFiles?, _ body: (_ port: Int) async throws -> T
    ) async throws -> T {
        guard let nghttpd = which("nghttpd") else { throw TestFailure("nghttpd not installed") }
        let port = try freePort()
        var arguments = ["-a", "127.0.0.1", "-d", docroot.path, "--echo-upload"]
        if let certificate {
            arguments += [String(port), certificate.key, certificate.certificate]
        } else {
            arguments += ["--no-tls", String(port)]
        }
        return try await withProcess(nghttpd, arguments, port: port) { try await body(port) }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
