public import NIOCore
public import NSEAPNs
public import NSESystem
import Synchronization

/// APNs's token-based provider authentication for `nse serve`: every `POST /3/device` must carry a valid ES256
/// provider token for one of the configured keys (looked up by the token's `kid`, its team by `iss`), at most an hour
/// old; and a provider changes its token at most every 20 minutes.
///
/// **Who is a provider.** The 20-minute rule is about a provider that mints new tokens too often, not about a
/// connection: behind an HTTP/2 proxy (HAProxy, Envoy, nginx) the requests of several providers share one backend
/// connection. nse tells providers apart by the key and team their tokens name (`kid`, `iss`) and, within those, by
/// the client the request says it comes from through a proxy (RFC 7239 `Forwarded: for=`, else `X-Forwarded-For`
/// with `X-Forwarded-Port`), else by the connection. Two providers with their own keys or teams never collide;
/// processes that share one key and one connection without forwarded headers look like one provider changing its
/// token (docs/serve.md says what to do then).
public final class ProviderAuthentication: Sendable {
    /// One provider as the renewal rule sees it.
    private struct Provider: Hashable {
        var connection: ObjectIdentifier
        var teamID: String
        var keyID: String
        /// The forwarded client, when a proxy names it.
        var client: String?
    }

    /// What a provider last authenticated with.
    private struct CurrentToken {
        var token: String
        var issuedAt: Double
    }

    private struct State {
        var providers: [Provider: CurrentToken] = [:]
        /// Connections whose close is watched (their providers are forgotten with them).
        var watched: Set<ObjectIdentifier> = []
        /// Tokens whose signature was verified, and their claims: a token is checked once, then reused.
        var verified: [String: ProviderToken.Claims] = [:]
        /// The provider count at which expired entries are next swept.
        var sweepAt = ProviderAuthentication.sweepFloor

        /// Forgets providers whose token is past its hour: any token they send next is at least 20 minutes newer,
        /// so forgetting them changes no answer. Without it, one long-lived proxy connection forwarding ever new
        /// client ports grows the table without bound (about 300 bytes a client).
        mutating func sweepExpired(now: Int64) {
            let oldest = Double(now) - Double(ProviderToken.lifetimeSeconds)
            providers = providers.filter { $0.value.issuedAt >= oldest }
            sweepAt = max(ProviderAuthentication.sweepFloor, providers.count * 2)
        }
    }

    /// The keys tokens are checked against, by key id.
    public let verifiers: [String: ProviderTokenVerifier]
    private let state = Mutex(State())
    private static let verifiedCacheLimit = 256
    /// Below this many providers nothing is swept; above it, a sweep whenever the count doubles (amortized O(1)).
    fileprivate static let sweepFloor = 1024

    public init(verifiers: [ProviderTokenVerifier]) {
        self.verifiers = Dictionary(verifiers.map { ($0.keyID, $0) }, uniquingKeysWith: { first, _ in first })
    }

    public convenience init(verifier: ProviderTokenVerifier) {
        self.init(verifiers: [verifier])
    }

