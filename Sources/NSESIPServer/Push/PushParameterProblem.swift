import NSECrypto

/// Why a Contact's RFC 8599 push parameters cannot wake the device as they stand: the diagnosis the registrar logs
/// and reports (`bad_push_parameters` event) when it stores the binding (docs/sip.md, "Push parameters that cannot
/// work").
///
/// Flexisip stores such a binding all the same (its registrar never reads the push parameters' syntax) and finds
/// out only when a push is due: `RFC8599PushParams::parsePushParams` throws and the push is skipped with a debug
/// line. nse answers the REGISTER the same way (200) but says so at once, in one line, so a client's mistake is seen
/// the moment it registers rather than when a message goes missing.
///
/// A description names the parameter and what is wrong in one line; it never holds a whole token (a token is shown
/// by its first four characters and its length).
public enum PushParameterProblem: Sendable, Hashable, CustomStringConvertible {
    /// Some of `pn-provider`, `pn-prid` and `pn-param` are given (or empty) and these are not: the binding gets no
    /// push parameters at all.
    case missing([String])
    /// `pn-provider` is neither `apns` nor `apns.dev` (a typo, or `fcm`: nse pushes through APNs only).
    case unsupportedProvider(String)
    /// `pn-param` is not `TEAMID.BUNDLEID[.SERVICES]`: no team id or no bundle id.
    case malformedParam
    /// `pn-param` names this many services (`voip&remote`: 2) and `pn-prid` has another number of tokens.
    case serviceCountMismatch(services: Int, tokens: Int)
    /// A `pn-prid` item that is not `TOKEN` (alone) or `TOKEN:voip` / `TOKEN:remote`; the reason says which.
    case malformedPrid(String)
    /// `pn-prid` gives a token for a service `pn-param` does not declare (`TOKEN:voip` for `TEAM.BUNDLE.remote`).
    case undeclaredService(String)
    /// A token that cannot be an APNs device token for the provider's environment: not hex bytes, or not the
    /// length Apple's devices give (`token` is already shortened).
    case invalidToken(service: String, token: String, length: Int, reason: String)

    /// The problem's machine-readable name (the event's `problem`, the log's `push.problem`).
    public var code: String {
        switch self {
        case .missing: "missing_parameter"
        case .unsupportedProvider: "unsupported_provider"
        case .malformedParam: "malformed_param"
        case .serviceCountMismatch: "service_count_mismatch"
        case .malformedPrid: "malformed_prid"
        case .undeclaredService: "undeclared_service"
        case .invalidToken: "invalid_token"
        }
    }

    /// Whether no push can be built from the parameters: Flexisip's `InvalidPushParameters` at parse time, where it
    /// skips the push. A token APNs would refuse is not such a problem for nse: the push goes, and APNs (or
    /// `nse serve`) answers `BadDeviceToken` in the `pushed` event; Flexisip drops that push before sending it.
    public var stopsPush: Bool {
        if case .invalidToken = self { return false }
        return true
    }

    /// What happens to pushes for the binding, as events and logs say it: `none` or `sent`.
    public var pushAction: String { stopsPush ? "none" : "sent" }

    public var description: String {
        switch self {
        case .missing(let names):
            return
                "\(names.joined(separator: " and ")) missing or empty (pn-provider, pn-prid and pn-param go together): the binding is kept without push parameters"
        case .unsupportedProvider(let name):
            return
                "pn-provider \"\(PushParameterProblem.printable(name, 24))\" is not apns or apns.dev: no push is sent"
        case .malformedParam:
            return "pn-param is not TEAMID.BUNDLEID[.SERVICES]: no push is sent"
        case .serviceCountMismatch(let services, let tokens):
            return
                "pn-param declares \(services) service\(services == 1 ? "" : "s") but pn-prid has \(tokens) token\(tokens == 1 ? "" : "s"): no push is sent"
        case .malformedPrid(let reason):
            return "pn-prid is not TOKEN or TOKEN:SERVICE&TOKEN:SERVICE (\(reason)): no push is sent"
        case .undeclaredService(let service):
            return
                "pn-prid has a token for \(PushParameterProblem.printable(service, 16)), a service pn-param does not declare: no push is sent"
        case .invalidToken(let service, let token, let length, let reason):
            return
                "the \(service) token \"\(token)\" (\(length) characters) \(reason): pushes to it are sent and APNs answers BadDeviceToken"
        }
    }

