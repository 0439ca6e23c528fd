import Foundation
import NSESIP
import NSESIPServer
import Testing

@Suite("Digest auth and fault knobs", .serialized, .timeLimit(.minutes(2)))
struct AuthAndFaultTests {
    @Test(
        "Digest auth on REGISTER from a users file: SHA-256 and MD5, wrong password → 403",
        arguments: [
            [DigestAlgorithm.sha256, .md5], [DigestAlgorithm.md5],
        ])
    func digestAuth(algorithms: [DigestAlgorithm]) async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        try "# test users\nbob s3cret\n\n  carol other # trailing\n".write(
            toFile: dir.file("users"), atomically: true, encoding: .utf8)
        var config = serverConfiguration([.tcp])
        config.usersFile = dir.file("users")
        config.authAlgorithms = algorithms
        let good = fastUA()
        let bad = fastUA()
        let none = fastUA()
        try await withSIPServer(config, closing: [good, bad, none]) { server, addresses in
            let proxy = addresses.proxy(.tcp)
            let ok = try await registerDevice(good, proxy: proxy, password: "s3cret")
            #expect(ok.statusCode == 200)
            #expect(ok.requestCount == 2)
            #expect(await server.bindingCount(aor: "sip:bob@example.org") == 1)
            let rejected = try await registerDevice(bad, proxy: proxy, password: "wrong")
            #expect(rejected.statusCode == 403)
            await #expect(throws: SIPError.self) {
                _ = try await registerDevice(none, proxy: proxy, password: nil)
            }
            // The challenge offers what is configured.
            let events = await server.eventLog()
            #expect(
                events.contains {
                    if case .answered("REGISTER", _, 401) = $0 { return true }
                    return false
                })
        }
    }

    @Test("deliverDuplicates: the held MESSAGE is sent twice with one branch; the device sees it once")
    func deliverDuplicates() async throws {
        var config = serverConfiguration([.udp], acceptTimeout: .milliseconds(200))
        config.faults.deliverDuplicates = true
        let sender = fastUA()
        let device2 = fastUA()
        try await withSIPServer(config, closing: [device2, sender]) { server, addresses in
            let proxy = addresses.proxy(.udp)
            let device1 = fastUA()
            #expect(try await registerDevice(device1, proxy: proxy).statusCode == 200)
            await device1.close()
            #expect(try await sendFromAlice(sender, proxy: proxy, body: "dup", callID: "dup-1").statusCode == 202)
            let collector = MessageCollector(device2)
            #expect(try await registerDevice(device2, proxy: proxy).statusCode == 200)
            _ = try await collector.waitForCount(1)
            try await eventually("delivered") { await server.undeliveredCallIDs().isEmpty }
            try await Task.sleep(for: .milliseconds(300))
            #expect(collector.messages.count == 1)
            let events = await server.eventLog()
            // One live attempt to the dead first flow, then two copies of the same attempt on REGISTER.
            let copies = events.compactMap { event -> Int? in
                if case .forwarded(_, "dup-1", _, let attempt) = event { return attempt }
                return nil
            }
            #expect(copies.count >= 2)
            #expect(copies.suffix(2).allSatisfy { $0 == copies.last })
            #expect(
                count(events) {
                    if case .delivered(_, "dup-1", _, _, _) = $0 { return true }
                    return false
                } == 1)
        }
    }

    @Test("unrelatedCallIDFirst: a MESSAGE with a fresh Call-ID arrives before the held one")
    func unrelatedCallIDFirst() async throws {
        var config = serverConfiguration([.tcp], acceptTimeout: .milliseconds(200))
        config.faults.unrelatedCallIDFirst = true
        let sender = fastUA()
        let device2 = fastUA()
        try await withSIPServer(config, closing: [device2, sender]) { server, addresses in
            let proxy = addresses.proxy(.tcp)
            let device1 = fastUA()
            #expect(try await registerDevice(device1, proxy: proxy).statusCode == 200)
            await device1.close()
            try await Task.sleep(for: .milliseconds(100))
            #expect(
                try await sendFromAlice(sender, proxy: proxy, body: "the one", callID: "wanted-1").statusCode == 202)
            let collector = MessageCollector(device2)
            #expect(try await registerDevice(device2, proxy: proxy).statusCode == 200)
            let received = try await collector.waitForCount(2)
            #expect(received[0].callID != "wanted-1")
            #expect(received[1].callID == "wanted-1")
            #expect(String(decoding: received[1].body, as: UTF8.self) == "the one")
        }
    }

    @Test("dropFirstPackets: the first UDP datagrams are ignored, the retransmission succeeds")
    func dropFirstPackets() async throws {
        var config = serverConfiguration([.udp])
        config.faults.dropFirstPackets = 2
        let device = fastUA()
        try await withSIPServer(config, closing: [device]) { server, addresses in
            let proxy = addresses.proxy(.udp)
            let clock = ContinuousClock()
            let start = clock.now
            let result = try await registerDevice(device, proxy: proxy)
            #expect(result.statusCode == 200)
            #expect(clock.now - start >= .milliseconds(250))  // T1 100 ms, then 200 ms: two retransmissions
            #expect(result.observedPort != nil)  // rport filled in
        }
    }

    @Test("answer503, alwaysChallenge, neverAnswer, resetConnectionAfterRegister, delayMilliseconds")
    func simpleKnobs() async throws {
        func run(
            _ faults: SIPServerConfiguration.Faults, transport: SIPTransportKind = .tcp,
            _ check: @Sendable (SIPURI, SIPUserAgent) async throws -> Void
        ) async throws {
            var config = serverConfiguration([transport])
            config.faults = faults
            let agent = fastUA()
            try await withSIPServer(config, closing: [agent]) { server, addresses in
                let proxy = addresses.proxy(transport)
                try await check(proxy, agent)
            }
        }
        try await run(SIPServerConfiguration.Faults(answer503: true)) { proxy, agent in
            let result = try await registerDevice(agent, proxy: proxy)
            #expect(result.statusCode == 503)
        }
        try await run(SIPServerConfiguration.Faults(alwaysChallenge: true)) { proxy, agent in
            await #expect(throws: SIPError.self) { _ = try await registerDevice(agent, proxy: proxy, password: "x") }
        }
        try await run(SIPServerConfiguration.Faults(resetConnectionAfterRegister: true)) { proxy, agent in
            await #expect(throws: SIPError.self) {
                _ = try await withTimeout(10, "REGISTER on a reset connection") {
                    try await registerDevice(agent, proxy: proxy)
                }
            }
        }
        try await run(SIPServerConfiguration.Faults(neverAnswer: true)) { proxy, agent in
            // Timer F of the fast UA is 6.4 s; bound the wait ourselves.
            await #expect(throws: (any Error).self) {
                _ = try await withTimeout(1.5, "REGISTER to a mute server") {
                    try await registerDevice(agent, proxy: proxy)
                }
            }
        }
        try await run(SIPServerConfiguration.Faults(delayMilliseconds: 300)) { proxy, agent in
            let clock = ContinuousClock()
            let start = clock.now
            let result = try await registerDevice(agent, proxy: proxy)
            #expect(result.statusCode == 200)
            #expect(clock.now - start >= .milliseconds(300))
        }
    }
}
