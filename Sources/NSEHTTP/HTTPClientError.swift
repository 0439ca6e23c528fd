import NSESystem

/// Why an HTTP exchange failed; descriptions are one line and never contain request bodies.
public struct HTTPClientError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public enum Code: Sendable, Hashable {
        /// The request itself is malformed (URL, method, header, timeout).
        case invalidRequest
        /// The URL scheme is not http or https, or a feature is missing from libcurl.
        case unsupported
        /// The host name could not be resolved.
        case hostNotFound
        /// The peer refused the TCP connection (nothing listening).
        case connectionRefused
        /// The TCP connection failed for another reason (unreachable, reset).
        case connectFailed
        /// The connect or total timeout elapsed.
        case timeout
        /// The TLS handshake failed.
        case tlsHandshake
        /// The server certificate or host name did not verify.
        case tlsCertificateInvalid
        /// The server public key does not match the pinned key.
        case tlsPinnedKeyMismatch
        /// A local TLS file (CA bundle, client certificate, key, pin) is unusable.
        case tlsConfiguration
        /// Sending the request failed.
        case sendFailed
        /// Receiving the response failed or the server closed early.
        case receiveFailed
        /// The server closed the connection without any response.
        case emptyReply
        /// An HTTP/2 framing or stream error.
        case http2
        /// The response body exceeded the client's limit.
        case responseBodyTooLarge
        /// The response headers exceeded the client's limit.
        case responseHeadersTooLarge
        /// The async caller's task was cancelled.
        case cancelled
        /// Memory, threads or other local resources ran out.
        case resourceExhausted
        /// Any other libcurl failure.
        case other
    }

    /// The kind of failure.
    public var code: Code
    /// A one-line explanation naming the problem.
    public var description: String
    /// The libcurl CURLcode behind the failure, if any.
    public var curlCode: Int?

    /// Creates an error.
    public init(code: Code, description: String, curlCode: Int? = nil) {
        self.code = code
        self.description = Text.oneLine(description)
        self.curlCode = curlCode
    }
}
