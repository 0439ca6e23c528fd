/// A conference state document (RFC 4575 `application/conference-info+xml`) as a chat room's focus sends it in a
/// NOTIFY for `Event: conference`: the room, its subject, its users and their roles.
///
/// What liblinphone reads of a group chat room: `conference-description/subject`, and per `users/user` its
/// `entity` and `roles/entry` (`admin`, `participant`); a `user` whose `state` is `deleted` has left (partial
/// documents). Other elements (endpoints, media, liblinphone's extensions) are skipped.
public struct SIPConferenceInfo: Sendable, Equatable {
    /// The `Content-Type` of the document.
    public static let contentType = "application/conference-info+xml"
    /// The RFC 4575 namespace.
    public static let namespace = "urn:ietf:params:xml:ns:conference-info"
    /// The most users a document may name.
    public static let maxUsers = 512

    /// Whether a document (or a user in it) is the whole state, a change, or a removal (RFC 4575 §4.1).
    public enum State: String, Sendable {
        case full
        case partial
        case deleted
    }

    /// One user of the conference.
    public struct User: Sendable, Equatable {
        /// Its address of record.
        public var entity: String
        /// Its roles (`admin`, `participant`), in document order.
        public var roles: [String]
        public var state: State

        /// True when one of its roles is `admin`.
        public var isAdmin: Bool { roles.contains("admin") }

        /// Creates a user.
        public init(entity: String, roles: [String], state: State = .full) {
            self.entity = entity
            self.roles = roles
            self.state = state
        }
    }

    /// The conference's URI (`entity`): the chat room.
    public var entity: String
    /// Incremented by the notifier with each document of a subscription (RFC 4575 §4.1).
    public var version: Int
    public var state: State
    /// `conference-description/subject`, if given.
    public var subject: String?
    public var users: [User]

    /// Creates a document.
    public init(entity: String, version: Int, state: State = .full, subject: String?, users: [User]) {
        self.entity = entity
        self.version = version
        self.state = state
        self.subject = subject
        self.users = users
    }

    /// Parses a document: its root `conference-info` in the RFC 4575 namespace with an `entity`, a `version` that
    /// is a number, a known `state`; each user with an `entity`; at most ``maxUsers`` users.
    public init(parsing bytes: [UInt8]) throws(SIPError) {
        let root = try SIPXMLElement(parsing: bytes)
        guard root.name == "conference-info", root.namespace == Self.namespace else {
            throw Self.malformed("the root is not an RFC 4575 conference-info")
        }
        guard let entity = root.attributes["entity"], !entity.isEmpty else { throw Self.malformed("no entity") }
        guard let versionText = root.attributes["version"], let version = Int(versionText), version >= 0 else {
            throw Self.malformed("no version number")
        }
        let state = try Self.state(root.attributes["state"])
        var subject: String?
        if let description = root.child("conference-description"), let element = description.child("subject") {
            subject = element.text
        }
        var users: [User] = []
        for user in root.child("users")?.children("user") ?? [] where user.namespace == Self.namespace {
            guard let entity = user.attributes["entity"], !entity.isEmpty else {
                throw Self.malformed("a user has no entity")
            }
            guard users.count < Self.maxUsers else {
                throw SIPError(.messageTooLarge, "conference-info: more than \(Self.maxUsers) users")
            }
            let roles = user.child("roles")?.children("entry").map(\.text) ?? []
            users.append(User(entity: entity, roles: roles, state: try Self.state(user.attributes["state"])))
        }
        self.init(entity: entity, version: version, state: state, subject: subject, users: users)
    }

    /// The document, every user with its `roles`.
    public func serialized() -> [UInt8] {
        let ns = Self.namespace
        var children: [SIPXMLElement] = []
        if let subject {
            children.append(
                SIPXMLElement(
                    name: "conference-description", namespace: ns,
                    children: [SIPXMLElement(name: "subject", namespace: ns, text: subject)]))
        }
        let users = users.map { user in
            SIPXMLElement(
                name: "user", namespace: ns, attributes: ["entity": user.entity, "state": user.state.rawValue],
                children: [
                    SIPXMLElement(
                        name: "roles", namespace: ns,
                        children: user.roles.map { SIPXMLElement(name: "entry", namespace: ns, text: $0) })
                ])
        }
        children.append(SIPXMLElement(name: "users", namespace: ns, children: users))
        let root = SIPXMLElement(
            name: "conference-info", namespace: ns,
            attributes: ["entity": entity, "state": state.rawValue, "version": String(version)], children: children)
        return Array(root.serialized().utf8)
    }

    private static func state(_ text: String?) throws(SIPError) -> State {
        guard let text else { return .full }
        guard let state = State(rawValue: text) else { throw malformed("unknown state") }
        return state
    }

    private static func malformed(_ text: String) -> SIPError {
        SIPError(.malformedMessage, "conference-info: \(text)")
    }
}
