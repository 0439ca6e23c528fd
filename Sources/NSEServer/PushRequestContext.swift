public import Hummingbird

/// The request context of `nse serve`: Hummingbird's core context plus the connection a request came on, which
/// APNs's token rules (one renewal per 20 minutes per connection) need.
public struct PushRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let connection: ConnectionIdentity

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        connection = ConnectionIdentity(channel: source.channel)
    }
}
