import Logging
import NSESIP
import ServiceLifecycle
import Testing

@testable import NSESIPServer

@Suite struct ServiceAndFaultPlanTests {
    /// In a ServiceGroup the server binds, serves, and on graceful shutdown stops: `run()` returns, the events
    /// stream finishes, and the server cannot be started again.
    @Test func runsAsAServiceAndStopsGracefully() async throws {
        let server = SIPServer(
            configuration: SIPServerConfiguration(listeners: [.init(transport: .tcp)]), logger: quietLogger)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: server)], logger: Logger(label: "test.lifecycle")))
        let running = Task { try await group.run() }
        try await eventually("the listener is bound") { await !server.addresses.isEmpty }
        let port = try #require(await server.addresses.first?.port)
        #expect(port > 0)
        let events = Task {
            var count = 0
            for await _ in server.events { count += 1 }
            return count
        }
        await group.triggerGracefulShutdown()
        try await withTimeout(5, "the service group to end") { try await running.value }
        _ = try await withTimeout(5, "the events to finish") { await events.value }
        await #expect(throws: SIPServerError.self) { try await server.start() }
    }

    @Test func noKnobMeansBusinessAsUsual() throws {
        var plan = SIPFaultPlan(SIPServerConfiguration.Faults())
        let request = SIPRequest(method: "REGISTER", uri: try SIPURI(parsing: "sip:example.org"))
        let dropped = plan.dropsDatagram()
        #expect(!dropped)
        guard case .handle = plan.arrival(of: request) else {
            Issue.record("arrival is not .handle")
            return
        }
        #expect(plan.answer(for: "REGISTER", over: .tcp) == nil)
        var order: Int64 = 0
        let delivery = plan.delivery(aor: "sip:bob@example.org", host: "h", now: 100) {
            order += 1
            return order
        }
        #expect(delivery.unrelated == nil && delivery.copies == 1 && order == 0)
    }

    @Test func knobsAreAnsweredAtTheirSeam() throws {
        var plan = SIPFaultPlan(
            SIPServerConfiguration.Faults(
                delayMilliseconds: 250, dropFirstPackets: 2, answer503: true, resetConnectionAfterRegister: true,
                deliverDuplicates: true, unrelatedCallIDFirst: true))
        let drops = [plan.dropsDatagram(), plan.dropsDatagram(), plan.dropsDatagram()]
        #expect(drops == [true, true, false])
        let request = SIPRequest(method: "MESSAGE", uri: try SIPURI(parsing: "sip:bob@example.org"))
        guard case .delay(let delay) = plan.arrival(of: request) else {
            Issue.record("arrival is not .delay")
            return
        }
        #expect(delay == .milliseconds(250))
        // The connection reset is for REGISTER over a stream only; 503 otherwise.
        guard case .closeConnection = plan.answer(for: "REGISTER", over: .tcp) else {
            Issue.record("no reset")
            return
        }
        guard case .serviceUnavailable = plan.answer(for: "REGISTER", over: .udp) else {
            Issue.record("no 503")
            return
        }
        let delivery = plan.delivery(aor: "sip:bob@example.org", host: "h", now: 100) { 7 }
        #expect(delivery.copies == 2)
        let unrelated = try #require(delivery.unrelated)
        #expect(unrelated.aor == "sip:bob@example.org" && unrelated.order == 7 && unrelated.expiresAt == 160)
        #expect(unrelated.headers.contains { $0.0 == "Call-ID" && $0.1 == unrelated.callID })
        let never = SIPFaultPlan(SIPServerConfiguration.Faults(neverAnswer: true))
        guard case .ignore = never.arrival(of: request) else {
            Issue.record("arrival is not .ignore")
            return
        }
    }
}
