/// What to register: account, credentials, proxy, expiry and Contact parameters.
public struct SIPRegistration: Sendable {
    /// The address-of-record, e.g. `sip:bob@example.org`.
    public var aor: SIPURI
    /// The authentication user name (defaults to the AOR user).
    public var username: String?
    /// The password; nil means challenges cannot be answered.
    public var password: String?
    /// The outbound proxy / registrar URI with transport, e.g. `sip:127.0.0.1:5070;transport=tcp`.
    public var proxy: SIPURI
    /// Requested registration lifetime in seconds (0 unregisters).
    public var expires: Int
    /// Contact URI parameters appended after `transport`, in order (e.g. pn-provider, pn-prid, pn-param).
    public var contactURIParameters: [SIPParameter]
    /// Contact header parameters, in order, values emitted verbatim (e.g. `+sip.instance` = `"<urn:uuid:...>"`).
    public var contactHeaderParameters: [SIPParameter]
    /// Extra headers added to the REGISTER.
    public var extraHeaders: SIPHeaders
    /// A fixed Call-ID (defaults to one kept per AOR for refreshes).
    public var callID: String?

    /// Creates a registration request description.
    public init(
        aor: SIPURI, username: String? = nil, password: String? = nil, proxy: SIPURI, expires: Int = 3600,
        contactURIParameters: [SIPParameter] = [], contactHeaderParameters: [SIPParameter] = [],
        extraHeaders: SIPHeaders = SIPHeaders(), callID: String? = nil
    ) {
        self.aor = aor
        self.username = username
        self.password = password
        self.proxy = proxy
        self.expires = expires
        self.contactURIParameters = contactURIParameters
        self.contactHeaderParameters = contactHeaderParameters
        self.extraHeaders = extraHeaders
        self.callID = callID
    }
}
