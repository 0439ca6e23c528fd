import NSECoreFoundation
import NSEDevice

/// A SecItem dictionary read: its class, the attributes it names, what it asks back and how many. Every refusal is an
/// `OSStatus`, as the calls return it.
struct SecItemQuery {
    /// What the call asks back.
    struct Returns: Equatable {
        var data = false
        var attributes = false
        var any: Bool { data || attributes }
    }

    /// How many matches a search returns.
    enum Limit: Equatable {
        case one
        case all
        case count(Int)
    }

    /// Which items a search reaches by their `kSecAttrSynchronizable`.
    enum Synchronizable: Equatable {
        case only(Bool)
        case any
    }

    var itemClass: String?
    /// The attributes named, by Apple's key; the access group and `sync` apart.
    var attributes: [String: KeychainItem.Value] = [:]
    var accessGroup: String?
    var synchronizable: Synchronizable?
    var data: [UInt8]?
    var returns = Returns()
    var limit: Limit?

    /// Keys a call may carry that say how to run it, not what to match.
    private static let options: Set<String> = ["nleg", "u_AuthUI", "u_OpPrompt", "u_NoAuth"]

    /// Reads `dictionary`; a key of the wrong kind, or one no item of the class has, is `errSecParam`. A class other
    /// than the two password classes is `errSecUnimplemented` (docs/sdk.md says why).
    init(_ dictionary: CFDictionary) throws(SecStatus) {
        var entries: [(String, Any)] = []
        for (key, value) in dictionary {
            guard let name = Self.string(key) else { throw SecStatus(errSecParam) }
            entries.append((name, value))
        }
        if let named = entries.first(where: { $0.0 == "class" }) {
            guard let itemClass = Self.string(named.1) else { throw SecStatus(errSecParam) }
            guard KeychainItem.classAttributes[itemClass] != nil else {
                throw SecStatus(["keys", "cert", "idnt"].contains(itemClass) ? errSecUnimplemented : errSecParam)
            }
            self.itemClass = itemClass
        }
        for (key, value) in entries {
            switch key {
            case "class":
                continue
            case "agrp":
                guard let group = Self.string(value) else { throw SecStatus(errSecParam) }
                accessGroup = group
            case "sync":
                if let flag = Self.bool(value) {
                    synchronizable = .only(flag)
                } else if Self.string(value) == "syna" {
                    synchronizable = .any
                } else {
                    throw SecStatus(errSecParam)
                }
            case "v_Data":
                guard let bytes = Self.bytes(value) else { throw SecStatus(errSecParam) }
                data = bytes
            case "r_Data":
                guard let flag = Self.bool(value) else { throw SecStatus(errSecParam) }
                returns.data = flag
            case "r_Attributes":
                guard let flag = Self.bool(value) else { throw SecStatus(errSecParam) }
                returns.attributes = flag
            case "r_Ref", "r_PersistentRef", "v_Ref", "v_PersistentRef":
                if Self.bool(value) == false { continue }
                throw SecStatus(errSecUnimplemented)
            case "m_Limit":
                if let name = Self.string(value), name == "m_LimitOne" || name == "m_LimitAll" {
                    limit = name == "m_LimitOne" ? .one : .all
                } else if let count = Self.integer(value), count > 0 {
                    limit = count == 1 ? .one : .count(Int(count))
                } else {
                    throw SecStatus(errSecParam)
                }
            case "pdmn":
                guard let accessible = Self.string(value), DeviceLockState.keychainClasses.contains(accessible) else {
                    throw SecStatus(errSecParam)
                }
                attributes[key] = .text(accessible)
            case "cdat", "mdat":
                // Dates are the keychain's to set; a search by them is not supported.
                throw SecStatus(errSecParam)
            case _ where Self.options.contains(key):
                continue
            default:
                guard let value = Self.value(value) else { throw SecStatus(errSecParam) }
                if let itemClass, KeychainItem.classAttributes[itemClass]?.contains(key) != true {
                    throw SecStatus(errSecParam)
                }
                attributes[key] = value
            }
        }
    }

    /// The class, which every call must name.
    func requireClass() throws(SecStatus) -> String {
        guard let itemClass else { throw SecStatus(errSecParam) }
        return itemClass
    }

    /// Whether `item` has every attribute this query names, and the `sync` it asks for (none said: not synchronizable).
    func matches(_ item: KeychainItem) -> Bool {
        let sync = item.attributes["sync"] == .bool(true)
        switch synchronizable ?? .only(false) {
        case .only(let wanted): if sync != wanted { return false }
        case .any: break
        }
        return item.has(attributes)
    }

    private static func string(_ value: Any) -> String? {
        if let text = value as? String { return text }
        if let text = value as? NSString { return text as String }
        return nil
    }

    private static func bool(_ value: Any) -> Bool? {
        if let flag = value as? Bool { return flag }
        if let number = value as? NSNumber { return number.boolValue }
        return nil
    }

    private static func integer(_ value: Any) -> Int64? {
        if value is Bool { return nil }
        if let number = value as? Int { return Int64(number) }
        if let number = value as? NSNumber { return number.int64Value }
        return nil
    }

    private static func bytes(_ value: Any) -> [UInt8]? {
        if let data = value as? Data { return Array(data) }
        if let data = value as? NSData { return Array(data as Data) }
        return nil
    }

    private static func value(_ value: Any) -> KeychainItem.Value? {
        if let text = string(value) { return .text(text) }
        if let flag = value as? Bool { return .bool(flag) }
        if let number = integer(value) { return .integer(number) }
        if let data = bytes(value) { return .bytes(data) }
        return nil
    }
}

/// A refusal, as the call returns it.
struct SecStatus: Error {
    var status: OSStatus
    init(_ status: OSStatus) { self.status = status }
}
