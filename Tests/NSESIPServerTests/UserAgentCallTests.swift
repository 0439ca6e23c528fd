import NSESIP
import NSESIPServer
import NSETestSupport
import Testing

/// nse's user agent at both ends of a call through nse's SIP server: the caller's INVITE client transaction and
/// dialog (ACK of the 2xx, CANCEL, BYE), and the callee's answers (100, 180, 200 with its session, 603, 487 after
/// a CANCEL), over UDP and TCP.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct UserAgentCallTests {
    static let offer = Array(
        "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n".utf8)

    func callee() -> SIPUserAgent {
        var configuration = SIPUserAgentConfiguration(timers: SIPTimers(t1: .milliseconds(100), t2: .milliseconds(400)))
        configuration.acceptsCalls = true
        return SIPUserAgent(configuration: configuration, logger: quietLogger)
    }

    /// Alice calls Bob, who is registered without push parameters on `kind`; `body` plays both ends.
    func withCall(
        over kind: SIPTransportKind, _ body: @escaping @Sendable (SIPCall, SIPUserAgent) async throws -> Void
    ) async throws {
        let (bob, alice) = (callee(), fastUA())
        try await withSIPServer(serverConfiguration([kind]), closing: [bob, alice]) { _, addresses in
            let registered = try await registerDevice(bob, proxy: addresses.proxy(kind), push: false)
            #expect(registered.statusCode == 200)
            let call = try await alice.call(
                SIPOutgoingCall(to: bobAOR, from: aliceAOR, proxy: addresses.proxy(kind), body: Self.offer))
            try await withTimeout(20, "the call") { try await body(call, bob) }
        }
    }

    /// The next call Bob is offered.
    func offered(_ bob: SIPUserAgent) async throws -> SIPCall {
        var calls = bob.incomingCalls.makeAsyncIterator()
        return try #require(await calls.next())
    }

    /// The caller's events until the call is answered or over, as status codes (`answered` 2xx, `refused`).
    func callerEvents(_ call: SIPCall, until stop: (SIPCallEvent) -> Bool) async -> [SIPCallEvent] {
        var seen: [SIPCallEvent] = []
        for await event in call.events {
            seen.append(event)
            if stop(event) { break }
        }
        return seen
    }

    static func statuses(_ events: [SIPCallEvent]) -> [String] {
        events.map { event in
            switch event {
            case .progress(let response): "progress \(response.statusCode)"
            case .answered(let response): "answered \(response.statusCode)"
            case .refused(let response): "refused \(response.statusCode)"
            case .confirmed: "confirmed"
            case .cancelled: "cancelled"
            case .remoteHangUp: "remote hang-up"
            case .failed(let error): "failed \(error.code)"
            }
        }
    }

    @Test(arguments: [SIPTransportKind.udp, .tcp])
    func answeredThenTheCallerHangsUp(over kind: SIPTransportKind) async throws {
        try await withCall(over: kind) { call, bob in
            let incoming = try await offered(bob)
            #expect(incoming.role == .callee && incoming.callID == call.callID)
            #expect(incoming.invite.body == Self.offer)
            #expect(await incoming.ring())
            #expect(await incoming.answer(body: Self.offer))
            let heard = Self.statuses(
                await callerEvents(call) { if case .answered = $0 { true } else { false } })
            #expect(heard.last == "answered 200")
            #expect(heard.contains("progress 180"))
            var bobEvents = incoming.events.makeAsyncIterator()
            #expect(await bobEvents.next() == .confirmed)
            #expect(await call.hangUp() == 200)
            #expect(await bobEvents.next() == .remoteHangUp)
            #expect(await bobEvents.next() == nil)
            // Nothing left to hang up on either side.
            #expect(await call.hangUp() == nil)
            #expect(await incoming.hangUp() == nil)
        }
    }

    @Test(arguments: [SIPTransportKind.udp, .tcp])
    func theCalleeHangsUp(over kind: SIPTransportKind) async throws {
        try await withCall(over: kind) { call, bob in
            let incoming = try await offered(bob)
            #expect(await incoming.answer(body: Self.offer))
            _ = await callerEvents(call) { if case .answered = $0 { true } else { false } }
            var bobEvents = incoming.events.makeAsyncIterator()
            #expect(await bobEvents.next() == .confirmed)
            #expect(await incoming.hangUp() == 200)
            #expect(Self.statuses(await callerEvents(call) { _ in false }) == ["remote hang-up"])
        }
    }

    @Test func declined() async throws {
        try await withCall(over: .udp) { call, bob in
            let incoming = try await offered(bob)
            #expect(await incoming.reject(statusCode: 603))
            let heard = Self.statuses(await callerEvents(call) { _ in false })
            #expect(heard.last == "refused 603")
            #expect(await incoming.answer(body: Self.offer) == false)
        }
    }

    @Test(arguments: [SIPTransportKind.udp, .tcp])
    func theCallerCancelsWhileItRings(over kind: SIPTransportKind) async throws {
        try await withCall(over: kind) { call, bob in
            let incoming = try await offered(bob)
            #expect(await incoming.ring())
            _ = await callerEvents(call) { event in
                if case .progress(let response) = event { response.statusCode == 180 } else { false }
            }
            #expect(await call.cancel())
            var bobEvents = incoming.events.makeAsyncIterator()
            guard case .cancelled = await bobEvents.next() else {
                Issue.record("Bob's phone did not learn of the CANCEL")
                return
            }
            let heard = Self.statuses(await callerEvents(call) { _ in false })
            #expect(heard.last == "refused 487")
            #expect(await incoming.answer(body: Self.offer) == false)
        }
    }
}
