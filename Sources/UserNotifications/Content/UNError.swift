public import Foundation

/// The domain of UserNotifications' errors, as `error as NSError` shows it.
// swift-format-ignore: AlwaysUseLowerCamelCase
public let UNErrorDomain: String = "UNErrorDomain"

/// UserNotifications' error, with Apple's domain and codes: `catch let error as UNError` and
/// `(error as NSError).code == 101` both work, as on iOS.
public struct UNError: CustomNSError, Hashable, Error, Sendable {
    /// Apple's codes, with their raw values.
    public enum Code: Int, Sendable, Hashable {
        case notificationsNotAllowed = 1
        case attachmentInvalidURL = 100
        case attachmentUnrecognizedType = 101
        case attachmentInvalidFileSize = 102
        case attachmentNotInDataStore = 103
        case attachmentMoveIntoDataStoreFailed = 104
        case attachmentCorrupt = 105
        case notificationInvalidNoDate = 1400
        case notificationInvalidNoContent = 1401
        case contentProvidingObjectNotAllowed = 1500
        case contentProvidingInvalid = 1501
        case badgeInputInvalid = 1600
    }

    public let code: Code
    /// Apple's description of the failure (`NSLocalizedDescription`), as iOS reports it where it is known.
    let description: String

    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        self.description = (userInfo[NSLocalizedDescriptionKey] as? String) ?? Self.text(code)
    }

    public static var errorDomain: String { UNErrorDomain }
    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: description] }

    public static func == (lhs: UNError, rhs: UNError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public static var notificationsNotAllowed: Code { .notificationsNotAllowed }
    public static var attachmentInvalidURL: Code { .attachmentInvalidURL }
    public static var attachmentUnrecognizedType: Code { .attachmentUnrecognizedType }
    public static var attachmentInvalidFileSize: Code { .attachmentInvalidFileSize }
    public static var attachmentNotInDataStore: Code { .attachmentNotInDataStore }
    public static var attachmentMoveIntoDataStoreFailed: Code { .attachmentMoveIntoDataStoreFailed }
    public static var attachmentCorrupt: Code { .attachmentCorrupt }
    public static var notificationInvalidNoDate: Code { .notificationInvalidNoDate }
    public static var notificationInvalidNoContent: Code { .notificationInvalidNoContent }
    public static var contentProvidingObjectNotAllowed: Code { .contentProvidingObjectNotAllowed }
    public static var contentProvidingInvalid: Code { .contentProvidingInvalid }
    public static var badgeInputInvalid: Code { .badgeInputInvalid }

    /// The texts iOS gives (seen in the field for 100 and 101; Apple's documentation's words for the others).
    static func text(_ code: Code) -> String {
        switch code {
        case .notificationsNotAllowed: "Notifications are not allowed"
        case .attachmentInvalidURL: "Invalid attachment file URL"
        case .attachmentUnrecognizedType: "Unrecognized attachment file type"
        case .attachmentInvalidFileSize: "Invalid attachment file size"
        case .attachmentNotInDataStore: "Attachment is not in the data store"
        case .attachmentMoveIntoDataStoreFailed: "Attachment could not be moved into the data store"
        case .attachmentCorrupt: "Attachment file is corrupt"
        case .notificationInvalidNoDate: "Notification has no date"
        case .notificationInvalidNoContent: "Notification has no user-facing content"
        case .contentProvidingObjectNotAllowed: "Content providing object is not allowed"
        case .contentProvidingInvalid: "Content providing object is invalid"
        case .badgeInputInvalid: "Invalid badge input"
        }
    }
}

extension UNError.Code {
    /// `catch UNError.attachmentInvalidURL { … }`, as on iOS.
    public static func ~= (code: UNError.Code, error: any Error) -> Bool {
        (error as? UNError)?.code == code
    }
}
