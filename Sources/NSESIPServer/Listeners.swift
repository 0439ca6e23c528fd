import NIOCore
import Logging
import NSESIP

/// The server's sockets: the bound listeners with their addresses, and the TCP/TLS connections open to them.
///
/// A value owned by `SIPServer`'s actor; the channels' own pipelines feed the actor's inbound stream.
struct Listeners {
    /// The listener channels, in configuration order (as `addresses`).
    private var channels: [any Channel] = []
    /// The address each listener is bound to (actual ports).
    private(set) var addresses: [SIPServerBoundAddress] = []
    /// Accepted TCP/TLS connections still open, by flow key.
    private var connections: [String: ServerFlow] = [:]

    /// Binds every configured listener; on a failure closes those already bound and throws.
    static func bind(_ configuration: SIPServerConfiguration, group: any EventLoopGroup,
                     sink: AsyncStream<InboundEvent>.Continuation, logger: Logger) async throws -> Listeners {
        var bound = Listeners()
        do {
            let tls = try configuration.tls.map { try ListenerFactory.makeTLSContext($0) }
            for listener in configuration.listeners {
                let channel = try await ListenerFactory.bind(listener, group: group, tls: tls, limits: configuration.limits,
                                                             sink: sink, logger: logger)
                bound.channels.append(channel)
                let address = channel.localAddress
                bound.addresses.append(SIPServerBoundAddress(transport: listener.transport,
                                                             host: address?.ipAddress ?? listener.host,
                                                             port: address?.port ?? listener.port))
            }
        } catch {
            for channel in bound.detach() { try? await channel.close().get() }
            throw error
        }
        return bound
    }

    /// The UDP path to a device through the listener bound on `localPort` (the port its REGISTER came in on), if
    /// that port is bound again.
    func udpFlow(localPort: Int, remoteHost: String, remotePort: Int) -> ServerFlow? {
        guard let index = addresses.firstIndex(where: { $0.transport == .udp && $0.port == localPort }),
              let remote = try? SocketAddress(ipAddress: remoteHost, port: remotePort) else { return nil }
        let channel = channels[index]
        return ServerFlow(kind: .udp, channel: channel, remote: remote, local: channel.localAddress)
    }

    mutating func opened(_ flow: ServerFlow) { connections[flow.key] = flow }

    mutating func closed(_ flow: ServerFlow) { connections[flow.key] = nil }

    /// Hands over every channel to close, listeners first, and forgets them (the addresses stay).
    mutating func detach() -> [any Channel] {
        let all = channels + connections.values.map(\.channel)
        channels = []
        connections = [:]
        return all
    }
}
