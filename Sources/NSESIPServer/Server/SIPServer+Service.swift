public import Logging
public import ServiceLifecycle
import UnixSignals

extension SIPServer: Service {
    /// Runs the server as a `Service`: starts it (a no-op when `start()` already ran), serves until the service
    /// group shuts down gracefully (SIGTERM, SIGINT) or the task is cancelled, then shuts it down.
    public func run() async throws {
        _ = try await start()
        // Throws CancellationError when cancelled rather than shut down gracefully: either way the server stops.
        try? await gracefulShutdown()
        await shutdown()
    }

    /// Runs the server in a `ServiceGroup` that shuts down gracefully on SIGTERM or SIGINT (as `nse serve` does);
    /// returns once the server has stopped.
    /// - Parameters:
    ///   - services: run beside the server in the same group (its `/metrics` listener), stopped after it.
    ///   - onTrapping: called once the group traps SIGTERM and SIGINT; before, either signal kills the process
    ///     (a caller that tells the world it is listening waits for this).
    public func runUntilSignalled(
        beside services: [any Service] = [], logger: Logger, onTrapping: @escaping @Sendable () -> Void = {}
    ) async throws {
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: TrapNotice(notify: onTrapping))] + services.map { .init(service: $0) }
                    + [.init(service: self)],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}

/// Says that its group traps its signals: a `ServiceGroup` registers its signal sources before it runs any service.
private struct TrapNotice: Service {
    let notify: @Sendable () -> Void

    func run() async throws {
        notify()
        try? await gracefulShutdown()
    }
}
