public import NIOCore

/// The last handler of an accepted TCP/TLS connection, after the SIP framing: makes the connection's flow once it
/// is active and kept by its listener's `SIPAcceptedConnections`, then hands on each message with it, on the
/// connection's event loop. An error (framing, TLS) is reported and closes the connection.
public final class SIPAcceptedStreamHandler<Flow>: ChannelInboundHandler {
    public typealias InboundIn = SIPMessage

    private let connections: SIPAcceptedConnections
    private let makeFlow: (any Channel, SocketAddress) -> Flow
    private let deliver: (SIPMessage, Flow) -> Void
    private let failed: (any Error) -> Void
    /// Set once the connection is active and kept.
    private var flow: Flow?

    /// - Parameters:
    ///   - makeFlow: the connection and its peer's address, once, when it is active.
    ///   - deliver: each message, in the order received.
    ///   - failed: an error before the connection is closed for it.
    public init(
        connections: SIPAcceptedConnections, makeFlow: @escaping (any Channel, SocketAddress) -> Flow,
        deliver: @escaping (SIPMessage, Flow) -> Void, failed: @escaping (any Error) -> Void
    ) {
        self.connections = connections
        self.makeFlow = makeFlow
        self.deliver = deliver
        self.failed = failed
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { open(context: context) }
    }

    public func channelActive(context: ChannelHandlerContext) {
        open(context: context)
        context.fireChannelActive()
    }

    private func open(context: ChannelHandlerContext) {
        guard flow == nil else { return }
        guard let remote = context.remoteAddress else {
            context.close(promise: nil)
            return
        }
        guard connections.add(context.channel) else { return }
        flow = makeFlow(context.channel, remote)
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let flow else { return }
        deliver(unwrapInboundIn(data), flow)
    }

    public func channelInactive(context: ChannelHandlerContext) {
        if flow != nil { connections.remove(context.channel) }
        flow = nil
        context.fireChannelInactive()
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failed(error)
        context.close(promise: nil)
    }
}
