import Foundation
import Logging
import NSESIP
import NSESIPServer
import NSETestSupport
import Testing

@testable import NSEReplay

/// A port that is taken, a peer that is not there: the servers and clients say what failed and where, in one line
/// with the documented status, and never crash (docs/cli.md, exit statuses).
@Suite struct SocketErrorTests {
    /// A TCP port held by this process (listening) until `close()`.
    final class TakenPort {
        private(set) var descriptor: Int32
        let port: Int

        init() throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0, listen(descriptor, 1) == 0 else {
                close(descriptor)
                throw TestSupport.SetupError(description: "cannot bind a test port: errno \(errno)")
            }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
            self.descriptor = descriptor
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        /// Frees the port: a connection to it is then refused.
        func release() {
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }

        deinit { release() }
    }

    let root: String

    init() throws {
        root = try TestSupport.temporaryDirectory("nse-socket-errors")
    }

    /// `nse replay`'s server restart waits out a port another process was handed meanwhile: it must recognise the
    /// server's own words for it (it matched NIO's capitalised text, which `NetworkFailure` no longer shows, and a
    /// taken port made the case an ERROR under load).
    @Test func replayRecognisesATakenPortInTheServersWords() async throws {
        let taken = try TakenPort()
        let server = SIPServer(
            configuration: SIPServerConfiguration(listeners: [.init(transport: .tcp, port: taken.port)]),
            logger: Logger(label: "test.socket-errors"))
        do {
            _ = try await server.start()
            Issue.record("the server started on a taken port")
        } catch {
            #expect(CaseRunner.isAddressInUse(error), "\(error)")
        }
        await server.shutdown()
        #expect(!CaseRunner.isAddressInUse(SIPServerError("cannot create directory /x: permission denied")))
    }

    /// docs/sip.md's own `--listen udp:… --listen tcp:…` on a port whose TCP side is taken: the UDP listener bound
    /// first is closed properly (it used to be dropped unfinished: SIGILL, exit 132, no message) and the error names
    /// the address that failed.
    @Test func aLaterSIPListenerThatCannotBindIsAnErrorNotACrash() throws {
        let taken = try TakenPort()
        let run = try TestSupport.nse([
            "sip-server", "--no-push", "--listen", "udp:127.0.0.1:\(taken.port)", "--listen",
            "tcp:127.0.0.1:\(taken.port)",
        ])
        #expect(run.status == 74, "\(run.stderr)")
        #expect(run.stderr == "nse: sip-server: cannot listen on tcp:127.0.0.1:\(taken.port): address already in use\n")
    }

    @Test func servePortsInUseNameTheAddress() throws {
        let taken = try TakenPort()
        let device = root + "/bob"
        #expect(try TestSupport.nse(["device", "init", device, "--bundle-id", "org.example.app"]).status == 0)
        let main = try TestSupport.nse(["serve", "--device", device, "--listen", "127.0.0.1:\(taken.port)"])
        #expect(main.status == 74, "\(main.stderr)")
        #expect(main.stderr.hasSuffix("nse: serve: cannot listen on 127.0.0.1:\(taken.port): address already in use\n"))
        let h2c = try TestSupport.nse([
            "serve", "--device", device, "--listen", "127.0.0.1:0", "--listen-h2c", "127.0.0.1:\(taken.port)",
        ])
        #expect(h2c.status == 74, "\(h2c.stderr)")
        #expect(h2c.stderr.hasSuffix("nse: serve: cannot listen on 127.0.0.1:\(taken.port): address already in use\n"))
        for output in [main, h2c] {
            #expect(!output.stderr.contains("errno") && !output.stderr.contains("descriptor"), "\(output.stderr)")
        }
    }

    /// A proxy nobody listens on: the client says where it could not connect, not NIO's error chain.
    @Test func aRefusedConnectionNamesTheProxy() throws {
        let free = try TakenPort()
        let port = free.port
        free.release()
        let send = try TestSupport.nse([
            "send", "--proxy", "sip:127.0.0.1:\(port);transport=tcp", "--from", "sip:alice@example.org", "--to",
            "sip:bob@example.org", "--text", "hi",
        ])
        #expect(send.status == 74, "\(send.stderr)")
        #expect(send.stderr == "nse: send failed: cannot connect to tcp:127.0.0.1:\(port): connection refused\n")
    }
}
