import Foundation
import Testing

/// A UDP socket on loopback that sends REGISTERs to an `nse sip-server` and reads their answers.
final class UDPRegisterClient {
    let fd: Int32
    let localPort: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(fd >= 0)
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        localPort = Int(UInt16(bigEndian: local.sin_port))
    }

    deinit { close(fd) }

    /// One REGISTER for `user`@example.org; the answer's status line ("no answer" after 5 s).
    func register(_ user: String, contactParameters: String, port: Int) throws -> String {
        let id = UUID().uuidString.lowercased()
        let request = [
            "REGISTER sip:example.org SIP/2.0",
            "Via: SIP/2.0/UDP 127.0.0.1:\(localPort);branch=z9hG4bK-\(id);rport",
            "Max-Forwards: 70",
            "From: <sip:\(user)@example.org>;tag=\(id.prefix(8))",
            "To: <sip:\(user)@example.org>",
            "Call-ID: \(id)@127.0.0.1",
            "CSeq: 1 REGISTER",
            "Contact: <sip:\(user)@127.0.0.1:\(localPort);transport=udp;\(contactParameters)>;expires=600",
            "Content-Length: 0", "", "",
        ].joined(separator: "\r\n")
        var server = sockaddr_in()
        server.sin_family = sa_family_t(AF_INET)
        server.sin_addr.s_addr = inet_addr("127.0.0.1")
        server.sin_port = in_port_t(UInt16(port).bigEndian)
        let sent = request.utf8CString.withUnsafeBufferPointer { bytes in
            withUnsafePointer(to: &server) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, bytes.baseAddress, bytes.count - 1, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        try #require(sent > 0)
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 5000) > 0 else { return "no answer" }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        let answer = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
        // Swift reads CR LF as one Character: cut at the line break by scalars.
        return String(String.UnicodeScalarView(answer.unicodeScalars.prefix { $0 != "\r" && $0 != "\n" }))
    }
}