    /// Checks one request's `authorization` header.
    /// - Parameters:
    ///   - connection: the HTTP connection it came on (HTTP/2: the connection, not the stream); `nil` skips the
    ///     renewal rule.
    ///   - forwardedClient: the client a proxy says the request comes from (``forwardedClient(in:)``).
    ///   - now: Unix seconds.
    public func authenticate(
        authorization: String?, connection: ConnectionIdentity?, forwardedClient: String? = nil,
        now: Int64 = SystemClock.unixSeconds()
    ) async -> Result<ProviderToken.Claims, APNsError> {
        let token = authorization.flatMap(ProviderTokenVerifier.bearerToken)
        let claims: ProviderToken.Claims
        if let token, let cached = state.withLock({ $0.verified[token] }) {
            if Double(now) - cached.issuedAt > Double(ProviderToken.lifetimeSeconds) {
                return .failure(APNsError(403, ProviderToken.Rejection.expired.rawValue))
            }
            claims = cached
        } else {
            guard let token else { return .failure(APNsError(403, ProviderToken.Rejection.missing.rawValue)) }
            guard let verifier = ProviderTokenVerifier.keyID(of: token).flatMap({ verifiers[$0] }) else {
                return .failure(APNsError(403, ProviderToken.Rejection.invalid.rawValue))
            }
            switch await verifier.verify(authorization: authorization, now: now) {
            case .failure(let rejection): return .failure(APNsError(403, rejection.rawValue))
            case .success(let fresh):
                claims = fresh
                state.withLock { state in
                    if state.verified.count >= Self.verifiedCacheLimit {
                        state.verified.removeAll(keepingCapacity: true)
                    }
                    state.verified[token] = fresh
                }
            }
        }
        guard let connection, let token else { return .success(claims) }
        let provider = Provider(
            connection: connection.id, teamID: claims.teamID, keyID: claims.keyID, client: forwardedClient)
        return renewal(token: token, claims: claims, provider: provider, connection: connection, now: now)
    }

    /// The 20-minute rule: a provider that changes its token sooner gets 429 `TooManyProviderTokenUpdates`.
    private func renewal(
        token: String, claims: ProviderToken.Claims, provider: Provider, connection: ConnectionIdentity, now: Int64
    ) -> Result<ProviderToken.Claims, APNsError> {
        let (allowed, isNew) = state.withLock { state -> (Bool, Bool) in
            let isNew = state.watched.insert(provider.connection).inserted
            guard let current = state.providers[provider] else {
                if state.providers.count >= state.sweepAt { state.sweepExpired(now: now) }
                state.providers[provider] = CurrentToken(token: token, issuedAt: claims.issuedAt)
                return (true, isNew)
            }
            if current.token == token { return (true, isNew) }
            guard claims.issuedAt - current.issuedAt >= Double(ProviderToken.minimumRenewalSeconds) else {
                return (false, isNew)
            }
            state.providers[provider] = CurrentToken(token: token, issuedAt: claims.issuedAt)
            return (true, isNew)
        }
        if isNew {
            let id = provider.connection
            connection.channel?.closeFuture.whenComplete { [weak self] _ in
                self?.state.withLock { state in
                    state.watched.remove(id)
                    state.providers = state.providers.filter { $0.key.connection != id }
                }
            }
        }
        return allowed ? .success(claims) : .failure(APNsError(429, "TooManyProviderTokenUpdates"))
    }

    /// Connections that have authenticated and are still open.
    public var connectionCount: Int { state.withLock { $0.watched.count } }

    /// Providers the renewal rule remembers.
    public var providerCount: Int { state.withLock { $0.providers.count } }

    /// The client a proxy says a request comes from: RFC 7239 `Forwarded`'s first `for=`, else `X-Forwarded-For`'s
    /// first address with `X-Forwarded-Port`; `nil` when the request names none.
    /// - Parameter headers: the request's headers, names lowercased.
    public static func forwardedClient(in headers: [(name: String, value: String)]) -> String? {
        func value(_ name: String) -> String? { headers.first { $0.name == name }?.value }

        if let forwarded = value("forwarded") {
            let first = forwarded.split(separator: ",", maxSplits: 1).first ?? ""
            for pair in first.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, trimmed(parts[0], " ").lowercased() == "for" else { continue }
                let client = trimmed(parts[1], " \"")
                if !client.isEmpty { return client }
            }
        }
        guard let address = value("x-forwarded-for")?.split(separator: ",").first.map({ trimmed($0, " ") }),
            !address.isEmpty
        else { return nil }
        return value("x-forwarded-port").map { "\(address):\(trimmed(Substring($0), " "))" } ?? address
    }

    private static func trimmed(_ text: Substring, _ characters: String) -> String {
        var view = text
        while let first = view.first, characters.contains(first) { view = view.dropFirst() }
        while let last = view.last, characters.contains(last) { view = view.dropLast() }
        return String(view)
    }
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
