import NSEHost
import ServiceLifecycle

/// Tells the host the server is stopping the moment SIGTERM (or SIGINT) begins the graceful shutdown, so that the
/// app processes following calls end them now instead of holding the drain for minutes (docs/serve.md); and
/// `stopping`, what the embedding does then (a fleet's node takes over no stopped node from then on).
struct HostShutdownService: Service {
    let stopping: @Sendable () -> Void

    func run() async throws {
        try? await gracefulShutdown()
        HostShutdown.begin()
        stopping()
    }
}
