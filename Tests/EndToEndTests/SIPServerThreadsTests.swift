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
        let client = try UDPRegisterClient()
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
}
