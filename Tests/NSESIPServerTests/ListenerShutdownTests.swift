import Foundation
import NSESIP
import NSESIPServer
import NSETestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `shutdown()` closes the TCP connections the server is serving, not only its listening socket: a client holding
/// one reads the end of the stream.
@Suite("SIP server listener shutdown", .timeLimit(.minutes(1)))
struct ListenerShutdownTests {
    @Test("Shutdown closes an open TCP connection and the listener")
    func shutdownClosesConnections() async throws {
        let server = SIPServer(configuration: serverConfiguration([.tcp]), logger: quietLogger)
        let port = try #require(try await server.start().first?.port)
        let fd = try #require(TestSupport.connectLoopbackTCP(port: port))
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // A ping answered: the connection is accepted and served.
        let pong = await Task.detached { () -> [UInt8] in
            _ = "\r\n\r\n".withCString { send(fd, $0, 4, Int32(MSG_NOSIGNAL)) }
            var bytes = [UInt8](repeating: 0, count: 2)
            let count = recv(fd, &bytes, 2, 0)
            return count == 2 ? bytes : []
        }.value
        #expect(pong == [0x0D, 0x0A])

        await server.shutdown()
        let end = await Task.detached { () -> Int in
            var byte: UInt8 = 0
            return recv(fd, &byte, 1, 0)
        }.value
        #expect(end == 0, "read \(end) (errno \(errno)) from a connection of a stopped server")
        #expect(TestSupport.connectLoopbackTCP(port: port).map { close($0) } == nil)
    }
}
