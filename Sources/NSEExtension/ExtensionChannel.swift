#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import NSEJSON
public import NSEPayload
import NSESystem

/// The extension's side of the host/extension protocol: reads host lines from stdin, writes lines to stdout.
///
/// Used by one thread at a time: the main thread hands it to the fetch task and waits until that task is done.
public final class ExtensionChannel: @unchecked Sendable {
    private let input: Int32
    private let output: Int32
    private var buffer: [UInt8] = []
    private var closed = false

    /// Whether the host closed the pipe.
    public var isClosed: Bool { closed && buffer.firstIndex(of: 0x0A) == nil }

    public init(input: Int32 = 0, output: Int32 = 1) {
        self.input = input
        self.output = output
    }

    /// The next host message, waiting at most `timeoutMilliseconds` (-1 waits forever);
    /// `nil` on timeout or when the host closed the pipe.
    public func next(timeoutMilliseconds: Int32 = -1) throws(ProtocolError) -> HostMessage? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D }) { continue }
                let json: JSON
                do { json = try JSON.parse(line, options: JSONParseOptions(maxDepth: 40)) } catch {
                    throw ProtocolError("the host sent a line that is not a JSON object: \(error.description)")
                }
                return try HostMessage(json: json)
            }
            if closed { return nil }
            if buffer.count > ExtensionProtocol.maxLineBytes {
                throw ProtocolError("the host sent a line longer than \(ExtensionProtocol.maxLineBytes) bytes")
            }
            var descriptor = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, timeoutMilliseconds)
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 { return nil }
            var chunk = [UInt8](repeating: 0, count: 8192)
            let count = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { closed = true; continue }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    /// Sends one message to the host.
    public func send(_ message: ExtensionMessage) {
        FileSystem.writeFully(fd: output, message.json.serializedBytes() + [0x0A])
    }
}
