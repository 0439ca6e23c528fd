/// A CSeq header value: sequence number and method.
public struct SIPCSeq: Sendable, Hashable, CustomStringConvertible {
    /// The sequence number.
    public var sequence: UInt32
    /// The method, uppercased.
    public var method: String

    /// Creates a CSeq value.
    public init(sequence: UInt32, method: String) {
        self.sequence = sequence
        self.method = method
    }

    /// Parses `314159 INVITE`.
    public init(parsing text: String) throws(SIPError) {
        let parts = SIPSyntax.trim(Substring(text)).split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard parts.count == 2, let n = SIPSyntax.parseInt(parts[0], max: Int(UInt32.max)), SIPSyntax.isToken(parts[1])
        else {
            throw .malformed("invalid CSeq")
        }
        sequence = UInt32(n)
        method = String(parts[1])
    }

    /// The wire form.
    public var description: String { "\(sequence) \(method)" }
}
