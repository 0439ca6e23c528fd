import NSEJSON
import NSESystem

/// Why APNs (or nse's strict intake) refuses a payload. The raw value is APNs's `reason` where APNs has one.
public enum RejectionReason: String, Sendable {
    case payloadEmpty = "PayloadEmpty"
    case payloadTooLarge = "PayloadTooLarge"
    /// Not valid JSON, a duplicate key, invalid UTF-8, nesting too deep, or not an object (nse's own reason).
    case malformedPayload = "MalformedPayload"
    /// A simctl `.apns` file whose target bundle is not the device's app.
    case deviceTokenNotForTopic = "DeviceTokenNotForTopic"
}

/// A payload that was refused before anything ran.
public struct PayloadRejection: Error, Sendable, CustomStringConvertible, Equatable {
    public var reason: RejectionReason
    /// One line naming the problem and, for JSON, where it is.
    public var detail: String

    /// `detail` goes through `Text.oneLine`, so it stays one line whatever it quotes (a payload value, a file name).
    public init(_ reason: RejectionReason, _ detail: String) {
        self.reason = reason
        self.detail = Text.oneLine(detail)
    }

    public var description: String { "\(reason.rawValue): \(detail)" }
}

/// Where a payload came from.
public enum PayloadSource: Sendable, Equatable {
    case stdin
    case file(String)
    case webhook

    /// Whether this is a simctl `.apns` file.
    public var isSimulatorFile: Bool {
        if case .file(let path) = self { return Path.fileExtension(path) == "apns" }
        return false
    }

    /// A name for messages.
    public var name: String {
        switch self {
        case .stdin: "stdin"
        case .file(let path): path
        case .webhook: "request body"
        }
    }
}

/// Strict intake: bytes in, a validated ``Payload`` or a ``PayloadRejection`` out, as APNs and iOS would judge.
public enum Intake {
    /// The key simctl reads the target app from in a `.apns` file.
    public static let simulatorTargetKey = "Simulator Target Bundle"
    /// Deepest nesting accepted.
    public static let maxDepth = 32

    /// Validates a payload.
    /// - Parameters:
    ///   - bytes: the body as received.
    ///   - pushType: decides the size limit (4096, or 5120 for voip).
    ///   - source: a `.apns` file must name `bundleID` as its target.
    ///   - bundleID: the receiving app.
    public static func accept(
        _ bytes: [UInt8], pushType: PushType, source: PayloadSource, bundleID: String
    ) throws(PayloadRejection) -> Payload {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            throw PayloadRejection(.payloadEmpty, "the payload from \(source.name) is empty")
        }
        if bytes.count > pushType.payloadLimit {
            throw PayloadRejection(
                .payloadTooLarge,
                "the payload is \(bytes.count) bytes; APNs accepts at most \(pushType.payloadLimit) for a \(pushType.rawValue) push"
            )
        }
        let document: JSON
        do {
            document = try JSON.parse(bytes, options: JSONParseOptions(maxDepth: maxDepth, requireObject: true))
        } catch {
            throw PayloadRejection(.malformedPayload, "\(source.name): \(error.description)" + envelopeHint(bytes))
        }
        guard var root = document.objectValue else {
            throw PayloadRejection(.malformedPayload, "\(source.name): the top level is not an object")
        }
        if let target = root[simulatorTargetKey] {
            guard let targetBundle = target.stringValue else {
                throw PayloadRejection(
                    .malformedPayload, "\(source.name): \"\(simulatorTargetKey)\" is a \(target.typeName), not a string"
                )
            }
            guard targetBundle == bundleID else {
                throw PayloadRejection(
                    .deviceTokenNotForTopic,
                    "\(source.name) targets bundle \(JSON.string(String(targetBundle.prefix(64))).serialized()) but the "
                        + "device's app is \"\(bundleID)\"")
            }
            root[simulatorTargetKey] = nil
        } else if source.isSimulatorFile {
            throw PayloadRejection(
                .malformedPayload, "\(source.name) is a simctl .apns file without a \"\(simulatorTargetKey)\" key")
        }
        return Payload(root: root)
    }
}

extension Intake {
    /// A hint when the input is a sealed envelope itself (what `nse seal` prints), a common first mistake: the
    /// envelope goes in a payload, under `enc`. Names no content: an envelope is sealed.
    static func envelopeHint(_ bytes: [UInt8]) -> String {
        let start = bytes.drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        guard start.starts(with: Array("nse1.".utf8)) || start.starts(with: Array("nse2.".utf8)) else { return "" }
        return
            #" (this is a sealed envelope, as nse seal prints it: a payload carries it under "enc", e.g. {"aps":{"alert":{"loc-key":"IM_MSG"},"mutable-content":1},"enc":"nse1.…"})"#
    }
}
