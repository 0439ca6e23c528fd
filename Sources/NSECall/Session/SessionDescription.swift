/// The session descriptions (SDP, RFC 4566) nse's two ends of a call exchange: a minimal audio offer, with video
/// when asked, and the answer that accepts what the offer has (RFC 3264: one answer line per offer line, a
/// refused stream with port 0). No media flows: nse emulates signalling, so the ports are only written.
public struct SessionDescription: Sendable, Equatable {
    /// The media the session has.
    public enum Media: String, Sendable, Equatable {
        case audio, video
    }

    /// The address written in `o=` and `c=`.
    public var address: String
    /// The media streams, in order: their kind (`audio`, `video`, or whatever an offer had) and port (0: refused).
    public var media: [(kind: String, port: Int)]

    public static func == (a: SessionDescription, b: SessionDescription) -> Bool {
        a.address == b.address && a.media.elementsEqual(b.media) { $0.kind == $1.kind && $0.port == $1.port }
    }

    /// An offer: audio, and video when `video`.
    public init(offerFrom address: String, video: Bool, basePort: Int = 40_000) {
        self.address = address
        self.media = [("audio", basePort)] + (video ? [("video", basePort + 2)] : [])
    }

    /// The answer to `offer`: audio and video accepted, any other stream refused with port 0.
    public init(answering offer: [UInt8], from address: String, basePort: Int = 42_000) {
        self.address = address
        self.media = SessionDescription.mediaLines(in: offer).enumerated().map { index, line in
            guard Media(rawValue: line.kind) != nil, line.port > 0 else { return (line.kind, 0) }
            return (line.kind, basePort + 2 * index)
        }
    }

    /// Whether `body` offers video: an `m=video` line with a port other than 0.
    public static func offersVideo(_ body: [UInt8]) -> Bool {
        mediaLines(in: body).contains { $0.kind == "video" && $0.port > 0 }
    }

    /// The wire form.
    public var bytes: [UInt8] {
        let family = address.contains(":") ? "IP6" : "IP4"
        var lines = [
            "v=0", "o=nse 1 1 IN \(family) \(address)", "s=nse", "c=IN \(family) \(address)", "t=0 0",
        ]
        for stream in media {
            switch Media(rawValue: stream.kind) {
            case _ where stream.port == 0:
                lines.append("m=\(stream.kind) 0 RTP/AVP 0")
            case .audio?:
                lines += [
                    "m=audio \(stream.port) RTP/AVP 0 8 101", "a=rtpmap:0 PCMU/8000", "a=rtpmap:8 PCMA/8000",
                    "a=rtpmap:101 telephone-event/8000", "a=sendrecv",
                ]
            case .video?:
                lines += ["m=video \(stream.port) RTP/AVP 96", "a=rtpmap:96 H264/90000", "a=sendrecv"]
            case nil:
                lines.append("m=\(stream.kind) 0 RTP/AVP 0")
            }
        }
        return Array((lines.joined(separator: "\r\n") + "\r\n").utf8)
    }

    /// The `m=` lines of a description: media kind and port (0 when unreadable).
    private static func mediaLines(in body: [UInt8]) -> [(kind: String, port: Int)] {
        String(decoding: body, as: UTF8.self).split(whereSeparator: \.isNewline)
            .filter { $0.hasPrefix("m=") }
            .map { line in
                let fields = line.dropFirst(2).split(separator: " ")
                let kind = fields.first.map(String.init) ?? ""
                let port = fields.count > 1 ? Int(fields[1].split(separator: "/").first ?? "") ?? 0 : 0
                return (kind, port)
            }
    }
}
