import Foundation
import NSESIP
import NSESIPServer
import NSETestSupport
import Testing

/// The caller's side of a held call as a UDP INVITE server transaction (RFC 3261 §17.2.1): a retransmitted INVITE
/// hears the latest answer again, a CANCEL is answered and ends the INVITE with 487 until the ACK, and the 487 is
/// retransmitted until then (Timer G). Raw datagrams, so that retransmissions and losses are the test's to make.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct HeldCallTransactionTests {
    /// A UDP socket on 127.0.0.1 talking to one server port, with a bounded receive.
    final class Caller {
        let fd: Int32
        var server = sockaddr_in()

        init(serverPort: Int) throws {
            fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            guard fd >= 0 else { throw POSIXError(.EMFILE) }
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr("127.0.0.1")
            _ = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            server.sin_family = sa_family_t(AF_INET)
            server.sin_addr.s_addr = inet_addr("127.0.0.1")
            server.sin_port = in_port_t(UInt16(serverPort).bigEndian)
        }

        deinit { close(fd) }

        var port: Int {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            return Int(UInt16(bigEndian: address.sin_port))
        }

        func send(_ text: String) {
            let bytes = Array(text.utf8)
            _ = withUnsafePointer(to: &server) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }

        /// The next datagram's status code, or nil when none comes within `ms`.
        func status(within ms: Int32 = 3000) -> Int? {
            guard let text = datagram(within: ms), text.hasPrefix("SIP/2.0 ") else { return nil }
            return Int(text.dropFirst(8).prefix(3))
        }

        /// The next datagram as text, or nil when none comes within `ms`.
        func datagram(within ms: Int32 = 3000) -> String? {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, ms) > 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { return nil }
            return String(decoding: buffer[0..<n], as: UTF8.self)
        }
    }

    func request(_ method: String, cseq: String, port: Int, toTag: String = "", body: String = "") -> String {
        "\(method) sip:bob@example.org SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:\(port);branch=z9hG4bKheld1\r\n"
            + "From: <sip:alice@example.org>;tag=a1\r\nTo: <sip:bob@example.org>\(toTag)\r\nCall-ID: held-udp-1\r\n"
            + "CSeq: \(cseq)\r\nMax-Forwards: 70\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    @Test func aRetransmittedInviteHearsTrying_AndTheCancelled487IsRepeatedUntilItsACK() async throws {
        var config = serverConfiguration([.udp], push: nil)
        config.timers = SIPTimers(t1: .milliseconds(50), t2: .milliseconds(200))
        try await withSIPServer(config) { server, addresses in
            try await withAgent { device in
                let registered = try await registerDevice(device, proxy: addresses.proxy(.udp))
                #expect(registered.statusCode == 200)
            }
            let port = try #require(addresses.first { $0.transport == .udp }).port
            let caller = try Caller(serverPort: port)
            let invite = request("INVITE", cseq: "1 INVITE", port: caller.port)
            caller.send(invite)
            #expect(caller.status() == 100)
            // The caller did not hear it (as if lost) and retransmits: the server answers 100 again.
            caller.send(invite)
            #expect(caller.status() == 100)
            #expect(await server.callSteps()["held-udp-1"] == .held)
            caller.send(request("CANCEL", cseq: "1 CANCEL", port: caller.port))
            var heard: [Int] = []
            for _ in 0..<2 { heard += [caller.status()].compactMap { $0 } }
            #expect(heard.sorted() == [200, 487])
            // No ACK yet: the 487 comes again (Timer G), and stops once the ACK is sent.
            #expect(caller.status(within: 1000) == 487)
            caller.send(request("ACK", cseq: "1 ACK", port: caller.port, toTag: ";tag=x"))
            while caller.status(within: 300) != nil {}
            #expect(caller.status(within: 600) == nil)
            #expect(await server.callSteps()["held-udp-1"] == .cancelled)
        }
    }

    /// A caller over UDP and a phone over TLS, online without push parameters: the INVITE goes to the phone at
    /// once over its TLS connection with one Record-Route per side, and the phone's final answer (nse's user agent
    /// answers an INVITE 501) is acknowledged by the server and passed to the caller.
    @Test func aPhoneOverTLSGetsTheInviteAtOnceAndItsAnswerReachesTheCaller() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let files = try TestSupport.selfSignedCertificate(in: dir.path)
        var config = serverConfiguration([.udp, .tls], push: nil)
        config.tls = SIPServerConfiguration.TLSFiles(certificatePath: files.certificate, keyPath: files.key)
        let phone = tlsUA(cert: files.certificate)
        try await withSIPServer(config, closing: [phone]) { server, addresses in
            let registered = try await registerDevice(phone, proxy: addresses.proxy(.tls), push: false)
            #expect(registered.statusCode == 200)
            let port = try #require(addresses.first { $0.transport == .udp }).port
            let caller = try Caller(serverPort: port)
            caller.send(request("INVITE", cseq: "1 INVITE", port: caller.port))
            var heard: [Int] = []
            while heard.last.map({ $0 < 200 }) ?? true, let status = caller.status() { heard.append(status) }
            #expect(heard == [100, 501])
            caller.send(request("ACK", cseq: "1 ACK", port: caller.port, toTag: ";tag=x"))
            #expect(await server.callSteps()["held-udp-1"] == .declined)
            let steps = await server.eventLog().compactMap { event -> String? in
                guard case .call(_, "held-udp-1", let step, let status) = event else { return nil }
                return "\(step.rawValue) \(status.map(String.init) ?? "-")"
            }
            #expect(steps == ["forwarded -", "declined 501"])
        }
    }

    /// The fork's best answer (RFC 3261 §16.7): one phone declines 486, the other never answers (Timer B); once no
    /// leg is left open the caller hears the 486, not the 408 of the call fork timeout much later.
    @Test func aDeclineIsHeardOnceTheOtherPhoneNeverAnswers() async throws {
        var config = serverConfiguration([.udp], push: nil)
        config.timers = SIPTimers(t1: .milliseconds(30), t2: .milliseconds(200))
        config.callForkTimeout = .seconds(30)
        try await withSIPServer(config) { server, addresses in
            let port = try #require(addresses.first { $0.transport == .udp }).port
            let busy = try Caller(serverPort: port)
            let silent = try Caller(serverPort: port)
            for (index, phone) in [busy, silent].enumerated() {
                phone.send(
                    "REGISTER sip:example.org SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:\(phone.port);branch=z9hG4bKreg\(index)\r\n"
                        + "From: <sip:bob@example.org>;tag=r\(index)\r\nTo: <sip:bob@example.org>\r\n"
                        + "Call-ID: reg-\(index)\r\nCSeq: 1 REGISTER\r\n"
                        + "Contact: <sip:bob@127.0.0.1:\(phone.port)>\r\nExpires: 600\r\nContent-Length: 0\r\n\r\n")
                #expect(phone.status() == 200)
            }
            let caller = try Caller(serverPort: port)
            caller.send(request("INVITE", cseq: "1 INVITE", port: caller.port))
            #expect(caller.status() == 100)
            // The busy phone answers 486 with the INVITE's own Via, From, To, Call-ID and CSeq.
            let invite = try #require(busy.datagram())
            #expect(invite.hasPrefix("INVITE "))
            let copied = invite.split(separator: "\r\n").filter { line in
                ["Via:", "From:", "To:", "Call-ID:", "CSeq:"].contains { line.hasPrefix($0) }
            }.map { $0.hasPrefix("To:") ? $0 + ";tag=busy" : String($0) }
            busy.send("SIP/2.0 486 Busy Here\r\n" + copied.joined(separator: "\r\n") + "\r\nContent-Length: 0\r\n\r\n")
            let started = ContinuousClock.now
            #expect(caller.status(within: 8000) == 486)
            // Timer B of the silent phone's leg (64 x 30 ms), not the 30 s call fork timeout.
            #expect(ContinuousClock.now - started < .seconds(6))
            #expect(await server.callSteps()["held-udp-1"] == .declined)
            caller.send(request("ACK", cseq: "1 ACK", port: caller.port, toTag: ";tag=busy"))
        }
    }
}
