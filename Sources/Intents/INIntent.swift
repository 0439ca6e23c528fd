public import Foundation

/// The base of every intent: an identifier, images by parameter, donation metadata.
open class INIntent: NSObject, NSCopying {
    open var identifier: String? { _identifier }
    /// iOS 15: what a donation says of the interaction (`INSendMessageIntentDonationMetadata` for messages).
    @NSCopying open var donationMetadata: INIntentDonationMetadata?

    private let _identifier: String? = UUID().uuidString
    /// Images set for parameters, by parameter name.
    var images: [String: INImage] = [:]

    public override init() {
        super.init()
    }

    /// The image that stands for the intent: the group's, else the sender's (nse's reading of Apple's "key image").
    open func keyImage() -> INImage? { images.values.first }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    /// A parameter's name, from the key paths nse knows (Swift on Linux has no Objective-C key-path names).
    class func parameterName(_ keyPath: AnyKeyPath) -> String? { nil }
}

/// `intent.setImage(_:forParameterNamed: \.speakableGroupName)`, as Apple's Swift overlay spells it.
public protocol INIntentSetImageKeyPath {}

extension INIntent: INIntentSetImageKeyPath {}

extension INIntentSetImageKeyPath where Self: INIntent {
    /// iOS 12: the image shown for a parameter (a group's avatar for `speakableGroupName`).
    public func setImage<Value>(_ image: INImage?, forParameterNamed parameterName: KeyPath<Self, Value>) {
        guard let name = Self.parameterName(parameterName) else { return }
        images[name] = image
    }

    public func image<Value>(forParameterNamed parameterName: KeyPath<Self, Value>) -> INImage? {
        Self.parameterName(parameterName).flatMap { images[$0] }
    }
}

/// What a donation says of the interaction (iOS 15); a message's is ``INSendMessageIntentDonationMetadata``.
open class INIntentDonationMetadata: NSObject, NSCopying {
    public override init() {
        super.init()
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// A message's donation metadata (iOS 15): what makes it break through a Focus.
open class INSendMessageIntentDonationMetadata: INIntentDonationMetadata {
    open var mentionsCurrentUser = false
    open var isReplyToCurrentUser = false
    /// Needs the Focus status authorization on a device to matter.
    open var notifyRecipientAnyway = false
    open var recipientCount = 0
}

/// An intent's answer; an extension donates incoming messages without one.
open class INIntentResponse: NSObject, NSCopying {
    public override init() {
        super.init()
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
}
