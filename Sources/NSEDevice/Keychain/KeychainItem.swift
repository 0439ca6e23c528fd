import NSECrypto
import NSEJSON
import NSESystem

/// One keychain item as the device keeps it: its class (`genp`, `inet`), its access group, its attributes under
/// Apple's keys (`acct`, `svce`, `labl`…) and its secret bytes (`v_Data`).
public struct KeychainItem: Sendable, Equatable {
    /// An attribute's value: Security's dictionaries carry strings, numbers, booleans and bytes.
    public enum Value: Sendable, Hashable {
        case text(String)
        case integer(Int64)
        case bool(Bool)
        case bytes([UInt8])
    }

    /// The classes nse keeps: generic (`genp`) and internet (`inet`) passwords.
    public var itemClass: String
    public var accessGroup: String
    public var attributes: [String: Value]
    public var data: [UInt8]
    /// Unix milliseconds.
    public var createdAt: Int64
    public var modifiedAt: Int64

    public init(
        itemClass: String, accessGroup: String, attributes: [String: Value], data: [UInt8], createdAt: Int64,
        modifiedAt: Int64
    ) {
        self.itemClass = itemClass
        self.accessGroup = accessGroup
        self.attributes = attributes
        self.data = data
        self.createdAt = createdAt
        self.modifiedAt = modifiedAt
    }

    /// The attributes a class's items have, by Apple's key (SecItem.h); the access group, `sync` and the dates apart.
    public static let classAttributes: [String: Set<String>] = [
        "genp": ["pdmn", "desc", "icmt", "crtr", "type", "labl", "invi", "nega", "acct", "svce", "gena"],
        "inet": [
            "pdmn", "desc", "icmt", "crtr", "type", "labl", "invi", "nega", "acct", "sdmn", "srvr", "ptcl", "atyp",
            "port", "path",
        ],
    ]
    /// What makes two items of a class the same one (with their access group and `sync`; SecItem.h's primary keys).
    public static let identity: [String: Set<String>] = [
        "genp": ["acct", "svce", "sync"],
        "inet": ["acct", "sdmn", "srvr", "ptcl", "atyp", "port", "path", "sync"],
    ]
    /// An item as the app adds it from outside the SDK (`nse device keychain add`, a replay case's `device.keychain`):
    /// kept `accessible` (`kSecAttrAccessible`'s code), not synchronizable, made now.
    public static func added(
        itemClass: String, accessGroup: String, attributes: [String: Value], accessible: String, data: [UInt8]
    ) -> KeychainItem {
        var attributes = attributes
        attributes["pdmn"] = .text(accessible)
        attributes["sync"] = .bool(false)
        let now = SystemClock.unixMilliseconds()
        return KeychainItem(
            itemClass: itemClass, accessGroup: accessGroup, attributes: attributes, data: data, createdAt: now,
            modifiedAt: now)
    }

    /// Its `kSecAttrAccessible` (`pdmn`): the class key its secret is encrypted with. Apple's default, "when
    /// unlocked", when it has none.
    public var accessible: String {
        if case .text(let value)? = attributes["pdmn"] { return value }
        return "ak"
    }

    /// Whether the item has every one of `wanted`'s attributes, with the same value.
    public func has(_ wanted: [String: Value]) -> Bool {
        wanted.allSatisfy { attributes[$0.key] == $0.value }
    }

    /// Whether the two items agree on every key of `keys` (absent on both counts as agreeing).
    public func sameIdentity(as other: KeychainItem, keys: Set<String>) -> Bool {
        keys.allSatisfy { attributes[$0] == other.attributes[$0] }
    }

    /// As stored: each value tagged with its kind (`{"acct": {"s": "bob"}, "port": {"i": 443}}`), bytes in base64.
    var attributesJSON: JSON {
        var object = JSONObject()
        for (key, value) in attributes.sorted(by: { $0.key < $1.key }) {
            let tagged: JSON
            switch value {
            case .text(let text): tagged = ["s": .string(text)]
            case .integer(let number): tagged = ["i": .int(number)]
            case .bool(let flag): tagged = ["b": .bool(flag)]
            case .bytes(let bytes): tagged = ["d": .string(Base64.encode(bytes))]
            }
            object[key] = tagged
        }
        return .object(object)
    }

    static func attributes(from json: JSON) -> [String: Value]? {
        guard case .object(let members) = json else { return nil }
        var attributes: [String: Value] = [:]
        for (key, tagged) in members {
            if let text = tagged["s"]?.stringValue {
                attributes[key] = .text(text)
            } else if let number = tagged["i"]?.intValue {
                attributes[key] = .integer(number)
            } else if let flag = tagged["b"]?.boolValue {
                attributes[key] = .bool(flag)
            } else if let encoded = tagged["d"]?.stringValue, let bytes = Base64.decode(encoded) {
                attributes[key] = .bytes(bytes)
            } else {
                return nil
            }
        }
        return attributes
    }
}
