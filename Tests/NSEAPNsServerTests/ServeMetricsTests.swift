import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NSEAPNsServer
import NSEDevice
import NSEJSON
import NSEMetrics
import NSETestSupport
import Testing

/// A device and a service that counts into a registry of its own, as `nse serve` makes them.
struct MeteredServer {
    let served: ServedDevice
    let registry: MetricsRegistry
    let service: PushService
    var token: String { served.token }

    init(_ prefix: String, concurrency: Int = 2, queue: Int = 16, extensionCommand: String? = nil) throws {
        served = try ServedDevice(prefix)
        registry = MetricsRegistry(
            valueHistogramBuckets: ServeMetrics.valueHistogramBuckets,
            durationHistogramBuckets: ServeMetrics.durationHistogramBuckets)
        service = PushService(
            devices: [served.device], concurrency: concurrency, queueCapacity: queue,
            extensionCommand: [extensionCommand ?? TestSupport.referenceExtension],
            metrics: ServeMetrics(
                factory: registry.factory, contentType: MetricsRegistry.contentType, exposition: registry.exposition),
            logger: ServedDevice.quietLogger)
    }

    var app: some ApplicationProtocol { Application(responder: PushResponder(service: service)) }

    /// `POST /3/device/{token}` through the router; the status.
    func push(
        _ client: some TestClientProtocol, token: String? = nil, headers: [(String, String)] = [],
        body: String = #"{"aps":{"alert":{"title":"Hi","body":"there"},"mutable-content":1}}"#
    ) async throws -> Int {
        try await client.execute(
            uri: "/3/device/\(token ?? self.token)", method: .post,
            headers: fields([("apns-topic", "org.example.app")] + headers), body: ByteBuffer(string: body)
        ) { Int($0.status.code) }
    }

    /// `GET /metrics` through the router, read.
    func scrape(_ client: some TestClientProtocol) async throws -> MetricsExposition {
        try await client.execute(uri: "/metrics", method: .get) { response in
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "text/plain; version=0.0.4; charset=utf-8")
            return MetricsExposition(String(buffer: response.body))
        }
    }

    /// Waits (bounded) until every accepted push is recorded.
    func settle() async throws {
        for _ in 0..<1000 where service.queue.pending > 0 { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(service.queue.pending == 0)
    }
}

