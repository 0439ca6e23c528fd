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
        var served = false
        var deadline: Scheduled<Void>?
    }

    private let connections = Mutex<[ObjectIdentifier: Connection]>([:])
    private let firstRequestTimeout: TimeAmount

    init(firstRequestTimeout: TimeAmount) {
        self.firstRequestTimeout = firstRequestTimeout
    }

    /// A connection was accepted: tracked until it closes.
    func opened(_ channel: any Channel) {
        let key = ObjectIdentifier(channel)
        connections.withLock { $0[key] = Connection(channel: channel) }
        let deadline = channel.eventLoop.scheduleTask(in: firstRequestTimeout) { [weak self] in
            guard let self, !self.hasServed(key) else { return }
            channel.close(promise: nil)
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

    /// Closes every connection still open: their requests' reads and writes fail, and their tasks end.
    func closeAll() {
        for channel in connections.withLock({ $0.values.map(\.channel) }) { channel.close(promise: nil) }
    }
}
