public import Foundation

/// What kind of handle a person has.
public enum INPersonHandleType: Int, Sendable {
    case unknown = 0
    case emailAddress = 1
    case phoneNumber = 2
}

/// A handle's label, as Contacts names them.
public struct INPersonHandleLabel: Hashable, RawRepresentable, Sendable {
    public var rawValue: String

    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let home = INPersonHandleLabel("_$!<Home>!$_")
    public static let work = INPersonHandleLabel("_$!<Work>!$_")
    public static let iPhone = INPersonHandleLabel("iPhone")
    public static let mobile = INPersonHandleLabel("_$!<Mobile>!$_")
    public static let main = INPersonHandleLabel("_$!<Main>!$_")
    public static let homeFax = INPersonHandleLabel("_$!<HomeFAX>!$_")
    public static let workFax = INPersonHandleLabel("_$!<WorkFAX>!$_")
    public static let pager = INPersonHandleLabel("_$!<Pager>!$_")
    public static let other = INPersonHandleLabel("_$!<Other>!$_")
    public static let school = INPersonHandleLabel("_$!<School>!$_")
}

/// How a person reaches the user: an address of some kind.
open class INPersonHandle: NSObject, NSCopying {
    open var value: String? { _value }
    open var type: INPersonHandleType { _type }
    open var label: INPersonHandleLabel? { _label }

    private let _value: String?
    private let _type: INPersonHandleType
    private let _label: INPersonHandleLabel?

    public init(value: String?, type: INPersonHandleType, label: INPersonHandleLabel?) {
        _value = value
        _type = type
        _label = label
        super.init()
    }

    public convenience init(value: String?, type: INPersonHandleType) {
        self.init(value: value, type: type, label: nil)
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// What kind of suggestion a person is (iOS 15).
public enum INPersonSuggestionType: Int, Sendable {
    case none = 0
    case socialProfile = 1
    case instantMessageAddress = 2
}

/// A person in a conversation: the sender of a message, its recipients.
open class INPerson: NSObject, NSCopying {
    open var personHandle: INPersonHandle? { _personHandle }
    open var nameComponents: PersonNameComponents? { _nameComponents }
    open var displayName: String { _displayName }
    open var image: INImage? { _image }
    open var contactIdentifier: String? { _contactIdentifier }
    open var customIdentifier: String? { _customIdentifier }
    open var isMe: Bool { _isMe }
    open var suggestionType: INPersonSuggestionType { _suggestionType }
    open var aliases: [INPersonHandle]? { _aliases }
    open var isContactSuggestion: Bool { _isContactSuggestion }

    private let _personHandle: INPersonHandle?
    private let _nameComponents: PersonNameComponents?
    private let _displayName: String
    private let _image: INImage?
    private let _contactIdentifier: String?
    private let _customIdentifier: String?
    private let _isMe: Bool
    var _suggestionType = INPersonSuggestionType.none
    var _aliases: [INPersonHandle]?
    var _isContactSuggestion = false

    /// iOS 12: the designated initializer.
    public init(
        personHandle: INPersonHandle, nameComponents: PersonNameComponents?, displayName: String?, image: INImage?,
        contactIdentifier: String?, customIdentifier: String?, isMe: Bool
    ) {
        _personHandle = personHandle
        _nameComponents = nameComponents
        // No display name: the name's components, then the handle, as iOS shows one.
        let formatted = nameComponents.map { [$0.givenName, $0.familyName].compactMap { $0 }.joined(separator: " ") }
        _displayName = displayName ?? formatted.flatMap { $0.isEmpty ? nil : $0 } ?? personHandle.value ?? ""
        _image = image
        _contactIdentifier = contactIdentifier
        _customIdentifier = customIdentifier
        _isMe = isMe
        super.init()
    }

    public convenience init(
        personHandle: INPersonHandle, nameComponents: PersonNameComponents?, displayName: String?, image: INImage?,
        contactIdentifier: String?, customIdentifier: String?
    ) {
        self.init(
            personHandle: personHandle, nameComponents: nameComponents, displayName: displayName, image: image,
            contactIdentifier: contactIdentifier, customIdentifier: customIdentifier, isMe: false)
    }

    /// iOS 15: with the metadata messaging intents need.
    public convenience init(
        personHandle: INPersonHandle, nameComponents: PersonNameComponents?, displayName: String?, image: INImage?,
        contactIdentifier: String?, customIdentifier: String?, isMe: Bool, suggestionType: INPersonSuggestionType
    ) {
        self.init(
            personHandle: personHandle, nameComponents: nameComponents, displayName: displayName, image: image,
            contactIdentifier: contactIdentifier, customIdentifier: customIdentifier, isMe: isMe)
        _suggestionType = suggestionType
    }

    /// iOS 15.
    public convenience init(
        personHandle: INPersonHandle, nameComponents: PersonNameComponents?, displayName: String?, image: INImage?,
        contactIdentifier: String?, customIdentifier: String?, isContactSuggestion: Bool,
        suggestionType: INPersonSuggestionType
    ) {
        self.init(
            personHandle: personHandle, nameComponents: nameComponents, displayName: displayName, image: image,
            contactIdentifier: contactIdentifier, customIdentifier: customIdentifier, isMe: false)
        _isContactSuggestion = isContactSuggestion
        _suggestionType = suggestionType
    }

    /// iOS 15.
    public convenience init(
        personHandle: INPersonHandle, nameComponents: PersonNameComponents?, displayName: String?, image: INImage?,
        contactIdentifier: String?, customIdentifier: String?, aliases: [INPersonHandle]?,
        suggestionType: INPersonSuggestionType
    ) {
        self.init(
            personHandle: personHandle, nameComponents: nameComponents, displayName: displayName, image: image,
            contactIdentifier: contactIdentifier, customIdentifier: customIdentifier, isMe: false)
        _aliases = aliases
        _suggestionType = suggestionType
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// A spoken name: a group's, for a conversation of more than two.
open class INSpeakableString: NSObject, NSCopying {
    open var spokenPhrase: String { _spokenPhrase }
    open var pronunciationHint: String? { _pronunciationHint }
    open var vocabularyIdentifier: String? { _vocabularyIdentifier }

    private let _spokenPhrase: String
    private let _pronunciationHint: String?
    private let _vocabularyIdentifier: String?

    public init(vocabularyIdentifier: String, spokenPhrase: String, pronunciationHint: String?) {
        _vocabularyIdentifier = vocabularyIdentifier
        _spokenPhrase = spokenPhrase
        _pronunciationHint = pronunciationHint
        super.init()
    }

    public init(spokenPhrase: String) {
        _vocabularyIdentifier = nil
        _spokenPhrase = spokenPhrase
        _pronunciationHint = nil
        super.init()
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
}
