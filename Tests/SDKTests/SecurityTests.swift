import Foundation
import NSEDevice
import NSEExtensionKit
import NSEJSON
import NSEPayload
import NSEProtocol
import NSESecurity
import Testing

/// Security's keychain calls, as an extension makes them: Apple's dictionaries, its statuses, its access groups.
@Suite(.serialized)
struct SecurityTests {
    let directory: String
    let device: Device

    /// A device whose entitlements give a keychain access group and an App Group; the process serves a push for it.
    init() throws {
        directory = NSTemporaryDirectory() + "nse-security-\(UUID().uuidString)"
        var device = try Device.create(at: directory)
        device.config.keychainAccessGroups = ["ABCDE12345.org.example.shared"]
        device.config.appGroups = ["group.org.example.app"]
        try device.save()
        self.device = device
        ExtensionHost.shared.serving(
            ServiceRequest(
                requestID: "r1", pushType: .alert, payload: JSONObject(), container: directory,
                budgetMilliseconds: 30_000,
                deadlineUnixMilliseconds: 0))
    }

    private func password(service: String = "chat", account: String = "bob") -> [String: Any] {
        [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
    }

    @Test("added, found with its data and attributes, updated, deleted: Apple's statuses at each step")
    func lifeOfAnItem() throws {
        var add = password()
        add[kSecValueData as String] = Data("secret".utf8)
        add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecDuplicateItem)

        var query = password()
        query[kSecReturnData as String] = kCFBooleanTrue
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var item: CFTypeRef?
        #expect(SecItemCopyMatching(query as CFDictionary, &item) == errSecSuccess)
        #expect((item as? Data).map { String(decoding: $0, as: UTF8.self) } == "secret")

        var both = password()
        both[kSecReturnData as String] = true
        both[kSecReturnAttributes as String] = true
        var found: AnyObject?
        #expect(SecItemCopyMatching(both as CFDictionary, &found) == errSecSuccess)
        let attributes = try #require(found as? [String: Any])
        #expect(attributes[kSecAttrAccount as String] as? String == "bob")
        #expect(attributes[kSecAttrAccessible as String] as? String == kSecAttrAccessibleAfterFirstUnlock as String)
        #expect(attributes[kSecAttrAccessGroup as String] as? String == "ABCDE12345.org.example.shared")
        #expect(attributes[kSecValueData as String] as? Data == Data("secret".utf8))

        let change: [String: Any] = [kSecValueData as String: Data("rotated".utf8)]
        #expect(SecItemUpdate(password() as CFDictionary, change as CFDictionary) == errSecSuccess)
        #expect(SecItemCopyMatching(query as CFDictionary, &item) == errSecSuccess)
        #expect((item as? Data) == Data("rotated".utf8))
        #expect(SecItemUpdate(password(account: "carol") as CFDictionary, change as CFDictionary) == errSecItemNotFound)

        #expect(SecItemDelete(password() as CFDictionary) == errSecSuccess)
        #expect(SecItemDelete(password() as CFDictionary) == errSecItemNotFound)
        #expect(SecItemCopyMatching(query as CFDictionary, &item) == errSecItemNotFound)
    }

