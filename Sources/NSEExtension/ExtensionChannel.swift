// The protocol's messages (`ServiceRequest`, `DeliveredContent`, `HostMessage`…) moved from NSEPayload to
// NSEProtocol; re-exported here so that the extension's files and its clients keep seeing them through NSEExtension.
@_exported public import NSEProtocol

/// The extension's side of the host/extension protocol: reads host lines from stdin, writes lines to stdout.
///
/// Used by one thread at a time: the thread that serves requests (`HostLink` reads it while that thread waits).
public final class ExtensionChannel: @unchecked Sendable {
    let lines: LineChannel

    /// Whether the host closed the pipe (and every line it sent was read).
    public var isClosed: Bool { lines.isExhausted }

    public init(input: Int32 = 0, output: Int32 = 1) {
        lines = LineChannel(input: input, output: output, maxLineBytes: ExtensionProtocol.maxLineBytes)
    }

    /// The next host message, waiting at most `timeoutMilliseconds` (-1 waits forever);
    /// `nil` on timeout or when the host closed the pipe.
    public func next(timeoutMilliseconds: Int32 = -1) throws(ProtocolError) -> HostMessage? {
        try lines.receive(HostMessage.self, timeoutMilliseconds: timeoutMilliseconds)
    }

    /// The next message among the lines already read (blank lines skipped); `nil` when no whole line is waiting.
    func bufferedMessage() throws(ProtocolError) -> HostMessage? {
        while true {
            let line: [UInt8]?
            do { line = try lines.bufferedLine() } catch { throw HostMessage.lineTooLong }
            guard let line else { return nil }
            if let message = try HostMessage.decode(line: line) { return message }
        }
    }

    /// Sends one message to the host; `false` when the host no longer reads (it died, or closed the pipe).
    @discardableResult
    public func send(_ message: ExtensionMessage) -> Bool {
        lines.send(message)
    }
}
