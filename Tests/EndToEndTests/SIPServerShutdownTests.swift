import Foundation
import NSEJSON
import NSETestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `nse sip-server` exits 0 on SIGTERM while clients are still connecting to its TCP listener: a connection the
/// listener accepted but had not yet handed on when it stopped is closed, not dropped (NIO stops the process for a
/// dropped async channel, which was a SIGILL here).
@Suite(.serialized, .timeLimit(.minutes(2))) struct SIPServerShutdownTests {
    /// Rounds of a connection storm across SIGTERM (before the fix about one round in eight died by SIGILL).
    static let rounds = 16

    @Test func sigtermWhileClientsConnectExitsZero() throws {
        for round in 0..<Self.rounds {
            let server = try CommandProcess(
                ["sip-server", "--listen", "tcp:127.0.0.1:0", "--no-push"], what: "nse sip-server")
            let port = try #require(server.firstLine["listening"]?.arrayValue?.first?["port"]?.intValue)
            let storm = ConnectionStorm(port: Int(port))
            for _ in 0..<ConnectionStorm.threads { Thread { storm.run() }.start() }
            // Let connections pile up in the listener's backlog and its accept path, then stop it mid-storm.
            #expect(storm.waitForConnections(200, timeout: 10), "round \(round): the storm never got going")
            let stopped = server.stop(grace: 10)
            storm.stop()
            #expect(stopped.status == 0, "round \(round): exit status \(stopped.status)")
            #expect(stopped.seconds < 5, "round \(round): exited \(stopped.seconds) s after SIGTERM")
            #expect(storm.waitUntilDone(timeout: 10))
        }
    }
}

/// Connects to a port as fast as it can from `threads` threads, each keeping its last 64 connections open and
/// sending each a CRLF keep-alive, until stopped (or 200,000 attempts each).
private final class ConnectionStorm: @unchecked Sendable {
    static let threads = 4
    let port: Int
    private let condition = NSCondition()
    private var connected = 0
    private var stopping = false
    private var finished = 0
    private var done: Bool { finished == Self.threads }

    init(port: Int) {
        self.port = port
    }

    func run() {
        var open: [Int32] = []
        for _ in 0..<200_000 {
            condition.lock()
            let stop = stopping
            condition.unlock()
            if stop { break }
            guard let descriptor = TestSupport.connectLoopbackTCP(port: port) else { continue }
            _ = "\r\n\r\n".withCString { send(descriptor, $0, 4, Int32(MSG_NOSIGNAL)) }
            open.append(descriptor)
            if open.count > 64 { close(open.removeFirst()) }
            condition.lock()
            connected += 1
            condition.broadcast()
            condition.unlock()
        }
        for descriptor in open { close(descriptor) }
        condition.lock()
        finished += 1
        condition.broadcast()
        condition.unlock()
    }

    func waitForConnections(_ count: Int, timeout: Double) -> Bool {
        wait(timeout: timeout) { $0.connected >= count || $0.done }
    }

    func stop() {
        condition.lock()
        stopping = true
        condition.unlock()
    }

    func waitUntilDone(timeout: Double) -> Bool {
        wait(timeout: timeout) { $0.done }
    }

    private func wait(timeout: Double, until: (ConnectionStorm) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !until(self) {
            if !condition.wait(until: deadline) { return until(self) }
        }
        return true
    }
}
