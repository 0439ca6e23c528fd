// NSECertificates: throwaway self-signed EC P-256 certificates for loopback TLS (localhost, 127.0.0.1), made in
// process with swift-certificates and swift-crypto (already linked through jwt-kit): replay's TLS cases and the
// tests use this one helper, and no `openssl` command.
//
// Files:
//   SelfSignedCertificate  the certificate and its key, in PEM
