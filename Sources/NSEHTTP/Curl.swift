// The only file that imports libcurl. Every CURLcode is checked where it is returned and
// turned into an HTTPClientError; C pointers never escape the closure that produced them.
import CCurl
import NSESystem
import Synchronization

/// curl_global_init runs once, lazily, under a lock; a failure is thrown and retried next time.
private let curlGlobalInitDone = Mutex<Bool>(false)

private func ensureCurlGlobalInit() throws(HTTPClientError) {
    let code: CURLcode = curlGlobalInitDone.withLock { done in
        if done { return CURLE_OK }
        guard nse_curl_load() != 0 else { return CURLE_FAILED_INIT }
        let code = nse_curl_global_init(Int(CURL_GLOBAL_DEFAULT))
        if code == CURLE_OK { done = true }
        return code
    }
    if code != CURLE_OK {
        if code == CURLE_FAILED_INIT {
            throw HTTPClientError(
                code: .unsupported, description: "libcurl (libcurl.so.4) could not be loaded: install libcurl4",
                curlCode: Int(code.rawValue))
        }
        throw HTTPClientError(
            code: .resourceExhausted, description: "libcurl global initialisation failed: \(curlText(code))",
            curlCode: Int(code.rawValue))
    }
}

private func curlText(_ code: CURLcode) -> String {
    guard let text = nse_curl_easy_strerror(code) else { return "error \(code.rawValue)" }
    return String(cString: text)
}

/// Mutable state shared with libcurl's callbacks during one transfer.
private final class TransferState {
    let maxBodyBytes: Int
    let maxHeaderBytes: Int
    let cancellation: CancellationFlag?
    var body: [UInt8] = []
    var headers = HTTPHeaders()
    var headerBytes = 0
    var bodyTooLarge = false
    var headersTooLarge = false

    init(limits: CurlTransferLimits, cancellation: CancellationFlag?) {
        maxBodyBytes = max(0, limits.maxBodyBytes)
        maxHeaderBytes = max(0, limits.maxHeaderBytes)
        self.cancellation = cancellation
    }

    /// What libcurl hands a callback.
    enum Part { case body, headerLine }

    /// libcurl's write and header callbacks (C functions, so no captures): `user` is the transfer's state. Returns
    /// the bytes taken; anything else makes libcurl abort the transfer (a limit was passed).
    static func deliver(
        _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?, as part: Part
    ) -> Int {
        guard let user else { return 0 }
        let state = Unmanaged<TransferState>.fromOpaque(user).takeUnretainedValue()
        let length = size * count
        guard length > 0, let data else { return 0 }
        let bytes = UnsafeRawBufferPointer(start: data, count: length)
        switch part {
        case .body: return state.appendBody(bytes) ? length : 0
        case .headerLine: return state.appendHeaderLine(bytes) ? length : 0
        }
    }

    /// Returns false when the body limit would be exceeded.
    func appendBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if bytes.count > maxBodyBytes - body.count {
            bodyTooLarge = true
            return false
        }
        body.append(contentsOf: bytes)
        return true
    }

    /// Parses one raw header line (status line, field, continuation or blank line).
    func appendHeaderLine(_ raw: UnsafeRawBufferPointer) -> Bool {
        headerBytes += raw.count
        if headerBytes > maxHeaderBytes {
            headersTooLarge = true
            return false
        }
        var end = raw.count
        while end > 0, raw[end - 1] == 0x0A || raw[end - 1] == 0x0D { end -= 1 }
        let line = UnsafeRawBufferPointer(rebasing: raw[0..<end])
        if line.isEmpty { return true }
        if line.starts(with: Array("HTTP/".utf8)) {
            // A new status line starts a new header block (e.g. after 100 Continue).
            headers = HTTPHeaders()
            return true
        }
        if line[0] == 0x20 || line[0] == 0x09 {
            headers.appendToLastValue(trimmed(line))
            return true
        }
        guard let colon = line.firstIndex(of: 0x3A) else { return true }
        let name = String(decoding: UnsafeRawBufferPointer(rebasing: line[0..<colon]), as: UTF8.self)
        let value = trimmed(UnsafeRawBufferPointer(rebasing: line[(colon + 1)...]))
        headers.add(name: ASCII.lowercased(trimmedString(name)), value: value)
        return true
    }

    private func trimmed(_ bytes: UnsafeRawBufferPointer) -> String {
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }

    private func trimmedString(_ text: String) -> String {
        Array(text.utf8).withUnsafeBytes { trimmed($0) }
    }
}

