// The protocol's messages (`ServiceRequest`, `DeliveredContent`, `HostMessage`…) moved from NSEPayload to
// NSEProtocol; re-exported here so that the extension's files and its clients keep seeing them through NSEExtension.
@_exported public import NSEProtocol

/// The extension's side of the host/extension protocol: reads host lines from stdin, writes lines to stdout.
///
/// Used by one thread at a time: the main thread hands it to the fetch task and waits until that task is done.
public final class ExtensionChannel: @unchecked Sendable {
    private let channel: LineChannel

    /// Whether the host closed the pipe (and every line it sent was read).
    public var isClosed: Bool { channel.isExhausted }

    public init(input: Int32 = 0, output: Int32 = 1) {
        channel = LineChannel(input: input, output: output, maxLineBytes: ExtensionProtocol.maxLineBytes)
    }

    /// The next host message, waiting at most `timeoutMilliseconds` (-1 waits forever);
    /// `nil` on timeout or when the host closed the pipe.
    public func next(timeoutMilliseconds: Int32 = -1) throws(ProtocolError) -> HostMessage? {
        try channel.receive(HostMessage.self, timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Sends one message to the host; `false` when the host no longer reads (it died, or closed the pipe).
    @discardableResult
    public func send(_ message: ExtensionMessage) -> Bool {
        channel.send(message)
    }
}