    @Test("an update that would make two items one is refused, and changes nothing")
    func updateIntoADuplicate() {
        for account in ["bob", "carol"] {
            var add = password(account: account)
            add[kSecValueData as String] = Data(account.utf8)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        }
        let rename: [String: Any] = [kSecAttrAccount as String: "bob"]
        #expect(
            SecItemUpdate(password(account: "carol") as CFDictionary, rename as CFDictionary) == errSecDuplicateItem)
        var query = password(account: "carol")
        query[kSecReturnData as String] = true
        var item: CFTypeRef?
        #expect(SecItemCopyMatching(query as CFDictionary, &item) == errSecSuccess)
        #expect((item as? Data) == Data("carol".utf8))
    }

    @Test("access groups: the entitled ones and the App Groups; any other is errSecMissingEntitlement")
    func accessGroups() {
        var shared = password()
        shared[kSecAttrAccessGroup as String] = "group.org.example.app"
        shared[kSecValueData as String] = Data("in the app group".utf8)
        #expect(SecItemAdd(shared as CFDictionary, nil) == errSecSuccess)

        var other = password(account: "eve")
        other[kSecAttrAccessGroup as String] = "ZZZZZ99999.com.example.other"
        other[kSecValueData as String] = Data()
        #expect(SecItemAdd(other as CFDictionary, nil) == errSecMissingEntitlement)
        #expect(SecItemCopyMatching(other as CFDictionary, nil) == errSecMissingEntitlement)

        // The app's own application identifier is not the extension's: what the app keeps there is not found here.
        let app = try? device.keychain()
        _ = try? app?.add(
            KeychainItem(
                itemClass: "genp", accessGroup: "ABCDE12345.org.example.app",
                attributes: ["svce": .text("chat"), "acct": .text("dave"), "sync": .bool(false)], data: [1],
                createdAt: 0, modifiedAt: 0), identity: KeychainItem.identity["genp"] ?? [])
        #expect(SecItemCopyMatching(password(account: "dave") as CFDictionary, nil) == errSecItemNotFound)

        var all = password()
        all[kSecMatchLimit as String] = kSecMatchLimitAll
        all[kSecReturnAttributes as String] = true
        var found: CFTypeRef?
        #expect(SecItemCopyMatching(all as CFDictionary, &found) == errSecSuccess)
        #expect((found as? [[String: Any]])?.count == 1)
    }

    @Test("what a call cannot be: no class, a value of the wrong kind, a class nse does not keep")
    func refusals() {
        let noClass: [String: Any] = [kSecAttrAccount as String: "bob"]
        #expect(SecItemCopyMatching(noClass as CFDictionary, nil) == errSecParam)
        var wrongData = password()
        wrongData[kSecValueData as String] = "not data"
        #expect(SecItemAdd(wrongData as CFDictionary, nil) == errSecParam)
        var serverOnGeneric = password()
        serverOnGeneric[kSecAttrServer as String] = "example.org"
        #expect(SecItemAdd(serverOnGeneric as CFDictionary, nil) == errSecParam)
        let key: [String: Any] = [kSecClass as String: kSecClassKey]
        #expect(SecItemCopyMatching(key as CFDictionary, nil) == errSecUnimplemented)
        #expect((SecCopyErrorMessageString(errSecItemNotFound, nil) as String?)?.isEmpty == false)
    }

    @Test("internet passwords are told apart by server, protocol and port")
    func internetPasswords() {
        for (port, secret) in [(443, "a"), (8443, "b")] {
            let add: [CFString: Any] = [
                kSecClass: kSecClassInternetPassword, kSecAttrServer: "sip.example.org", kSecAttrAccount: "bob",
                kSecAttrProtocol: kSecAttrProtocolHTTPS, kSecAttrPort: port, kSecValueData: Data(secret.utf8),
            ]
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        }
        let query: [CFString: Any] = [
            kSecClass: kSecClassInternetPassword, kSecAttrServer: "sip.example.org", kSecAttrPort: 8443,
            kSecReturnData: kCFBooleanTrue!,
        ]
        var item: CFTypeRef?
        #expect(SecItemCopyMatching(query as CFDictionary, &item) == errSecSuccess)
        #expect((item as? Data) == Data("b".utf8))
    }

    /// The device is now `state`, as `nse device set --lock-state` leaves it; the next push's process sees it.
    private func lock(_ state: DeviceLockState) throws {
        var device = try Device.open(at: directory)
        device.config.lockState = state
        try device.save()
        ExtensionHost.shared.serving(
            ServiceRequest(
                requestID: "r-\(state)", pushType: .alert, payload: JSONObject(), container: directory,
                budgetMilliseconds: 30_000, deadlineUnixMilliseconds: 0))
    }

    private func add(account: String, accessible: CFString?, secret: String) -> OSStatus {
        var add = password(account: account)
        add[kSecValueData as String] = Data(secret.utf8)
        if let accessible { add[kSecAttrAccessible as String] = accessible }
        return SecItemAdd(add as CFDictionary, nil)
    }

    private func secret(account: String, accessible: CFString? = nil) -> (OSStatus, String?) {
        var query = password(account: account)
        query[kSecReturnData as String] = true
        if let accessible { query[kSecAttrAccessible as String] = accessible }
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        return (status, (item as? Data).map { String(decoding: $0, as: UTF8.self) })
    }

    @Test(
        "locked: a when-unlocked item's secret is errSecInteractionNotAllowed, its attributes are not; after-first-unlock items work"
    )
    func lockedDevice() throws {
        // Apple's default class: when unlocked.
        #expect(add(account: "default", accessible: nil, secret: "d") == errSecSuccess)
        #expect(
            add(account: "background", accessible: kSecAttrAccessibleAfterFirstUnlock, secret: "b") == errSecSuccess)
        try lock(.locked)

        #expect(secret(account: "default").0 == errSecInteractionNotAllowed)
        #expect(secret(account: "background") == (errSecSuccess, "b"))
        var attributesOnly = password(account: "default")
        attributesOnly[kSecReturnAttributes as String] = true
        var found: CFTypeRef?
        #expect(SecItemCopyMatching(attributesOnly as CFDictionary, &found) == errSecSuccess)
        #expect((found as? [String: Any])?[kSecAttrAccount as String] as? String == "default")
        // Every item of the service, secrets asked for: one of them cannot be decrypted.
        var all: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "chat",
            kSecReturnData as String: true, kSecMatchLimit as String: kSecMatchLimitAll,
        ]
        #expect(SecItemCopyMatching(all as CFDictionary, &found) == errSecInteractionNotAllowed)
        all[kSecReturnData as String] = false
        all[kSecReturnAttributes as String] = true
        #expect(SecItemCopyMatching(all as CFDictionary, &found) == errSecSuccess)
        #expect((found as? [Any])?.count == 2)

        #expect(
            add(account: "new", accessible: kSecAttrAccessibleWhenUnlocked, secret: "n") == errSecInteractionNotAllowed)
        #expect(
            add(account: "new", accessible: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, secret: "n")
                == errSecSuccess)
        let rotate: [String: Any] = [kSecValueData as String: Data("r".utf8)]
        #expect(
            SecItemUpdate(password(account: "default") as CFDictionary, rotate as CFDictionary)
                == errSecInteractionNotAllowed)
        #expect(SecItemUpdate(password(account: "background") as CFDictionary, rotate as CFDictionary) == errSecSuccess)
        let tighten: [String: Any] = [kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked]
        #expect(
            SecItemUpdate(password(account: "background") as CFDictionary, tighten as CFDictionary)
                == errSecInteractionNotAllowed)
        #expect(secret(account: "background") == (errSecSuccess, "r"))
        #expect(SecItemDelete(password(account: "new") as CFDictionary) == errSecSuccess)

        try lock(.unlocked)
        #expect(secret(account: "default") == (errSecSuccess, "d"))
    }

    @Test("before the first unlock only always items open, and a search reaches them only by naming their class")
    func beforeFirstUnlock() throws {
        #expect(
            add(account: "background", accessible: kSecAttrAccessibleAfterFirstUnlock, secret: "b") == errSecSuccess)
        #expect(
            add(account: "always", accessible: kSecAttrAccessibleAlwaysThisDeviceOnly, secret: "a") == errSecSuccess)
        try lock(.beforeFirstUnlock)

        #expect(secret(account: "background").0 == errSecInteractionNotAllowed)
        // The search must read every item of the class to match one: the after-first-unlock item's are locked.
        #expect(secret(account: "always").0 == errSecInteractionNotAllowed)
        #expect(secret(account: "always", accessible: kSecAttrAccessibleAlwaysThisDeviceOnly) == (errSecSuccess, "a"))
        #expect(
            add(account: "new", accessible: kSecAttrAccessibleAfterFirstUnlock, secret: "n")
                == errSecInteractionNotAllowed)
        #expect(SecItemDelete(password(account: "always") as CFDictionary) == errSecInteractionNotAllowed)

        try lock(.locked)
        #expect(secret(account: "background") == (errSecSuccess, "b"))
        #expect(secret(account: "always") == (errSecSuccess, "a"))
    }

    @Test("kSecAttrAccessible takes only Apple's values")
    func accessibleValues() {
        #expect(add(account: "odd", accessible: "sometimes" as CFString, secret: "x") == errSecParam)
        var bad = password(account: "odd")
        bad[kSecAttrAccessible as String] = 1
        #expect(SecItemCopyMatching(bad as CFDictionary, nil) == errSecParam)
    }

    @Test("SecRandomCopyBytes fills the buffer")
    func randomBytes() {
        var first = [UInt8](repeating: 0, count: 32)
        var second = [UInt8](repeating: 0, count: 32)
        #expect(SecRandomCopyBytes(kSecRandomDefault, first.count, &first) == errSecSuccess)
        #expect(SecRandomCopyBytes(kSecRandomDefault, second.count, &second) == errSecSuccess)
        #expect(first != second)
        #expect(first != [UInt8](repeating: 0, count: 32))
    }
}
