import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// `nse sip-server` runs its tasks on its one event-loop thread (`EventLoopGlobalExecutor`), where its sockets are,
/// and writes its event lines from a thread of their own: a reader that stops reading its stdout holds up neither its
/// answers nor its exit.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SIPServerThreadsTests {
    /// Enough REGISTERs with long Contacts that their `registered` lines overflow a pipe nobody reads (64 KB).
    static let registrations = 400

    @Test func requestsRunOnTheEventLoopAndAnUnreadStdoutHoldsNothingUp() throws {
        let server = try CommandProcess(
            ["sip-server", "--events", "--listen", "udp:127.0.0.1:0", "--no-push"], what: "nse sip-server")
        let port = try #require(server.firstLine["listening"]?.arrayValue?.first?["port"]?.intValue)
        let client = try UDPClient()
        let padding = String(repeating: "p", count: 200)
        let before = try Self.threadTimes(server.pid)
        var answered = 0
        for index in 0..<Self.registrations {
            let status = try client.register(
                "user\(index)", contactParameters: "x-pad=\(padding)", port: Int(port))
            guard status == "SIP/2.0 200 OK" else { break }
            answered += 1
        }
        #expect(answered == Self.registrations)

        // The CPU each kind of thread spent on the REGISTERs: the event loop's threads nearly all of it, the
        // cooperative pool's (libdispatch's workers of `com.apple.root.default-qos`) next to none.
        let after = try Self.threadTimes(server.pid)
        func spent(_ kind: (String) -> Bool) -> UInt64 {
            after.filter { kind($0.value.name) }.reduce(0) {
                $0 + ($1.value.nanoseconds - (before[$1.key]?.nanoseconds ?? 0))
            }
        }
        let loop = spent { $0.hasPrefix("NIO-ELT") }
        let pool = spent { $0.hasSuffix("default-qos") }
        #expect(loop > 0)
        #expect(pool * 20 < loop, "pool \(pool) ns, event loop \(loop) ns")

        let stopped = server.stop(grace: 10)
        #expect(stopped.status == 0)
        #expect(stopped.seconds < 5, "exited \(stopped.seconds) s after SIGTERM")
    }

    /// Each thread's name and the CPU it has spent (`/proc/PID/task/TID/schedstat`), by thread id.
    static func threadTimes(_ pid: Int32) throws -> [String: (name: String, nanoseconds: UInt64)] {
        let tasks = "/proc/\(pid)/task"
        var times: [String: (name: String, nanoseconds: UInt64)] = [:]
        for tid in try FileManager.default.contentsOfDirectory(atPath: tasks) {
            guard let name = try? String(contentsOfFile: "\(tasks)/\(tid)/comm", encoding: .utf8),
                let stat = try? String(contentsOfFile: "\(tasks)/\(tid)/schedstat", encoding: .utf8),
                let runtime = stat.split(separator: " ").first.flatMap({ UInt64($0) })
            else { continue }
            times[tid] = (name.trimmingCharacters(in: .whitespacesAndNewlines), runtime)
        }
        return times
    }

    /// A UDP socket on loopback that sends REGISTERs and reads their answers.
    final class UDPClient {
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
}
