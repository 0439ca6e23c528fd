import NSECall
import NSESIP
import Testing

/// The SDP nse's call ends exchange, and the INVITE body that carries a sealed offer beside it.
struct SessionDescriptionTests {
    @Test func anAudioOfferIsAnsweredWithAudio() {
        let offer = SessionDescription(offerFrom: "127.0.0.1", video: false).bytes
        #expect(SessionDescription.offersVideo(offer) == false)
        let text = String(decoding: offer, as: UTF8.self)
        #expect(text.hasPrefix("v=0\r\n") && text.contains("m=audio 40000 RTP/AVP 0 8 101\r\n"))
        let answer = SessionDescription(answering: offer, from: "::1")
        #expect(answer.media.map(\.kind) == ["audio"] && answer.media[0].port > 0)
        #expect(String(decoding: answer.bytes, as: UTF8.self).contains("c=IN IP6 ::1\r\n"))
    }

    @Test func videoIsOfferedAndAnsweredAndAnUnknownStreamRefused() {
        let offer = SessionDescription(offerFrom: "127.0.0.1", video: true).bytes
        #expect(SessionDescription.offersVideo(offer))
        let withText = offer + Array("m=text 5000 RTP/AVP 98\r\n".utf8)
        let answer = SessionDescription(answering: withText, from: "127.0.0.1")
        #expect(answer.media.map(\.kind) == ["audio", "video", "text"])
        #expect(answer.media.map { $0.port > 0 } == [true, true, false])
        #expect(String(decoding: answer.bytes, as: UTF8.self).contains("m=text 0 RTP/AVP 0\r\n"))
        // A video stream refused by the offerer (port 0) is not video offered.
        #expect(SessionDescription.offersVideo(Array("m=video 0 RTP/AVP 96\r\n".utf8)) == false)
    }

    @Test func aSealedOfferTravelsBesideTheSDP() throws {
        let sdp = SessionDescription(offerFrom: "127.0.0.1", video: false).bytes
        let plain = CallOffer.body(sdp: sdp, envelope: nil)
        #expect(plain.contentType == "application/sdp" && plain.body == sdp)
        let sealed = CallOffer.body(sdp: sdp, envelope: "nse1.x25519-sealedbox.AAAA")
        #expect(sealed.contentType.hasPrefix("multipart/mixed"))
        let parts = try #require(SIPMultipart(body: sealed.body, contentType: sealed.contentType)).parts
        #expect(parts.map(\.mediaType) == ["application/sdp", CallOffer.envelopeMediaType])
        #expect(CallOffer.sdp(in: sealed.body, contentType: sealed.contentType) == sdp)
        #expect(CallOffer.sdp(in: sdp, contentType: "application/sdp") == sdp)
    }
}
