public import NSEJSON

/// Whether the iPhone is unlocked, locked, or not unlocked since it started (`nse device set --lock-state`).
///
/// It decides which data-protection class keys iOS holds, so which keychain items a process can decrypt
/// (`kSecAttrAccessible`): an extension usually runs on a locked phone, and an item kept with the default,
/// `kSecAttrAccessibleWhenUnlocked`, is then `errSecInteractionNotAllowed` to it (docs/sdk.md, "Security").
public enum DeviceLockState: String, Sendable, Equatable, CaseIterable, JSONConvertible {
    /// In use: every class key is held.
    case unlocked
    /// Locked after its first unlock: the "when unlocked" keys are dropped, the "after first unlock" ones kept.
    case locked
    /// Started and not unlocked since: only the "always" keys exist.
    case beforeFirstUnlock = "before-first-unlock"

    /// `kSecAttrAccessible`'s values (SecItem.h's strings), by the state that first makes their class key unavailable.
    public static let whenUnlockedClasses: Set<String> = ["ak", "aku", "akpu"]
    public static let afterFirstUnlockClasses: Set<String> = ["ck", "cku"]
    public static let alwaysClasses: Set<String> = ["dk", "dku"]
    public static let keychainClasses = whenUnlockedClasses.union(afterFirstUnlockClasses).union(alwaysClasses)

    /// `kSecAttrAccessible`'s values by the name of their constant, without `kSecAttrAccessible` and in kebab case
    /// (`after-first-unlock` for `kSecAttrAccessibleAfterFirstUnlock`), as nse's options take them.
    public static let accessibleNames: [String: String] = [
        "when-unlocked": "ak", "when-unlocked-this-device-only": "aku",
        "when-passcode-set-this-device-only": "akpu", "after-first-unlock": "ck",
        "after-first-unlock-this-device-only": "cku", "always": "dk", "always-this-device-only": "dku",
    ]

    /// A `kSecAttrAccessible` value from its code (`ck`) or its name (`after-first-unlock`); nil for neither.
    public static func accessible(named name: String) -> String? {
        keychainClasses.contains(name) ? name : accessibleNames[name]
    }

    /// Whether an item kept with `accessible` (`kSecAttrAccessible`'s value) can have its secret decrypted, or be
    /// added, in this state. An unknown value counts as the default, "when unlocked".
    public func holdsKey(forAccessible accessible: String) -> Bool {
        switch self {
        case .unlocked: return true
        case .locked: return !Self.whenUnlockedClasses.contains(accessible) && Self.keychainClasses.contains(accessible)
        case .beforeFirstUnlock: return Self.alwaysClasses.contains(accessible)
        }
    }

    /// Whether an item's attributes can be read in this state. Apple encrypts them with a metadata key per class that
    /// the application processor keeps once unwrapped: locked after an unlock it still has every one, before the
    /// first unlock only those of the classes whose keys exist.
    public func readsAttributes(forAccessible accessible: String) -> Bool {
        self == .beforeFirstUnlock ? holdsKey(forAccessible: accessible) : true
    }
}
