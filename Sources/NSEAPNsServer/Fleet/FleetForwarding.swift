/// A push that reached a node of a fleet for a device another node serves goes on to that node (docs/serve.md,
/// "A fleet on PostgreSQL"): the node it reached logs the request, takes the fleet's faults and authenticates the
/// provider, as for its own devices; the serving node validates, records and answers it, and that answer goes
/// back as it is.

/// Another node of the fleet: its name, and the cleartext `host:port` it takes forwarded pushes on.
public struct FleetPeer: Sendable, Equatable {
    public var node: String
    public var address: String

    public init(node: String, address: String) {
        self.node = node
        self.address = address
    }
}

/// Who sent a forwarded push, as the node it reached authenticated it.
public struct ForwardedIdentity: Sendable, Equatable {
    /// The provider token's team, when it came with one.
    public var teamID: String?
    /// The client certificate's app, when it came with one.
    public var certificateBundleID: String?

    public init(teamID: String?, certificateBundleID: String?) {
        self.teamID = teamID
        self.certificateBundleID = certificateBundleID
    }
}

/// One push (or a control request about a device) on its way to the node serving its device.
public struct ForwardedPush: Sendable {
    public var token: String
    /// The request's headers, as received (lowercase names).
    public var headers: APNsHeaders
    public var body: [UInt8]
    public var identity: ForwardedIdentity
    public var method = "POST"
    /// The request's path and query; by default APNs's for the token.
    public var path: String

    public init(
        token: String, headers: APNsHeaders, body: [UInt8], identity: ForwardedIdentity, method: String = "POST",
        path: String? = nil
    ) {
        self.token = token
        self.headers = headers
        self.body = body
        self.identity = identity
        self.method = method
        self.path = path ?? "/3/device/" + token
    }
}

/// What came of forwarding a push.
public enum ForwardOutcome: Sendable {
    /// The serving node answered: status, headers (lowercase names) and body, to be sent back as they are.
    case answered(status: Int, headers: [(name: String, value: String)], body: [UInt8])
    /// The serving node could not be reached: the push never left this node (it may be tried elsewhere).
    case unreachable(String)
    /// The push went out and no answer came: whether it was taken is unknown.
    case lost(String)
}

/// The headers one node adds to a push it forwards; a request that has them without the fleet's secret is a
/// client's, and they are dropped from it.
public enum FleetHeaders {
    /// The fleet's secret (made once, kept in its database): the push comes from a node of the fleet.
    public static let forwarded = "nse-fleet-forwarded"
    public static let team = "nse-fleet-team"
    public static let bundle = "nse-fleet-bundle"
    /// The node that took the request.
    public static let node = "nse-fleet-node"

    static let all: Set<String> = [forwarded, team, bundle, node]

    /// A forwarded push's answer from a node that no longer serves its device (given back since the sending node
    /// looked): the sending node asks the node serving it now. Between nodes only.
    public static let misdirected = APNsError(421, "Misdirected")

    /// `headers` without the fleet's own.
    public static func stripped(_ headers: APNsHeaders) -> APNsHeaders {
        headers.filter { !all.contains($0.name) }
    }
}
