import Foundation
import NIOCore
import NIOHPACK
import NSEDevice
import NSETestSupport
import Testing

/// What a client that asks for something odd over HTTP/2 gets (issue #31, defects 2 and 3): an answer on its own
/// stream for any method on any path, never a connection closed under the other streams; a connection error is a
/// GOAWAY with its code, and the streams already taken still get their answers.
@Suite(.serialized) struct HTTP2ErrorTests {
    let root: String
    let token: String

    init() throws {
        root = try TestSupport.temporaryDirectory("nse-h2-errors")
        #expect(try TestSupport.nse(["device", "init", root + "/bob", "--bundle-id", "org.example.app"]).status == 0)
        token = try Device.open(at: root + "/bob").config.remoteToken
    }

    /// A request's HEADERS with END_STREAM (no body).
    static func request(
        stream: UInt32, method: String, path: String, encoder: inout HPACKEncoder
    ) throws -> [UInt8] {
        var block = ByteBuffer()
        try encoder.encode(
            headers: HPACKHeaders([
                (":method", method), (":scheme", "http"), (":path", path), (":authority", "127.0.0.1"),
            ]), to: &block)
        return H2Frame(
            type: H2Frame.headers, flags: H2Frame.endHeaders | H2Frame.endStream, stream: stream,
            payload: Array(block.readableBytesView)
        ).bytes
    }

    /// Frames read until `done` says so, the server closes, or 10 s pass.
    static func frames(
        on connection: RawConnection, until done: ([H2Frame]) -> Bool
    ) -> (frames: [H2Frame], closed: Bool) {
        var reader = H2FrameReader()
        var frames: [H2Frame] = []
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !done(frames) {
            guard let bytes = connection.read(timeout: deadline.timeIntervalSinceNow) else { return (frames, true) }
            frames += reader.feed(bytes)
        }
        return (frames, false)
    }

    /// The `:status` of each stream's HEADERS.
    static func statuses(_ frames: [H2Frame]) -> [UInt32: String] {
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        var statuses: [UInt32: String] = [:]
        for frame in frames where frame.type == H2Frame.headers {
            var block = ByteBuffer(bytes: frame.payload)
            if let headers = try? decoder.decodeHeaders(from: &block), let status = headers.first(name: ":status") {
                statuses[frame.stream] = status
            }
        }
        return statuses
    }

