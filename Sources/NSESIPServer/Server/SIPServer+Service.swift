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
    /// - Parameter services: run beside the server in the same group (its `/metrics` listener), stopped after it.
    public func runUntilSignalled(beside services: [any Service] = [], logger: Logger) async throws {
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services.map { .init(service: $0) } + [.init(service: self)],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
