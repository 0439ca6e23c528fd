import Glibc
import Logging
import NIOCore

/// Parses each datagram a client's UDP socket receives as one SIP message (RFC 3261 §18.3: one datagram, one
/// message); malformed datagrams are dropped and keep-alive CRLFs ignored. Socket errors are transient (the
/// transaction timers decide), except an unreachable destination, which ends the connection.
final class SIPDatagramClientHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias InboundOut = SIPMessage

    let limits: SIPParserLimits
    let logger: Logger

    init(limits: SIPParserLimits, logger: Logger) {
        self.limits = limits
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        let bytes = Array(envelope.data.readableBytesView)
        // Keep-alive CRLFs are ignored.
        if bytes.allSatisfy({ $0 == 0x0D || $0 == 0x0A }) { return }
        do {
            context.fireChannelRead(wrapInboundOut(try SIPParser.parseDatagram(bytes, limits: limits)))
        } catch {
            logger.warning(
                "dropping malformed sip datagram", metadata: ["sip.error": "\(error)", "sip.size": "\(bytes.count)"])
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // ICMP port unreachable on a connected socket means nobody listens: fail fast (RFC 3261 §18.4).
        if let ioError = error as? IOError, ioError.errnoCode == ECONNREFUSED {
            logger.debug("sip datagram destination unreachable")
            context.fireErrorCaught(
                SIPError(.transport, "destination port unreachable (ICMP connection refused)"))
            context.close(promise: nil)
            return
        }
        // Other errors are transient; the transaction timers decide the outcome.
        logger.debug("sip datagram socket error", metadata: ["sip.error": "\(error)"])
    }
}
