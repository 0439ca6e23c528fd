import Foundation
import NSECrypto
import NSEJSON
import NSETestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A running `nse files` (the built binary) on a free loopback port, with a storage folder of its own; stopped with
/// SIGTERM (or killed when the test forgot).
final class FileServerProcess: @unchecked Sendable {
    let command: CommandProcess
    let storage: String

    init(_ arguments: [String] = [], storage: String? = nil) throws {
        self.storage = try storage ?? TestSupport.temporaryDirectory("nse-files") + "/storage"
        command = try CommandProcess(
            ["files", "--listen", "127.0.0.1:0", "--storage", self.storage] + arguments, what: "nse files")
    }

    /// The first line it printed.
    var listening: JSON { command.firstLine }

    /// The base URL, `http://127.0.0.1:PORT`.
    var url: String { command.url }

    var pid: Int32 { command.pid }

    /// SIGTERM, then a bounded wait: the exit status and how long it took (SIGKILL after 20 s: status 9).
    @discardableResult func stop() -> (status: Int32, seconds: Double) { command.stop() }

    /// The descriptors the server holds now.
    var openDescriptors: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }
}

/// What curl got: the final answer's status and headers (lowercased names), the body, curl's exit status.
struct Fetched {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]
    var exitCode: Int32
    var httpVersion: String
    /// The body bytes curl received (what `-I` prints is not counted).
    var downloaded: Int
    var seconds: Double
    var stderr: String

    var json: JSON? { try? JSON.parse(body, options: JSONParseOptions(requireObject: false)) }
    var text: String { String(decoding: body, as: UTF8.self) }
}

enum Curl {
    /// Runs `/usr/bin/curl` with `arguments` (the URL among them); bounded by `--max-time` and a kill after it.
    static func fetch(_ arguments: [String], maxTime: Int = 60) throws -> Fetched {
        let folder = try TestSupport.temporaryDirectory("nse-files-curl")
        let start = Date()
        let output = try TestSupport.run(
            "/usr/bin/curl",
            [
                "-sS", "-o", folder + "/body", "-D", folder + "/headers", "-w",
                "%{http_code} %{http_version} %{size_download}",
                "--max-time", String(maxTime),
            ] + arguments, timeout: TimeInterval(maxTime + 10))
        let seconds = Date().timeIntervalSince(start)
        let parts = output.stdout.split(separator: " ").map(String.init)
        let body = (try? Data(contentsOf: URL(fileURLWithPath: folder + "/body"))).map { [UInt8]($0) } ?? []
        let rawHeaders = (try? String(contentsOfFile: folder + "/headers", encoding: .utf8)) ?? ""
        // The last answer's block: a 100 Continue comes before the final one.
        let block = rawHeaders.components(separatedBy: "\r\n\r\n").last { !$0.isEmpty } ?? ""
        var headers: [String: String] = [:]
        for line in block.components(separatedBy: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
                .trimmingCharacters(in: .whitespaces)
        }
        return Fetched(
            status: Int(parts.first ?? "") ?? 0, headers: headers, body: body, exitCode: output.status,
            httpVersion: parts.count > 1 ? parts[1] : "", downloaded: parts.count > 2 ? Int(parts[2]) ?? -1 : -1,
            seconds: seconds, stderr: output.stderr)
    }

    /// Uploads `path` as raw bytes; the answer.
    static func upload(_ path: String, to base: String, _ options: [String] = []) throws -> Fetched {
        try fetch(
            options + ["-H", "Content-Type: application/octet-stream", "--data-binary", "@" + path, base + "/files"])
    }
}

/// Test data: files of random bytes, and their SHA-256.
enum Blobs {
    /// A new file of `size` random bytes in `folder`; its path and bytes.
    static func make(_ size: Int, in folder: String, name: String = "blob.bin") throws -> (path: String, bytes: [UInt8])
    {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let path = folder + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, bytes)
    }

    static func sha256(_ bytes: [UInt8]) -> String { Hex.encode(Digest.sha256(bytes)) }
}
