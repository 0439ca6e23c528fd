import NIOCore
import NIOSSL
import NSEAPNs
import NSEDevice

/// Who sends a request to the provider API (a push, a channel request, a broadcast): a verified client certificate,
/// else a provider token (``ProviderAuthentication``), one kind per connection as on APNs; and whether it may act for
/// the app a channel or broadcast path names: a token's team must be the app's (the `team_id` of its served
/// devices), a certificate's app must be it.
struct ProviderIdentity: Sendable {
    /// With token authentication: the team the provider token names.
    var teamID: String?
    /// With certificate authentication: the app the client certificate names.
    var certificateBundleID: String?

    /// The client certificate the request's connection presented, when the server verifies them (`--client-ca`).
    static func certificate(service: PushService, context: PushRequestContext) async -> NIOSSLCertificate? {
        guard service.certificates != nil else { return nil }
        return try? await (context.channel.parent ?? context.channel).nioSSL_peerCertificate().get()
    }

    /// Authenticates the request's provider; APNs's 403 (or 429 for a token renewed too soon) when it cannot.
    /// - Parameter certificate: the connection's certificate, if read already (``certificate(service:context:)``).
    static func authenticate(
        headers: APNsHeaders, certificate: NIOSSLCertificate?? = nil, service: PushService,
        context: PushRequestContext
    ) async -> Result<ProviderIdentity, APNsError> {
        let read: NIOSSLCertificate?
        if let given = certificate {
            read = given
        } else {
            read = await Self.certificate(service: service, context: context)
        }
        if let certificates = service.certificates, let certificate = read {
            switch certificates.authenticate(certificate) {
            case .failure(let error): return .failure(error)
            case .success(let read): return .success(ProviderIdentity(certificateBundleID: read.bundleID))
            }
        }
        if let authentication = service.authentication {
            let authorization = headers.first(where: { $0.name == "authorization" })?.value
            switch await authentication.authenticate(
                authorization: authorization, connection: context.connection,
                forwardedClient: ProviderAuthentication.forwardedClient(in: headers))
            {
            case .failure(let error): return .failure(error)
            case .success(let claims): return .success(ProviderIdentity(teamID: claims.teamID))
            }
        }
        if service.certificates != nil {
            // Certificates required and none given, and no key for tokens either.
            return .failure(APNsError(403, ProviderToken.Rejection.missing.rawValue))
        }
        return .success(ProviderIdentity())
    }

    /// Whether this provider may act for `bundleID`: 400 `TopicDisallowed` when not. An app none of whose devices is
    /// served has no known team, so any token's team is taken for it.
    func check(_ bundleID: String, devices: DeviceRegistry) -> APNsError? {
        if let certificateBundleID, certificateBundleID != bundleID { return .badRequest("TopicDisallowed") }
        if let teamID, let team = devices.all.first(where: { $0.config.bundleID == bundleID })?.config.teamID,
            team != teamID
        {
            return .badRequest("TopicDisallowed")
        }
        return nil
    }
}