    // MARK: - diagnosis

    /// The problem of parameters given in full (already percent-decoded, provider lowercased), or nil when a push
    /// can be built from them. Follows Flexisip's `RFC8599PushParams::parsePushParams` for Apple providers, step by
    /// step, then checks each token the way APNs reads it (the first problem found is the one reported).
    static func diagnose(provider: String, param: String, prid: String) -> PushParameterProblem? {
        guard provider == "apns" || provider == "apns.dev" else { return .unsupportedProvider(provider) }
        // pn-param: `([^.]+)\.(.+)\.((?:voip|remote|&)+)`, else `([^.]+)\.(.+)` (the service is then `remote`).
        guard let firstDot = param.firstIndex(of: "."), firstDot != param.startIndex,
            param.index(after: firstDot) != param.endIndex
        else { return .malformedParam }
        var declared = ["remote"]
        let rest = param[param.index(after: firstDot)...]
        if let lastDot = rest.lastIndex(of: "."), lastDot != rest.startIndex {
            let suffix = rest[rest.index(after: lastDot)...]
            let parts = suffix.split(separator: "&").map(String.init)
            if !parts.isEmpty, parts.allSatisfy({ $0 == "voip" || $0 == "remote" }) {
                declared = []
                for part in parts where !declared.contains(part) { declared.append(part) }
            }
        }
        // pn-prid: one token per declared service.
        let items = prid.split(separator: "&", omittingEmptySubsequences: false)
        guard items.count == declared.count else {
            return .serviceCountMismatch(services: declared.count, tokens: items.count)
        }
        var tokens: [(service: String, token: Substring)] = []
        for item in items {
            let service: String
            let token: Substring
            if let colon = item.firstIndex(of: ":") {
                token = item[item.startIndex..<colon]
                service = String(item[item.index(after: colon)...])
                guard service == "voip" || service == "remote" else {
                    return .malformedPrid("a token ends in \":\(printable(service, 16))\", not :voip or :remote")
                }
                guard declared.contains(service) else { return .undeclaredService(service) }
            } else {
                guard items.count == 1 else { return .malformedPrid("a token without :voip or :remote among several") }
                token = item
                service = declared[0]
            }
            guard !token.isEmpty else { return .malformedPrid("an empty token") }
            guard !tokens.contains(where: { $0.service == service }) else {
                return .malformedPrid("two tokens for \(service)")
            }
            tokens.append((service, token))
        }
        for (service, token) in tokens {
            if let reason = tokenProblem(token, development: provider == "apns.dev") {
                return .invalidToken(service: service, token: shortened(token), length: token.count, reason: reason)
            }
        }
        return nil
    }

    /// Why `token` cannot be an APNs device token, or nil. APNs takes the token as the hex of its bytes in the
    /// request path (a character that is not a hex digit is `BadDeviceToken`); a device's token is 32 bytes (64
    /// digits) — Flexisip refuses any other length — while a simulator's, valid in the development environment
    /// only, is longer, so `apns.dev` takes 32 bytes or more.
    static func tokenProblem(_ token: Substring, development: Bool) -> String? {
        guard token.utf8.allSatisfy({ Hex.value(ofDigit: $0) != nil }) else { return "is not hex digits" }
        let count = token.utf8.count
        guard count % 2 == 0 else { return "is an odd number of hex digits, not whole bytes" }
        if development {
            guard count >= 64 else { return "is shorter than the 64 hex digits of a device token" }
        } else {
            guard count == 64 else { return "is not the 64 hex digits of a device token (production)" }
        }
        return nil
    }

    /// The first four characters of a token and an ellipsis: enough to tell tokens apart in a log, not to push.
    static func shortened(_ token: some StringProtocol) -> String {
        printable(token.prefix(4), 4) + (token.count > 4 ? "…" : "")
    }

    /// At most `limit` characters, anything but printable ASCII as `?`: a log line stays one line.
    static func printable(_ text: some StringProtocol, _ limit: Int) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.prefix(limit).map { $0.value >= 0x20 && $0.value < 0x7F ? $0 : "?" }))
    }
}
