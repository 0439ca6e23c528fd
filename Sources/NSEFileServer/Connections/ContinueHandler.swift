import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers `Expect: 100-continue` on an upload whose announced size fits, so the client sends its body at once
/// instead of waiting a second for a 100 that Hummingbird never sends (curl asks for one above 1 MiB). An upload
/// announced too large gets no 100: the 413 comes before the client has sent its body.
final class ContinueHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    /// The largest body an upload with this `Content-Type` may have.
    private let bodyLimit: @Sendable (_ contentType: String?) -> Int

    init(bodyLimit: @escaping @Sendable (_ contentType: String?) -> Int) {
        self.bodyLimit = bodyLimit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data), wantsContinue(head) {
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
        context.fireChannelRead(data)
    }

    private func wantsContinue(_ head: HTTPRequest) -> Bool {
        guard head.method == .post, head.headerFields[.expect]?.lowercased() == "100-continue" else { return false }
        guard let length = head.headerFields[.contentLength] else { return true }
        guard let declared = Int(length) else { return false }
        return declared <= bodyLimit(head.headerFields[.contentType])
    }
}
