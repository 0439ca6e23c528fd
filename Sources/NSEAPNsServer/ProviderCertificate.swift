public import NIOSSL
import SwiftASN1
import X509

/// APNs's certificate-based provider authentication (the one Flexisip uses): a TLS client certificate, verified
/// against `--client-ca`, whose subject names the app it may push to, as Apple issues them: `UID` is the bundle id
/// and the common name says the environment ("Apple Development IOS Push Services: …" for the sandbox, "Apple
/// Production IOS Push Services: …" for production; Apple's universal "Apple Push Services: …" works in both). The
/// app's `.voip`, `.complication` and other topics come with it.
public struct ProviderCertificate: Sendable, Equatable {
    /// Which APNs a certificate, or `nse serve`, is for.
    public enum Environment: String, Sendable, CaseIterable {
        case development
        case production
    }

    /// The app the certificate may push to.
    public var bundleID: String
    /// `nil`: both environments (a universal certificate, or one whose common name says neither).
    public var environment: Environment?

    public init(bundleID: String, environment: Environment?) {
        self.bundleID = bundleID
        self.environment = environment
    }

    /// The user id attribute (RFC 4519 `uid`) Apple puts the bundle id in.
    static let userID: ASN1ObjectIdentifier = [0, 9, 2342, 19_200_300, 100, 1, 1]

    /// Reads a verified peer certificate; 403 `BadCertificate` if it names no app.
    public static func read(_ certificate: NIOSSLCertificate) -> Result<ProviderCertificate, APNsError> {
        guard let der = try? certificate.toDERBytes(), let parsed = try? Certificate(derEncoded: der) else {
            return .failure(APNsError(403, "BadCertificate"))
        }
        var bundleID: String?
        var commonName = ""
        for name in parsed.subject {
            for attribute in name {
                if attribute.type == Self.userID { bundleID = String(attribute.value) }
                if attribute.type == .RDNAttributeType.commonName { commonName = String(attribute.value) ?? "" }
            }
        }
        guard let bundleID, !bundleID.isEmpty else { return .failure(APNsError(403, "BadCertificate")) }
        let environment: Environment? =
            commonName.hasPrefix("Apple Development IOS Push Services")
            ? .development
            : commonName.hasPrefix("Apple Production IOS Push Services") ? .production : nil
        return .success(ProviderCertificate(bundleID: bundleID, environment: environment))
    }
}

/// `nse serve --client-ca`: which environment the server plays, and the check of a connection's certificate.
public struct CertificateAuthentication: Sendable {
    public var environment: ProviderCertificate.Environment

    public init(environment: ProviderCertificate.Environment) {
        self.environment = environment
    }

    /// The app a certificate may push to, or APNs's 403: `BadCertificate` (no app named),
    /// `BadCertificateEnvironment` (a certificate for the other environment).
    public func authenticate(_ certificate: NIOSSLCertificate) -> Result<ProviderCertificate, APNsError> {
        ProviderCertificate.read(certificate).flatMap { read in
            if let other = read.environment, other != environment {
                return .failure(APNsError(403, "BadCertificateEnvironment"))
            }
            return .success(read)
        }
    }
}
