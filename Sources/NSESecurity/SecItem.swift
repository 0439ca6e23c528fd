// swift-format-ignore-file: AlwaysUseLowerCamelCase

// Apple's C names, as declared.
import NSECoreFoundation
import NSEDevice
import NSESystem

/// Adds an item: `attributes` names its class, its attributes, its data (`kSecValueData`) and, if not the default, its
/// access group. With `result` and a `kSecReturn…` key, the item as `SecItemCopyMatching` would return it.
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    SecKeychain.run { keychain throws(SecStatus) in
        let query = try SecItemQuery(attributes)
        let itemClass = try query.requireClass()
        if query.limit != nil || query.synchronizable == .any { throw SecStatus(errSecParam) }
        let group = try keychain.group(query.accessGroup)
        var itemAttributes = query.attributes
        itemAttributes["sync"] = .bool(query.synchronizable == .only(true))
        if itemAttributes["pdmn"] == nil { itemAttributes["pdmn"] = .text("ak") }
        let now = SystemClock.unixMilliseconds()
        let item = KeychainItem(
            itemClass: itemClass, accessGroup: group, attributes: itemAttributes, data: query.data ?? [],
            createdAt: now, modifiedAt: now)
        try keychain.requireKey(forAccessible: item.accessible)
        guard try keychain.attempt({ store throws(DeviceError) in try store.add(item, identity: identity(itemClass)) })
        else {
            throw SecStatus(errSecDuplicateItem)
        }
        if query.returns.any { result?.pointee = SecKeychain.returned(item, query.returns) }
    }
}

/// Finds the items `query` matches, in the access groups the process may reach (or the one it names), and returns
/// what it asks for: the data, the attributes, or both in one dictionary; one item, or an array.
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    SecKeychain.run { keychain throws(SecStatus) in
        let query = try SecItemQuery(query)
        let itemClass = try query.requireClass()
        let groups = try keychain.groups(query.accessGroup)
        let found = try keychain.items(query, itemClass: itemClass, groups: groups, secrets: false)
        guard !found.isEmpty else { throw SecStatus(errSecItemNotFound) }
        guard query.returns.any else { return }
        let returned: [KeychainItem]
        switch query.limit ?? .one {
        case .one: returned = [found[0]]
        case .all: returned = found
        case .count(let count): returned = Array(found.prefix(count))
        }
        // The secrets returned must be decrypted: refused for a class key the locked device does not hold.
        if query.returns.data {
            for item in returned { try keychain.requireKey(forAccessible: item.accessible) }
        }
        let values = returned.map { SecKeychain.returned($0, query.returns) }
        if (query.limit ?? .one) == .one {
            result?.pointee = values[0]
        } else {
            result?.pointee = values as NSArray
        }
    }
}

/// Changes every item `query` matches with `attributesToUpdate` (attributes, data, access group; never the class).
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    SecKeychain.run { keychain throws(SecStatus) in
        let query = try SecItemQuery(query)
        let itemClass = try query.requireClass()
        if query.returns.any { throw SecStatus(errSecParam) }
        let update = try SecItemQuery(attributesToUpdate)
        if update.itemClass != nil || update.returns.any || update.limit != nil || update.synchronizable == .any {
            throw SecStatus(errSecParam)
        }
        if update.attributes.keys.contains(where: { KeychainItem.classAttributes[itemClass]?.contains($0) != true }) {
            throw SecStatus(errSecParam)
        }
        let groups = try keychain.groups(query.accessGroup)
        let destination = try update.accessGroup.map { group throws(SecStatus) in try keychain.group(group) }
        // An item changed is encrypted again: its class key, and the new one, must be held.
        if keychain.lock != .unlocked {
            _ = try keychain.items(query, itemClass: itemClass, groups: groups, secrets: true)
            if case .text(let accessible)? = update.attributes["pdmn"] {
                try keychain.requireKey(forAccessible: accessible)
            }
        }
        let now = SystemClock.unixMilliseconds()
        let outcome = try keychain.attempt { store throws(DeviceError) in
            try store.update(itemClass: itemClass, groups: groups, identity: identity(itemClass), where: query.matches)
            {
                item in
                for (key, value) in update.attributes { item.attributes[key] = value }
                if case .only(let flag)? = update.synchronizable { item.attributes["sync"] = .bool(flag) }
                if let data = update.data { item.data = data }
                if let destination { item.accessGroup = destination }
                item.modifiedAt = now
            }
        }
        switch outcome {
        case .updated: return
        case .noneMatched: throw SecStatus(errSecItemNotFound)
        case .duplicate: throw SecStatus(errSecDuplicateItem)
        }
    }
}

/// Deletes every item `query` matches.
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    SecKeychain.run { keychain throws(SecStatus) in
        let query = try SecItemQuery(query)
        let itemClass = try query.requireClass()
        if query.returns.any { throw SecStatus(errSecParam) }
        let groups = try keychain.groups(query.accessGroup)
        // Matching needs the attributes, which the device cannot read before its first unlock.
        if keychain.lock == .beforeFirstUnlock {
            _ = try keychain.items(query, itemClass: itemClass, groups: groups, secrets: false)
        }
        let deleted = try keychain.attempt { store throws(DeviceError) in
            try store.delete(itemClass: itemClass, groups: groups, where: query.matches)
        }
        if deleted == 0 { throw SecStatus(errSecItemNotFound) }
    }
}

/// What makes two items of a class the same one.
private func identity(_ itemClass: String) -> Set<String> {
    KeychainItem.identity[itemClass] ?? []
}
