import Foundation
import Logging
import NSEMetrics
import NSESIP
import NSETestSupport
import Testing

@testable import NSESIPServer

/// What `nse sip-server` counts: registrations, held messages, pushes, answers and calls, read from the registry's
/// text as `/metrics` serves it.
@Suite("SIP server metrics", .serialized, .timeLimit(.minutes(2)))
struct SIPServerMetricsTests {
    /// A server counting into a registry of its own, as `nse sip-server` makes it.
    func withMeteredServer<T>(
        _ configuration: SIPServerConfiguration, closing agents: [SIPUserAgent],
        _ body: (SIPServer, [SIPServerBoundAddress], MetricsRegistry) async throws -> T
    ) async throws -> T {
        let registry = MetricsRegistry()
        let server = SIPServer(
            configuration: configuration, metrics: SIPServerMetrics(factory: registry.factory), logger: quietLogger)
        let result: Result<T, any Error>
        do {
            let addresses = try await server.start()
            result = .success(try await body(server, addresses, registry))
        } catch {
            result = .failure(error)
        }
        for agent in agents { await agent.close() }
        await server.shutdown()
        return try result.get()
    }

    @Test("A held MESSAGE: the binding, the message held, pushed and delivered, each answer by method and status")
    func heldMessageIsCountedFromArrivalToDelivery() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let push = try await PushReceiver(directory: dir)
        defer { push.stop() }
        let sender = fastUA()
        let device2 = fastUA()
        let config = serverConfiguration([.tcp], push: push, acceptTimeout: .milliseconds(300))
        try await withMeteredServer(config, closing: [device2, sender]) { server, addresses, registry in
            @Sendable func metrics() -> MetricsExposition { MetricsExposition(registry.exposition()) }
            #expect(metrics().value("nse_sip_registrations") == 0)
            #expect(metrics().value("nse_sip_calls", ["phase": "held"]) == 0)
            let proxy = addresses.proxy(.tcp)
            let device1 = fastUA()
            #expect(try await registerDevice(device1, proxy: proxy).statusCode == 200)
            await device1.close()
            #expect(metrics().value("nse_sip_registrations") == 1)
            #expect(metrics().value("nse_sip_responses_total", ["method": "REGISTER", "status": "200"]) == 1)

            #expect(
                try await sendFromAlice(sender, proxy: proxy, body: "secret", callID: "metrics-1").statusCode == 202)
            #expect(metrics().value("nse_sip_held_messages") == 1)
            #expect(metrics().value("nse_sip_messages_held_total") == 1)
            #expect(metrics().value("nse_sip_responses_total", ["method": "MESSAGE", "status": "202"]) == 1)
            try await eventually("push counted") {
                metrics().value("nse_sip_pushes_total", ["status": "200"]) == 1
            }

            // The app registers again under the same instance: one binding still, and the message goes to it.
            let collector = MessageCollector(device2)
            #expect(try await registerDevice(device2, proxy: proxy).statusCode == 200)
            _ = try await collector.waitForCount(1)
            try await eventually("delivered") { metrics().value("nse_sip_messages_delivered_total") == 1 }
            #expect(metrics().value("nse_sip_held_messages") == 0)
            #expect(metrics().value("nse_sip_registrations") == 1)
            #expect(metrics().value("nse_sip_responses_total", ["method": "REGISTER", "status": "200"]) == 2)

