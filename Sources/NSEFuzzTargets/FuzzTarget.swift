import NSEJSON

/// The fuzz entry points (docs/fuzzing.md): each takes arbitrary bytes and must never crash, trap or hang.
///
/// An entry point returns normally for any input, valid or not; it throws a ``FuzzFinding`` only when a cheap
/// invariant breaks (a decoded message that does not re-decode to itself, an error that spans two lines, …).
/// The libFuzzer driver (`Fuzz/`) turns a finding into a crash so libFuzzer keeps the input; the regression
/// suite (`Tests/FuzzRegressionTests`) replays every committed corpus file and crasher through the same calls.
public enum FuzzTarget: String, Sendable, CaseIterable {
    /// `NSEPayload.Intake`: a push body as APNs and `nse run` judge it, for each push type.
    case payloadIntake = "payload-intake"
    /// `NSESIP.SIPParser.parseDatagram`: one UDP datagram.
    case sipDatagram = "sip-datagram"
    /// `NSESIP.SIPMessageDecoder`: a TCP/TLS stream, delivered in two parts split where the first two bytes say.
    case sipStream = "sip-stream"
    /// `NSECrypto.Envelope`: the text form, and a sealed box opened with a fixed test key pair.
    case envelope = "envelope"
    /// `NSECrypto.MultiEnvelope`: the `nse3` text form, opened with the same fixed key pair; seal-then-open.
    case envelopeMulti = "envelope-multi"
    /// `NSEChat`: a `message/cpim` body with its IMDN headers, and an IMDN document.
    case cpim = "cpim"
    /// `NSESIP`: a chat room's RFC 4826 resource list and RFC 4575 conference-info.
    case conference = "conference"
    /// `NSEProtocol`: lines as the host and the extension read them from each other.
    case extensionProtocol = "extension-protocol"
    /// `NSEAPNsServer.APNsValidation`: a `POST /3/device/{token}` built from the bytes, as `nse serve` validates it.
    case apnsRequest = "apns-request"
    /// `NSECrypto.MediaDecryptor`, `Plaintext.Attachment`, `NSEMedia.MediaURL`: an attachment's encrypted file, its
    /// reference in a message, its URL.
    case media = "media"
    /// `NSEReplay.ReplayCase`: a case file, recorded or hand-written, as `nse replay` reads it.
    case replayCase = "replay-case"

    /// Runs the entry point on one input.
    public func run(_ bytes: [UInt8]) throws(FuzzFinding) {
        switch self {
        case .payloadIntake: try PayloadIntakeTarget.run(bytes)
        case .sipDatagram: try SIPTargets.datagram(bytes)
        case .sipStream: try SIPTargets.stream(bytes)
        case .envelope: try EnvelopeTarget.run(bytes)
        case .envelopeMulti: try MultiEnvelopeTarget.run(bytes)
        case .cpim: try ChatTarget.run(bytes)
        case .conference: try ConferenceTarget.run(bytes)
        case .extensionProtocol: try ExtensionProtocolTarget.run(bytes)
        case .apnsRequest: try APNsRequestTarget.run(bytes)
        case .media: try MediaTarget.run(bytes)
        case .replayCase: try ReplayCaseTarget.run(bytes)
        }
    }

    /// Runs the entry point on raw memory (what libFuzzer hands over).
    public func run(_ buffer: UnsafeRawBufferPointer) throws(FuzzFinding) {
        try run(Array(buffer))
    }
}

/// An invariant an entry point found broken. Names the invariant, never the input's content.
public struct FuzzFinding: Error, Sendable, CustomStringConvertible, Equatable {
    public var target: FuzzTarget
    public var invariant: String

    public init(_ target: FuzzTarget, _ invariant: String) {
        self.target = target
        self.invariant = invariant
    }

    public var description: String { "\(target.rawValue): \(invariant)" }
}

/// Checks shared by the entry points.
enum FuzzCheck {
    /// Errors are one line: a message that holds a line break can forge a second line in logs and text output.
    static func oneLine(_ text: String, _ target: FuzzTarget, _ what: String) throws(FuzzFinding) {
        if text.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" }) {
            throw FuzzFinding(target, "\(what) spans more than one line")
        }
    }
}

extension FuzzCheck {
    /// Whether two JSON documents say the same thing. Numbers compare by value: the writer prints a whole double as
    /// an integer (`0.0` → `0`), so a document read back may hold `.int` where it held `.double`.
    static func sameDocument(_ a: JSON, _ b: JSON) -> Bool {
        switch (a, b) {
        case (.int, .double), (.double, .int), (.double, .double): return a.doubleValue == b.doubleValue
        case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { sameDocument($0, $1) }
        case (.object(let x), .object(let y)):
            return x.count == y.count
                && zip(x.members, y.members).allSatisfy { $0.key == $1.key && sameDocument($0.value, $1.value) }
        default: return a == b
        }
    }
}
