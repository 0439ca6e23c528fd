import NSEAPNsServer
import NSEDevice
import NSEHTTP
import NSEJSON
import NSETestSupport
import Testing

/// The push request `nse sip-server` sends (NSEHTTP's libcurl client, HTTP/2 prior knowledge on an http:// URL, the
/// same headers as NSESIPServer's PushParameters.request) reaches `nse serve`'s main listener and is delivered.
@Suite struct SIPServerPushTests {
    @Test func flexisipStylePushOverH2cPriorKnowledgeIsAccepted() async throws {
        let root = try TestSupport.temporaryDirectory("nse-serve-sip")
        let device = try Device.create(at: root + "/bob")
        let server = try await InProcessServer(PushServerConfiguration(host: "127.0.0.1", port: 0), device: device)
        let payload: JSON = [
            "aps": [
                "alert": ["loc-key": "IM_MSG", "loc-args": ["Alice"]], "sound": "msg.caf", "mutable-content": 1,
                "badge": 1,
            ],
            "from-uri": "sip:alice@example.org", "display-name": "Alice", "call-id": "2a3b4c5d@192.0.2.10",
            "pn_ttl": 2_592_000,
        ]
        let request = HTTPRequest(
            method: "POST", url: "\(server.url)/3/device/\(device.config.remoteToken)",
            headers: HTTPHeaders([
                ("apns-topic", device.config.bundleID), ("apns-push-type", "alert"), ("apns-priority", "10"),
                ("apns-expiration", "1893456000"), ("Content-Type", "application/json"),
            ]),
            body: payload.serializedBytes(), version: .http2PriorKnowledge)
        let response = try await HTTPClient().send(request)
        #expect(response.status == 200)
        #expect(response.httpVersion.hasPrefix("2"))
        let apnsID = try #require(response.headers["apns-id"])
        await server.stop()
        let recorded = try server.service.store.results(for: device, limit: 1)
        #expect(recorded.first?["apns_id"]?.stringValue == apnsID)
        // No envelope: the reference extension falls back to the app's localized text.
        #expect(
            recorded.first?["outcome"]?.stringValue == "fallback"
                || recorded.first?["outcome"]?.stringValue == "original")
    }
}