/// Lets another thread interrupt curl_multi_poll; curl_multi_wakeup is documented thread-safe and
/// the flag's lock guarantees the multi handle outlives every call.
private struct MultiWaker: @unchecked Sendable {
    let multi: UnsafeMutableRawPointer

    func wake() { _ = nse_curl_multi_wakeup(multi) }
}

/// One libcurl easy handle; freed (with its header list) on deinit.
final class CurlEasy {
    private let handle: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// Drives the transfer so a cancellation can interrupt its waits (curl_multi_wakeup).
    private var multi: UnsafeMutableRawPointer?
    private var inMulti = false

    init() throws(HTTPClientError) {
        try ensureCurlGlobalInit()
        guard let handle = nse_curl_easy_init() else {
            throw HTTPClientError(code: .resourceExhausted, description: "libcurl could not create a transfer handle")
        }
        self.handle = handle
    }

    deinit {
        if let multi {
            if inMulti { _ = nse_curl_multi_remove_handle(multi, handle) }
            _ = nse_curl_multi_cleanup(multi)
        }
        nse_curl_easy_cleanup(handle)
        if let headerList { nse_curl_slist_free_all(headerList) }
    }

    // MARK: Checked option setters

    private func check(_ code: CURLcode, _ what: String) throws(HTTPClientError) {
        guard code != CURLE_OK else { return }
        let kind: HTTPClientError.Code
        switch code {
        case CURLE_OUT_OF_MEMORY: kind = .resourceExhausted
        case CURLE_UNKNOWN_OPTION, CURLE_NOT_BUILT_IN, CURLE_UNSUPPORTED_PROTOCOL: kind = .unsupported
        case CURLE_BAD_FUNCTION_ARGUMENT, CURLE_URL_MALFORMAT: kind = .invalidRequest
        default: kind = .other
        }
        throw HTTPClientError(
            code: kind, description: "libcurl rejected \(what): \(curlText(code))", curlCode: Int(code.rawValue))
    }

    private func set(_ option: CURLoption, _ value: Int, _ what: String) throws(HTTPClientError) {
        try check(nse_curl_easy_setopt_long(handle, option, value), what)
    }

    private func set(_ option: CURLoption, _ value: String, _ what: String) throws(HTTPClientError) {
        if value.utf8.contains(0) {
            throw HTTPClientError(code: .invalidRequest, description: "\(what) contains a NUL byte")
        }
        // libcurl copies string options (except POSTFIELDS, which is never used here).
        let code = value.withCString { nse_curl_easy_setopt_str(handle, option, $0) }
        try check(code, what)
    }

    private func getLong(_ info: CURLINFO, _ what: String) throws(HTTPClientError) -> Int {
        var value = 0
        try check(nse_curl_easy_getinfo_long(handle, info, &value), what)
        return value
    }

    private func getOffT(_ info: CURLINFO, _ what: String) throws(HTTPClientError) -> Int64 {
        var value: curl_off_t = 0
        try check(nse_curl_easy_getinfo_off_t(handle, info, &value), what)
        return Int64(value)
    }

    // MARK: Transfer

