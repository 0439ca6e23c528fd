public import NSECrypto
public import NSEJSON
import NSESIP

/// What a caller's INVITE carries: the SDP offer, and on the end-to-end-encrypted route (Apple's "end-to-end
/// encrypted VoIP calls") a call offer sealed to the callee's device beside it, which the SIP server passes in an
/// alert push without reading it, and the callee's extension opens and escalates (docs/voip.md).
public enum CallOffer {
    /// The media type of a sealed envelope in a SIP body.
    public static let envelopeMediaType = "application/vnd.nse.envelope"

    /// The plaintext sealed in the offer (docs/envelope.md, "Call offer"), with the INVITE's Call-ID so that the
    /// app fetches that INVITE once it has reported the call.
    public static func plaintext(
        callUUID: String, from: String, displayName: String?, video: Bool, sipCallID: String, sentAt: String
    ) -> JSON {
        var object: JSONObject = [
            "type": "call", "call_uuid": .string(callUUID), "from": .string(from), "handle_type": "generic",
            "video": .bool(video), "sip_call_id": .string(sipCallID), "sent_at": .string(sentAt),
        ]
        if let displayName { object["display_name"] = .string(displayName) }
        return .object(object)
    }

    /// Seals a call offer's plaintext to the callee device's public key; returns the envelope's text.
    public static func seal(_ plaintext: JSON, to recipient: PublicKey) throws(CryptoError) -> String {
        try Envelope.seal(plaintext.serializedBytes(), to: recipient).text
    }

    /// The INVITE's body: the SDP alone, or with a sealed envelope a `multipart/mixed` of the SDP and the envelope.
    public static func body(sdp: [UInt8], envelope: String?) -> (contentType: String, body: [UInt8]) {
        guard let envelope else { return ("application/sdp", sdp) }
        return SIPMultipart(parts: [
            SIPMultipart.Part(contentType: "application/sdp", body: sdp),
            SIPMultipart.Part(contentType: envelopeMediaType, body: Array(envelope.utf8)),
        ]).serialized(boundary: "nse-" + SIPIdentifiers.tag())
    }

    /// The SDP of an INVITE's body: the body itself, or the `application/sdp` part of a multipart one.
    public static func sdp(in body: [UInt8], contentType: String?) -> [UInt8] {
        guard let contentType, let multipart = SIPMultipart(body: body, contentType: contentType) else { return body }
        return multipart.parts.first { $0.mediaType == "application/sdp" }?.body ?? []
    }
}
