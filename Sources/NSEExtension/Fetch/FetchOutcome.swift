import NSEDevice

/// How a SIP fetch ended, whoever decided it: `SIPFetch` from the App Group store before any network, or
/// `FetchMachine` at the end of the flush. `SIPFetch` turns it into content in one place.
enum FetchOutcome: Sendable, Equatable {
    /// The awaited message is here: this process shows it.
    case found(Source)
    /// Another process shows it or showed it (the same push twice, or the app in the foreground): not shown again.
    case shownElsewhere
    /// The host's expiry notice came before the message.
    case expired
    /// The first REGISTER failed (the reason).
    case registerFailed(String)
    /// The fetch's deadline passed without the message.
    case notFound
    /// The main app took the core before the awaited message came: it receives the message itself.
    case coreStopped
    /// Not fetched: the main app's core is running, and it receives the message itself.
    case mainCoreRunning
    /// Not fetched: the device has no SIP account, or one that cannot register (the reason).
    case unavailable(String)

    /// Where the awaited message came from.
    enum Source: Sendable, Equatable {
        /// The server's flush.
        case network
        /// The App Group store, where another process (or an earlier flush) kept it.
        case store
    }
}

/// A fetch's end as the content step needs it, handed from the thread or loop that fetched to the one that shows.
struct FetchEnd: Sendable {
    var outcome: FetchOutcome
    /// The awaited message, when `found`.
    var message: ReceivedContent?
    /// Who showed the message, when `shownElsewhere` (nil: another notification is showing it now).
    var shownBy: MessageStore.Viewer?
    var report: FetchReport
    /// The store that keeps (or has claimed) the message until it is marked shown.
    var store: MessageStore?
    /// When the fetch began, for the report's total.
    var start: UInt64
}
