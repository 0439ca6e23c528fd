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
    public func payload(sealingTo device: Device, other: Device) throws -> [UInt8] {
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
            text = text.replacing("{{enc}}", with: try ReplayCase.seal(seal["plaintext"] ?? .null, to: target))
        }
        return Array(text.utf8)
    }
}

extension ReplayCase {
    /// Seals a plaintext (an object, with `{{now}}` / `{{now-SECONDS}}` in string values replaced by RFC 3339
    /// times; or a string sealed as it is) to the device's public key: the envelope's text.
    static func seal(_ plaintext: JSON, to device: Device) throws -> String {
        let bytes: [UInt8]
        if let raw = plaintext.stringValue {
            bytes = Array(raw.utf8)
        } else {
            bytes = Array(Self.expandTimes(plaintext.serialized()).utf8)
        }
        return try Envelope.seal(bytes, to: device.publicKey()).text
    }

    static func expandTimes(_ text: String) -> String {
        var output = text
        let now = Clock.unixMilliseconds() / 1000
        while let range = output.firstRange(of: "{{now") {
            guard let close = output[range.upperBound...].firstRange(of: "}}") else { break }
            let offset = Int64(output[range.upperBound..<close.lowerBound]) ?? 0
            output.replaceSubrange(range.lowerBound..<close.upperBound, with: Clock.rfc3339(unixSeconds: now + offset))
        }
        return output
    }
}
