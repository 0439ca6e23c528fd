extension SIPUserAgent {
    /// Registers `aor` through `proxy`; see `SIPRegistration` for the meaning of each argument.
    public func register(
        aor: SIPURI, password: String?, proxy: SIPURI, expires: Int = 3600,
        contactURIParameters: [SIPParameter] = [], contactHeaderParameters: [SIPParameter] = [],
        username: String? = nil
    ) async throws -> SIPRegistrationResult {
        try await register(
            SIPRegistration(
                aor: aor, username: username, password: password, proxy: proxy, expires: expires,
                contactURIParameters: contactURIParameters,
                contactHeaderParameters: contactHeaderParameters))
    }

    /// Sends an out-of-dialog MESSAGE; see `SIPOutgoingMessage` for the meaning of each argument.
    public func sendMessage(
        to: SIPURI, from: SIPURI, proxy: SIPURI, contentType: String, body: [UInt8],
        extraHeaders: SIPHeaders = SIPHeaders(), callID: String? = nil,
        password: String? = nil
    ) async throws -> SIPSendResult {
        try await sendMessage(
            SIPOutgoingMessage(
                to: to, from: from, proxy: proxy, contentType: contentType, body: body,
                extraHeaders: extraHeaders, callID: callID, password: password))
    }
}
