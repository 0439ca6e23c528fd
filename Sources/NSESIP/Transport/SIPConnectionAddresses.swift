import NIOCore
import Synchronization

/// Keeps the two addresses of a client connection as they are the moment its connect completes.
///
/// NIO forgets a channel's addresses once it closes, and a peer may close a stream (a TLS server refusing the
/// handshake, a registrar that answers and hangs up) before the transport's owner gets to ask: read later, the
/// connection would look as if it never had any. This handler watches the outbound `connect` and records them on
/// the event loop, in the same step that completes the connect, before any read can close the channel.
final class SIPConnectionAddresses: ChannelOutboundHandler, Sendable {
    typealias OutboundIn = NIOAny

    /// The local and the remote address of a connected socket.
    struct Pair: Sendable {
        var local: SocketAddress
        var remote: SocketAddress
    }

    private let recorded = Mutex<Pair?>(nil)

    /// The addresses recorded when the connect completed; nil before that, or when the socket had none.
    var pair: Pair? { recorded.withLock { $0 } }

    func connect(context: ChannelHandlerContext, to address: SocketAddress, promise: EventLoopPromise<Void>?) {
        let completion = promise ?? context.eventLoop.makePromise()
        let channel = context.channel
        completion.futureResult.whenSuccess { [self] in
            guard let local = channel.localAddress, let remote = channel.remoteAddress else { return }
            recorded.withLock { $0 = Pair(local: local, remote: remote) }
        }
        context.connect(to: address, promise: completion)
    }
}
