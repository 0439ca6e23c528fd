import Glibc
import Logging
import NIOCore
import NIOPosix
import NSECertificates
import Synchronization
import Testing

@testable import NSESIP

/// Loopback tests against `TestRegistrar`; every wait is bounded.
@Suite(.serialized, .timeLimit(.minutes(1))) struct LiveUserAgentTests {
    static let aor = SIPURI(user: "bob", host: "example.org")
    static let logger = Logger(label: "test.sip")

    /// A user agent that pins `registrar`'s certificate when given (each registrar makes its own), as a device pins
    /// its server's.
    static func makeUA(
        t1: Duration = .milliseconds(250), group: any EventLoopGroup, trusting registrar: TestRegistrar? = nil,
        acceptor: (@Sendable (SIPReceivedMessage) async -> SIPMessageAnswer)? = nil
    ) -> SIPUserAgent {
        var configuration = SIPUserAgentConfiguration(timers: SIPTimers(t1: t1))
        if let registrar {
            configuration.tls = SIPTLSOptions(
                trust: .pinnedCertificatePEM(Array(registrar.certificate.certificatePEM.utf8)), verifyHostname: false)
        }
        configuration.messageAcceptor = acceptor
        return SIPUserAgent(configuration: configuration, eventLoopGroup: group, logger: Self.logger)
    }

    /// Runs `body` with a fresh group, registrar and user agent, always cleaning up.
    static func withSetup(
        _ kind: SIPTransportKind, options: TestRegistrar.Options = .init(), t1: Duration = .milliseconds(250),
        acceptor: (@Sendable (SIPReceivedMessage) async -> SIPMessageAnswer)? = nil,
        _ body: (TestRegistrar, SIPUserAgent) async throws -> Void
    ) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let registrar = try await TestRegistrar.start(kind, options: options, group: group)
        let ua = makeUA(t1: t1, group: group, trusting: registrar, acceptor: acceptor)
        do {
            try await body(registrar, ua)
        } catch {
            await ua.close()
            await registrar.stop()
            try? await group.shutdownGracefully()
            throw error
        }
        await ua.close()
        await registrar.stop()
        try? await group.shutdownGracefully()
    }

    static func registration(_ registrar: TestRegistrar, password: String? = "secret") -> SIPRegistration {
        SIPRegistration(
            aor: aor, password: password, proxy: registrar.proxyURI, expires: 600,
            contactURIParameters: [
                SIPParameter("pn-provider", "apns"), SIPParameter("pn-prid", "AAAA:voip&BBBB:remote"),
                SIPParameter("pn-param", "ABCDE12345.org.example.app.voip&remote"),
            ],
            contactHeaderParameters: [
                SIPParameter("+sip.instance", "\"<urn:uuid:00000000-0000-0000-0000-000000000001>\"")
            ])
    }

    @Test(arguments: [SIPTransportKind.udp, .tcp, .tls])
    func registerSucceeds(kind: SIPTransportKind) async throws {
        try await Self.withSetup(kind) { registrar, ua in
            let result = try await ua.register(Self.registration(registrar))
            #expect(result.statusCode == 200)
            #expect(result.expires == 600)
            #expect(result.requestCount == 1)
            #expect(result.elapsed < .seconds(5))
            let state = registrar.state
            #expect(state.requests.count == 1)
            let req = try #require(state.requests.first)
            let transport = try await ua.transport(for: registrar.proxyURI)
            let contact = try #require(req.headers["Contact"])
            let transportParam = kind == .udp ? "" : ";transport=\(kind.rawValue)"
            #expect(
                contact
                    == "<sip:bob@127.0.0.1:\(transport.localPort)\(transportParam);pn-provider=apns;pn-prid=AAAA:voip&BBBB:remote;pn-param=ABCDE12345.org.example.app.voip&remote>;+sip.instance=\"<urn:uuid:00000000-0000-0000-0000-000000000001>\""
            )
            let via = try #require(req.headers.topVia)
            #expect(via.transport == kind.viaToken)
            #expect(via.host == "127.0.0.1")
            #expect(via.port == transport.localPort)
            #expect(via.hasRport)
            #expect(via.branch?.hasPrefix("z9hG4bK") == true)
            #expect(req.headers.cseq?.method == "REGISTER")
            #expect(req.headers.from?.tag != nil)
            // A refresh (convenience API) reuses the Call-ID with a higher CSeq.
            let r = Self.registration(registrar)
            let again = try await ua.register(
                aor: r.aor, password: r.password, proxy: r.proxy, expires: 300,
                contactURIParameters: r.contactURIParameters,
                contactHeaderParameters: r.contactHeaderParameters)
            #expect(again.callID == result.callID)
            let cseqs = registrar.state.requests.compactMap { $0.headers.cseq?.sequence }
            #expect(cseqs.count == 2 && cseqs[1] > cseqs[0])
        }
    }

    @Test(arguments: [SIPTransportKind.udp, .tcp])
    func registerOverIPv6Loopback(kind: SIPTransportKind) async throws {
        var options = TestRegistrar.Options()
        options.host = "::1"
        options.challenge = .www(.md5)
        try await Self.withSetup(kind, options: options) { registrar, ua in
            #expect(registrar.proxyURI.hostPort.hasPrefix("[::1]:"))
            let result = try await ua.register(Self.registration(registrar))
            #expect(result.statusCode == 200)
            #expect(result.contact.uri.host == "::1")
            #expect(result.contact.description.hasPrefix("<sip:bob@[::1]:"))
            #expect(result.observedHost == "::1")
            let transport = try await ua.transport(for: registrar.proxyURI)
            #expect(result.observedPort == transport.localPort)
            #expect(registrar.state.requests.first?.headers.topVia?.host == "::1")
        }
    }

    @Test func provisionalResponseThenFinalOverUDP() async throws {
        var options = TestRegistrar.Options()
        options.provisionalFirst = true
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let registrar = try await TestRegistrar.start(.udp, options: options, group: group)
        let ua = SIPUserAgent(
            configuration: SIPUserAgentConfiguration(timers: SIPTimers(t1: .milliseconds(20), t2: .milliseconds(100))),
            eventLoopGroup: group, logger: Self.logger)
        let result = try await ua.register(Self.registration(registrar))
        #expect(result.statusCode == 200)
        // Retransmissions: at T1 (20 ms, still Timer E), then every T2 (100 ms) once proceeding, not 2*T1.
        #expect(result.elapsed >= .milliseconds(110))
        #expect(registrar.state.requests.count == 3)
        #expect(result.observedHost == "127.0.0.1")
        await ua.close()
        await registrar.stop()
        try? await group.shutdownGracefully()
    }

    @Test func register401MD5OverUDP() async throws {
        var options = TestRegistrar.Options()
        options.challenge = .www(.md5)
        try await Self.withSetup(.udp, options: options) { registrar, ua in
            let result = try await ua.register(Self.registration(registrar))
            #expect(result.statusCode == 200)
            #expect(result.requestCount == 2)
            let second = try #require(registrar.state.requests.last)
            let auth = try DigestCredentials(parsing: try #require(second.headers["Authorization"]))
            #expect(auth.algorithm == .md5)
            #expect(auth.nonceCount == "00000001")
            #expect(auth.qop == "auth")
            #expect(auth.username == "bob")
            // The next REGISTER re-uses the cached nonce with nc=00000002.
            _ = try await ua.register(Self.registration(registrar))
            let third = try #require(registrar.state.requests.last)
            let auth3 = try DigestCredentials(parsing: try #require(third.headers["Authorization"]))
            #expect(auth3.nonce == auth.nonce)
            #expect(auth3.nonceCount == "00000002")
        }
    }

    @Test(arguments: [SIPTransportKind.tcp, .tls])
    func register407SHA256(kind: SIPTransportKind) async throws {
        var options = TestRegistrar.Options()
        options.challenge = .proxy(.sha256)
        try await Self.withSetup(kind, options: options) { registrar, ua in
            let result = try await ua.register(Self.registration(registrar))
            #expect(result.statusCode == 200)
            #expect(result.requestCount == 2)
            let second = try #require(registrar.state.requests.last)
            let auth = try DigestCredentials(parsing: try #require(second.headers["Proxy-Authorization"]))
            #expect(auth.algorithm == .sha256)
            #expect(second.headers["Authorization"] == nil)
        }
    }

    @Test func prefersSHA256WhenBothOffered() async throws {
        var options = TestRegistrar.Options()
        options.challenge = .www(.sha256)
        options.offerMD5Too = true
        try await Self.withSetup(.udp, options: options) { registrar, ua in
            let result = try await ua.register(Self.registration(registrar))
            #expect(result.statusCode == 200)
            let auth = try DigestCredentials(
                parsing: try #require(registrar.state.requests.last?.headers["Authorization"]))
            #expect(auth.algorithm == .sha256)
        }
    }

    @Test func intervalTooBriefIsRetriedWithMinExpires() async throws {
        var options = TestRegistrar.Options()
        options.minExpires = 1200
        options.challenge = .www(.md5)
        try await Self.withSetup(.tcp, options: options) { registrar, ua in
            let result = try await ua.register(Self.registration(registrar))
            #expect(result.statusCode == 200)
            #expect(result.expires == 1200)
            #expect(result.requestCount == 3)
            #expect(registrar.state.requests.last?.headers.expires == 1200)
        }
    }

    @Test func oversizedOutgoingMessageIsRejected() async throws {
        try await Self.withSetup(.tcp) { registrar, ua in
            let outgoing = SIPOutgoingMessage(
                to: SIPURI(user: "alice", host: "example.org"), from: Self.aor,
                proxy: registrar.proxyURI, body: [UInt8](repeating: 0x41, count: 70_000))
            await expectSIPErrorAsync(.messageTooLarge) { _ = try await ua.sendMessage(outgoing) }
            #expect(registrar.state.requests.isEmpty)
        }
    }

    @Test func malformedDatagramsAreIgnored() async throws {
        var options = TestRegistrar.Options()
        options.garbageBeforeReplies = true
        try await Self.withSetup(.udp, options: options) { registrar, ua in
            let result = try await ua.register(Self.registration(registrar))
            #expect(result.statusCode == 200)
        }
    }

    @Test func connectionClosedByServerFailsFast() async throws {
        var options = TestRegistrar.Options()
        options.closeOnRequest = true
        try await Self.withSetup(.tcp, options: options, t1: .milliseconds(500)) { registrar, ua in
            let start = ContinuousClock.now
            await expectSIPErrorAsync(.transport) { _ = try await ua.register(Self.registration(registrar)) }
            #expect(ContinuousClock.now - start < .seconds(5))
            // The next attempt opens a new connection (and fails the same way).
            await expectSIPErrorAsync(.transport) { _ = try await ua.register(Self.registration(registrar)) }
            #expect(registrar.state.requests.count == 2)
        }
    }

    @Test func cancellationEndsAPendingTransaction() async throws {
        var options = TestRegistrar.Options()
        options.neverAnswer = true
        try await Self.withSetup(.udp, options: options, t1: .milliseconds(500)) { registrar, ua in
            let registration = Self.registration(registrar)
            let task = Task { try await ua.register(registration) }
            #expect(await registrar.waitUntil { !$0.requests.isEmpty })
            let start = ContinuousClock.now
            task.cancel()
            let outcome = await task.result
            #expect(ContinuousClock.now - start < .seconds(2))
            #expect(throws: CancellationError.self) { try outcome.get() }
        }
    }

    @Test func udpPortUnreachableFailsFast() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let probe = try await DatagramBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        let port = probe.localAddress?.port ?? 1
        try await probe.close().get()
        let ua = Self.makeUA(t1: .milliseconds(500), group: group)
        let start = ContinuousClock.now
        await expectSIPErrorAsync(.transport) {
            _ = try await ua.register(SIPRegistration(aor: Self.aor, proxy: SIPURI(host: "127.0.0.1", port: port)))
        }
        #expect(ContinuousClock.now - start < .seconds(5))
        await ua.close()
        try? await group.shutdownGracefully()
    }

    @Test func connectionRefusedIsATransportError() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // Find a free port by binding and closing a listener.
        let probe = try await ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        let port = probe.localAddress?.port ?? 1
        try await probe.close().get()
        let ua = Self.makeUA(group: group)
        let proxy = SIPURI(host: "127.0.0.1", port: port, parameters: [SIPParameter("transport", "tcp")])
        await expectSIPErrorAsync(.transport) {
            _ = try await ua.register(SIPRegistration(aor: Self.aor, proxy: proxy))
        }
        await ua.close()
        try? await group.shutdownGracefully()
    }

    @Test func wrongPasswordFailsClearly() async throws {
        var options = TestRegistrar.Options()
        options.challenge = .www(.md5)
        try await Self.withSetup(.tcp, options: options) { registrar, ua in
            await expectSIPErrorAsync(.authenticationFailed) {
                _ = try await ua.register(Self.registration(registrar, password: "nope"))
            }
            #expect(registrar.state.requests.count == 4)
            await expectSIPErrorAsync(.authenticationFailed) {
                _ = try await ua.register(Self.registration(registrar, password: nil))
            }
            // CSeq keeps increasing across failed attempts within the same Call-ID.
            let cseqs = registrar.state.requests.compactMap { $0.headers.cseq?.sequence }
            #expect(cseqs == cseqs.sorted() && Set(cseqs).count == cseqs.count)
            #expect(Set(registrar.state.requests.compactMap { $0.headers.callID }).count == 1)
        }
    }

    @Test func alwaysChallengingServerFailsAfterThreeAttempts() async throws {
        var options = TestRegistrar.Options()
        options.challenge = .always(.sha256)
        try await Self.withSetup(.udp, options: options) { registrar, ua in
            let start = ContinuousClock.now
            await expectSIPErrorAsync(.authenticationFailed) { _ = try await ua.register(Self.registration(registrar)) }
            #expect(ContinuousClock.now - start < .seconds(5))
            #expect(registrar.state.requests.count == 4)
        }
    }

    @Test func udpLossIsRecoveredByRetransmission() async throws {
        var options = TestRegistrar.Options()
        options.dropFirstRequests = 1
        try await Self.withSetup(.udp, options: options, t1: .milliseconds(30)) { registrar, ua in
            let result = try await ua.register(Self.registration(registrar))
            #expect(result.statusCode == 200)
            #expect(result.requestCount == 1)
            let reqs = registrar.state.requests
            #expect((2...3).contains(reqs.count))  // a third copy only if the machine is very slow
            #expect(reqs.first?.headers.topVia?.branch == reqs.last?.headers.topVia?.branch)
        }
    }

    @Test func silentServerTimesOutOverUDP() async throws {
        var options = TestRegistrar.Options()
        options.neverAnswer = true
        try await Self.withSetup(.udp, options: options, t1: .milliseconds(20)) { registrar, ua in
            let start = ContinuousClock.now
            await expectSIPErrorAsync(.timeout) { _ = try await ua.register(Self.registration(registrar)) }
            let elapsed = ContinuousClock.now - start
            #expect(elapsed >= .milliseconds(1200) && elapsed < .seconds(5))
            // Retransmissions at 20, 60, 140, 300, 620, 1260 ms (capped by Timer F = 1280 ms).
            #expect(registrar.state.requests.count >= 4)
            #expect(registrar.state.requests.count <= 8)
        }
    }

    @Test func silentServerTimesOutOverTCPWithoutRetransmission() async throws {
        var options = TestRegistrar.Options()
        options.neverAnswer = true
        try await Self.withSetup(.tcp, options: options, t1: .milliseconds(20)) { registrar, ua in
            await expectSIPErrorAsync(.timeout) { _ = try await ua.register(Self.registration(registrar)) }
            #expect(registrar.state.requests.count == 1)
        }
    }

    @Test(arguments: [SIPTransportKind.udp, .tcp, .tls])
    func incomingMessagesAreAnsweredAndDeduplicated(kind: SIPTransportKind) async throws {
        var options = TestRegistrar.Options()
        options.sendMessagesAfterRegister = true
        try await Self.withSetup(kind, options: options) { registrar, ua in
            let collector = Task { () -> [SIPReceivedMessage] in
                var got: [SIPReceivedMessage] = []
                for await m in ua.messages {
                    got.append(m)
                    if got.count == 2 { break }
                }
                return got
            }
            let result = try await ua.register(Self.registration(registrar))
            #expect(result.statusCode == 200)
            let answered = await registrar.waitUntil { $0.messageResponses.count >= 4 }
            #expect(answered)
            let statuses = registrar.state.messageResponses.map(\.statusCode)
            #expect(statuses == [200, 200, 200, 200])
            #expect(
                registrar.state.messageResponses.map { $0.headers.callID ?? "" } == [
                    "call-A", "call-A", "call-B", "call-A",
                ])
            // The retransmission is answered with the same stored response (same To tag).
            let tags = registrar.state.messageResponses.map { $0.headers.to?.tag }
            #expect(tags[0] != nil && tags[0] == tags[1])
            let timeout = Task {
                try await Task.sleep(for: .seconds(5))
                collector.cancel()
            }
            let messages = await collector.value
            timeout.cancel()
            #expect(messages.map(\.callID) == ["call-A", "call-B"])
            #expect(messages.first?.body == Array("hello call-A".utf8))
            #expect(messages.first?.contentType == "text/plain")
            #expect(messages.first?.from?.uri.user == "alice")
            // The same messages are queued for nextMessage(timeout:).
            #expect(await ua.nextMessage(timeout: .seconds(2))?.callID == "call-A")
            #expect(await ua.nextMessage(timeout: .seconds(2))?.callID == "call-B")
            let start = ContinuousClock.now
            #expect(await ua.nextMessage(timeout: .milliseconds(100)) == nil)
            #expect(ContinuousClock.now - start < .seconds(2))
        }
    }

    /// A MESSAGE is answered only once its consumer has decided: one it could not keep gets the consumer's 500 and
    /// is not delivered; one with a control character in a header gets 400 naming the header, not its value.
    @Test(arguments: ["call-B", "call\u{0}B", "call\u{1B}[2JB"])
    func messagesAreAnsweredAsTheirConsumerDecides(secondCallID: String) async throws {
        var options = TestRegistrar.Options()
        options.sendMessagesAfterRegister = true
        options.secondCallID = secondCallID
        let offered = Mutex<[String]>([])
        let acceptor: @Sendable (SIPReceivedMessage) async -> SIPMessageAnswer = { message in
            offered.withLock { $0.append(message.callID) }
            return message.callID == "call-B"
                ? SIPMessageAnswer(statusCode: 500, reasonPhrase: "Message Not Stored") : .accepted
        }
        try await Self.withSetup(.tcp, options: options, acceptor: acceptor) { registrar, ua in
            let result = try await ua.register(Self.registration(registrar))
            #expect(result.statusCode == 200)
            #expect(await registrar.waitUntil { $0.messageResponses.count >= 4 })
            let responses = registrar.state.messageResponses
            let expected = secondCallID == "call-B" ? 500 : 400
            #expect(responses.map(\.statusCode) == [200, 200, expected, 200])
            if expected == 400 {
                #expect(responses[2].reasonPhrase == "Invalid Call-ID Header")
            } else {
                #expect(responses[2].reasonPhrase == "Message Not Stored")
            }
            // The consumer saw call-A once (its retransmission and redelivery are not offered again) and the
            // refused one; one with a control character never reached it.
            #expect(offered.withLock { $0 } == (expected == 500 ? ["call-A", "call-B"] : ["call-A"]))
            #expect(await ua.nextMessage(timeout: .seconds(2))?.callID == "call-A")
            #expect(await ua.nextMessage(timeout: .milliseconds(200)) == nil)
        }
    }

    @Test func sendMessageWithDigestRetry() async throws {
        var options = TestRegistrar.Options()
        options.challenge = .www(.md5)
        try await Self.withSetup(.tcp, options: options) { registrar, ua in
            var extra = SIPHeaders()
            extra.add("X-Test", "1")
            let outgoing = SIPOutgoingMessage(
                to: SIPURI(user: "alice", host: "example.org"), from: Self.aor,
                proxy: registrar.proxyURI, contentType: "message/imdn+xml",
                body: Array("<imdn/>".utf8), extraHeaders: extra, callID: "fixed-call-id",
                password: "secret")
            let result = try await ua.sendMessage(outgoing)
            #expect(result.statusCode == 202)
            #expect(result.requestCount == 2)
            #expect(result.callID == "fixed-call-id")
            let req = try #require(registrar.state.requests.last)
            #expect(req.method == "MESSAGE")
            #expect(req.headers["X-Test"] == "1")
            #expect(req.headers.contentType == "message/imdn+xml")
            #expect(req.body == Array("<imdn/>".utf8))
            #expect(req.headers["Authorization"] != nil)
            // Re-using the Call-ID continues the CSeq sequence.
            let again = try await ua.sendMessage(
                to: outgoing.to, from: outgoing.from, proxy: outgoing.proxy,
                contentType: "text/plain", body: [], callID: "fixed-call-id", password: "secret")
            #expect(again.callID == "fixed-call-id")
            #expect(again.statusCode == 202)
            #expect(again.requestCount == 1)  // cached challenge: nc=00000002 sent pre-emptively
            let cseqs = registrar.state.requests.compactMap { $0.headers.cseq?.sequence }
            #expect(cseqs == cseqs.sorted() && Set(cseqs).count == cseqs.count)
        }
    }

    @Test func tlsTrustsCAFileAndRejectsUnknownCertificates() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let registrar = try await TestRegistrar.start(.tls, group: group)
        let dir = "/tmp/nsesip-test-\(ProcessInfoLite.pid)"
        let path = dir + "-ca.pem"
        try TestFiles.write(path, registrar.certificate.certificatePEM)
        let ok = SIPUserAgent(
            configuration: SIPUserAgentConfiguration(tls: SIPTLSOptions(trust: .caFile(path), verifyHostname: false)),
            eventLoopGroup: group, logger: Self.logger)
        let result = try await ok.register(Self.registration(registrar))
        #expect(result.statusCode == 200)
        await ok.close()
        // Full verification with SNI "localhost" (the certificate's DNS name).
        let verified = SIPUserAgent(
            configuration: SIPUserAgentConfiguration(
                tls: SIPTLSOptions(trust: .caFile(path), verifyHostname: true, serverName: "localhost")),
            eventLoopGroup: group, logger: Self.logger)
        #expect(try await verified.register(Self.registration(registrar)).statusCode == 200)
        await verified.close()
        // An unrelated CA or pinned certificate must be refused (clear transport error, no hang).
        let other = try SelfSignedCertificate(dnsNames: ["other.invalid"], ipv4Addresses: [])
        let otherPath = dir + "-other.pem"
        try TestFiles.write(otherPath, other.certificatePEM)
        for trust in [
            SIPTLSOptions.Trust.caFile(otherPath),
            .pinnedCertificatePEM(Array(other.certificatePEM.utf8)),
        ] {
            let bad = SIPUserAgent(
                configuration: SIPUserAgentConfiguration(
                    timers: SIPTimers(t1: .milliseconds(20)), tls: SIPTLSOptions(trust: trust, verifyHostname: false)),
                eventLoopGroup: group, logger: Self.logger)
            await expectSIPErrorAsync(.transport) { _ = try await bad.register(Self.registration(registrar)) }
            await bad.close()
        }
        #expect(registrar.state.requests.count == 2)
        unlink(path)
        unlink(otherPath)
        await registrar.stop()
        try? await group.shutdownGracefully()
    }

    @Test func ownedEventLoopGroupShutsDown() async throws {
        let ua = SIPUserAgent(logger: Self.logger)
        let waiter = Task { await ua.nextMessage(timeout: .seconds(30)) }
        try await Task.sleep(for: .milliseconds(20))
        await ua.close()
        #expect(await waiter.value == nil)
        await expectSIPErrorAsync(.closed) { _ = try await ua.transport(for: SIPURI(host: "127.0.0.1", port: 9)) }
    }
}
