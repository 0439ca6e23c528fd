import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
public import Logging
import NIOCore
import NIOSSL
import NSESystem
import Synchronization

/// How `nse serve` listens.
public struct PushServerConfiguration: Sendable {
    /// The main listener: HTTP/1.1 and HTTP/2 with prior knowledge (h2c); with TLS, h2 and http/1.1 by ALPN.
    public var host: String
    public var port: Int
    /// A second, cleartext HTTP/2 listener for clients with prior knowledge (`curl --http2-prior-knowledge`).
    public var h2cPort: Int?
    /// PEM certificate chain and key: the main listener speaks TLS with ALPN h2 and http/1.1.
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    /// PEM CA certificates that sign providers' client certificates (`--client-ca`): a TLS client may present
    /// one, and if it does it must verify (certificate-based provider authentication).
    public var clientCAPath: String?
    /// How long connections may stay silent: before their protocol is known, and idle afterwards.
    public var timeouts: ConnectionTimeouts
    /// What an HTTP/2 connection allows: its SETTINGS_MAX_CONCURRENT_STREAMS.
    public var streams: StreamSettings

    public init(
        host: String, port: Int, h2cPort: Int? = nil, tlsCertificatePath: String? = nil, tlsKeyPath: String? = nil,
        timeouts: ConnectionTimeouts = ConnectionTimeouts(), streams: StreamSettings = StreamSettings(),
        clientCAPath: String? = nil
    ) {
        self.host = host
        self.port = port
        self.h2cPort = h2cPort
        self.tlsCertificatePath = tlsCertificatePath
        self.tlsKeyPath = tlsKeyPath
        self.timeouts = timeouts
        self.streams = streams
        self.clientCAPath = clientCAPath
    }
}

/// Why the server could not start.
public struct PushServerError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

/// Runs the listeners of `nse serve` around one ``PushService``.
public enum PushServer {
    /// Serves until SIGINT or SIGTERM, then stops accepting, finishes in-flight requests and every accepted push.
    /// - Parameters:
    ///   - onStopping: called once as SIGINT or SIGTERM begins the stop.
    ///   - onListening: called once with the base URLs (`listening`, and `h2c` when asked), real ports.
    public static func run(
        _ configuration: PushServerConfiguration, service: PushService, logger: Logger,
        onStopping: @escaping @Sendable () -> Void = {},
        onListening: @escaping @Sendable ([(String, String)]) -> Void
    ) async throws {
        let responder = PushResponder(service: service)
        let scheme = configuration.tlsCertificatePath == nil ? "http" : "https"
        let expected = configuration.h2cPort == nil ? 1 : 2
        let bound = BoundAddresses()
        let host = configuration.host
        @Sendable func report(_ key: String, _ channel: any Channel) {
            let port = channel.localAddress?.port ?? 0
            let url = "\(key == "listening" ? scheme : "http")://\(host.contains(":") ? "[\(host)]" : host):\(port)"
            let ready: [(String, String)]? = bound.entries.withLock { entries in
                entries.append((key, url))
                guard entries.count == expected else { return nil }
                return entries.sorted { $0.0 == "listening" && $1.0 != "listening" }
            }
            if let ready { onListening(ready) }
        }

        let timeouts = configuration.timeouts
        let streams = configuration.streams
        let metrics = service.metrics
        let faults = service.faults
        let acknowledgements = service.acknowledgements
        // Every HTTP/1.1 connection and HTTP/2 stream reports whether its 200s were written.
        let answerHandlers: @Sendable () -> [any RemovableChannelHandler] = {
            [AnswerObserver(acknowledgements: acknowledgements)]
        }
        let h2c = configuration.h2cPort.map { port in
            Application(
                responder: responder,
                server: HTTPServerBuilder { responder in
                    PrefaceSniffingChannel(
                        responder: responder, timeouts: timeouts, streams: streams, http1Allowed: false,
                        metrics: metrics, faults: faults, responseHandlers: answerHandlers)
                },
                configuration: .init(address: .hostname(configuration.host, port: port), serverName: nil),
                onServerRunning: { report("h2c", $0) }, logger: logger)
        }
        let server: HTTPServerBuilder
        if let certificate = configuration.tlsCertificatePath, let key = configuration.tlsKeyPath {
            do {
                let chain = try NIOSSLCertificate.fromPEMFile(certificate).map {
                    NIOSSLCertificateSource.certificate($0)
                }
                let privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
                var tls = TLSConfiguration.makeServerConfiguration(
                    certificateChain: chain, privateKey: .privateKey(privateKey))
                if let clientCA = configuration.clientCAPath {
                    let authorities = try NIOSSLCertificate.fromPEMFile(clientCA)
                    guard !authorities.isEmpty else {
                        throw PushServerError(description: "--client-ca \(clientCA): no certificate in it")
                    }
                    tls.trustRoots = .certificates(authorities)
                    tls.certificateVerification = .optionalVerification
                }
                let context = try TLSPrefaceSniffingChannel.context(tls)
                server = HTTPServerBuilder { responder in
                    TLSPrefaceSniffingChannel(
                        sslContext: context, responder: responder, timeouts: timeouts, streams: streams,
                        metrics: metrics, faults: faults, responseHandlers: answerHandlers)
                }
            } catch let error as PushServerError {
                throw error
            } catch {
                throw PushServerError(
                    description: "TLS certificate \(certificate) / key \(key)"
                        + (configuration.clientCAPath.map { " / client CA \($0)" } ?? "") + ": \(error)")
            }
        } else {
            // HTTP/1.1, and HTTP/2 with prior knowledge on the same port.
            server = HTTPServerBuilder { responder in
                PrefaceSniffingChannel(
                    responder: responder, timeouts: timeouts, streams: streams, metrics: metrics, faults: faults,
                    responseHandlers: answerHandlers)
            }
        }
        let app = Application(
            responder: responder, server: server,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            services: (h2c.map { [$0] } ?? []) + [HostShutdownService(stopping: onStopping)],
            onServerRunning: { report("listening", $0) },
            logger: logger)
        // Pushes a previous run answered 200 and never ran go first into the queue, beside new ones.
        service.resumeUnfinished()
        do {
            try await app.runService()
        } catch {
            await service.drain()
            guard let socketError = error as? IOError else { throw error }
            // A listener that could not be bound: the one that never reported itself running.
            let main = bound.entries.withLock { entries in !entries.contains { $0.0 == "listening" } }
            let port = main ? configuration.port : configuration.h2cPort ?? configuration.port
            let address = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            throw PushServerError(
                description: NetworkFailure.describe(
                    .listen, address, reason: NetworkFailure.phrase(errno: socketError.errnoCode)))
        }
        await service.drain()
    }
}

/// The listeners that are up, until all are and the line is printed.
private final class BoundAddresses: Sendable {
    let entries = Mutex<[(String, String)]>([])
}
