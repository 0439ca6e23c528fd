/// The first words of a result's `reason`: what a program reads to know why (docs/result.md lists every code, and
/// `make lint` keeps that list and this enum the same). A reason is `code: detail`; the detail is for people and
/// never quotes message content.
public enum ReasonCode: String, CaseIterable, Sendable {
    // MARK: The extension's content
    /// The envelope was opened and the message shown.
    case decrypted
    /// A `text/plain` message, shown as it is.
    case unencrypted
    /// A chat room invitation, shown with the room's name.
    case chatRoomInvitation = "chat-room-invitation"
    /// The call offer went to the call-report path (CallKit or LiveCommunicationKit).
    case voipEscalated = "voip-escalated"

    // MARK: A message shown without one of its attachments (docs/media.md)
    /// The file could not be downloaded: no connection, an HTTP error, the connection closed early.
    case attachmentUnavailable = "attachment-unavailable"
    /// The encrypted file's SHA-256 is not the one its message names.
    case attachmentHashMismatch = "attachment-hash-mismatch"
    /// The file does not decrypt with its key (altered, truncated, reordered).
    case attachmentCorrupt = "attachment-corrupt"
    /// The file is larger than its message announced.
    case attachmentTooLarge = "attachment-too-large"
    /// A type iOS does not attach to a notification: not downloaded.
    case attachmentUnsupported = "attachment-unsupported"
    /// Time ran out during the download: the best attempt went without it.
    case attachmentTimedOut = "attachment-timed-out"

    // MARK: The extension's fallbacks (the loc-key text)
    case envelopeMalformed = "envelope-malformed"
    case envelopeUnsupportedVersion = "envelope-unsupported-version"
    case envelopeUnsupportedAlgorithm = "envelope-unsupported-algorithm"
    case envelopeNotBase64 = "envelope-not-base64"
    case envelopeWrongKey = "envelope-wrong-key"
    case envelopeTruncated = "envelope-truncated"
    case envelopeAuthenticationFailed = "envelope-authentication-failed"
    /// An `nse3` envelope sealed to other devices of the person, not to this one (added after it was sent).
    case envelopeNotRecipient = "envelope-not-recipient"
    /// An error opening the envelope that is none of the above.
    case envelopeError = "envelope-error"
    case plaintextNotJSON = "plaintext-not-json"
    case plaintextSchema = "plaintext-schema"
    /// A signed sender the device cannot verify, or an anonymous one where signed senders are required.
    case senderUnverified = "sender-unverified"
    /// A signed message shown before.
    case replayed
    /// The device's private key cannot be read.
    case keyUnavailable = "key-unavailable"
    /// The App Group container cannot be opened.
    case containerUnavailable = "container-unavailable"
    /// The payload has neither `enc` nor a Call-ID.
    case noContent = "no-content"
    /// A call offer older than the app's limit: shown as a missed call.
    case staleOffer = "stale-offer"
    case voipReportFailed = "voip-report-failed"
    case voipReportUnavailable = "voip-report-unavailable"
    /// The expiry notice came before the content was ready.
    case timeWillExpire = "time-will-expire"

    // MARK: The SIP fetch
    case notFound = "not-found"
    case sipRegisterFailed = "sip-register-failed"
    case sipAccountInvalid = "sip-account-invalid"
    /// A Call-ID to fetch, and no SIP account to fetch it with.
    case fetchUnavailable = "fetch-unavailable"
    /// The message was shown already (or is being shown by another extension process).
    case alreadyShown = "already-shown"
    /// The main app runs the shared core: it receives the message itself.
    case mainCoreRunning = "main-core-running"
    /// The main app came to the foreground during the fetch.
    case coreStopped = "core-stopped"
    case unsupportedContentType = "unsupported-content-type"

    // MARK: The host's verdict
    case budgetExpired = "budget-expired"
    case memoryLimit = "memory-limit"
    case slowStart = "slow-start"
    case extensionCrashed = "extension-crashed"
    case extensionProtocolError = "extension-protocol-error"
    case extensionNotStarted = "extension-not-started"
    /// No alert text, and the app may filter: nothing is shown.
    case emptyContent = "empty-content"
    /// No alert text, and the app may not filter: the original is shown.
    case noAlertText = "no-alert-text"

    // MARK: Pushes the extension never sees
    case backgroundPush = "background push"
    case voipPush = "voip push"
    case noAlert = "no alert"
    case contentAvailableOnly = "no alert (content-available only)"
    case noVisibleText = "the alert has no visible text"
    case mutableContentNotSet = "aps.mutable-content is not 1"
    /// An ActivityKit push: to the app's Live Activity, never to an extension.
    case liveActivityPush = "liveactivity push"

    // MARK: What APNs did (nse serve)
    /// `apns-expiration` had passed, or was 0 for an offline device: dropped undelivered.
    case apnsExpiration = "apns-expiration"
    /// The offline store took one of Apple's liberties (`apple` store): kept an older push, or dropped a low-priority
    /// one.
    case apnsStore = "apns-store"

    // MARK: Live Activities (nse serve, docs/serve.md "Live Activities")
    /// A push-to-start token's push started an activity of its attributes type.
    case activityStarted = "activity-started"
    /// The activity shows the push's content.
    case activityUpdated = "activity-updated"
    /// The activity ended: it stays on the lock screen until its dismissal date.
    case activityEnded = "activity-ended"
    /// A priority-10 update past the hour's budget: the system throttled it.
    case activityBudgetExceeded = "activity-budget-exceeded"
    /// A timestamp not newer than the content the activity shows: ignored, as ActivityKit ignores it.
    case activityOutOfOrder = "activity-out-of-order"
    /// The activity has ended or is gone: nothing left to update.
    case activityNotActive = "activity-not-active"
    /// Not a payload ActivityKit can use: no timestamp, an unknown event, a start without its attributes.
    case activityPayloadInvalid = "activity-payload-invalid"

    /// `code: detail`, the form of every reason.
    public func reason(_ detail: String) -> String { "\(rawValue): \(detail)" }

    /// The code a reason starts with, if it is one of these.
    public init?(reason: String) {
        guard let colon = reason.firstIndex(of: ":") else { return nil }
        self.init(rawValue: String(reason[..<colon]))
    }
}
