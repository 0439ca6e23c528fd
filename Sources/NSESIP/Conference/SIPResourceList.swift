/// A resource list (RFC 4826 `application/resource-lists+xml`), as a URI-list service carries it (RFC 5366,
/// `Content-Disposition: recipient-list`): the addresses a chat room is created with, or invited to.
///
/// liblinphone's client sends one `list` of `entry uri=…` elements when it creates a group chat room; entries of
/// nested lists are read too, extensions (display names, copy control) are skipped.
public struct SIPResourceList: Sendable, Equatable {
    /// The `Content-Type` of the document.
    public static let contentType = "application/resource-lists+xml"
    /// The `Content-Disposition` of the body of a request to a URI-list service (RFC 5366).
    public static let disposition = "recipient-list"
    /// The RFC 4826 namespace.
    public static let namespace = "urn:ietf:params:xml:ns:resource-lists"
    /// The most entries a document may name.
    public static let maxEntries = 256

    /// The entries' URIs, in document order, duplicates kept.
    public var uris: [SIPURI]

    /// Creates a list.
    public init(uris: [SIPURI]) {
        self.uris = uris
    }

    /// Parses a document: its root `resource-lists` in the RFC 4826 namespace, each `entry` with a `uri` that
    /// parses as a SIP URI, at most ``maxEntries`` of them.
    public init(parsing bytes: [UInt8]) throws(SIPError) {
        let root = try SIPXMLElement(parsing: bytes)
        guard root.name == "resource-lists", root.namespace == Self.namespace else {
            throw SIPError(.malformedMessage, "resource-lists: the root is not an RFC 4826 resource-lists")
        }
        var uris: [SIPURI] = []
        func collect(_ list: SIPXMLElement) throws(SIPError) {
            for child in list.children where child.namespace == Self.namespace {
                switch child.name {
                case "entry":
                    guard let text = child.attributes["uri"] else {
                        throw SIPError(.malformedMessage, "resource-lists: an entry has no uri")
                    }
                    guard uris.count < Self.maxEntries else {
                        throw SIPError(.messageTooLarge, "resource-lists: more than \(Self.maxEntries) entries")
                    }
                    do { uris.append(try SIPURI(parsing: text)) } catch {
                        throw SIPError(.malformedMessage, "resource-lists: an entry's uri is not a SIP URI")
                    }
                case "list":
                    try collect(child)
                default:
                    continue
                }
            }
        }
        for list in root.children("list") where list.namespace == Self.namespace { try collect(list) }
        self.uris = uris
    }

    /// The document: one `list` with an `entry` per URI.
    public func serialized() -> [UInt8] {
        let entries = uris.map {
            SIPXMLElement(name: "entry", namespace: Self.namespace, attributes: ["uri": $0.description])
        }
        let root = SIPXMLElement(
            name: "resource-lists", namespace: Self.namespace,
            children: [SIPXMLElement(name: "list", namespace: Self.namespace, children: entries)])
        return Array(root.serialized().utf8)
    }
}
