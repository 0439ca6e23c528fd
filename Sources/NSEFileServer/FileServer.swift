import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
public import Logging
import NIOCore
import NIOSSL
import NSESystem
public import ServiceLifecycle
import Synchronization
import UnixSignals

/// `nse files`: the file-transfer server a messenger's attachments go through, as Flexisip's is beside its proxy.
/// One Hummingbird listener, HTTP/1.1, or HTTPS with HTTP/2 and HTTP/1.1 by ALPN; ``FilesResponder`` answers.
///
/// Stopping (SIGTERM, SIGINT, the group's graceful shutdown): the listener closes and idle connections with it; the
/// answers still going get ``FileServerConfiguration/shutdownGrace`` to end, then their connections are closed
/// (a slow upload's temporary file removed, a hung download cut), so the server is gone a moment later whatever
/// the clients do.
public struct FileServer: Service {
    public let configuration: FileServerConfiguration
    public let faults: FileFaultPlan
    public let requests: RequestLog
    /// The storage folder, absolute.
    public var storage: String { store.directory }

    private let store: BlobStore
    private let tls: TLSConfiguration?
    private let logger: Logger
    private let onListening: @Sendable (_ url: String) -> Void

    /// Opens the storage folder (creating it) and reads the TLS files; nothing listens before ``run()``.
    /// - Parameter onListening: called once the listener is bound, with its base URL (`http://127.0.0.1:PORT`, the
    ///   real port when 0 was asked).
    public init(
        _ configuration: FileServerConfiguration, faults: [FileFault] = [], logger: Logger,
        onListening: @escaping @Sendable (_ url: String) -> Void
    ) throws(FileServerError) {
        self.configuration = configuration
        self.faults = FileFaultPlan(faults)
        self.requests = RequestLog(capacity: configuration.requestLogCapacity)
        self.tls = try Self.tlsConfiguration(configuration)
        self.store = try BlobStore(directory: configuration.storage)
        self.logger = logger
        self.onListening = onListening
    }

    private static func tlsConfiguration(_ configuration: FileServerConfiguration) throws(FileServerError)
        -> TLSConfiguration?
    {
        guard let certificate = configuration.tlsCertificatePath, let key = configuration.tlsKeyPath else { return nil }
        do {
            let chain = try NIOSSLCertificate.fromPEMFile(certificate).map { NIOSSLCertificateSource.certificate($0) }
            guard !chain.isEmpty else { throw FileServerError(.tls, "--tls-cert \(certificate): no certificate in it") }
            let privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
            let tls = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain, privateKey: .privateKey(privateKey))
            // A key that does not go with the certificate is refused here, not at the first connection.
            _ = try NIOSSLContext(configuration: tls)
            return tls
        } catch let error as FileServerError {
            throw error
        } catch {
            throw FileServerError(.tls, "--tls-cert \(certificate) / --tls-key \(key): \(error)")
        }
    }

    /// Runs the server in a `ServiceGroup` that stops it on SIGTERM or SIGINT; returns once it has stopped.
    public func runUntilSignalled() async throws {
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: self)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }

    /// Serves until the service group shuts down gracefully (or the task is cancelled).
    public func run() async throws {
        let connections = OpenConnections(firstRequestTimeout: TimeAmount(configuration.firstRequestTimeout))
        let stopping = Occurrence()
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        let scheme = tls == nil ? "http" : "https"
        let boundPort = BoundPort(configuration.port)
        let files = FilesController(
            store: store, faults: faults, maxSize: configuration.maxSize, scheme: scheme,
            fallbackAuthority: { "\(host):\(boundPort.value.load(ordering: .relaxed))" }, stopping: stopping,
            logger: logger)
        let responder = FilesResponder(
            files: files, control: ControlController(faults: faults, requests: requests), requests: requests,
            connections: connections)
        let server = serverBuilder(connections: connections)
        let onListening = self.onListening
        let app = Application(
            responder: responder, server: server,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? configuration.port
                boundPort.value.store(port, ordering: .relaxed)
                onListening("\(scheme)://\(host):\(port)")
            }, logger: logger)
        let grace = configuration.shutdownGrace
        do {
            try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    try await app.run()
                    return true
                }
                group.addTask {
                    // Stopping: Hummingbird closes the listener and waits for the answers going; after the grace,
                    // those left are cut.
                    try await gracefulShutdown()
                    try await Task.sleep(for: grace)
                    stopping.signal()
                    connections.closeAll()
                    return false
                }
                while let served = try await group.next(), !served {}
                group.cancelAll()
            }
        } catch let error as IOError {
            let address = "\(host):\(configuration.port)"
            throw FileServerError(
                .listen,
                NetworkFailure.describe(.listen, address, reason: NetworkFailure.phrase(errno: error.errnoCode)))
        }
    }

    /// Hummingbird's child channel for each connection: HTTP/1.1, or TLS with h2 and http/1.1 by ALPN; tracked, and
    /// answering `Expect: 100-continue`.
    private func serverBuilder(connections: OpenConnections) -> HTTPServerBuilder {
        let maxSize = configuration.maxSize
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [
                ContinueHandler { type in (try? UploadForm(contentType: type))?.bodyLimit(maxSize: maxSize) ?? maxSize }
            ],
            idleTimeout: TimeAmount(configuration.idleTimeout))
        guard let tls else {
            return HTTPServerBuilder { responder in
                TrackedChildChannel(
                    base: HTTP1Channel(responder: responder, configuration: http1), connections: connections)
            }
        }
        let http2 = HTTP2ChannelConfiguration(
            idleTimeout: configuration.idleTimeout, gracefulCloseTimeout: configuration.shutdownGrace,
            streamConfiguration: http1)
        return HTTPServerBuilder { responder in
            TrackedChildChannel(
                base: try HTTP2UpgradeChannel(tlsConfiguration: tls, configuration: http2, responder: responder),
                connections: connections)
        }
    }
}

/// The port the listener got (port 0 asks the system for one), for the URL of an upload that names no host.
private final class BoundPort: Sendable {
    let value: Atomic<Int>

    init(_ port: Int) { value = Atomic(port) }
}
