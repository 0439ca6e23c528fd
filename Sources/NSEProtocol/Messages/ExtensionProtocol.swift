public import NSEJSON

/// The host/extension protocol (docs/protocol.md): one JSON object per line on the extension's stdin and stdout.
public enum ExtensionProtocol {
    /// The protocol version this build speaks. Versions only add: version 2 adds `hello` and `ready` (a warm process
    /// serving several requests), which an extension sends only if it wants to; a version-1 extension works unchanged.
    public static let version: Int64 = 2
    /// The longest line either side accepts.
    public static let maxLineBytes = 64 * 1024
    /// How deep a protocol line's JSON may nest.
    static let maxDepth = 40

    /// A `type` this side does not know (or none): the error names it as ``ProtocolError/printable(_:)`` shows it.
    static func unknownType(_ type: String?, expected: String) -> JSONFieldError {
        JSONFieldError(
            path: ["type"], expected: expected,
            problem: type.map { .found("\"\(ProtocolError.printable($0))\"") } ?? .missing)
    }
}

/// A message of the protocol: one JSON object on one line, in one direction; its `json` is the line as sent on the
/// wire (without the newline).
public protocol ProtocolMessage: JSONEncodable, Sendable {
    /// Who writes these messages, as an error names it ("the host", "the extension").
    static var sender: String { get }
    /// Reads a message from its JSON object; a member that is not what the protocol says is a ``ProtocolError``
    /// naming it (read with ``NSEJSON/JSONObject/field(_:)``).
    init(json: JSON) throws(ProtocolError)
}

extension ProtocolMessage {
    /// The message as one line, newline included.
    public var line: [UInt8] { json.serializedBytes() + [0x0A] }

    /// Reads one line (without its newline); `nil` for a blank line (spaces and carriage returns only), which both
    /// sides skip.
    public static func decode(line: some Collection<UInt8>) throws(ProtocolError) -> Self? {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D }) { return nil }
        let json: JSON
        do { json = try JSON.parse(Array(line), options: JSONParseOptions(maxDepth: ExtensionProtocol.maxDepth)) } catch
        {
            throw ProtocolError("\(sender) sent a line that is not JSON: \(error.description)")
        }
        return try Self(json: json)
    }

    /// The error for a line over ``ExtensionProtocol/maxLineBytes``.
    public static var lineTooLong: ProtocolError {
        ProtocolError("\(sender) sent a line longer than \(ExtensionProtocol.maxLineBytes) bytes")
    }
}

extension HostMessage: ProtocolMessage {
    public static var sender: String { "the host" }
}

extension ExtensionMessage: ProtocolMessage {
    public static var sender: String { "the extension" }
}
