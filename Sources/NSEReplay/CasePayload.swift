import NSECrypto
public import NSEDevice
import NSEJSON
import NSESystem

extension ReplayCase.PushStep {
    /// The payload file's path, relative paths read from the case's folder.
    public var payloadFilePath: String? {
        payloadFile.map { $0.hasPrefix("/") ? $0 : Path.join(Path.dirname(file), $0) }
    }

    /// The bytes to push: the payload as the case gives it, with `{{enc}}` replaced by `seal.plaintext` sealed to
    /// `device` (or to `other` when `seal.to` is `"other"`, for a wrong-key case). Both `nse replay` and the tests
    /// that run the built `nse run` on the cases read payloads here.
    /// `signers` names the sender identities `seal.sign_with` refers to (a case runs with its own).
    public func payload(sealingTo device: Device, other: Device, signers: ReplayCase.Signers? = nil) throws
        -> [UInt8]
    {
        if let payloadBytes { return payloadBytes }
        var text: String
        if let path = payloadFilePath {
            guard let bytes = try FileSystem.readFile(path, limit: 1024 * 1024) else {
                throw ReplayError(file: file, field: "payload_file", message: "larger than 1 MiB")
            }
            text = String(decoding: bytes, as: UTF8.self)
        } else {
            text = payloadText ?? ""
        }
        if let seal, text.contains("{{enc}}") {
            let target = seal["to"]?.stringValue == "other" ? other : device
            let signing = try ReplayCase.Signing(seal, signers: signers, other: other)
            text = text.replacing(
                "{{enc}}", with: try ReplayCase.seal(seal["plaintext"] ?? .null, to: target, signing: signing))
        }
        return Array(text.utf8)
    }
}

extension ReplayCase {
    /// Seals a plaintext (an object, with `{{now}}` / `{{now-SECONDS}}` in string values replaced by RFC 3339
    /// times; or a string sealed as it is) to the device's public key: the envelope's text.
    static func seal(_ plaintext: JSON, to device: Device, signing: Signing? = nil) throws -> String {
        let bytes: [UInt8]
        if let raw = plaintext.stringValue {
            bytes = Array(raw.utf8)
        } else {
            bytes = Array(Self.expandTimes(plaintext.serialized()).utf8)
        }
        guard let signing else { return try Envelope.seal(bytes, to: device.publicKey()).text }
        // Signed (format nse2), as `nse seal --sign-with` does, or spoiled on purpose for a receiver's test.
        let recipient = try device.publicKey()
        let claimedFor = signing.tamper == .toKey ? try signing.other.publicKey() : recipient
        let signed = try signing.identity.claims(bytes, to: claimedFor, messageID: signing.messageID)
        var signature = try signing.identity.secretKey.sign(signed)
        if signing.tamper == .signature { signature[signature.count - 1] ^= 0x01 }
        return try Envelope.seal(signature: signature, plaintext: signed, to: recipient).text
    }

    /// Where a case's sender identities live: one file per name, made on first use in the case's folder.
    public struct Signers: Sendable {
        public let directory: String

        public init(directory: String) { self.directory = directory }

        func identity(_ name: String) throws -> SenderIdentity {
            try FileSystem.createDirectory(directory)
            let path = Path.join(directory, "\(name).key")
            return FileSystem.exists(path) ? try SenderIdentity.load(path) : try SenderIdentity.create(at: path)
        }
    }

    /// How a `seal` signs: `sign_with` (an identity's name), `message_id`, and `tamper` (`signature`: one bit of the
    /// signature flipped; `to_key`: signed for the other device, then sealed to this one).
    struct Signing {
        enum Tamper: String {
            case signature
            case toKey = "to_key"
        }
        var identity: SenderIdentity
        var messageID: String?
        var tamper: Tamper?
        var other: Device

        init(identity: SenderIdentity, other: Device) {
            self.identity = identity
            self.other = other
        }

        /// Nil when the seal is not signed.
        init?(_ seal: JSON, signers: Signers?, other: Device) throws {
            guard let name = seal["sign_with"]?.stringValue else { return nil }
            guard let signers else { throw ReplayError(file: "", field: "seal.sign_with", message: "no signers here") }
            identity = try signers.identity(name)
            messageID = seal["message_id"]?.stringValue
            tamper = seal["tamper"]?.stringValue.flatMap(Tamper.init(rawValue:))
            self.other = other
        }
    }

    static func expandTimes(_ text: String) -> String {
        var output = text
        let now = SystemClock.unixMilliseconds() / 1000
        while let range = output.firstRange(of: "{{now") {
            guard let close = output[range.upperBound...].firstRange(of: "}}") else { break }
            let offset = Int64(output[range.upperBound..<close.lowerBound]) ?? 0
            output.replaceSubrange(
                range.lowerBound..<close.upperBound, with: SystemClock.rfc3339(unixSeconds: now + offset))
        }
        return output
    }
}
