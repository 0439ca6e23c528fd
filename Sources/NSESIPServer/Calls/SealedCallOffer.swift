import NSESIP

/// The sealed call offer an INVITE may carry for the end-to-end-encrypted route (Apple's "end-to-end encrypted
/// VoIP calls"): an envelope sealed to the callee's device (`nse1.…`, docs/envelope.md), which the server cannot
/// read and passes in an alert push for the extension to open and escalate.
///
/// It travels as the INVITE's body when that is `application/vnd.nse.envelope`, or as the part of that type of a
/// `multipart/mixed` body beside the SDP offer (what `nse call --seal-to` sends).
enum SealedCallOffer {
    /// The media type of a sealed envelope in a SIP body.
    static let mediaType = "application/vnd.nse.envelope"
    /// The longest envelope passed on: an APNs alert payload has 4 KB for everything.
    static let maxLength = 3000

    /// The envelope in `invite`, or nil when it carries none, or one that is not a single line of printable ASCII
    /// within `maxLength` (it is then not pushed; the call goes the plain way).
    static func find(in invite: SIPRequest) -> String? {
        guard let contentType = invite.headers.contentType else { return nil }
        let bytes: [UInt8]
        if SIPMultipart.mediaType(of: contentType) == mediaType {
            bytes = invite.body
        } else if let multipart = SIPMultipart(body: invite.body, contentType: contentType),
            let part = multipart.parts.first(where: { $0.mediaType == mediaType })
        {
            bytes = part.body
        } else {
            return nil
        }
        var text = bytes[...]
        while let last = text.last, last == 0x0D || last == 0x0A || last == 0x20 { text = text.dropLast() }
        while let first = text.first, first == 0x0D || first == 0x0A || first == 0x20 { text = text.dropFirst() }
        guard !text.isEmpty, text.count <= maxLength, text.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        return String(decoding: text, as: UTF8.self)
    }
}
