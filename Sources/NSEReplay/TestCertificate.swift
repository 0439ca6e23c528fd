#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import NSESystem

/// A throwaway self-signed certificate for a case's TLS listener, made with the `openssl` command.
enum TestCertificate {
    static func make(in directory: String) throws(ReplayError) -> (certificate: String, key: String) {
        let certificate = Path.join(directory, "sip-cert.pem")
        let key = Path.join(directory, "sip-key.pem")
        let command = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=localhost "
            + "-addext subjectAltName=IP:127.0.0.1,DNS:localhost -days 1 -keyout '\(key)' -out '\(certificate)' >/dev/null 2>&1"
        guard system(command) == 0, FileSystem.exists(certificate) else {
            throw ReplayError(file: directory, field: "sip.transport", message: "tls needs the openssl command to make a test certificate")
        }
        return (certificate, key)
    }
}
