import NSEHost
import ServiceLifecycle

/// Tells the host the server is stopping the moment SIGTERM (or SIGINT) begins the graceful shutdown, so that the
/// app processes following calls end them now instead of holding the drain for minutes (docs/serve.md).
struct HostShutdownService: Service {
    func run() async throws {
        try? await gracefulShutdown()
        HostShutdown.begin()
    }
}
