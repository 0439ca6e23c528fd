import NSEPayload

/// The extension's link to its host as the content step uses it: send a message, wait for the next one.
protocol HostConnection: Sendable {
    @discardableResult
    func send(_ message: ExtensionMessage) -> Bool
    /// The next host message, waiting at most `timeoutMilliseconds` (-1 waits forever); nil on timeout or once the
    /// host closed the pipe.
    func next(timeoutMilliseconds: Int32) throws(ProtocolError) -> HostMessage?
    /// Whether the host closed the pipe (and every message before that was read).
    var isClosed: Bool { get }
}

extension ExtensionChannel: HostConnection {}

extension HostConnection {
    /// After the content: blocks until the host says it keeps it (`true`) or closes the pipe without saying so.
    func waitForAcceptance() -> Bool {
        while true {
            let message: HostMessage?
            do { message = try next(timeoutMilliseconds: -1) } catch { return false }
            switch message {
            case .contentAccepted?: return true
            case nil: return false
            case .request?, .timeWillExpire?, .reportVoIPResult?, .addNotificationResult?: continue
            }
        }
    }
}
