import Hummingbird
import HummingbirdCore
public import Logging
import NIOCore
import NSESystem
public import ServiceLifecycle

/// Why the metrics listener stopped: its address could not be bound.
public struct MetricsListenerError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

/// `GET /metrics` on a listener of its own (HTTP/1.1), for a server that has no HTTP listener to serve it on
/// (`nse sip-server --metrics-listen`); any other path is 404. A `Service`: it stops with its group's graceful
/// shutdown.
public struct MetricsListener: Service {
    /// A connection silent this long is closed: scrapers reconnect, and a client that stalls mid-request never
    /// holds a graceful shutdown (SIGTERM) for longer.
    public static let idleTimeout = Duration.seconds(2)

    let host: String
    let port: Int
    let registry: MetricsRegistry
    let logger: Logger
    let onListening: @Sendable (String) -> Void

    /// - Parameter onListening: called once with the listener's URL, `http://HOST:PORT/metrics` (the real port).
    public init(
        host: String, port: Int, registry: MetricsRegistry, logger: Logger,
        onListening: @escaping @Sendable (String) -> Void
    ) {
        self.host = host
        self.port = port
        self.registry = registry
        self.logger = logger
        self.onListening = onListening
    }

    public func run() async throws {
        let router = Router()
        router.get("metrics") { [registry] _, _ in
            var fields = HTTPFields()
            fields[.contentType] = MetricsRegistry.contentType
            return Response(
                status: .ok, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.exposition())))
        }
        let (host, onListening) = (self.host, self.onListening)
        let app = Application(
            router: router, server: .http1(configuration: .init(idleTimeout: TimeAmount(Self.idleTimeout))),
            configuration: .init(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                onListening("http://\(host.contains(":") ? "[\(host)]" : host):\(port)/metrics")
            }, logger: logger)
        do {
            try await app.run()
        } catch let error as IOError {
            // Only binding fails this way: once listening, a connection's errors stay with that connection.
            let address = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            throw MetricsListenerError(
                description: NetworkFailure.describe(
                    .listen, address, reason: NetworkFailure.phrase(errno: error.errnoCode)))
        }
    }
}