    /// A raw connection to `server`, and its first bytes (the preface, SETTINGS and a push on stream 1) to send.
    func connectionWithAPush(to server: ServeProcess) throws -> (
        RawConnection, (encoder: HPACKEncoder, bytes: [UInt8])
    ) {
        let port = try #require(Int(server.url.split(separator: ":").last ?? ""))
        let connection = try RawConnection(port: port)
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        var bytes = H2Frame.preface + H2Frame(type: H2Frame.settings, flags: 0, stream: 0, payload: []).bytes
        bytes += try H2Frame.post(
            stream: 1, path: "/3/device/\(token)", headers: [("apns-topic", "org.example.app")],
            body: Array(#"{"aps":{"alert":"x"}}"#.utf8), encoder: &encoder)
        return (connection, (encoder, bytes))
    }

    @Test func headAndOtherMethodsAreAnsweredOnTheirStreamBesideAPushInFlight() throws {
        let server = try ServeProcess(["--listen", "127.0.0.1:0", "--device", root + "/bob"])
        defer { server.stop() }
        let (connection, opening) = try connectionWithAPush(to: server)
        var encoder = opening.encoder
        var bytes = opening.bytes
        let asked: [(UInt32, String, String, String)] = [
            (3, "HEAD", "/3/device/\(token)", "405"), (5, "GET", "/3/device/\(token)", "405"),
            (7, "HEAD", "/nowhere", "404"), (9, "DELETE", "/v1/devices", "405"), (11, "OPTIONS", "/", "405"),
            (13, "PATCH", "/3/device", "405"),
        ]
        for (stream, method, path, _) in asked {
            bytes += try Self.request(stream: stream, method: method, path: path, encoder: &encoder)
        }
        connection.send(bytes)
        let (frames, closed) = Self.frames(on: connection) { Self.statuses($0).count == asked.count + 1 }
        #expect(!closed, "the server closed the connection")
        #expect(!frames.contains { $0.type == H2Frame.goAway }, "GOAWAY")
        #expect(!frames.contains { $0.type == H2Frame.rstStream }, "RST_STREAM")
        let statuses = Self.statuses(frames)
        #expect(statuses[1] == "200", "the push in flight: \(statuses)")
        for (stream, method, path, status) in asked {
            #expect(statuses[stream] == status, "\(method) \(path): \(statuses)")
        }
        // A HEAD answer carries no DATA.
        #expect(!frames.contains { $0.type == H2Frame.data && ($0.stream == 3 || $0.stream == 7) })
        // The connection still serves: a PING is answered.
        connection.send(H2Frame(type: H2Frame.ping, flags: 0, stream: 0, payload: Array(repeating: 7, count: 8)).bytes)
        let pong = Self.frames(on: connection) {
            $0.contains { $0.type == H2Frame.ping && $0.flags & H2Frame.ack != 0 }
        }
        #expect(pong.frames.contains { $0.type == H2Frame.ping }, "no PING ack")
        // The push was recorded as acknowledged: its 200 was written.
        let results = try TestSupport.run(
            "/usr/bin/curl", ["-s", "\(server.url)/v1/devices/\(token)/notifications"])
        #expect(results.stdout.contains(#""acknowledged":true"#), "\(results.stdout)")
    }

    /// DATA on stream 0 is a connection error (RFC 9113 §6.1): GOAWAY PROTOCOL_ERROR, and the push taken just before
    /// still gets its 200 before the connection closes.
    @Test func aConnectionErrorIsAGoAwayWithItsCodeAndStreamsTakenAreAnswered() throws {
        let server = try ServeProcess(["--listen", "127.0.0.1:0", "--device", root + "/bob"])
        defer { server.stop() }
        let (connection, opening) = try connectionWithAPush(to: server)
        var bytes = opening.bytes
        bytes += H2Frame(type: H2Frame.data, flags: 0, stream: 0, payload: [1, 2, 3]).bytes
        connection.send(bytes)
        let (frames, closed) = Self.frames(on: connection) { _ in false }
        #expect(closed, "the connection stayed open after a connection error")
        let goAway = try #require(frames.first { $0.type == H2Frame.goAway })
        #expect(goAway.word(at: 4) == 0x1, "GOAWAY's error code: \(goAway.word(at: 4)), not PROTOCOL_ERROR")
        #expect(Self.statuses(frames)[1] == "200", "the push taken before the error: \(Self.statuses(frames))")
    }

    /// With TLS, ALPN `h2` agreed: a bad preface is HTTP/2's connection error, not an HTTP/1.1 request (RFC 9113
    /// §3.4). Without ALPN the first bytes still decide (an HTTP/1.1 request is answered as one).
    @Test func aBadPrefaceAfterALPNH2IsAGoAway() throws {
        let files = try TestSupport.selfSignedCertificate(in: root)
        let server = try ServeProcess([
            "--listen", "127.0.0.1:0", "--device", root + "/bob", "--tls-cert", files.certificate, "--tls-key",
            files.key,
        ])
        defer { server.stop() }
        let port = try #require(Int(server.url.split(separator: ":").last ?? ""))
        let script = """
            import socket, ssl, sys
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            if sys.argv[2] == "h2":
                context.set_alpn_protocols(["h2"])
            with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10) as raw:
                with context.wrap_socket(raw) as tls:
                    tls.sendall(b"GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
                    received = b""
                    while True:
                        chunk = tls.recv(65536)
                        if not chunk:
                            break
                        received += chunk
                        if sys.argv[2] != "h2" and b"\\r\\n\\r\\n" in received:
                            break
                    sys.stdout.write(received.hex())
            """
        let agreed = try TestSupport.run("/usr/bin/python3", ["-c", script, "\(port)", "h2"], timeout: 20)
        #expect(agreed.status == 0, "\(agreed.stderr)")
        var reader = H2FrameReader()
        let bytes = stride(from: 0, to: agreed.stdout.count, by: 2).compactMap { offset -> UInt8? in
            let start = agreed.stdout.index(agreed.stdout.startIndex, offsetBy: offset)
            return UInt8(agreed.stdout[start..<agreed.stdout.index(start, offsetBy: 2)], radix: 16)
        }
        #expect(!bytes.starts(with: Array("HTTP/1.1".utf8)), "answered as HTTP/1.1")
        let frames = reader.feed(bytes)
        let goAway = try #require(frames.first { $0.type == H2Frame.goAway }, "no GOAWAY in \(frames.map(\.type))")
        #expect(goAway.word(at: 4) == 0x1, "GOAWAY's error code \(goAway.word(at: 4)), not PROTOCOL_ERROR")
        let unagreed = try TestSupport.run("/usr/bin/python3", ["-c", script, "\(port)", "none"], timeout: 20)
        #expect(unagreed.stdout.hasPrefix(Array("HTTP/1.1 200".utf8).map { String(format: "%02x", $0) }.joined()))
    }
}
