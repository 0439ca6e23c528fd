import Hummingbird
import HummingbirdTesting
import NIOCore
import NSEAPNsServer
import NSEDevice
import NSEJSON
import NSETestSupport
import Testing

/// `PUT /v1/control/devices/{token}/lock`: a push server's CI locks the phone, as `nse device set --lock-state`.
@Suite struct DeviceLockControlTests {
    @Test func theControlEndpointLocksAndUnlocksTheDevice() async throws {
        let fixture = try ServerFixture()
        try await fixture.app.test(.router) { client async throws in
            func put(_ token: String, _ body: String) async throws -> (Int, JSON?) {
                try await client.execute(
                    uri: "/v1/control/devices/\(token)/lock", method: .put, body: ByteBuffer(string: body)
                ) { ($0.status.code, try? JSON.parse(Array($0.body.readableBytesView))) }
            }
            for state in [DeviceLockState.beforeFirstUnlock, .locked, .unlocked] {
                let answer = try await put(fixture.remote, #"{"state":"\#(state.rawValue)"}"#)
                #expect(answer.0 == 200 && answer.1?["state"]?.stringValue == state.rawValue, "\(answer)")
                #expect(try Device.open(at: fixture.device.directory).config.lockState == state)
            }
            for bad in [#"{"state":"asleep"}"#, #"{"locked":true}"#, "{", #"{"state":"locked","x":1}"#] {
                let answer = try await put(fixture.remote, bad)
                #expect(answer.0 == 400 && answer.1?["reason"]?.stringValue == "BadControl", "\(bad): \(answer)")
            }
            #expect(try Device.open(at: fixture.device.directory).config.lockState == .unlocked)
            let unknown = try await put(String(repeating: "ab", count: 32), #"{"state":"locked"}"#)
            #expect(unknown.0 == 400 && unknown.1?["reason"]?.stringValue == "BadDeviceToken")
        }
    }
}
