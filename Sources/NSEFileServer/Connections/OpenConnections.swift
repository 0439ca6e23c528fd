import NIOCore
import Synchronization

/// Every connection the server has accepted and not yet closed, so that stopping never waits on a client: once the
/// grace after SIGTERM is over, ``closeAll()`` closes what is left (a slow upload, a download nobody reads, a TLS
/// handshake that never ends), and the server's tasks end with their connections.
///
/// A connection must also finish its first request head within `firstRequestTimeout` (TLS handshake included) or it
/// is closed: a port scan or a silent client never holds a descriptor. Between requests, Hummingbird's idle timeout
/// takes over.
final class OpenConnections: Sendable {
    private struct Connection {
        let channel: any Channel
        /// The handler nearest the socket, to close from.
        let closer: NIOLoopBound<SocketCloser>
        var served = false
        var deadline: Scheduled<Void>?
    }

    private let connections = Mutex<[ObjectIdentifier: Connection]>([:])
    private let firstRequestTimeout: TimeAmount

    init(firstRequestTimeout: TimeAmount) {
        self.firstRequestTimeout = firstRequestTimeout
    }

    /// A connection was accepted: tracked until it closes. Called before any other handler is added, on its event
    /// loop.
    func opened(_ channel: any Channel) throws {
        let closer = SocketCloser()
        try channel.pipeline.syncOperations.addHandler(closer, position: .first)
        let key = ObjectIdentifier(channel)
        let bound = NIOLoopBound(closer, eventLoop: channel.eventLoop)
        connections.withLock { $0[key] = Connection(channel: channel, closer: bound) }
        let deadline = channel.eventLoop.scheduleTask(in: firstRequestTimeout) { [weak self] in
            guard let self, !self.hasServed(key) else { return }
            bound.value.closeNow()
        }
        connections.withLock { $0[key]?.deadline = deadline }
        channel.closeFuture.whenComplete { [weak self] _ in
            self?.connections.withLock { $0.removeValue(forKey: key) }?.deadline?.cancel()
        }
    }

    /// A request came on `channel`: an HTTP/1.1 connection, or an HTTP/2 stream of one (whose parent is the
    /// connection; a connection's own parent is the listener). Its connection is past its first-request deadline.
    /// - Returns: the request's HTTP version, "1.1" or "2".
    @discardableResult
    func served(on channel: any Channel) -> String {
        let own = ObjectIdentifier(channel)
        let (version, deadline) = connections.withLock { connections -> (String, Scheduled<Void>?) in
            let key = connections[own] != nil ? own : channel.parent.map(ObjectIdentifier.init) ?? own
            let version = key == own ? "1.1" : "2"
            guard connections[key]?.served == false else { return (version, nil) }
            connections[key]?.served = true
            return (version, connections[key]?.deadline)
        }
        deadline?.cancel()
        return version
    }

    private func hasServed(_ key: ObjectIdentifier) -> Bool {
        connections.withLock { $0[key]?.served ?? true }
    }

    /// Connections open now.
    var count: Int { connections.withLock { $0.count } }

    /// Closes every connection still open, at the socket: their requests' reads and writes fail, and their tasks
    /// end. TLS's close_notify is skipped: closing through the TLS handler waits up to 5 s for the client's own.
    func closeAll() {
        for connection in connections.withLock({ Array($0.values) }) {
            connection.channel.eventLoop.execute { connection.closer.value.closeNow() }
        }
    }
}

/// The first handler of a connection's pipeline, nearest the socket: a close from here goes straight to the socket.
final class SocketCloser: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = NIOAny

    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// On the channel's event loop.
    func closeNow() { context?.close(promise: nil) }
}
