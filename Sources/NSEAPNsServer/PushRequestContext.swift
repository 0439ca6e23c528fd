public import Hummingbird
public import NIOCore

/// The request context of `nse serve`: Hummingbird's core context plus the connection a request came on, which
/// APNs's token rules (one renewal per 20 minutes per connection) need.
public struct PushRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let connection: ConnectionIdentity
    /// The channel the request came on: the HTTP/1.1 connection, or the HTTP/2 stream.
    public let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        connection = ConnectionIdentity(channel: source.channel)
        channel = source.channel
    }
}
