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
            try body(SecKeychain(store: store, groups: accessGroups(of: device.config)))
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

    private static func extensionBundleIdentifier(appBundleID: String) -> String {
        if let identifier = Bundle.main.bundleIdentifier, !identifier.isEmpty, !identifier.contains("$(") {
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
