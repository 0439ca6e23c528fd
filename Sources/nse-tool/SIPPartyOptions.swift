import ArgumentParser
import NSECommandLine
import NSESIP

/// The options `nse send` and `nse call` share: who sends or calls whom, through which proxy, with which
/// credentials; and the user agent they make for it.
struct SIPPartyOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The proxy to go through, with its transport, e.g. 'sip:127.0.0.1:5060;transport=tcp'.", valueName: "uri"))
    var proxy: String

    @Option(help: ArgumentHelp("The sender's (caller's) address of record.", valueName: "uri"))
    var from: String

    @Option(
        help: ArgumentHelp(
            "The recipient's (callee's) address of record (required, but for `nse send --room`).", valueName: "uri"))
    var to: String?

    @Option(help: "The sender's SIP password, for digest challenges.")
    var password: String?

    @Option(help: ArgumentHelp("Use this Call-ID instead of a random one.", valueName: "id"))
    var callID: String?

    @Option(help: ArgumentHelp("For TLS: trust the CA certificates in this PEM file.", valueName: "file"))
    var caFile: String?

    /// The three URIs, parsed (`to` instead of `--to` when given: a chat room); a bad or missing one is a usage
    /// error naming it.
    func uris(to destination: String? = nil) throws(Failure) -> (to: SIPURI, from: SIPURI, proxy: SIPURI) {
        guard let to = destination ?? to else { throw Failure(.usage, "--to is required") }
        do {
            return (try SIPURI(parsing: to), try SIPURI(parsing: from), try SIPURI(parsing: proxy))
        } catch { throw Failure(.usage, "\(error)") }
    }

    /// A user agent configuration naming itself `userAgent`, trusting `--ca-file` for TLS.
    func agentConfiguration(userAgent: String) -> SIPUserAgentConfiguration {
        SIPUserAgentConfiguration(tls: .caFile(caFile), userAgent: userAgent)
    }
}
