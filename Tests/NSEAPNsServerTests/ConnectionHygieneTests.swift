import Foundation
import Logging
import NIOCore
import NIOHPACK
import NSEAPNsServer
import NSEDevice
import NSEJSON
import NSETestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Connections that end badly or never start: each frees its descriptor, and `nse serve` still exits 0 within 5 s
/// of SIGTERM (issue #10, defects 1 and 2).
@Suite(.serialized) struct ConnectionHygieneTests {
    enum Client: String, CaseIterable, Sendable {
        case closeAtOnce, halfClose, partialPrefaceThenClose, partialPrefaceThenIdle, idle, tlsHandshakeThenClose
    }

    /// A TLS client that completes a handshake with 127.0.0.1:PORT (the certificate is not checked), prints the
    /// protocol version and closes: Python's ssl module, as the HTTP tests' servers use.
    static let tlsClientScript = """
        import socket, ssl, sys
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10) as raw:
            with context.wrap_socket(raw) as tls:
                print(tls.version())
        """

    static func openDescriptors(_ pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }

    /// Waits (bounded) until the server's descriptors are back to `baseline` (+ slack); the last count.
    static func settle(_ pid: Int32, to baseline: Int, within seconds: Double) -> Int {
        var count = openDescriptors(pid)
        let deadline = Date().addingTimeInterval(seconds)
        while count > baseline + 3, Date() < deadline {
            usleep(100_000)
            count = openDescriptors(pid)
        }
        return count
    }

    @Test(arguments: Client.allCases)
    func descriptorsAreFreedAndSIGTERMExitsWithin5s(_ client: Client) async throws {
        let root = try TestSupport.temporaryDirectory("nse-serve-fd")
        #expect(try TestSupport.nse(["device", "init", root + "/bob"]).status == 0)
        var arguments = ["--listen", "127.0.0.1:0", "--device", root + "/bob", "--preface-timeout", "1"]
        if client == .tlsHandshakeThenClose {
            let files = try TestSupport.selfSignedCertificate(in: root)
            arguments += ["--tls-cert", files.certificate, "--tls-key", files.key]
        }
        let server = try ServeProcess(arguments)
        defer { server.stop() }
        let pid = server.process.processIdentifier
        let port = try #require(Int(server.url.split(separator: ":").last ?? ""), "\(server.listening)")
        usleep(300_000)
        let baseline = Self.openDescriptors(pid)
        let count = client == .tlsHandshakeThenClose ? 20 : 300
        var held: [RawConnection] = []
        for _ in 0..<count {
            switch client {
            case .closeAtOnce:
                _ = try RawConnection(port: port)
            case .halfClose:
                try RawConnection(port: port).halfClose()
            case .partialPrefaceThenClose:
                try RawConnection(port: port).send(Array("PRI * HT".utf8))
            case .partialPrefaceThenIdle:
                let connection = try RawConnection(port: port)
                connection.send(Array("PRI * HT".utf8))
                held.append(connection)
            case .idle:
                held.append(try RawConnection(port: port))
            case .tlsHandshakeThenClose:
                let handshake = try TestSupport.run(
                    "/usr/bin/env", ["python3", "-c", Self.tlsClientScript, String(port)], timeout: 30)
                #expect(
                    handshake.status == 0 && handshake.stdout.hasPrefix("TLSv1."),
                    "\(handshake.stdout)\(handshake.stderr)")
            }
        }
        // Closed connections are freed at once; silent ones after --preface-timeout (1 s).
        let settled = Self.settle(pid, to: baseline, within: held.isEmpty ? 2 : 4)
        #expect(
            settled <= baseline + 3, "\(client): \(settled) descriptors open, \(baseline) before \(count) connections")
        for connection in held {
            #expect(connection.closedByServer(within: 1), "\(client): a silent connection is still open")
        }

        // SIGTERM with silent connections open: exit 0 within 5 s.
        let silent = try (0..<50).map { _ in try RawConnection(port: port) }
        let started = Date()
        let status = server.stop()
        let elapsed = Date().timeIntervalSince(started)
        #expect(status == 0)
        #expect(elapsed < 5, "\(client): exit took \(elapsed) s")
        _ = silent
    }

    /// An HTTP/2 client that sends a request whose body never ends and never reads (so never acks the PING): the
    /// server sends its final GOAWAY after 1 s and closes 5 s after it, and exits 0.
    @Test(arguments: [false, true])
    func http2ClientThatStopsReadingIsClosedAfterTheSecondGoAway(_ requestComplete: Bool) async throws {
        let root = try TestSupport.temporaryDirectory("nse-serve-stall")
        #expect(try TestSupport.nse(["device", "init", root + "/bob", "--bundle-id", "org.example.app"]).status == 0)
        let token = try Device.open(at: root + "/bob").config.remoteToken
        let server = try ServeProcess(["--listen", "127.0.0.1:0", "--device", root + "/bob"])
        defer { server.stop() }
        let port = try #require(Int(server.url.split(separator: ":").last ?? ""))
        let connection = try RawConnection(port: port)
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        connection.send(H2Frame.preface + H2Frame(type: H2Frame.settings, flags: 0, stream: 0, payload: []).bytes)
        connection.send(
            try H2Frame.post(
                stream: 1, path: "/3/device/\(token)", headers: [("apns-topic", "org.example.app")],
                body: Array(#"{"aps":{"alert":"x"}}"#.utf8),
                encoder: &encoder, complete: requestComplete))
        usleep(500_000)
        // From here on the client reads nothing (the server's PING is never acked).
        let started = Date()
        let status = server.stop()
        let elapsed = Date().timeIntervalSince(started)
        #expect(status == 0)
        // Complete request: no stream open at SIGTERM, one GOAWAY and close. Open stream: 1 s for the PING ack,
        // the final GOAWAY, then 5 s.
        #expect(elapsed < (requestComplete ? 3 : 8.5), "exit took \(elapsed) s")
        if !requestComplete { #expect(elapsed > 5.5, "closed \(elapsed) s after SIGTERM: before the 5 s grace") }
    }
}
