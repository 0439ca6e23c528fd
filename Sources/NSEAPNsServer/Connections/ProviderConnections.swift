import NIOCore
import Synchronization

/// The connections each provider has open, for a `max_connections` fault rule (docs/serve.md, "Fault injection").
///
/// A connection belongs to a provider from its first push on: the team its provider token names (`iss`, read before
/// the token is checked: the cap is about connections, not credentials), else the app its client certificate names,
/// else the client's address. APNs documents no cap; the rule lets a provider's pool be tested against one.
final class ProviderConnections: Sendable {
    /// Whether a connection may carry a provider's pushes.
    enum Claim: Equatable {
        /// Within the cap (or the connection was counted before).
        case admitted
        /// The provider has `cap` connections open already: this one is turned away.
        case overCap
    }

    private struct State {
        var byProvider: [String: Set<ObjectIdentifier>] = [:]
        var byConnection: [ObjectIdentifier: String] = [:]
    }

    private let state = Mutex(State())

    /// Counts `connection` as `provider`'s (until it closes) if the provider is under `cap`.
    func claim(_ connection: ConnectionIdentity, provider: String, cap: Int) -> Claim {
        let claim = state.withLock { state -> Claim? in
            if state.byConnection[connection.id] != nil { return .admitted }
            guard state.byProvider[provider, default: []].count < cap else { return .overCap }
            state.byProvider[provider, default: []].insert(connection.id)
            state.byConnection[connection.id] = provider
            return nil
        }
        if let claim { return claim }
        let id = connection.id
        connection.channel?.closeFuture.whenComplete { [self] _ in release(id) }
        return .admitted
    }

    private func release(_ id: ObjectIdentifier) {
        state.withLock { state in
            guard let provider = state.byConnection.removeValue(forKey: id) else { return }
            state.byProvider[provider]?.remove(id)
            if state.byProvider[provider]?.isEmpty == true { state.byProvider[provider] = nil }
        }
    }
}
