import NIOCore
import NIOEmbedded
import NSESIP
import Testing

@testable import NSESIPServer

/// The requests and responses the call path builds or rewrites (RFC 3261 §16.6, §16.7, §9.1, §17.1.1.3), checked
/// without sockets: flows over embedded channels with the addresses a listener would have.
@Suite struct CallMessagesTests {
    static func flow(_ kind: SIPTransportKind, localPort: Int, remotePort: Int) throws -> ServerFlow {
        let channel = EmbeddedChannel()
        channel.localAddress = try SocketAddress(ipAddress: "127.0.0.1", port: localPort)
        let remote = try SocketAddress(ipAddress: "127.0.0.1", port: remotePort)
        channel.remoteAddress = remote
        return ServerFlow(kind: kind, channel: channel, remote: remote)
    }

    static func invite() throws -> SIPRequest {
        var request = SIPRequest(method: "INVITE", uri: try SIPURI(parsing: "sip:bob@example.org"))
        request.headers.add("Via", "SIP/2.0/UDP 10.0.0.1:5070;branch=z9hG4bKcaller")
        request.headers.add("From", "<sip:alice@example.org>;tag=a1")
        request.headers.add("To", "<sip:bob@example.org>")
        request.headers.add("Call-ID", "call-1")
        request.headers.add("CSeq", "7 INVITE")
        request.headers.add("Max-Forwards", "5")
        return request
    }

    @Test func theForwardedInviteCarriesTheServersViaOneHopLessAndOneRecordRoutePerSide() throws {
        let caller = try Self.flow(.udp, localPort: 5060, remotePort: 5070)
        let phone = try Self.flow(.udp, localPort: 5060, remotePort: 5080)
        let contact = try SIPURI(parsing: "sip:bob@127.0.0.1:5080;transport=udp;pn-provider=apns")
        let same = CallMessages.forwardedInvite(
            try Self.invite(), to: contact, over: phone, from: caller, branch: "z9hG4bKleg")
        #expect(same.uri == contact)
        #expect(same.headers.vias.map(\.branch) == ["z9hG4bKleg", "z9hG4bKcaller"])
        #expect(same.headers.topVia?.port == 5060)
        #expect(same.headers["Max-Forwards"] == "4")
        #expect(same.headers.values("Record-Route") == ["<sip:127.0.0.1:5060;transport=udp;lr>"])
        // A caller on another listener: the phone's side on top, the caller's under it (RFC 5658).
        let tcpCaller = try Self.flow(.tcp, localPort: 5061, remotePort: 40000)
        let double = CallMessages.forwardedInvite(
            try Self.invite(), to: contact, over: phone, from: tcpCaller, branch: "z9hG4bKleg")
        #expect(
            double.headers.values("Record-Route") == [
                "<sip:127.0.0.1:5060;transport=udp;lr>", "<sip:127.0.0.1:5061;transport=tcp;lr>",
            ])
    }

    @Test func theAckOfANon2xxAndTheCancelKeepTheLegsBranch() throws {
        let phone = try Self.flow(.tcp, localPort: 5060, remotePort: 5080)
        let sent = CallMessages.forwardedInvite(
            try Self.invite(), to: try SIPURI(parsing: "sip:bob@127.0.0.1:5080"), over: phone, from: phone,
            branch: "z9hG4bKleg")
        var busy = sent.makeResponse(statusCode: 486, toTag: "b2")
        busy.headers.add("Contact", "<sip:bob@127.0.0.1:5080>")
        let ack = CallMessages.ack(of: sent, answer: busy)
        #expect(ack.method == "ACK")
        #expect(ack.uri == sent.uri)
        #expect(ack.headers.vias.map(\.branch) == ["z9hG4bKleg"])
        #expect(ack.headers.to?.tag == "b2")
        #expect(ack.headers.cseq == SIPCSeq(sequence: 7, method: "ACK"))
        let cancel = CallMessages.cancel(of: sent)
        #expect(cancel.method == "CANCEL")
        #expect(cancel.headers.vias.map(\.branch) == ["z9hG4bKleg"])
        #expect(cancel.headers.to?.tag == nil)
        #expect(cancel.headers.cseq == SIPCSeq(sequence: 7, method: "CANCEL"))
        #expect(cancel.headers.callID == "call-1")
    }

    @Test func responsesGoBackWithoutTheServersVia() throws {
        var response = SIPResponse(statusCode: 180)
        response.headers.add(
            "Via", "SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bKleg, SIP/2.0/UDP 10.0.0.1:5070;branch=z9hG4bKa")
        response.headers.add("Via", "SIP/2.0/UDP 10.0.0.2;branch=z9hG4bKb")
        response.headers.add("Call-ID", "call-1")
        let passed = CallMessages.withoutTopVia(response)
        #expect(passed.headers.vias.map(\.branch) == ["z9hG4bKa", "z9hG4bKb"])
        #expect(passed.headers.callID == "call-1")
    }

    @Test func aRelayedDialogRequestLosesTheServersRoutesAndGainsItsVia() throws {
        let phone = try Self.flow(.udp, localPort: 5060, remotePort: 5080)
        var bye = SIPRequest(method: "BYE", uri: try SIPURI(parsing: "sip:bob@127.0.0.1:5080"))
        bye.headers.add("Via", "SIP/2.0/UDP 10.0.0.1:5070;branch=z9hG4bKbye")
        bye.headers.add("Route", "<sip:127.0.0.1:5060;transport=udp;lr>, <sip:127.0.0.1:5061;transport=tcp;lr>")
        bye.headers.add("Route", "<sip:proxy.example.org;lr>")
        let relayed = CallMessages.relayed(bye, over: phone, branch: "z9hG4bKrelay") {
            $0.host == "127.0.0.1" && [5060, 5061].contains($0.port ?? 5060)
        }
        #expect(relayed.headers.splitValues("Route") == ["<sip:proxy.example.org;lr>"])
        #expect(relayed.headers.vias.map(\.branch) == ["z9hG4bKrelay", "z9hG4bKbye"])
        #expect(relayed.headers["Max-Forwards"] == "69")
        #expect(relayed.uri == bye.uri)
    }

    @Test func aSealedOfferIsFoundAsTheBodyOrAsItsPartAndOnlyWhenItIsOneLineOfText() throws {
        var invite = try Self.invite()
        invite.headers.add("Content-Type", "application/vnd.nse.envelope")
        invite.body = Array("nse1.sealed-offer\r\n".utf8)
        #expect(SealedCallOffer.find(in: invite) == "nse1.sealed-offer")
        let multipart = SIPMultipart(parts: [
            .init(contentType: "application/sdp", body: Array("v=0\r\n".utf8)),
            .init(contentType: "application/vnd.nse.envelope", body: Array("nse1.in-a-part".utf8)),
        ]).serialized(boundary: "offer")
        invite.headers.set("Content-Type", multipart.contentType)
        invite.body = multipart.body
        #expect(SealedCallOffer.find(in: invite) == "nse1.in-a-part")
        invite.headers.set("Content-Type", "application/sdp")
        #expect(SealedCallOffer.find(in: invite) == nil)
        invite.headers.set("Content-Type", "application/vnd.nse.envelope")
        invite.body = Array("nse1.two\nlines".utf8)
        #expect(SealedCallOffer.find(in: invite) == nil)
        invite.body = Array(repeating: 0x61, count: SealedCallOffer.maxLength + 1)
        #expect(SealedCallOffer.find(in: invite) == nil)
    }
}
