import Logging
import NIOCore
import NIOPosix
import Testing

@testable import NSESIP

/// `SIPTrace`: bounded whatever the peer sends, timed, and fed by the transports only when a configuration names
/// one; a close by this side is no event, the peer's is.
@Suite(.serialized, .timeLimit(.minutes(1))) struct SIPTraceTests {
    static let logger = Logger(label: "test.sip-trace")

    @Test func keepsAtMost64EventsAndCountsTheRest() {
        let trace = SIPTrace()
        for index in 0..<70 { trace.sent(Array("message \(index)".utf8)) }
        #expect(trace.events.count == SIPTrace.maxEvents)
        #expect(trace.dropped == 6)
        #expect(trace.events.last?.kind == .sent(Array("message 63".utf8)))
        trace.closed()
        #expect(trace.events.count == SIPTrace.maxEvents && trace.dropped == 7)
    }

    @Test func cutsAMessageAt64KiBAndSaysSo() {
        let trace = SIPTrace()
        trace.sent([UInt8](repeating: 0x41, count: SIPTrace.maxMessageBytes + 10))
        trace.sent([UInt8](repeating: 0x42, count: SIPTrace.maxMessageBytes))
        let events = trace.events
        guard case .sent(let first) = events[0].kind, case .sent(let second) = events[1].kind else {
            Issue.record("not two sent events: \(events)")
            return
        }
        #expect(first.count == SIPTrace.maxMessageBytes && events[0].truncated)
        #expect(second.count == SIPTrace.maxMessageBytes && !events[1].truncated)
    }

    @Test func timesAreMonotonicMillisecondsToATenth() async throws {
        let trace = SIPTrace()
        trace.sent([0x31])
        try await Task.sleep(for: .milliseconds(20))
        trace.closed()
        let times = trace.events.map(\.milliseconds)
        #expect(times[0] >= 0 && times[0] < 20)
        #expect(times[1] >= 20 && times[1] < 5_000)
        for time in times { #expect((time * 10).rounded() == time * 10) }
    }

    /// A challenged REGISTER over each transport: the two requests and two answers, in order, as the wire had them
    /// (the Authorization sent is the trace's to keep: its reader redacts it); the agent's own close adds nothing.
    @Test(arguments: [SIPTransportKind.udp, .tcp])
    func aRegisterIsTracedInOrder(transport: SIPTransportKind) async throws {
        var options = TestRegistrar.Options()
        options.challenge = .www(.sha256)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let registrar = try await TestRegistrar.start(transport, options: options, group: group)
        let trace = SIPTrace()
        var configuration = SIPUserAgentConfiguration(timers: SIPTimers(t1: .milliseconds(250)))
        configuration.trace = trace
        let ua = SIPUserAgent(configuration: configuration, eventLoopGroup: group, logger: Self.logger)
        let result = try await ua.register(
            SIPRegistration(
                aor: SIPURI(user: "bob", host: "example.org"), password: "secret", proxy: registrar.proxyURI,
                expires: 600))
        await ua.close()
        await registrar.stop()
        try await group.shutdownGracefully()
        #expect(result.statusCode == 200)
        #expect(trace.transport == transport)
        let lines: [String] = trace.events.map {
            switch $0.kind {
            case .sent(let bytes): "sent " + Self.startLine(bytes)
            case .received(let bytes): "received " + Self.startLine(bytes)
            case .closed: "closed"
            }
        }
        #expect(
            lines == [
                "sent REGISTER sip:example.org SIP/2.0", "received SIP/2.0 401 Unauthorized",
                "sent REGISTER sip:example.org SIP/2.0", "received SIP/2.0 200 OK",
            ])
        guard case .sent(let second) = trace.events[2].kind else { return }
        #expect(try SIPParser.parseDatagram(second).headers["Authorization"]?.hasPrefix("Digest ") == true)
        let times = trace.events.map(\.milliseconds)
        #expect(times == times.sorted())
    }

    /// A registrar that hangs up on the request: the peer's close is an event, after the request.
    @Test func thePeersCloseIsAnEvent() async throws {
        var options = TestRegistrar.Options()
        options.closeOnRequest = true
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let registrar = try await TestRegistrar.start(.tcp, options: options, group: group)
        let trace = SIPTrace()
        var configuration = SIPUserAgentConfiguration(timers: SIPTimers(t1: .milliseconds(250)))
        configuration.trace = trace
        let ua = SIPUserAgent(configuration: configuration, eventLoopGroup: group, logger: Self.logger)
        await #expect(throws: SIPError.self) {
            _ = try await ua.register(
                SIPRegistration(
                    aor: SIPURI(user: "bob", host: "example.org"), password: "secret", proxy: registrar.proxyURI,
                    expires: 600))
        }
        await ua.close()
        await registrar.stop()
        try await group.shutdownGracefully()
        let kinds = trace.events.map(\.kind)
        #expect(kinds.count == 2)
        #expect(kinds.last == .closed)
        if case .sent = kinds.first {} else { Issue.record("the REGISTER is not first: \(kinds)") }
    }

    static func startLine(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.prefix { $0 != 0x0D }, as: UTF8.self)
    }
}