@Suite(.serialized) struct ServeMetricsTests {
    @Test func countsEveryAnswerByPushTypePriorityStatusAndReason() async throws {
        let server = try MeteredServer("nse-metrics-answers")
        try await server.app.test(.router) { client in
            #expect(try await server.push(client, headers: [("apns-push-type", "alert")]) == 200)
            #expect(try await server.push(client, headers: [("apns-push-type", "alert")]) == 200)
            #expect(
                try await server.push(
                    client, headers: [("apns-push-type", "background"), ("apns-priority", "5")],
                    body: #"{"aps":{"content-available":1}}"#) == 200)
            #expect(try await server.push(client, token: "00ff") == 400)
            #expect(try await server.push(client, headers: [("apns-push-type", "bogus")]) == 400)
            #expect(try await server.push(client, headers: [("apns-priority", "7")]) == 400)
            try await server.settle()
            let metrics = try await server.scrape(client)
            let pushes = "nse_apns_pushes_total"
            #expect(
                metrics.value(pushes, ["push_type": "alert", "priority": "10", "status": "200", "reason": ""]) == 2)
            #expect(
                metrics.value(pushes, ["push_type": "background", "priority": "5", "status": "200", "reason": ""]) == 1)
            #expect(
                metrics.value(
                    pushes, ["push_type": "alert", "priority": "10", "status": "400", "reason": "BadDeviceToken"]) == 1)
            // A push type or priority APNs does not know is `invalid`, never the client's own word.
            #expect(
                metrics.value(
                    pushes, ["push_type": "invalid", "priority": "10", "status": "400", "reason": "InvalidPushType"])
                    == 1)
            #expect(
                metrics.value(
                    pushes, ["push_type": "alert", "priority": "invalid", "status": "400", "reason": "BadPriority"])
                    == 1)
            #expect(metrics.sum(pushes) == 6)
            #expect(!metrics.samples.contains { $0.labels.values.contains("bogus") || $0.labels.values.contains("7") })
            #expect(!metrics.samples.contains { $0.labels.values.contains { $0.lowercased() == server.token } })
        }
    }

    @Test func countsOutcomesAndTheExtensionsTimeAndFootprint() async throws {
        let server = try MeteredServer("nse-metrics-outcomes")
        try await server.app.test(.router) { client in
            // Two alerts the extension runs for, and one it is not invoked for (no mutable-content).
            #expect(try await server.push(client) == 200)
            #expect(try await server.push(client) == 200)
            #expect(try await server.push(client, body: #"{"aps":{"alert":"plain"}}"#) == 200)
            try await server.settle()
            let results = try await server.service.results(for: server.served.device, limit: 10, since: 0)
            #expect(results.count == 3)
            let metrics = try await server.scrape(client)
            var outcomes: [String: Double] = [:]
            for result in results { outcomes[result["outcome"]?.stringValue ?? "", default: 0] += 1 }
            for (outcome, count) in outcomes {
                #expect(metrics.value("nse_notifications_total", ["push_type": "alert", "outcome": outcome]) == count)
            }
            #expect(outcomes["not-invoked"] == 1)
            #expect(metrics.sum("nse_notifications_total") == 3)
            // Two processes ran: their wall times and peak footprints, each as the result says.
            #expect(metrics.value("nse_extension_wall_seconds_count") == 2)
            let walls = results.compactMap { $0["extension"]?["wall_ms"]?.doubleValue }
            #expect(walls.count == 2)
            let wallSum = try #require(metrics.value("nse_extension_wall_seconds_sum"))
            #expect(abs(wallSum - walls.reduce(0, +) / 1000) < 0.01)
            #expect(metrics.value("nse_extension_wall_seconds_bucket", ["le": "+Inf"]) == 2)
            #expect(metrics.value("nse_extension_peak_footprint_bytes_count") == 2)
            let footprints = results.compactMap { result -> Double? in
                guard let report = result["extension"] else { return nil }
                return (report["peak_footprint_kb"]?.doubleValue ?? report["peak_rss_kb"]?.doubleValue).map {
                    $0 * 1024
                }
            }
            #expect(metrics.value("nse_extension_peak_footprint_bytes_sum") == footprints.reduce(0, +))
            // Bounded by the buckets the footprint histogram was given: finest below iOS's 24 MB.
            #expect(metrics.value("nse_extension_peak_footprint_bytes_bucket", ["le": "25165824.0"]) == 2)
            #expect(metrics.value("nse_delivery_queue_depth") == 0)
        }
    }

    @Test func showsTheQueueDepthWhileExtensionsRun() async throws {
        let served = try ServedDevice("nse-metrics-queue")
        let gate = served.root + "/go"
        let slow = try served.slowExtension("gated.sh", before: "while [ ! -e \(gate) ]; do sleep 0.02; done")
        let server = try MeteredServer("nse-metrics-queue-server", concurrency: 1, queue: 4, extensionCommand: slow)
        try await server.app.test(.router) { client in
            for _ in 0..<3 { #expect(try await server.push(client) == 200) }
            // One runs, two wait: all three are the queue's until they are recorded.
            #expect(try await server.scrape(client).value("nse_delivery_queue_depth") == 3)
            try TestSupport.write("", to: gate)
            try await server.settle()
            #expect(try await server.scrape(client).value("nse_delivery_queue_depth") == 0)
            #expect(try await server.scrape(client).value("nse_extension_wall_seconds_count") == 3)
        }
    }

    @Test func isNotServedByAServiceMadeWithoutMetrics() async throws {
        let fixture = try ServerFixture()
        try await fixture.app.test(.router) { client in
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(reason(response) == "BadPath")
            }
        }
    }

    /// The connections gauge on a real listener: raw connections that never speak, counted while open and no
    /// more once closed; the scraping connection counts itself.
    @Test func countsOpenConnectionsOnTheListener() async throws {
        let server = try MeteredServer("nse-metrics-connections")
        let (urls, continuation) = AsyncStream.makeStream(of: String.self)
        let running = Task { [service = server.service] in
            defer { continuation.finish() }
            try await PushServer.run(
                PushServerConfiguration(host: "127.0.0.1", port: 0), service: service,
                logger: ServedDevice.quietLogger
            ) { listening in
                if let url = listening.first(where: { $0.0 == "listening" })?.1 { continuation.yield(url) }
            }
        }
        defer { running.cancel() }
        var listening = ""
        for await first in urls {
            listening = first
            break
        }
        let url = listening
        let port = try #require(Int(url.split(separator: ":").last ?? ""))
        @Sendable func openConnections() async throws -> Double? {
            let output = try await runOffPool(
                "/usr/bin/curl", ["-sS", "--max-time", "10", url + "/metrics"], timeout: 20)
            return MetricsExposition(output.stdout).value("nse_http_connections_open")
        }
        func waitFor(_ expected: Double) async throws -> Double? {
            var seen: Double?
            for _ in 0..<100 {
                seen = try await openConnections()
                if seen == expected { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            return seen
        }
        #expect(try await waitFor(1) == 1)
        var silent = try (0..<3).map { _ in try RawConnection(port: port) }
        #expect(try await waitFor(4) == 4)
        silent.removeAll()
        #expect(try await waitFor(1) == 1)
        running.cancel()
        _ = await running.result
    }
}
