import Foundation
import NSECoreFoundation
import NSEDevice
import NSEExtensionKit
import NSESystem
import Synchronization

/// The keychain as this process reaches it: the device's store, and the access groups its entitlements give.
///
/// On iOS a process reaches the groups of its `keychain-access-groups` entitlement, its application identifier
/// (`TEAMID.bundle-id`) and its App Groups, and adds to the first of them by default. An extension's application
/// identifier is its own, not its app's: an item the app added to its default group (its own identifier, when it has
/// no `keychain-access-groups`) is not found by its extension. nse keeps that: the extension's identifier is
/// `TEAMID.` and its Info.plist's `CFBundleIdentifier`, or the app's bundle identifier and `.NotificationService`
/// (Xcode's name for the target) when the Info.plist has none.
struct SecKeychain {
    let store: KeychainStore
    /// In the order iOS searches and defaults them.
    let groups: [String]
    /// Which class keys the device holds (`nse device set --lock-state`).
    let lock: DeviceLockState

    /// The store of each device opened by this process, kept while the process lives.
    private static let stores = Mutex<[String: KeychainStore]>([:])

    /// Runs `body` against the keychain of the request's device: `errSecSuccess`, or its refusal. Without a device
    /// (no request yet) there is no keychain: `errSecNotAvailable`.
    static func run(_ body: (SecKeychain) throws(SecStatus) -> Void) -> OSStatus {
        guard let device = ExtensionHost.shared.device else { return errSecNotAvailable }
        do {
            let store = try stores.withLock { stores throws(DeviceError) -> KeychainStore in
                if let store = stores[device.directory] { return store }
                let store = try device.keychain()
                stores[device.directory] = store
                return store
            }
            try body(SecKeychain(store: store, groups: accessGroups(of: device.config), lock: device.config.lockState))
            return errSecSuccess
        } catch let refusal as SecStatus {
            return refusal.status
        } catch let error as DeviceError {
            return status(of: error)
        } catch {
            return errSecIO
        }
    }

    static func accessGroups(of config: DeviceConfig) -> [String] {
        config.keychainGroups(
            applicationIdentifier: config.teamID + "." + extensionBundleIdentifier(appBundleID: config.bundleID))
    }

    /// The extension's bundle identifier: its Info.plist's when it is under the app's (as Xcode and iOS require of an
    /// embedded extension), else the app's and `.NotificationService` (a build for another app, or none).
    private static func extensionBundleIdentifier(appBundleID: String) -> String {
        if let identifier = Bundle.main.bundleIdentifier, identifier.hasPrefix(appBundleID + "."),
            !identifier.contains("$(")
        {
            return identifier
        }
        return appBundleID + ".NotificationService"
    }

    /// The group an item is added to: the one named, if this process may use it, else the first.
    func group(_ named: String?) throws(SecStatus) -> String {
        guard let named else { return groups[0] }
        guard groups.contains(named) else { throw SecStatus(errSecMissingEntitlement) }
        return named
    }

    /// The groups a search reaches: the one named, if this process may use it, else all of them.
    func groups(_ named: String?) throws(SecStatus) -> [String] {
        guard let named else { return groups }
        guard groups.contains(named) else { throw SecStatus(errSecMissingEntitlement) }
        return [named]
    }

    /// Refuses what needs the class key of `accessible` (to encrypt or decrypt a secret) while the device does not
    /// hold it.
    func requireKey(forAccessible accessible: String) throws(SecStatus) {
        guard lock.holdsKey(forAccessible: accessible) else { throw SecStatus(errSecInteractionNotAllowed) }
    }

    /// The items `query` matches in `groups`, refused (`errSecInteractionNotAllowed`) as iOS refuses what its lock
    /// keeps locked: before the first unlock, any item the search must read whose attributes cannot be (every one of
    /// the class in the groups, or of the `kSecAttrAccessible` it names: a class kept in the clear, as iOS's
    /// `pdmn` column); with `secrets`, any match whose secret cannot be decrypted.
    func items(_ query: SecItemQuery, itemClass: String, groups: [String], secrets: Bool) throws(SecStatus)
        -> [KeychainItem]
    {
        let lock = lock
        let named = query.attributes["pdmn"]
        let candidates = try attempt { store throws(DeviceError) in
            try store.items(itemClass: itemClass, groups: groups) { item in
                if query.matches(item) { return true }
                guard lock == .beforeFirstUnlock else { return false }
                return named.map { .text(item.accessible) == $0 } ?? true
                    && !lock.readsAttributes(forAccessible: item.accessible)
            }
        }
        if candidates.contains(where: { !lock.readsAttributes(forAccessible: $0.accessible) }) {
            throw SecStatus(errSecInteractionNotAllowed)
        }
        let found = candidates.filter(query.matches)
        if secrets, found.contains(where: { !lock.holdsKey(forAccessible: $0.accessible) }) {
            throw SecStatus(errSecInteractionNotAllowed)
        }
        return found
    }

    /// A call to the store, its failure as the status a SecItem call returns.
    func attempt<T>(_ body: (KeychainStore) throws(DeviceError) -> T) throws(SecStatus) -> T {
        do { return try body(store) } catch { throw SecStatus(Self.status(of: error)) }
    }

    static func status(of error: DeviceError) -> OSStatus {
        error.code == .corrupt ? errSecDecode : errSecIO
    }

    /// An item as a search returns it: its data, its attributes, or the attributes with `v_Data`.
    static func returned(_ item: KeychainItem, _ returns: SecItemQuery.Returns) -> AnyObject {
        guard returns.attributes else { return Data(item.data) as NSData }
        var dictionary: [String: Any] = ["class": item.itemClass, "agrp": item.accessGroup]
        for (key, value) in item.attributes {
            switch value {
            case .text(let text): dictionary[key] = text
            case .integer(let number): dictionary[key] = Int(number)
            case .bool(let flag): dictionary[key] = flag
            case .bytes(let bytes): dictionary[key] = Data(bytes)
            }
        }
        dictionary["cdat"] = Date(timeIntervalSince1970: Double(item.createdAt) / 1000)
        dictionary["mdat"] = Date(timeIntervalSince1970: Double(item.modifiedAt) / 1000)
        if returns.data { dictionary["v_Data"] = Data(item.data) }
        return dictionary as NSDictionary
    }
}
