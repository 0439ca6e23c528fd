/// How an interpolated value may appear in the log: Apple's `OSLogPrivacy`, with the same options and masks.
///
/// nse shows a value as Apple's log does with no logging profile installed (NSEOSLog.swift): `.public` as it is;
/// `.private` and `.sensitive` as `<private>`; `.auto` shows numbers and Booleans and hides everything else; a
/// `mask: .hash` turns a hidden value into `<mask.hash: 'BASE64'>` (`PrivacyHash`).
public struct OSLogPrivacy: Sendable {
    enum PrivacyOption: Sendable {
        case `private`, `public`, sensitive, auto
    }

    /// What a value that is not shown becomes. Apple's iOS 15 `_mail…` masks (for Mail's own use) are not declared.
    public enum Mask: Equatable, Hashable, Sendable {
        /// A salted hash of the value, the same for the same value: lets messages be correlated without showing it.
        case hash
        /// No mask: a hidden value is `<private>`.
        case none
    }

    let privacy: PrivacyOption
    let mask: Mask

    /// Shown as it is.
    public static var `public`: OSLogPrivacy { OSLogPrivacy(privacy: .public, mask: .none) }

    /// Hidden: `<private>`.
    public static var `private`: OSLogPrivacy { OSLogPrivacy(privacy: .private, mask: .none) }

    /// Hidden, with `mask` (`.hash`: `<mask.hash: '…'>`).
    public static func `private`(mask: Mask) -> OSLogPrivacy { OSLogPrivacy(privacy: .private, mask: mask) }

    /// Hidden even where a profile would show private values (on Apple); in nse, as `.private`.
    public static var sensitive: OSLogPrivacy { OSLogPrivacy(privacy: .sensitive, mask: .none) }

    /// Hidden, with `mask`.
    public static func sensitive(mask: Mask) -> OSLogPrivacy { OSLogPrivacy(privacy: .sensitive, mask: mask) }

    /// The default: numbers and Booleans are shown, strings, objects, errors and type names are hidden.
    public static var auto: OSLogPrivacy { OSLogPrivacy(privacy: .auto, mask: .none) }

    /// `.auto`, with `mask` for the values it hides.
    public static func auto(mask: Mask) -> OSLogPrivacy { OSLogPrivacy(privacy: .auto, mask: mask) }
}

extension OSLogPrivacy {
    /// Whether a value is shown as it is. `isScalar`: a number or a Boolean, which `.auto` shows.
    func shows(isScalar: Bool) -> Bool {
        switch privacy {
        case .public: true
        case .auto: isScalar
        case .private, .sensitive: false
        }
    }

    /// `text` as the log shows it: itself, `<private>`, or its `<mask.hash: '…'>`.
    func display(_ text: String, isScalar: Bool) -> String {
        if shows(isScalar: isScalar) { return text }
        return mask == .hash ? PrivacyHash.masked(text) : "<private>"
    }
}
