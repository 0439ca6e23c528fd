import Crypto
import NSESystem
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A throwaway self-signed certificate for TLS on loopback: EC P-256, valid for `localhost` and 127.0.0.1, made in
/// process with swift-certificates and swift-crypto (no `openssl` command). The one way nse's replay cases and
/// tests make their certificates; it is its own CA, so the certificate file is also the file to trust.
public struct SelfSignedCertificate: Sendable {
    /// The certificate, PEM.
    public let certificatePEM: String
    /// The private key, PKCS #8 PEM (what `openssl req -nodes` writes).
    public let privateKeyPEM: String
    /// The public key, SubjectPublicKeyInfo PEM.
    public let publicKeyPEM: String
    /// The public key's pin as libcurl takes it: `sha256//` and the base64 SHA-256 of its DER SubjectPublicKeyInfo.
    public let publicKeyPin: String

    /// Makes a new key and certificate.
    /// - Parameters:
    ///   - dnsNames: the names it is valid for (the first is also the subject's common name).
    ///   - ipv4Addresses: the IPv4 addresses it is valid for, as four bytes each.
    ///   - days: how long it is valid from now (it is valid from an hour ago, for clock skew between processes).
    public init(
        dnsNames: [String] = ["localhost"], ipv4Addresses: [[UInt8]] = [[127, 0, 0, 1]], days: Int = 2
    ) throws(CertificateError) {
        let key = P256.Signing.PrivateKey()
        do {
            let name = try DistinguishedName { CommonName(dnsNames.first ?? "localhost") }
            let now = Date()
            let alternativeNames =
                dnsNames.map { GeneralName.dnsName($0) }
                + ipv4Addresses.map { GeneralName.ipAddress(ASN1OctetString(contentBytes: $0[...])) }
            let certificate = try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(),
                publicKey: Certificate.PublicKey(key.publicKey),
                notValidBefore: now - 3600, notValidAfter: now + Double(days) * 86400,
                issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                    KeyUsage(digitalSignature: true, keyCertSign: true)
                    SubjectAlternativeNames(alternativeNames)
                },
                issuerPrivateKey: Certificate.PrivateKey(key))
            certificatePEM = try certificate.serializeAsPEM().pemString + "\n"
        } catch {
            throw CertificateError(message: "could not make a self-signed certificate: \(error)")
        }
        privateKeyPEM = key.pemRepresentation + "\n"
        publicKeyPEM = key.publicKey.pemRepresentation + "\n"
        publicKeyPin = Self.pin(key.publicKey)
    }

    /// The libcurl pin (`sha256//…`) of an EC P-256 public key in a PEM file's text.
    public static func pin(ofPublicKeyPEM pem: String) throws(CertificateError) -> String {
        do { return pin(try P256.Signing.PublicKey(pemRepresentation: pem)) } catch {
            throw CertificateError(message: "not an EC P-256 public key in PEM: \(error)")
        }
    }

    private static func pin(_ key: P256.Signing.PublicKey) -> String {
        "sha256//" + Data(SHA256.hash(data: key.derRepresentation)).base64EncodedString()
    }

    /// Where ``write(in:name:)`` put the files.
    public struct Files: Sendable, Equatable {
        public var certificate: String
        public var key: String
        public var publicKey: String
    }

    /// Writes `NAME-cert.pem`, `NAME-key.pem` (mode 0600) and `NAME-pub.pem` into `directory`.
    public func write(in directory: String, name: String) throws(CertificateError) -> Files {
        let files = Files(
            certificate: Path.join(directory, "\(name)-cert.pem"), key: Path.join(directory, "\(name)-key.pem"),
            publicKey: Path.join(directory, "\(name)-pub.pem"))
        try write(certificate: files.certificate, key: files.key, publicKey: files.publicKey)
        return files
    }

    /// Writes the certificate and the key (mode 0600), and the public key when a path is given.
    public func write(certificate: String, key: String, publicKey: String? = nil) throws(CertificateError) {
        do {
            try FileSystem.writeAtomically(key, privateKeyPEM, mode: 0o600)
            try FileSystem.writeAtomically(certificate, certificatePEM)
            if let publicKey { try FileSystem.writeAtomically(publicKey, publicKeyPEM) }
        } catch {
            throw CertificateError(message: "could not write the test certificate: \(error.description)")
        }
    }

    /// Makes a certificate and writes its files into `directory` (see ``write(in:name:)``).
    public static func files(in directory: String, name: String = "server") throws(CertificateError) -> Files {
        try SelfSignedCertificate().write(in: directory, name: name)
    }
}

/// A certificate that could not be made or written: one line, never key material.
public struct CertificateError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
