public import Foundation

/// Which way an interaction went.
public enum INInteractionDirection: Int, Sendable {
    case unspecified = 0
    case outgoing = 1
    case incoming = 2
}

/// How an intent was handled.
public enum INIntentHandlingStatus: Int, Sendable {
    case unspecified = 0
    case ready, inProgress, success, failure, deferredToApplication, userConfirmationRequired
}

/// An intent and its answer, donated before a communication notification is made from the intent (Apple's
/// sequence: donate, then `updating(from:)`). nse keeps donations in the process (``Donations``): there
/// is no Siri to give them to.
open class INInteraction: NSObject, NSCopying {
    open var intent: INIntent { _intent }
    open var intentResponse: INIntentResponse? { _intentResponse }
    open var intentHandlingStatus: INIntentHandlingStatus = .unspecified
    open var direction: INInteractionDirection = .unspecified
    open var dateInterval: DateInterval?
    open var identifier: String = UUID().uuidString
    open var groupIdentifier: String?

    private let _intent: INIntent
    private let _intentResponse: INIntentResponse?

    public init(intent: INIntent, response: INIntentResponse?) {
        _intent = intent
        _intentResponse = response
        super.init()
    }

    /// Donates the interaction; `completion` is called with nil once it is recorded.
    // @preconcurrency, as Swift imports Apple's Objective-C: the handler's @Sendable binds in Swift 6 mode only.
    @preconcurrency
    open func donate(completion: (@Sendable ((any Error)?) -> Void)? = nil) {
        Donations.shared.add(identifier)
        completion?(nil)
    }

    /// The async form, as Swift imports it on iOS.
    open func donate() async throws {
        Donations.shared.add(identifier)
    }

    @preconcurrency
    open class func deleteAll(completion: (@Sendable ((any Error)?) -> Void)? = nil) {
        Donations.shared.removeAll()
        completion?(nil)
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// The interactions this process donated, by identifier.
final class Donations: @unchecked Sendable {
    static let shared = Donations()
    private let lock = NSLock()
    private var identifiers: Set<String> = []

    func add(_ identifier: String) { lock.withLock { _ = identifiers.insert(identifier) } }
    func removeAll() { lock.withLock { identifiers.removeAll() } }
    var count: Int { lock.withLock { identifiers.count } }
}