    func perform(_ request: HTTPRequest, limits: CurlTransferLimits, cancellation: CancellationFlag?)
        throws(HTTPClientError) -> HTTPResponse
    {
        try validate(request)
        let state = TransferState(limits: limits, cancellation: cancellation)

        try set(CURLOPT_NOSIGNAL, 1, "NOSIGNAL")
        try set(CURLOPT_PROTOCOLS_STR, "http,https", "protocol restriction")
        try set(CURLOPT_FOLLOWLOCATION, 0, "redirect policy")
        try set(CURLOPT_URL, request.url, "the URL")
        if let proxy = request.proxy { try set(CURLOPT_PROXY, proxy, "the proxy") }
        try set(CURLOPT_TIMEOUT_MS, milliseconds(request.timeout), "the timeout")
        try set(CURLOPT_CONNECTTIMEOUT_MS, milliseconds(request.connectTimeout), "the connect timeout")
        try check(
            nse_curl_easy_setopt_off_t(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(state.maxBodyBytes)),
            "the body size limit")
        try configureMethodAndBody(request)
        try configureHeaders(request)
        try configureVersion(request.version)
        try configureTLS(request.tls)

        let context = Unmanaged.passUnretained(state).toOpaque()
        try check(
            nse_curl_easy_setopt_write_callback(handle, { TransferState.deliver($0, $1, $2, $3, as: .body) }),
            "the body callback")
        try check(nse_curl_easy_setopt_ptr(handle, CURLOPT_WRITEDATA, context), "the body callback data")
        try check(
            nse_curl_easy_setopt_header_callback(handle, { TransferState.deliver($0, $1, $2, $3, as: .headerLine) }),
            "the header callback")
        try check(nse_curl_easy_setopt_ptr(handle, CURLOPT_HEADERDATA, context), "the header callback data")
        let (code, detail): (CURLcode, String) = withExtendedLifetime(state) {
            withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(CURL_ERROR_SIZE) + 1) { buffer in
                buffer.initialize(repeating: 0)
                var code = nse_curl_easy_setopt_ptr(handle, CURLOPT_ERRORBUFFER, buffer.baseAddress)
                if code == CURLE_OK {
                    code = runTransfer(cancellation: cancellation)
                }
                // The buffer dies with this closure: detach it before leaving.
                _ = nse_curl_easy_setopt_ptr(handle, CURLOPT_ERRORBUFFER, nil)
                buffer[buffer.count - 1] = 0
                return (code, String(cString: buffer.baseAddress!))
            }
        }
        // Callbacks no longer run; drop the dangling context pointers.
        _ = nse_curl_easy_setopt_ptr(handle, CURLOPT_WRITEDATA, nil)
        _ = nse_curl_easy_setopt_ptr(handle, CURLOPT_HEADERDATA, nil)

        if code != CURLE_OK {
            throw failure(code, detail: detail, state: state, request: request)
        }

