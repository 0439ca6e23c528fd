import Foundation
import NSESIP
import NSESIPServer
import NSETestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking loopback TCP client with a receive timeout (test helper); `whileOpen` is given the socket once the
/// reply is in, before it closes.
private func tcpExchange(
    port: Int, send bytes: [UInt8], expect count: Int, whileOpen: (Int32) -> Void = { _ in }
) throws -> [UInt8] {
    guard let fd = TestSupport.connectLoopbackTCP(port: port) else { throw TestError.setup("connect") }
    defer { close(fd) }
    var timeout = timeval(tv_sec: 20, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) }
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while out.count < count {
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 { break }
        out.append(contentsOf: chunk[0..<n])
    }
    whileOpen(fd)
    return out
}

@Suite("TCP keep-alive", .timeLimit(.minutes(1)))
struct KeepAliveTests {
    /// An OPTIONS request over TCP, its branch and Call-ID numbered `n`.
    static func options(_ n: Int) -> String {
        "OPTIONS sip:example.org SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:1;branch=z9hG4bKka\(n)\r\nFrom: <sip:a@example.org>;tag=1\r\nTo: <sip:example.org>\r\nCall-ID: ka-\(n)\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n"
    }

    @Test("A CRLFCRLF ping between messages gets a CRLF pong; the next request is still parsed")
    func pingPong() async throws {
        try await withSIPServer(serverConfiguration([.tcp])) { server, addresses in
            let port = addresses[0].port
            let options = Self.options(1)
            let reply = try await Task.detached {
                try tcpExchange(port: port, send: Array("\r\n\r\n".utf8) + Array(options.utf8), expect: 40)
            }.value
            let text = String(decoding: reply, as: UTF8.self)
            #expect(text.hasPrefix("\r\nSIP/2.0 200 OK\r\n"), "got: \(text.prefix(40))")
        }
    }

    /// An accepted connection has Nagle's algorithm off and SO_DEBUG alone (the option was given as a
    /// `socketOption`, whose level made it SO_DEBUG).
    @Test("An accepted TCP connection is TCP_NODELAY and not SO_DEBUG")
    func acceptedConnectionOptions() async throws {
        try await withSIPServer(serverConfiguration([.tcp])) { _, addresses in
            let port = addresses[0].port
            let request = Self.options(2)
            let options = try await Task.detached { () throws -> (debug: Int32, noDelay: Int32)? in
                // Read once answered: the server has accepted the connection and serves it.
                var options: (debug: Int32, noDelay: Int32)?
                let reply = try tcpExchange(port: port, send: Array(request.utf8), expect: 12) { fd in
                    options = TestSupport.localPort(of: fd).flatMap { TestSupport.tcpSocketOptions(peerPort: $0) }
                }
                #expect(String(decoding: reply, as: UTF8.self).hasPrefix("SIP/2.0 200 OK"))
                return options
            }.value
            #expect(options?.debug == 0)
            #expect(options.map { $0.noDelay != 0 } == true)
        }
    }
}
