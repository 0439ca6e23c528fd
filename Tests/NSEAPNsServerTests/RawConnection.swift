import Foundation
import NIOCore
import NIOHPACK
import NSETestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A raw TCP connection on loopback, for clients that misbehave on purpose: close at once, half-close, stop
/// reading, send HTTP/2 frames by hand. Every read has a deadline.
final class RawConnection {
    let fd: Int32

    init(port: Int) throws {
        guard let fd = TestSupport.connectLoopbackTCP(port: port) else {
            throw LiveTestError(description: "connect 127.0.0.1:\(port): \(errno)")
        }
        self.fd = fd
    }

    deinit { close(fd) }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written <= 0 { return }
            offset += written
        }
    }

    func halfClose() { shutdown(fd, Int32(SHUT_WR)) }

    /// Bytes read before `timeout`, or before the server closed; `nil` once closed with nothing read.
    func read(timeout: TimeInterval) -> [UInt8]? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) > 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return count > 0 ? Array(buffer.prefix(count)) : nil
    }

    /// Whether the server closed the connection within `timeout` (reading and dropping whatever comes first).
    func closedByServer(within timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if read(timeout: deadline.timeIntervalSinceNow) == nil { return true }
        }
        return false
    }
}

/// HTTP/2 frames written and read by hand (RFC 9113 §4), headers with NIOHPACK.
struct H2Frame {
    static let data: UInt8 = 0x0, headers: UInt8 = 0x1, rstStream: UInt8 = 0x3, settings: UInt8 = 0x4,
        ping: UInt8 = 0x6, goAway: UInt8 = 0x7
    static let endStream: UInt8 = 0x1, endHeaders: UInt8 = 0x4, ack: UInt8 = 0x1
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    var type: UInt8
    var flags: UInt8
    var stream: UInt32
    var payload: [UInt8]

    var bytes: [UInt8] {
        let length = payload.count
        return [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags]
            + withUnsafeBytes(of: stream.bigEndian, Array.init) + payload
    }

    /// The 32-bit value at `offset` of the payload (error codes, stream ids).
    func word(at offset: Int) -> UInt32 {
        payload[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// A POST with its body: HEADERS (HPACK-encoded by `encoder`), then DATA with END_STREAM, unless `complete` is
    /// false (then the request body never ends).
    static func post(
        stream: UInt32, path: String, headers: [(String, String)], body: [UInt8], encoder: inout HPACKEncoder,
        complete: Bool = true
    ) throws -> [UInt8] {
        var block = ByteBuffer()
        let all =
            [(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "127.0.0.1")] + headers
            + [("content-length", "\(body.count)")]
        try encoder.encode(headers: HPACKHeaders(all), to: &block)
        let head = H2Frame(
            type: Self.headers, flags: endHeaders, stream: stream, payload: Array(block.readableBytesView))
        let data = H2Frame(
            type: Self.data, flags: complete ? endStream : 0, stream: stream, payload: complete ? body : [])
        return head.bytes + (complete ? data.bytes : [])
    }
}

/// Splits a byte stream into frames as they arrive.
struct H2FrameReader {
    private var pending: [UInt8] = []

    mutating func feed(_ bytes: [UInt8]) -> [H2Frame] {
        pending += bytes
        var frames: [H2Frame] = []
        while pending.count >= 9 {
            let length = Int(pending[0]) << 16 | Int(pending[1]) << 8 | Int(pending[2])
            guard pending.count >= 9 + length else { break }
            let stream = pending[5..<9].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF
            frames.append(
                H2Frame(type: pending[3], flags: pending[4], stream: stream, payload: Array(pending[9..<9 + length])))
            pending.removeFirst(9 + length)
        }
        return frames
    }
}
