public import NIOCore
public import NSEAPNs
public import NSESystem
import Synchronization

/// APNs's token-based provider authentication for `nse serve`: every `POST /3/device` must carry a valid ES256
/// provider token for the configured key and team, at most an hour old, renewed at most every 20 minutes on a
/// connection.
public final class ProviderAuthentication: Sendable {
    /// What a connection last authenticated with.
    private struct ConnectionToken {
        var token: String
        var issuedAt: Int64
    }

    private struct State {
        var connections: [ObjectIdentifier: ConnectionToken] = [:]
        /// Tokens whose signature was verified, and their claims: a token is checked once, then reused.
        var verified: [String: ProviderToken.Claims] = [:]
    }

    public let verifier: ProviderTokenVerifier
    private let state = Mutex(State())
    private static let verifiedCacheLimit = 256

    public init(verifier: ProviderTokenVerifier) {
        self.verifier = verifier
    }

    /// Checks one request's `authorization` header.
    /// - Parameters:
    ///   - connection: the HTTP connection it came on (HTTP/2: the connection, not the stream); `nil` skips the
    ///     renewal rule.
    ///   - now: Unix seconds.
    public func authenticate(
        authorization: String?, connection: ConnectionIdentity?, now: Int64 = Clock.unixSeconds()
    ) async -> Result<ProviderToken.Claims, APNsError> {
        let token = authorization.flatMap(ProviderTokenVerifier.bearerToken)
        let claims: ProviderToken.Claims
        if let token, let cached = state.withLock({ $0.verified[token] }) {
            if now - cached.issuedAt > ProviderToken.lifetimeSeconds {
                return .failure(APNsError(403, ProviderToken.Rejection.expired.rawValue))
            }
            claims = cached
        } else {
            switch await verifier.verify(authorization: authorization, now: now) {
            case .failure(let rejection): return .failure(APNsError(403, rejection.rawValue))
            case .success(let fresh):
                claims = fresh
                if let token {
                    state.withLock { state in
                        if state.verified.count >= Self.verifiedCacheLimit {
                            state.verified.removeAll(keepingCapacity: true)
                        }
                        state.verified[token] = fresh
                    }
                }
            }
        }
        guard let connection, let token else { return .success(claims) }
        return renewal(token: token, claims: claims, connection: connection)
    }

    /// The 20-minute rule: a connection that changes its token sooner gets 429 `TooManyProviderTokenUpdates`.
    private func renewal(token: String, claims: ProviderToken.Claims, connection: ConnectionIdentity) -> Result<
        ProviderToken.Claims, APNsError
    > {
        let (allowed, isNew) = state.withLock { state -> (Bool, Bool) in
            guard let current = state.connections[connection.id] else {
                state.connections[connection.id] = ConnectionToken(token: token, issuedAt: claims.issuedAt)
                return (true, true)
            }
            if current.token == token { return (true, false) }
            guard claims.issuedAt - current.issuedAt >= ProviderToken.minimumRenewalSeconds else {
                return (false, false)
            }
            state.connections[connection.id] = ConnectionToken(token: token, issuedAt: claims.issuedAt)
            return (true, false)
        }
        if isNew {
            let id = connection.id
            connection.channel?.closeFuture.whenComplete { [weak self] _ in
                _ = self?.state.withLock { $0.connections.removeValue(forKey: id) }
            }
        }
        return allowed ? .success(claims) : .failure(APNsError(429, "TooManyProviderTokenUpdates"))
    }

    /// Connections that have authenticated and are still open.
    public var connectionCount: Int { state.withLock { $0.connections.count } }
}

/// The HTTP connection a request arrived on: for HTTP/2, the connection carrying the stream.
public struct ConnectionIdentity: Sendable {
    public let id: ObjectIdentifier
    let channel: (any Channel)?

    /// - Parameter channel: the request's channel (an HTTP/1.1 connection, or an HTTP/2 stream).
    public init(channel: any Channel) {
        // An HTTP/2 stream's parent is its connection, whose parent is the listener; an HTTP/1.1 connection's
        // parent is the listener, which has none.
        let connection = channel.parent?.parent != nil ? channel.parent! : channel
        self.id = ObjectIdentifier(connection)
        self.channel = connection
    }
}
