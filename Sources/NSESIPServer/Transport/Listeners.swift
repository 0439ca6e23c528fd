import Logging
import NIOCore
import NSESIP

/// The server's sockets: the bound listeners with their addresses (each stream listener keeps the connections open
/// to it).
///
/// A value owned by `SIPServer`'s actor; each listener is served (`BoundListener.serve`) by a child task of the
/// server's task tree, and what comes in feeds the actor's inbound stream.
struct Listeners {
    /// The listeners, in configuration order (as `addresses`).
    private(set) var bound: [BoundListener] = []
    /// The address each listener is bound to (actual ports).
    private(set) var addresses: [SIPServerBoundAddress] = []

    /// Binds every configured listener; on a failure closes those already bound and throws.
    static func bind(
        _ configuration: SIPServerConfiguration, group: any EventLoopGroup,
        sink: AsyncStream<InboundEvent>.Continuation, logger: Logger
    ) async throws -> Listeners {
        var listeners = Listeners()
        do {
            let tls = try configuration.tls.map { try BoundListener.makeTLSContext($0) }
            for listener in configuration.listeners {
                let bound = try await BoundListener.bind(
                    listener, group: group, tls: tls, limits: configuration.limits, sink: sink, logger: logger)
                listeners.bound.append(bound)
                let address = bound.channel.localAddress
                listeners.addresses.append(
                    SIPServerBoundAddress(
                        transport: listener.transport,
                        host: address?.ipAddress ?? listener.host,
                        port: address?.port ?? listener.port))
            }
        } catch {
            await listeners.discard()
            throw error
        }
        return listeners
    }

    /// Closes listeners that were bound but never served (a later one failed, or the server stopped first), and
    /// forgets them.
    mutating func discard() async {
        let unserved = bound
        bound = []
        for listener in unserved { await listener.discard() }
    }

    /// The UDP path to a device through the listener bound on `localPort` (the port its REGISTER came in on), if
    /// that port is bound again.
    func udpFlow(localPort: Int, remoteHost: String, remotePort: Int) -> ServerFlow? {
        guard let index = addresses.firstIndex(where: { $0.transport == .udp && $0.port == localPort }),
            let remote = try? SocketAddress(ipAddress: remoteHost, port: remotePort)
        else { return nil }
        return bound[index].udpFlow(to: remote)
    }

    /// Closes every listener and connection (their serving tasks finish); the addresses stay.
    func closeAll() {
        for listener in bound { listener.close() }
    }
}
