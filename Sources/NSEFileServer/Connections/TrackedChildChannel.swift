import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's child channel (HTTP/1.1, or TLS with HTTP/2 and HTTP/1.1 by ALPN) with each accepted connection
/// registered in ``OpenConnections`` before anything is read from it.
struct TrackedChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let connections: OpenConnections

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do { try connections.opened(channel) } catch { return channel.eventLoop.makeFailedFuture(error) }
        return base.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