        let status = try getLong(CURLINFO_RESPONSE_CODE, "the status code")
        let version = try getLong(CURLINFO_HTTP_VERSION, "the HTTP version")
        let micros = try getOffT(CURLINFO_TOTAL_TIME_T, "the total time")
        return HTTPResponse(
            status: status,
            headers: state.headers,
            body: state.body,
            httpVersion: versionName(version),
            totalTimeMilliseconds: Double(micros) / 1000
        )
    }

    /// Runs the transfer on a private multi handle, stopping early when `cancellation` fires.
    /// Returns the transfer's CURLcode, or CURLE_ABORTED_BY_CALLBACK when cancelled.
    private func runTransfer(cancellation: CancellationFlag?) -> CURLcode {
        guard let multi = nse_curl_multi_init() else { return CURLE_OUT_OF_MEMORY }
        self.multi = multi
        guard nse_curl_multi_add_handle(multi, handle) == CURLM_OK else { return CURLE_OUT_OF_MEMORY }
        inMulti = true
        if let cancellation {
            let waker = MultiWaker(multi: multi)
            cancellation.register { waker.wake() }
        }
        defer {
            cancellation?.unregister()
            _ = nse_curl_multi_remove_handle(multi, handle)
            inMulti = false
        }
        while true {
            if cancellation?.isCancelled == true { return CURLE_ABORTED_BY_CALLBACK }
            var running: Int32 = 0
            let performed = nse_curl_multi_perform(multi, &running)
            guard performed == CURLM_OK else {
                return performed == CURLM_OUT_OF_MEMORY ? CURLE_OUT_OF_MEMORY : CURLE_FAILED_INIT
            }
            if running == 0 { break }
            // Waits for socket activity, curl's own timers (timeouts) or a wakeup, at most 1 s.
            let polled = nse_curl_multi_poll(multi, nil, 0, 1000, nil)
            guard polled == CURLM_OK else {
                return polled == CURLM_OUT_OF_MEMORY ? CURLE_OUT_OF_MEMORY : CURLE_FAILED_INIT
            }
        }
        var result = CURLE_FAILED_INIT
        var remaining: Int32 = 0
        while let message = nse_curl_multi_info_read(multi, &remaining) {
            if message.pointee.msg == CURLMSG_DONE && message.pointee.easy_handle == handle {
                result = message.pointee.data.result
            }
        }
        return result
    }

    private func validate(_ request: HTTPRequest) throws(HTTPClientError) {
        let method = Array(request.method.utf8)
        let tokenSymbols = Array("!#$%&'*+-.^_`|~".utf8)
        let methodOK =
            !method.isEmpty
            && method.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || tokenSymbols.contains(byte)
            }
        guard methodOK else {
            throw HTTPClientError(code: .invalidRequest, description: "invalid HTTP method \"\(request.method)\"")
        }
        for header in request.headers {
            let name = Array(header.name.utf8)
            let nameOK = !name.isEmpty && name.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x3A }
            guard nameOK else {
                throw HTTPClientError(code: .invalidRequest, description: "invalid header name \"\(header.name)\"")
            }
            guard !header.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                throw HTTPClientError(
                    code: .invalidRequest, description: "header \(header.name) has a line break or NUL in its value")
            }
        }
        for (value, name) in [(request.timeout, "timeout"), (request.connectTimeout, "connect timeout")] {
            guard value.isFinite, value > 0 else {
                throw HTTPClientError(
                    code: .invalidRequest, description: "\(name) must be a positive number of seconds, got \(value)")
            }
        }
    }

    private func milliseconds(_ seconds: Double) -> Int {
        let ms = (seconds * 1000).rounded(.up)
        return ms >= Double(Int32.max) ? Int(Int32.max) : max(1, Int(ms))
    }

    private func configureMethodAndBody(_ request: HTTPRequest) throws(HTTPClientError) {
        let method = request.method
        let upper = method.uppercased()
        if upper == "HEAD" && request.body.isEmpty {
            try set(CURLOPT_NOBODY, 1, "HEAD")
            if method != "HEAD" { try set(CURLOPT_CUSTOMREQUEST, method, "the method") }
            return
        }
        let sendsBody = !request.body.isEmpty || ["POST", "PUT", "PATCH"].contains(upper)
        if sendsBody {
            try check(
                nse_curl_easy_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)),
                "the body size")
            // COPYPOSTFIELDS copies exactly POSTFIELDSIZE bytes, so the buffer need not outlive this call.
            let code: CURLcode =
                request.body.isEmpty
                ? "".withCString { nse_curl_easy_setopt_str(handle, CURLOPT_COPYPOSTFIELDS, $0) }
                : request.body.withUnsafeBytes {
                    nse_curl_easy_setopt_ptr(
                        handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0.baseAddress))
                }
            try check(code, "the request body")
            if method != "POST" { try set(CURLOPT_CUSTOMREQUEST, method, "the method") }
        } else {
            try set(CURLOPT_HTTPGET, 1, "GET")
            if method != "GET" { try set(CURLOPT_CUSTOMREQUEST, method, "the method") }
        }
    }

    private func configureHeaders(_ request: HTTPRequest) throws(HTTPClientError) {
        var lines: [String] = request.headers.map { header in
            // "Name;" is libcurl's syntax for sending a header with an empty value.
            header.value.isEmpty ? "\(header.name);" : "\(header.name): \(header.value)"
        }
        // Never wait for 100-continue, and never invent a form content type for bodies.
        if !request.headers.contains(name: "expect") { lines.append("Expect:") }
        if !request.headers.contains(name: "content-type") { lines.append("Content-Type:") }
        for line in lines {
            let appended = line.withCString { nse_curl_slist_append(headerList, $0) }
            guard let appended else {
                throw HTTPClientError(code: .resourceExhausted, description: "out of memory building request headers")
            }
            headerList = appended
        }
        try check(nse_curl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList), "the request headers")
    }

    private func configureVersion(_ version: HTTPVersionPreference) throws(HTTPClientError) {
        let value: Int
        switch version {
        case .http11: value = CURL_HTTP_VERSION_1_1
        case .http2PriorKnowledge: value = CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
        case .http2OverTLS, .automatic: value = CURL_HTTP_VERSION_2TLS
        }
        try set(CURLOPT_HTTP_VERSION, value, "the HTTP version")
    }

    private func configureTLS(_ tls: HTTPTLSOptions) throws(HTTPClientError) {
        if let caFile = tls.caFilePath { try set(CURLOPT_CAINFO, caFile, "the CA file") }
        if let pin = tls.pinnedPublicKey { try set(CURLOPT_PINNEDPUBLICKEY, pin, "the pinned public key") }
        if tls.insecureSkipVerify {
            try set(CURLOPT_SSL_VERIFYPEER, 0, "peer verification")
            try set(CURLOPT_SSL_VERIFYHOST, 0, "host verification")
        }
        if let client = tls.clientCertificate {
            try set(CURLOPT_SSLCERT, client.certificatePath, "the client certificate")
            if let key = client.keyPath { try set(CURLOPT_SSLKEY, key, "the client key") }
            if let password = client.keyPassword { try set(CURLOPT_KEYPASSWD, password, "the client key password") }
        }
    }

    private func versionName(_ version: Int) -> String {
        switch version {
        case CURL_HTTP_VERSION_1_0: return "1.0"
        case CURL_HTTP_VERSION_1_1: return "1.1"
        case CURL_HTTP_VERSION_2_0: return "2"
        case CURL_HTTP_VERSION_3: return "3"
        default: return "unknown"
        }
    }

    private func failure(_ code: CURLcode, detail: String, state: TransferState, request: HTTPRequest)
        -> HTTPClientError
    {
        let curlCode = Int(code.rawValue)
        let reason = detail.isEmpty ? curlText(code) : detail
        func error(_ kind: HTTPClientError.Code, _ summary: String) -> HTTPClientError {
            HTTPClientError(code: kind, description: "\(summary) (\(reason))", curlCode: curlCode)
        }
        if state.bodyTooLarge || code == CURLE_FILESIZE_EXCEEDED {
            return HTTPClientError(
                code: .responseBodyTooLarge, description: "response body exceeds the \(state.maxBodyBytes)-byte limit",
                curlCode: curlCode)
        }
        if state.headersTooLarge {
            return HTTPClientError(
                code: .responseHeadersTooLarge,
                description: "response headers exceed the \(state.maxHeaderBytes)-byte limit", curlCode: curlCode)
        }
        switch code {
        case CURLE_ABORTED_BY_CALLBACK where state.cancellation?.isCancelled == true:
            return error(.cancelled, "request cancelled")
        case CURLE_UNSUPPORTED_PROTOCOL:
            return error(.unsupported, "unsupported URL scheme (only http and https)")
        case CURLE_URL_MALFORMAT:
            return error(.invalidRequest, "malformed URL")
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return error(.hostNotFound, "host not found")
        case CURLE_COULDNT_CONNECT:
            let osErrno = (try? getLong(CURLINFO_OS_ERRNO, "errno")) ?? 0
            let connectionRefused = 111  // ECONNREFUSED on Linux
            return osErrno == connectionRefused
                ? error(.connectionRefused, "connection refused")
                : error(.connectFailed, "could not connect")
        case CURLE_OPERATION_TIMEDOUT:
            return HTTPClientError(
                code: .timeout,
                description:
                    "timed out (limit \(request.timeout) s total, \(request.connectTimeout) s connect) (\(reason))",
                curlCode: curlCode)
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CIPHER, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_ENGINE_INITFAILED:
            return error(.tlsHandshake, "TLS handshake failed")
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_INVALIDCERTSTATUS:
            return error(.tlsCertificateInvalid, "TLS server certificate not trusted")
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return error(.tlsPinnedKeyMismatch, "TLS server public key does not match the pin")
        case CURLE_SSL_CERTPROBLEM, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_CLIENTCERT:
            return error(.tlsConfiguration, "TLS file (CA bundle, certificate or key) unusable")
        case CURLE_SEND_ERROR:
            return error(.sendFailed, "sending the request failed")
        case CURLE_RECV_ERROR, CURLE_PARTIAL_FILE:
            return error(.receiveFailed, "receiving the response failed")
        case CURLE_GOT_NOTHING:
            return error(.emptyReply, "server closed the connection without a response")
        case CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return error(.http2, "HTTP/2 protocol error")
        case CURLE_OUT_OF_MEMORY:
            return error(.resourceExhausted, "out of memory")
        case CURLE_WEIRD_SERVER_REPLY:
            return error(.receiveFailed, "malformed server reply")
        default:
            return error(.other, "HTTP transfer failed")
        }
    }
}