            #expect(try await registerDevice(device2, proxy: proxy, expires: 0).statusCode == 200)
            #expect(metrics().value("nse_sip_registrations") == 0)
            // Nothing that names a user, a message or a device: no AOR, Call-ID, token or body in any label.
            let text = String(decoding: registry.exposition(), as: UTF8.self)
            for secret in ["bob", "alice", "metrics-1", "secret", remoteToken] { #expect(!text.contains(secret)) }
            _ = server
        }
    }

    @Test("A MESSAGE for nobody: its 404, and a method the server does not know is `other`")
    func answersAreCountedWithBoundedMethods() async throws {
        let sender = fastUA()
        try await withMeteredServer(serverConfiguration([.tcp]), closing: [sender]) { _, addresses, registry in
            let sent = try await sendFromAlice(sender, proxy: addresses.proxy(.tcp), body: "x", callID: "nobody-1")
            #expect(sent.statusCode == 404)
            let metrics = MetricsExposition(registry.exposition())
            #expect(metrics.value("nse_sip_responses_total", ["method": "MESSAGE", "status": "404"]) == 1)
            #expect(metrics.value("nse_sip_held_messages") == 0)
        }
        let registry = MetricsRegistry()
        let metrics = SIPServerMetrics(factory: registry.factory)
        metrics.count(.answered(method: "X-MADE-UP-\(UUID())", callID: "c", status: 501))
        metrics.count(.pushed(aor: "sip:bob@example.org", callID: "c", url: "http://x", status: nil, reason: "down"))
        let exposition = MetricsExposition(registry.exposition())
        #expect(exposition.value("nse_sip_responses_total", ["method": "other", "status": "501"]) == 1)
        #expect(exposition.value("nse_sip_pushes_total", ["status": "none"]) == 1)
    }

    @Test("Calls: a gauge per phase as a call moves, and its end counted by reason")
    func callsMoveThroughThePhaseGauges() throws {
        let registry = MetricsRegistry()
        let metrics = SIPServerMetrics(factory: registry.factory)
        func gauges() -> [String: Double] {
            let exposition = MetricsExposition(registry.exposition())
            return Dictionary(
                uniqueKeysWithValues: ["held", "forking", "answered"].map {
                    ($0, exposition.value("nse_sip_calls", ["phase": $0]) ?? -1)
                })
        }
        metrics.callMoved(from: nil, to: .held)
        metrics.callMoved(from: nil, to: .held)
        #expect(gauges() == ["held": 2, "forking": 0, "answered": 0])
        metrics.callMoved(from: .held, to: .forking)
        metrics.callMoved(from: .forking, to: .answered(branch: "z9hG4bK-1"))
        #expect(gauges() == ["held": 1, "forking": 0, "answered": 1])
        // Moving within a phase, or between phases over for the caller, changes nothing.
        metrics.callMoved(from: .answered(branch: "z9hG4bK-1"), to: .answered(branch: "z9hG4bK-1"))
        metrics.callMoved(from: .cancelling, to: .ended(since: .now))
        #expect(gauges() == ["held": 1, "forking": 0, "answered": 1])
        metrics.callMoved(from: .answered(branch: "z9hG4bK-1"), to: .ended(since: .now))
        metrics.callMoved(from: .held, to: nil)
        #expect(gauges() == ["held": 0, "forking": 0, "answered": 0])

        for step in [CallStep.held, .forwarded, .ringing, .answered, .hungUp, .cancelled, .cancelled, .timedOut] {
            metrics.count(.call(aor: "sip:bob@example.org", callID: "call-1", step: step, status: nil))
        }
        let exposition = MetricsExposition(registry.exposition())
        #expect(exposition.value("nse_sip_calls_ended_total", ["reason": "hung-up"]) == 1)
        #expect(exposition.value("nse_sip_calls_ended_total", ["reason": "cancelled"]) == 2)
        #expect(exposition.value("nse_sip_calls_ended_total", ["reason": "timed-out"]) == 1)
        #expect(exposition.sum("nse_sip_calls_ended_total") == 4)
    }

    @Test("`--metrics-listen`'s listener serves /metrics alone, and stops when cancelled")
    func listenerServesMetricsOnly() async throws {
        let registry = MetricsRegistry()
        let metrics = SIPServerMetrics(factory: registry.factory)
        metrics.count(.held(aor: "sip:bob@example.org", callID: "c", id: "1", devices: ["uri:bob@127.0.0.1"]))
        let (urls, continuation) = AsyncStream.makeStream(of: String.self)
        let listener = MetricsListener(
            host: "127.0.0.1", port: 0, registry: registry, logger: quietLogger,
            onListening: { continuation.yield($0) })
        let running = Task { try await listener.run() }
        defer { running.cancel() }
        let url = try await withTimeout(10, "the metrics listener") {
            for await url in urls { return url }
            return ""
        }
        #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/metrics"))
        let scraped = try TestSupport.run(
            "/usr/bin/curl", ["-sS", "-D", "-", "--max-time", "10", url], timeout: 20)
        #expect(scraped.stdout.lowercased().contains("content-type: text/plain; version=0.0.4; charset=utf-8"))
        let body = String(scraped.stdout.split(separator: "\r\n\r\n", maxSplits: 1).last ?? "")
        #expect(MetricsExposition(body).value("nse_sip_messages_held_total") == 1)
        let elsewhere = url.replacingOccurrences(of: "/metrics", with: "/v1/control/faults")
        let other = try TestSupport.run(
            "/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", elsewhere],
            timeout: 20)
        #expect(other.stdout == "404")
        running.cancel()
        _ = await running.result
    }
}
