import NIOCore
import NIOSSL
import NSEAPNs
import NSEDevice

/// Who sends a channel-management or broadcast request, checked as `POST /3/device` checks it (a verified client
/// certificate, else a provider token, ``ProviderAuthentication``), and whether it may act for the app the path
/// names: a token's team must be the app's (the `team_id` of its served devices), a certificate's app must be it.
struct BroadcastProvider: Sendable {
    /// With token authentication: the team the provider token names.
    var teamID: String?
    /// With certificate authentication: the app the client certificate names.
    var certificateBundleID: String?

    /// Authenticates the request's provider; APNs's 403 (or 429 for a token renewed too soon) when it cannot.
    static func authenticate(
        headers: APNsHeaders, service: PushService, context: PushRequestContext
    ) async -> Result<BroadcastProvider, APNsError> {
        var certificate: NIOSSLCertificate?
        if service.certificates != nil {
            certificate = try? await (context.channel.parent ?? context.channel).nioSSL_peerCertificate().get()
        }
        if let certificates = service.certificates, let certificate {
            switch certificates.authenticate(certificate) {
            case .failure(let error): return .failure(error)
            case .success(let read): return .success(BroadcastProvider(certificateBundleID: read.bundleID))
            }
        }
        if let authentication = service.authentication {
            let authorization = headers.first(where: { $0.name == "authorization" })?.value
            switch await authentication.authenticate(
                authorization: authorization, connection: context.connection,
                forwardedClient: ProviderAuthentication.forwardedClient(in: headers))
            {
            case .failure(let error): return .failure(error)
            case .success(let claims): return .success(BroadcastProvider(teamID: claims.teamID))
            }
        }
        if service.certificates != nil {
            // Certificates required and none given, and no key for tokens either.
            return .failure(APNsError(403, ProviderToken.Rejection.missing.rawValue))
        }
        return .success(BroadcastProvider())
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
