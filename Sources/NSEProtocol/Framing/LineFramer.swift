/// Splits a byte stream into `\n`-terminated lines of at most `maxLineBytes` bytes (the newline not counted).
///
/// Pure: bytes go in with ``append(_:)``, lines come out of ``nextLine()``; whoever reads the descriptor (the
/// host's poll loop, the extension's blocking channel) feeds it.
public struct LineFramer: Sendable {
    /// A line (complete or still arriving) is longer than the limit: the stream is broken from here on.
    public struct LineTooLong: Error, Sendable, Equatable {
        public var maxLineBytes: Int

        public init(maxLineBytes: Int) { self.maxLineBytes = maxLineBytes }
    }

    public let maxLineBytes: Int
    private var buffer: [UInt8] = []
    /// Where the first unread byte of `buffer` is (lines are taken from the front without moving the rest).
    private var start = 0
    /// How far `buffer` is known to hold no newline (from `start`), so a long line arriving in pieces is scanned once.
    private var scanned = 0

    public init(maxLineBytes: Int) {
        self.maxLineBytes = maxLineBytes
    }

    /// Adds bytes read from the stream.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            scanned = 0
            start = 0
        } else if start > 4096 && start * 2 > buffer.count {
            buffer.removeSubrange(..<start)
            scanned -= start
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete line without its newline, `nil` until one has arrived.
    public mutating func nextLine() throws(LineTooLong) -> [UInt8]? {
        let from = max(start, scanned)
        guard let newline = buffer[from...].firstIndex(of: 0x0A) else {
            scanned = buffer.count
            if buffer.count - start > maxLineBytes { throw LineTooLong(maxLineBytes: maxLineBytes) }
            return nil
        }
        guard newline - start <= maxLineBytes else { throw LineTooLong(maxLineBytes: maxLineBytes) }
        let line = Array(buffer[start..<newline])
        start = newline + 1
        scanned = start
        return line
    }

    /// The bytes after the last newline: an unterminated line, as the stream stands.
    public var unterminated: [UInt8] { Array(buffer[start...]) }

    /// Whether a complete line is waiting.
    public var hasLine: Bool { buffer[max(start, scanned)...].contains(0x0A) }
}
