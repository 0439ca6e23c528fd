public import NSECrypto
import NSEJSON
import NSESystem

extension SenderIdentity {
    /// Signs a plaintext as this sender and seals it once for all of `recipients`, a person's devices (format
    /// `nse3`, ``MultiEnvelope``). The plaintext gains `sender_key`, `message_id` and `sent_at` as for `nse2`; no
    /// `to_key`: the recipient list itself is under the signature.
    public func seal(_ plaintext: [UInt8], toAll recipients: [PublicKey], messageID: String? = nil)
        throws(DeviceError) -> MultiEnvelope
    {
        let signed = try claims(plaintext, messageID: messageID)
        do { return try MultiEnvelope.seal(signed, signedBy: secretKey, to: recipients) } catch {
            throw DeviceError(.invalidOption, "cannot seal: \(error.description)")
        }
    }

    /// The plaintext as this sender signs it for several devices: with `sender_key`, `message_id` and `sent_at`.
    func claims(_ plaintext: [UInt8], messageID: String?) throws(DeviceError) -> [UInt8] {
        try claims(plaintext, toKey: nil, messageID: messageID)
    }
}
