import Foundation
import NSEJSON
import NSETestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The command itself: HTTPS, stopping on SIGTERM whatever clients do, descriptors, refused options.
@Suite(.serialized) struct LifecycleTests {
    let folder: String

    init() throws {
        folder = try TestSupport.temporaryDirectory("nse-files-life")
    }

    @Test func httpsWithASelfSignedCertificateOverHTTP2AndHTTP1() throws {
        let certificate = try TestSupport.selfSignedCertificate(in: folder)
        let server = try FileServerProcess(["--tls-cert", certificate.certificate, "--tls-key", certificate.key])
        defer { server.stop() }
        #expect(server.url.hasPrefix("https://127.0.0.1:"))
        let blob = try Blobs.make(120_000, in: folder)
        for version in ["--http2", "--http1.1"] {
            let uploaded = try Curl.upload(blob.path, to: server.url, [version, "--cacert", certificate.certificate])
            #expect(uploaded.status == 201, "\(version): \(uploaded.stderr)")
            #expect(uploaded.httpVersion == (version == "--http2" ? "2" : "1.1"))
            let url = try #require(uploaded.json?["url"]?.stringValue)
            #expect(url.hasPrefix(server.url + "/files/"))
            let download = try Curl.fetch([version, "--cacert", certificate.certificate, url])
            #expect(download.body == blob.bytes, "\(version)")
            let part = try Curl.fetch([version, "--cacert", certificate.certificate, "-H", "Range: bytes=5-9", url])
            #expect(part.status == 206 && part.body == Array(blob.bytes[5..<10]), "\(version)")
            let head = try Curl.fetch([version, "--cacert", certificate.certificate, "-I", url])
            #expect(head.status == 200 && head.headers["content-length"] == "120000", "\(version)")
        }
        // A client that does not trust the certificate gets no file.
        #expect(try Curl.fetch([server.url + "/files/" + String(repeating: "0", count: 32)]).exitCode == 60)
    }

    @Test func sigtermExitsWithin5SecondsDuringASlowDownloadAndASlowUpload() throws {
        let server = try FileServerProcess(["--fault", "slow:2000"])
        let blob = try Blobs.make(200_000, in: folder)
        let url = try #require(try Curl.upload(blob.path, to: server.url).json?["url"]?.stringValue)
        // A download that would take 100 s, and an upload that would take 200 s.
        let download = try background(["-sS", "-o", "/dev/null", "--max-time", "60", url])
        let upload = try background([
            "-sS", "-o", "/dev/null", "--max-time", "60", "--limit-rate", "1000", "--data-binary", "@" + blob.path,
            server.url + "/files",
        ])
        usleep(1_000_000)
        let stopped = server.stop()
        #expect(stopped.status == 0)
        #expect(stopped.seconds < 5, "\(stopped.seconds) s")
        download.waitUntilExit()
        upload.waitUntilExit()
        #expect(download.terminationStatus != 0)
        // The cut upload left nothing behind.
        let names = try FileManager.default.contentsOfDirectory(atPath: server.storage)
        #expect(names.count == 1 && !names.contains { $0.hasPrefix(".upload-") }, "\(names)")
    }

    @Test func sigtermExitsAtOnceWhenIdleAndDuringADelay() throws {
        let idle = try FileServerProcess()
        let stoppedIdle = idle.stop()
        #expect(stoppedIdle.status == 0 && stoppedIdle.seconds < 2, "\(stoppedIdle)")

        let delayed = try FileServerProcess(["--fault", "delay:120"])
        let blob = try Blobs.make(1000, in: folder, name: "d.bin")
        let url = try #require(try Curl.upload(blob.path, to: delayed.url).json?["url"]?.stringValue)
        let waiting = try background(["-sS", "-o", "/dev/null", "--max-time", "60", url])
        // A connection that never sends a request, too.
        let silent = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(silent) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(delayed.url.split(separator: ":").last ?? "0") ?? 0).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(silent, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        usleep(500_000)
        let stopped = delayed.stop()
        #expect(stopped.status == 0 && stopped.seconds < 5, "\(stopped)")
        waiting.waitUntilExit()
    }

    @Test func descriptorsAreGivenBackAfterCutAndFinishedAnswers() throws {
        let server = try FileServerProcess()
        defer { server.stop() }
        let blob = try Blobs.make(300_000, in: folder, name: "fd.bin")
        let url = try #require(try Curl.upload(blob.path, to: server.url).json?["url"]?.stringValue)
        usleep(300_000)
        let before = server.openDescriptors
        _ = try Curl.fetch([
            "-H", "Content-Type: application/json", "--data-binary",
            #"{"fault":"truncate","after_bytes":100,"count":5}"#, server.url + "/control/faults",
        ])
        for _ in 0..<5 { _ = try Curl.fetch([url]) }  // cut
        for _ in 0..<5 { _ = try Curl.fetch(["-H", "Range: bytes=0-9", url]) }
        for _ in 0..<5 { _ = try Curl.fetch(["--max-time", "1", "--limit-rate", "10000", url], maxTime: 1) }  // gone
        for _ in 0..<3 {
            _ = try Curl.fetch(
                [
                    "--max-time", "1", "--limit-rate", "10000", "--data-binary", "@" + blob.path,
                    server.url + "/files",
                ], maxTime: 1)  // an upload given up
        }
        // Closed connections are noticed at once; give the server a moment to drop what it held.
        var after = server.openDescriptors
        for _ in 0..<40 where after > before {
            usleep(100_000)
            after = server.openDescriptors
        }
        #expect(after <= before, "descriptors: \(before) before, \(after) after")
        let names = try FileManager.default.contentsOfDirectory(atPath: server.storage)
        #expect(names.count == 1, "\(names)")
    }

    @Test func refusedOptionsAndAPortInUse() throws {
        let badFault = try TestSupport.nse(["files", "--fault", "slow"])
        #expect(badFault.status == 64)
        #expect(badFault.stderr.contains("slow"))
        #expect(try TestSupport.nse(["files", "--tls-cert", "x.pem"]).status == 64)
        #expect(try TestSupport.nse(["files", "--listen", "nowhere"]).status == 64)
        let server = try FileServerProcess()
        defer { server.stop() }
        let port = server.url.split(separator: ":").last.map(String.init) ?? "0"
        let taken = try TestSupport.nse([
            "files", "--listen", "127.0.0.1:\(port)", "--storage", folder + "/other",
        ])
        #expect(taken.status == 74, "\(taken.stderr)")
        #expect(taken.stderr.contains("cannot listen on 127.0.0.1:\(port)"), "\(taken.stderr)")
    }

    /// curl in the background; the caller waits for it.
    private func background(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }
}
