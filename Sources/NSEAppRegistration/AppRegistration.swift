public import NSEDevice
public import NSESIP

/// How the app registers its SIP account: the RFC 8599 push parameters in the Contact exactly as liblinphone
/// sends them, and the install's `+sip.instance`.
public enum AppRegistration {
    /// The Contact URI parameters liblinphone adds for APNs (tokens in uppercase hex, voip first).
    public static func pushParameters(for device: Device) -> [SIPParameter] {
        let config = device.config
        return [
            SIPParameter("pn-provider", "apns"),
            SIPParameter("pn-prid", "\(config.voipToken.uppercased()):voip&\(config.remoteToken.uppercased()):remote"),
            SIPParameter("pn-param", "\(config.teamID).\(config.bundleID).voip&remote"),
            SIPParameter("pn-silent", "1"),
            SIPParameter("pn-timeout", "0"),
            SIPParameter("pn-msg-str", "IM_MSG"),
            SIPParameter("pn-call-str", "IC_MSG"),
            SIPParameter("pn-groupchat-str", "GC_MSG"),
            SIPParameter("pn-msg-snd", "msg.caf"),
        ]
    }

    /// The REGISTER for the device's account, with its push parameters.
    public static func registration(for device: Device, account: SIPAccount, password: String?) throws(SIPError)
        -> SIPRegistration
    {
        SIPRegistration(
            aor: try SIPURI(parsing: account.aor), password: password, proxy: try SIPURI(parsing: account.proxy),
            expires: Int(account.expires), contactURIParameters: pushParameters(for: device),
            contactHeaderParameters: [SIPParameter("+sip.instance", "\"<\(account.instance)>\"")])
    }

    /// The user agent settings for the account (its CA file for TLS, automatic 200 OK to MESSAGE).
    public static func configuration(for account: SIPAccount) -> SIPUserAgentConfiguration {
        var configuration = SIPUserAgentConfiguration()
        configuration.userAgent = "nse-extension/1"
        configuration.autoAnswerStatus = 200
        configuration.tls = .caFile(account.caFile)
        return configuration
    }
}
