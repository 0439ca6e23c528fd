import NSECrypto
public import NSEJSON

/// A MESSAGE body as a recorded replay case keeps it (docs/replay.md, "From a production push to a CI case"):
/// sealed content as it is, plain text only where it may be kept, otherwise its length. Written by both servers'
/// recorders, read by `nse replay`.
public enum RecordedBody {
    /// The case's fields for a body: `body` (text), `body_base64` (bytes that are not UTF-8) or `redacted_bytes`.
    /// - Parameter keepPlain: plain text may be kept (the lock screen showed it, or `--record-plaintext`).
    public static func fields(_ body: [UInt8], keepPlain: Bool) -> JSONObject {
        let text = String(decoding: body, as: UTF8.self)
        guard keepPlain || Envelope.isCarried(by: text) else { return ["redacted_bytes": .int(Int64(body.count))] }
        return Array(text.utf8) == body ? ["body": .string(text)] : ["body_base64": .string(Base64.encode(body))]
    }

    /// What a case's fields give back.
    public enum Reading: Equatable {
        /// The body; a redacted one as `[redacted: N bytes]`, as many bytes as the marker takes.
        case body([UInt8])
        /// None of the three fields.
        case absent
        /// A field of the wrong kind: its name and what it must be.
        case invalid(field: String, problem: String)
    }

    public static func read(_ object: JSONObject) -> Reading {
        if let value = object["body"] {
            guard let text = value.stringValue else { return .invalid(field: "body", problem: "must be a string") }
            return .body(Array(text.utf8))
        }
        if let value = object["body_base64"] {
            guard let decoded = value.stringValue.flatMap(Base64.decode) else {
                return .invalid(field: "body_base64", problem: "is not base64")
            }
            return .body(decoded)
        }
        if let value = object["redacted_bytes"] {
            guard let count = value.intValue, count >= 0 else {
                return .invalid(field: "redacted_bytes", problem: "must be a count of bytes")
            }
            return .body(Array("[redacted: \(count) bytes]".utf8))
        }
        return .absent
    }
}
